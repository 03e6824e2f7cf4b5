// Command render prints the Kubernetes objects of one of reclaim's installs,
// as `kubectl kustomize` or `helm template` would, with the same libraries
// those tools use (kustomize's krusty, Helm's client-only install). It lives in
// its own module so that kustomize and Helm never enter reclaim's go.mod; the
// end-to-end test e2e/deploy_test.go runs it and applies the output to a real
// kube-apiserver.
//
//	go run ./render kustomize ../overlays/cronjob
//	go run ./render helm ../helm/reclaim [-n NAMESPACE] [--name RELEASE] [--kube-version V] [-f values.yaml]... [--set k=v]...
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return errors.New("usage: render kustomize DIR | render helm CHART [-n NS] [--name RELEASE] [-f VALUES]... [--set K=V]...")
	}
	var (
		out []byte
		err error
	)
	switch args[0] {
	case "kustomize":
		if len(args) != 2 {
			return errors.New("usage: render kustomize DIR")
		}
		out, err = kustomize(args[1])
	case "helm":
		out, err = helm(args[1], args[2:])
	default:
		return fmt.Errorf("unknown renderer %q (kustomize or helm)", args[0])
	}
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}

// kustomize builds dir as `kubectl kustomize dir` does (load restrictions on,
// built-in plugins only).
func kustomize(dir string) ([]byte, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	return m.AsYaml()
}

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// helm renders the chart as `helm template` does: a client-only, dry-run
// install (values.schema.json is checked, NOTES.txt left out).
func helm(chartDir string, args []string) ([]byte, error) {
	fs := flag.NewFlagSet("helm", flag.ContinueOnError)
	ns := fs.String("n", "reclaim", "release namespace")
	name := fs.String("name", "reclaim", "release name")
	kubeVersion := fs.String("kube-version", "1.31.0", "Kubernetes version for .Capabilities and the chart's kubeVersion")
	var files, sets list
	fs.Var(&files, "f", "values file (repeatable)")
	fs.Var(&sets, "set", "key=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	chart, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	vals := map[string]any{}
	for _, f := range files {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			return nil, err
		}
		vals = merge(vals, v.AsMap())
	}
	for _, s := range sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.IncludeCRDs = true
	install.ReleaseName = *name
	install.Namespace = *ns
	if install.KubeVersion, err = chartutil.ParseKubeVersion(*kubeVersion); err != nil {
		return nil, err
	}
	rel, err := install.Run(chart, vals)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return []byte(b.String()), nil
}

// merge is Helm's -f merge: later files win, maps merge key by key.
func merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = merge(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}
