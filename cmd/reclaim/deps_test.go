package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The production binary (and so the image) links none of the fakes: neither
// ours (the demo, the simulated fleet, the cloud API fakes) nor client-go's
// fake clientsets. Only a -tags demo build carries them.
func TestProductionBinaryLinksNoFake(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
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
