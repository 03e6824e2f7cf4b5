package reclaim

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
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
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
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
