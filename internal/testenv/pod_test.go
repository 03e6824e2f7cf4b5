package testenv

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The build the tests run is the image's: static, trimmed, stripped.
func TestDockerfileBuild(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env, flags, err := DockerfileBuild(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(env, "CGO_ENABLED=0") {
		t.Errorf("env %q: want CGO_ENABLED=0", env)
	}
	if !slices.Contains(flags, "-trimpath") || !slices.Contains(flags, "-ldflags") {
		t.Errorf("flags %q: want -trimpath and -ldflags", flags)
	}
	// grpcnotrace keeps the linker's dead-method elimination on
	// (cmd/reclaim's TestLinkerDropsUnusedMethods).
	if i := slices.Index(flags, "-tags"); i < 0 || !slices.Contains(strings.Split(flags[i+1], ","), "grpcnotrace") {
		t.Errorf("flags %q: want -tags grpcnotrace", flags)
	}
	ld := flags[slices.Index(flags, "-ldflags")+1]
	if !strings.HasPrefix(ld, "-s -w ") || !strings.HasSuffix(ld, "internal/app.Version=test") {
		t.Errorf("ldflags %q", ld)
	}
	// make build and make demo use the same flags.
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flags {
		if f == ld {
			f = "-s -w"
		}
		if !strings.Contains(string(mk), f) {
			t.Errorf("Makefile lacks the Dockerfile's %q", f)
		}
	}
}

// A test's tags join the Dockerfile's: go build keeps only the last -tags.
func TestWithTagsMerges(t *testing.T) {
	for _, c := range []struct {
		flags, tags, want []string
	}{
		{[]string{"-trimpath", "-tags", "grpcnotrace", "-ldflags", "-s"}, []string{"demo"}, []string{"-trimpath", "-tags", "grpcnotrace,demo", "-ldflags", "-s"}},
		{[]string{"-tags=a,b"}, []string{"demo", "x"}, []string{"-tags=a,b,demo,x"}},
		{[]string{"-trimpath"}, []string{"demo"}, []string{"-trimpath", "-tags", "demo"}},
		{[]string{"-tags", "a"}, nil, []string{"-tags", "a"}},
	} {
		if got := withTags(c.flags, c.tags...); !slices.Equal(got, c.want) {
			t.Errorf("withTags(%q, %q) = %q, want %q", c.flags, c.tags, got, c.want)
		}
	}
}

func TestPodEnvironFromTheManifests(t *testing.T) {
	for _, m := range []Manifest{CronJob, Daemon, Agent} {
		env, err := Pod{Manifest: m, Namespace: "ops", Env: []string{"AWS_REGION=eu-west-1"}}.Environ()
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			if k == "HOME" || k == "AWS_CA_BUNDLE" || k == "KUBECONFIG" {
				t.Errorf("%s: %s in the pod's environment", m, kv)
			}
		}
		if !slices.Contains(env, "GOMEMLIMIT=280MiB") || env[len(env)-1] != "AWS_REGION=eu-west-1" {
			t.Errorf("%s: env %q", m, env)
		}
		if m == Daemon && !slices.Contains(env, "POD_NAMESPACE=ops") {
			t.Errorf("daemon env %q: want POD_NAMESPACE=ops", env)
		}
	}
}

// Every test that runs the reclaim binary runs it through Pod: a call of
// exec.Command or exec.CommandContext whose arguments name reclaim (its
// binary, its path) is an error anywhere else in the repository's tests.
func TestBinaryRunsAsAPod(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, isID := sel.X.(*ast.Ident); !isID || id.Name != "exec" || (sel.Sel.Name != "Command" && sel.Sel.Name != "CommandContext") {
				return true
			}
			for _, a := range call.Args {
				text := string(src[fset.Position(a.Pos()).Offset:fset.Position(a.End()).Offset])
				if strings.Contains(strings.ToLower(text), "reclaim") {
					rel, _ := filepath.Rel(root, p)
					t.Errorf("%s:%d: %s runs reclaim without testenv.Pod: the binary would get this machine's environment, not the pod's",
						rel, fset.Position(call.Pos()).Line, text)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A pod's process cannot write its working directory (the image's root is
// read-only), has no HOME, and is not root.
func TestPodIsNonRootWithAReadOnlyWorkingDirectory(t *testing.T) {
	cmd := Pod{}.Command(context.Background(), t, "/bin/sh", "-c", `id -u; echo "home=${HOME-unset}"; touch probe 2>/dev/null && echo wrote || echo read-only`)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	if len(got) != 3 || got[1] != "home=unset" || got[2] != "read-only" {
		t.Fatalf("got %q, want the uid, home=unset, read-only", got)
	}
	if os.Geteuid() == 0 && got[0] != strconv.Itoa(PodUser) {
		t.Errorf("ran as uid %s, want %d", got[0], PodUser)
	}
}
