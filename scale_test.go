package reclaim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A scale test skips itself in `make test` (testenv.Scale) and `make
// test-scale` runs it by name: the Makefile's SCALE_TESTS and SCALE_PKGS
// must name exactly the tests that call testenv.Scale and their folders,
// or a test would be skipped everywhere (or test-scale run nothing).
func TestScaleTestsAreTheMakefilesList(t *testing.T) {
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	listed, pkgs := makeList(t, string(makefile), "SCALE_TESTS"), makeList(t, string(makefile), "SCALE_PKGS")
	calls, dirs := scaleTests(t)
	slices.Sort(listed)
	slices.Sort(pkgs)
	if !slices.Equal(listed, calls) {
		t.Errorf("the Makefile's SCALE_TESTS are\n\t%s\nthe tests that call testenv.Scale are\n\t%s\nthe two must be the same (a listed test calls testenv.Scale(t) first)",
			strings.Join(listed, " "), strings.Join(calls, " "))
	}
	if !slices.Equal(pkgs, dirs) {
		t.Errorf("the Makefile's SCALE_PKGS are %v, the folders of the tests that call testenv.Scale %v", pkgs, dirs)
	}
}

// makeList is the words of the Makefile's `name = …` (or :=), its
// continued lines included.
func makeList(t *testing.T, makefile, name string) []string {
	t.Helper()
	lines := strings.Split(makefile, "\n")
	for i, l := range lines {
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSuffix(strings.TrimSpace(k), ":") != name {
			continue
		}
		for strings.HasSuffix(v, "\\") && i+1 < len(lines) {
			i++
			v = strings.TrimSuffix(v, "\\") + " " + lines[i]
		}
		return strings.Fields(v)
	}
	t.Fatalf("the Makefile has no %s", name)
	return nil
}

// scaleTests are the Test functions that call testenv.Scale, and their
// folders ("./e2e"); one that calls it other than first fails t: it would
// do work before it skips.
func scaleTests(t *testing.T) (names, dirs []string) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || fileExists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir // another module, or not Go
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			called := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				called = called || isScaleCall(n)
				return !called
			})
			if !called {
				continue
			}
			if first, ok := fn.Body.List[0].(*ast.ExprStmt); !ok || !isScaleCall(first.X) {
				t.Errorf("%s: %s calls testenv.Scale after other statements: call it first", path, fn.Name.Name)
			}
			names = append(names, fn.Name.Name)
			if dir := "./" + filepath.ToSlash(filepath.Dir(path)); !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	slices.Sort(dirs)
	return names, dirs
}

// isScaleCall says whether n is the call testenv.Scale(…).
func isScaleCall(n ast.Node) bool {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testenv" && sel.Sel.Name == "Scale"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
