package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/testenv"
)

// `make demo` as a pod would run it: the demo build, made as the image is
// made, with a pod's environment. It drives the fakes through the real
// clients, so a client that needs this machine's variables fails here.
func TestDemoRunsAsAPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(binDir, "reclaim-demo")
	if err := testenv.BuildReclaim(ctx, bin, "demo"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "demo-report")
	cmd := testenv.Pod{}.Command(ctx, t, bin, "demo", "--email-files", out)
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reclaim demo: %v\n%s", err, got)
	}
	for _, want := range []string{"SSD_TOTAL_GB", "WHO HOLDS THE QUOTA", "ECR REPOSITORIES", "SUBNET IP HEADROOM", "WHO HOLDS THE SUBNET ADDRESSES", "EBS STORAGE QUOTA HEADROOM", "EBS SNAPSHOTS", "GCE SNAPSHOTS"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the demo's report lacks %q", want)
		}
	}
	for _, ext := range []string{".html", ".txt"} {
		if fi, err := os.Stat(out + ext); err != nil || fi.Size() == 0 {
			t.Errorf("the demo's email body %s: %v", ext, err)
		}
	}
}
