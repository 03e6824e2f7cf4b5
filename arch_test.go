package reclaim

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "reclaim.dev/reclaim"

// floors are the layers of the module, top first; a package belongs to the
// first floor one of whose folders holds it. A package imports only from its
// own floor or a lower one (docs/architecture.md#layers). Within a floor,
// folders may import each other as long as no two import both ways.
var floors = []struct {
	name    string
	folders []string
}{
	{"cmd", []string{"cmd"}},
	{"wiring", []string{"internal", "e2e"}},
	{"kinds", []string{"reconcile/kinds", "notify"}},
	{"engine", []string{"reconcile"}},
	// The rules of trust for agents' records read them through
	// providers/bucket, and providers/ imports inventory/.
	{"records", []string{"inventory/records"}},
	{"providers", []string{"providers", "inventory"}},
	{"configs", []string{"configs"}},
	{"base", []string{"base"}},
}

// room is the folder of floors a package lives in, and its floor's index
// (0 is the top). ok is false for a package outside every folder.
func room(pkg string) (folder string, floor int, ok bool) {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	best := -1
	for i, f := range floors {
		for _, dir := range f.folders {
			if (rel == dir || strings.HasPrefix(rel, dir+"/")) && len(dir) > len(folder) {
				folder, best = dir, i
			}
		}
	}
	return folder, best, best >= 0
}

// imports maps each package of the module to the module's packages its
// non-test files import, under every build tag set the module is built with.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	// go test puts its own go first in PATH (runtime.GOROOT is empty under -trimpath).
	goBin := "go"
	seen := map[string]map[string]bool{}
	for _, tags := range []string{"", "demo"} {
		out, err := exec.Command(goBin, "list", "-tags", tags, "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if seen[f[0]] == nil {
				seen[f[0]] = map[string]bool{}
			}
			for _, imp := range f[1:] {
				if imp == module || strings.HasPrefix(imp, module+"/") {
					seen[f[0]][imp] = true
				}
			}
		}
	}
	g := map[string][]string{}
	for pkg, imps := range seen {
		g[pkg] = []string{}
		for imp := range imps {
			g[pkg] = append(g[pkg], imp)
		}
		sort.Strings(g[pkg])
	}
	return g
}

// upward lists every import that goes from a lower floor to a higher one, and
// every import of the repo from base/.
func upward(g map[string][]string) (ups []string, unplaced []string) {
	for pkg, imps := range g {
		if pkg == module { // this test
			continue
		}
		_, from, ok := room(pkg)
		if !ok {
			unplaced = append(unplaced, pkg)
			continue
		}
		for _, imp := range imps {
			_, to, ok := room(imp)
			switch {
			case floors[from].name == "base":
				ups = append(ups, fmt.Sprintf("%s -> %s (base imports nothing of the repo)", pkg, imp))
			case !ok || to < from:
				ups = append(ups, fmt.Sprintf("%s -> %s", pkg, imp))
			}
		}
	}
	sort.Strings(ups)
	sort.Strings(unplaced)
	return ups, unplaced
}

// twoWays lists each pair of folders on one floor that import each other.
func twoWays(g map[string][]string) []string {
	edge := map[[2]string]bool{}
	for pkg, imps := range g {
		a, _, _ := room(pkg)
		for _, imp := range imps {
			if b, _, _ := room(imp); a != b {
				edge[[2]string{a, b}] = true
			}
		}
	}
	var out []string
	for e := range edge {
		if e[0] < e[1] && edge[[2]string{e[1], e[0]}] {
			out = append(out, e[0]+" <-> "+e[1])
		}
	}
	sort.Strings(out)
	return out
}

// Every import points down: cmd → wiring (internal/) → the kinds and notify →
// the engine (reconcile/) → the records' rules (inventory/records) →
// providers and inventory → configs → base, and
// base imports nothing of the repo. Only non-test files are held to the
// floors: a test may import from above to run what it tests as the wiring
// does (the harness in internal/, the kinds' config sections).
func TestImportsPointDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	g := imports(t)
	if len(g) < 20 {
		t.Fatalf("go list saw %d packages: the check would be blind", len(g))
	}
	ups, unplaced := upward(g)
	for _, p := range unplaced {
		t.Errorf("%s is on no floor: add its folder to floors", p)
	}
	for _, u := range ups {
		t.Errorf("import points up: %s", u)
	}
	for _, c := range twoWays(g) {
		t.Errorf("folders import each other: %s", c)
	}
	t.Logf("%d packages, %d imports pointing up", len(g), len(ups))
}

// The check sees an upward import, a base package importing the repo, and two
// folders importing each other.
func TestImportsPointDownSeesUpward(t *testing.T) {
	g := map[string][]string{
		module + "/configs":                 {module + "/internal/app"},
		module + "/base/glob":               {module + "/base/perms"},
		module + "/providers/gce":           {module + "/inventory", module + "/base/perms"},
		module + "/inventory/kube":          {module + "/providers/gce"},
		module + "/reconcile/engine":        {module + "/notify/report"},
		module + "/reconcile/kinds/gcedisk": {module + "/reconcile/engine", module + "/configs"},
		module + "/elsewhere":               nil,
	}
	ups, unplaced := upward(g)
	want := []string{
		module + "/base/glob -> " + module + "/base/perms (base imports nothing of the repo)",
		module + "/configs -> " + module + "/internal/app",
		module + "/reconcile/engine -> " + module + "/notify/report",
	}
	if strings.Join(ups, "\n") != strings.Join(want, "\n") {
		t.Errorf("upward:\n%s\nwant:\n%s", strings.Join(ups, "\n"), strings.Join(want, "\n"))
	}
	if len(unplaced) != 1 || unplaced[0] != module+"/elsewhere" {
		t.Errorf("unplaced = %v, want elsewhere", unplaced)
	}
	if got := twoWays(g); len(got) != 1 || got[0] != "inventory <-> providers" {
		t.Errorf("twoWays = %v, want inventory <-> providers", got)
	}
}

// kindsDir holds one package per kind, and the bases kinds stand on.
const kindsDir = "reconcile/kinds"

// kindPackages are the packages under reconcile/kinds that are kinds: a
// kind exports its Module (the value internal/app registers), and a
// package there without one is a base that kinds stand on (kind: the
// Module type; finished: what k8s-job and k8s-pod share; gcepd: what
// gce-disk and k8s-pvc share; ebsbase: what the EBS kinds share;
// csisnapshot: the CSI snapshots' tap and lookup, which the snapshot kinds
// share). Only non-test files count.
func kindPackages(t *testing.T, g map[string][]string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for pkg := range g {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if !strings.HasPrefix(rel, kindsDir+"/") {
			continue
		}
		files, err := os.ReadDir(rel)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") {
				continue
			}
			src, err := parser.ParseFile(token.NewFileSet(), filepath.Join(rel, f.Name()), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if declaresModule(src) {
				out[pkg] = true
			}
		}
	}
	return out
}

// declaresModule says whether a file declares a package-level Module.
func declaresModule(f *ast.File) bool {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			for _, n := range spec.(*ast.ValueSpec).Names {
				if n.Name == "Module" {
					return true
				}
			}
		}
	}
	return false
}

// kindToKind lists every import of a kind package by another package under
// reconcile/kinds: what two kinds share lives in a base both stand on.
func kindToKind(g map[string][]string, kinds map[string]bool) []string {
	var out []string
	for pkg, imps := range g {
		if !strings.HasPrefix(pkg, module+"/"+kindsDir+"/") {
			continue
		}
		for _, imp := range imps {
			if kinds[imp] && imp != pkg {
				out = append(out, pkg+" -> "+imp)
			}
		}
	}
	sort.Strings(out)
	return out
}

// No kind imports another kind, and no base under reconcile/kinds imports
// a kind: a kind is one package, and what two kinds share is a base below
// them both (docs/architecture.md#layers). Non-test files only.
func TestNoKindImportsAKind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	g := imports(t)
	kinds := kindPackages(t, g)
	if len(kinds) < 5 {
		t.Fatalf("found %d kind packages under %s: the check would be blind", len(kinds), kindsDir)
	}
	for _, e := range kindToKind(g, kinds) {
		t.Errorf("a kind is imported under %s: %s (move what they share to a base both import)", kindsDir, e)
	}
	t.Logf("%d kinds, %d kind-to-kind imports", len(kinds), len(kindToKind(g, kinds)))
}

// The check sees a kind importing a kind and a base importing a kind, and
// lets kinds import bases.
func TestNoKindImportsAKindSees(t *testing.T) {
	k := func(n string) string { return module + "/" + kindsDir + "/" + n }
	g := map[string][]string{
		k("a"):    {k("b"), k("base"), module + "/reconcile/engine"},
		k("b"):    {k("base")},
		k("base"): {k("c")},
		k("c"):    {},
	}
	kinds := map[string]bool{k("a"): true, k("b"): true, k("c"): true}
	got := kindToKind(g, kinds)
	want := []string{k("a") + " -> " + k("b"), k("base") + " -> " + k("c")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("kindToKind = %v, want %v", got, want)
	}
}
