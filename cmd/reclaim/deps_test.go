package main

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"reclaim.dev/reclaim/internal/testenv"
)

// The production binary (and so the image) links none of the fakes: neither
// ours (the demo, the simulated fleet, the cloud API fakes) nor client-go's
// fake clientsets. Only a -tags demo build carries them.
func TestProductionBinaryLinksNoFake(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	// go test puts its own go first in PATH (runtime.GOROOT is empty under -trimpath).
	goBin := "go"
	for _, tags := range []string{"", "demo"} {
		out, err := exec.Command(goBin, "list", "-tags", tags, "-deps", ".").CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		var fakes []string
		for _, p := range strings.Fields(string(out)) {
			if isFake(p) {
				fakes = append(fakes, p)
			}
		}
		switch {
		case tags == "" && len(fakes) > 0:
			t.Errorf("the production binary links %d fake packages, e.g. %v", len(fakes), fakes[:min(5, len(fakes))])
		case tags == "demo" && len(fakes) == 0:
			// Proves the check can see a fake at all.
			t.Error("the demo build links no fake: isFake is blind")
		}
	}
}

func isFake(pkg string) bool {
	for _, seg := range strings.Split(pkg, "/") {
		if seg == "fake" || strings.HasSuffix(seg, "fake") || seg == "demo" || seg == "fleetsim" || seg == "fakeapi" {
			return true
		}
	}
	return false
}

// The linker drops the methods nothing calls, unless a function it reaches
// looks methods up by reflection with a name unknown when compiling
// (text/template's field evaluation, reflect.Value.Method, MethodByName
// with a variable): the compiler marks such a function ReflectMethod, and
// once one is reached every exported method of every reachable type links
// in (all of ec2.Client's operations...). The image's binary then doubles
// (127 MB instead of 62), and so do the pages of it every pod keeps
// resident. The image's build with -dumpdep lists every symbol the linker
// reaches; none may be marked <ReflectMethod>.
func TestLinkerDropsUnusedMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("links the binary")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env, flags, err := testenv.DockerfileBuild(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	flags = slices.Clone(flags)
	i := slices.Index(flags, "-ldflags")
	if i < 0 {
		t.Fatalf("the Dockerfile's build has no -ldflags: %q", flags)
	}
	flags[i+1] += " -dumpdep"
	dir := t.TempDir()
	bin, deps := filepath.Join(dir, "reclaim"), filepath.Join(dir, "deps.txt")
	out, err := os.Create(deps)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, ".")...)
	cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), env...), out, out
	err = cmd.Run()
	out.Close()
	if err != nil {
		b, _ := os.ReadFile(deps)
		t.Fatalf("go %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, b[max(0, len(b)-4000):])
	}
	t.Logf("the image's binary: %s", binarySize(t, bin))

	found, err := reflectMethods(deps)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		return
	}
	// -dumpdep gives one path per symbol, the first the linker took: with
	// that caller fixed, another may show.
	var msg strings.Builder
	fmt.Fprintf(&msg, "the linker keeps every exported method of every reachable type: it reaches %d functions that look methods up by reflection (-dumpdep marks them <ReflectMethod>)", len(found))
	var kept []string
	for i, f := range found {
		if i >= 5 || i > 0 && f.viaType {
			kept = append(kept, f.symbol)
			continue
		}
		fmt.Fprintf(&msg, "\n\n%s, called by %s:\n    %s", f.symbol, f.by, strings.Join(f.path, "\n    "))
	}
	if len(kept) > 0 {
		fmt.Fprintf(&msg, "\n\nand %d more (those reached as a type's methods mostly kept only because of the above): %s", len(kept), strings.Join(kept, ", "))
	}
	msg.WriteString("\n\nTake the call out of the binary: no text/template or html/template executed (notify/email writes its bodies in plain Go;" +
		" no cobra Set*Template), no reflect Method or MethodByName with a variable name, or a build tag that leaves the calling package out" +
		" (as grpcnotrace, in the Dockerfile's -tags, leaves out golang.org/x/net/trace).")
	t.Error(msg.String())
}

// reflectMethod is a function the linker reached that looks methods up by
// reflection: its path from main.main (or the entry point), and the
// nearest package on that path outside Go's standard library, which called
// into it. viaType: a type's method is on the path, reached as such (by an
// interface, or because another reflective call keeps all methods).
type reflectMethod struct {
	symbol, by string
	path       []string
	viaType    bool
}

// reflectMethods reads a -dumpdep listing: "parent -> symbol" for every
// symbol the linker reaches, with flags after the names. The ones reached
// only by calls come first.
func reflectMethods(deps string) ([]reflectMethod, error) {
	b, err := os.ReadFile(deps)
	if err != nil {
		return nil, err
	}
	text := string(b)
	if !strings.Contains(text, "-> main.main") {
		return nil, fmt.Errorf("%s: no -dumpdep listing (the link was not run?)", deps)
	}
	if !strings.Contains(text, "<ReflectMethod>\n") {
		return nil, nil
	}
	parent := map[string]string{}
	var marked []string
	for _, line := range strings.Split(text, "\n") {
		from, to, ok := cutLast(line, " -> ")
		if !ok {
			continue
		}
		to, flagged := strings.CutSuffix(to, "<ReflectMethod>")
		to, from = unflag(to), unflag(from)
		if _, seen := parent[to]; !seen {
			parent[to] = from
		}
		if flagged {
			marked = append(marked, to)
		}
	}
	var found []reflectMethod
	for _, s := range marked {
		f := reflectMethod{symbol: s}
		for n := s; n != "_" && n != "" && len(f.path) < 100; n = parent[n] {
			f.path = append([]string{n}, f.path...)
			f.viaType = f.viaType || strings.HasPrefix(n, "type:")
			if f.by == "" && n != s && !std(n) {
				f.by = symbolPackage(n)
			}
			if n == "main.main" {
				break
			}
		}
		if f.by == "" {
			f.by = "the standard library"
		}
		found = append(found, f)
	}
	sort.SliceStable(found, func(i, j int) bool { return !found[i].viaType && found[j].viaType })
	return found, nil
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// unflag drops the flags -dumpdep writes after a name (<UsedInIface>...).
func unflag(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, " <"); i >= 0 && strings.HasSuffix(s, ">") {
		s = s[:i]
	}
	return s
}

// symbolPackage is the import path of a symbol: "type:*k8s.io/a/b.T" and
// "k8s.io/a/b.(*T).M" are k8s.io/a/b's.
func symbolPackage(sym string) string {
	sym = strings.TrimLeft(strings.TrimPrefix(sym, "type:"), "*")
	slash := max(strings.LastIndex(sym, "/"), 0)
	if dot := strings.Index(sym[slash:], "."); dot >= 0 {
		return sym[:slash+dot]
	}
	return sym
}

// std says whether a symbol is the standard library's or the linker's.
func std(sym string) bool {
	pkg := symbolPackage(sym)
	first, _, _ := strings.Cut(pkg, "/")
	return pkg != "main" && !strings.Contains(first, ".")
}

// binarySize is a binary's size and its code and read-only data's.
func binarySize(t *testing.T, bin string) string {
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Sprintf("%.1f MB", float64(st.Size())/1e6)
	}
	defer f.Close()
	var code uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && s.Flags&elf.SHF_WRITE == 0 {
			code += s.Size
		}
	}
	return fmt.Sprintf("%.1f MB, %.1f MB of it code and read-only data (text, rodata, pclntab)", float64(st.Size())/1e6, float64(code)/1e6)
}
