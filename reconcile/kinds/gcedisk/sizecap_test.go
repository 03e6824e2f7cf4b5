package gcedisk

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/amount"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// maxDeleteSizePerRun is written in bytes and GCE sizes disks in GiB: a
// 5Ti cap admits exactly 5 TiB of disks, and one GiB more is refused.
func TestSizeCapAdmitsExactlyWhatIsWritten(t *testing.T) {
	cfg, err := config.Parse([]byte(`clusters: [{name: a}]
gce: {projects: [my-gke-project]}
disks:
  grace: 6h
  maxDeletesPerRun: 100
  maxDeletePercent: 100%
  breakerCandidates: 100
  maxDeleteSizePerRun: 5Ti
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k := FromConfig(cfg, nil)
	if got := k.Limits().MaxFrees; got != (amount.Amount{N: 5 * 1024, Unit: gcepd.GB}) {
		t.Fatalf("5Ti caps %v, want 5120 GB (GiB)", got)
	}
	// Five 1 TiB disks, orphaned first, then a 1 GiB one: oldest first.
	var big []gce.Disk
	for i := range 5 {
		d := orphan(fmt.Sprintf("big-%d", i))
		d.SizeGB = 1024
		big = append(big, d)
	}
	one := orphan("one-more")
	one.SizeGB = 1
	st := seenSince(t0.Add(-8*time.Hour), big...)
	st.Seen(one.Key.String(), one.ID, t0.Add(-7*time.Hour))
	s := snap(append(big, one), complete("a"))
	p := enginetest.Build(&s, []engine.Kind{k}, st, t0)
	for _, d := range big {
		if got := enginetest.DecisionFor(t, p, d.Key.Name); got.Action != engine.Delete {
			t.Errorf("%s: %s %q, want delete: 5 TiB is within a 5Ti cap", d.Key.Name, got.Action, got.Why())
		}
	}
	if got := enginetest.DecisionFor(t, p, one.Key.Name); got.Action == engine.Delete || !strings.Contains(got.Why(), "size cap of 5120 GB") {
		t.Errorf("one GiB more: %s %q, want held by the size cap of 5120 GB", got.Action, got.Why())
	}
}
