package reclaim

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function of the deleter's path may be: one
// that is longer reads as a list of steps that want names (STYLE.md, "a
// function that reads top to bottom").
const maxFuncLines = 80

// funcSizeFolders are the folders held to maxFuncLines: the engine and the
// kinds, the wiring, the view and the providers.
var funcSizeFolders = []string{"reconcile", "internal/app", "inventory", "providers"}

// funcSizeExempt are files held apart (none now); an entry for a file that
// is gone fails.
var funcSizeExempt = map[string]bool{}

// fakeFolder says whether dir is a provider's wire-level fake (ec2fake,
// fakeapi): a test server, held to no size.
func fakeFolder(dir string) bool {
	base := filepath.Base(dir)
	return strings.HasSuffix(base, "fake") || strings.HasPrefix(base, "fake")
}

// longFuncs lists the functions of the non-test, non-fake Go files under
// folders that are longer than max lines, from their func keyword to their
// closing brace.
func longFuncs(t *testing.T, folders []string, max int) []string {
	t.Helper()
	var long []string
	for _, root := range folders {
		err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case e.IsDir() && (fakeFolder(path) || e.Name() == "testdata"):
				return filepath.SkipDir
			case e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
				return nil
			case funcSizeExempt[filepath.ToSlash(path)]:
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				from, to := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := to.Line - from.Line + 1; n > max {
					name := fd.Name.Name
					if fd.Recv != nil {
						name = receiver(fd.Recv.List[0].Type) + "." + name
					}
					long = append(long, fmt.Sprintf("%s %s: %d lines", from, name, n))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return long
}

// No function of the deleter's path is longer than maxFuncLines.
func TestFunctionsAreShort(t *testing.T) {
	for _, l := range longFuncs(t, funcSizeFolders, maxFuncLines) {
		t.Errorf("%s, over %d: name its steps", l, maxFuncLines)
	}
	for f := range funcSizeExempt {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s is exempt but gone: drop it from funcSizeExempt", f)
		}
	}
}

// The check sees a long function and skips tests and fakes.
func TestFunctionsAreShortSeesLong(t *testing.T) {
	long := longFuncs(t, []string{"reconcile/engine"}, 10)
	if len(long) == 0 {
		t.Fatal("no function of the engine is over 10 lines: the check is blind")
	}
	for _, l := range long {
		if strings.Contains(l, "_test.go") {
			t.Errorf("a test counted: %s", l)
		}
	}
	if fakeFolder("providers/ec2") || !fakeFolder("providers/ec2/ec2fake") || !fakeFolder("providers/fakeapi") {
		t.Error("fakeFolder tells fakes wrongly")
	}
}
