// Command render prints the Kubernetes objects of one of reclaim's installs,
// as `kubectl kustomize` or `helm template` would, with the same libraries
// those tools use (kustomize's krusty, Helm's chart loader and engine). It lives in
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

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
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
	c, err := loader.Load(chartDir)
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
	kv, err := chartutil.ParseKubeVersion(*kubeVersion)
	if err != nil {
		return nil, err
	}
	return template(c, vals, *name, *ns, kv)
}

// template is what `helm template --include-crds` does with a loaded chart:
// Helm's client-only dry-run install (pkg/action's Install.Run and
// renderResources, v3.22) step by step, from the same Helm functions, without
// pkg/action: that package brings kubectl and the registry client, which
// doubled this tool's first build.
func template(chrt *chart.Chart, vals map[string]any, name, ns string, kv *chartutil.KubeVersion) ([]byte, error) {
	if err := chartutil.ProcessDependenciesWithMerge(chrt, vals); err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	opts := chartutil.ReleaseOptions{Name: name, Namespace: ns, Revision: 1, IsInstall: true}
	values, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, vals, opts, caps, false)
	if err != nil {
		return nil, err
	}
	if want := chrt.Metadata.KubeVersion; want != "" && !chartutil.IsCompatibleRange(want, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", want, caps.KubeVersion.String())
	}
	var e engine.Engine
	files, err := e.Render(chrt, values)
	if err != nil {
		return nil, err
	}
	for k := range files {
		if strings.HasSuffix(k, "NOTES.txt") {
			delete(files, k)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, crd := range chrt.CRDObjects() {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", crd.Filename, string(crd.File.Data))
	}
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	for _, h := range hooks {
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
