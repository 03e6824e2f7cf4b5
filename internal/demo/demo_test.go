package demo

import (
	"context"
	"io"
	"strings"
	"testing"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/reconcile"
)

// The demo must tell the story the README promises.
func TestDemoTellsTheStory(t *testing.T) {
	rep, err := Run(context.Background(), io.Discard, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Plan
	if rep.Mode != "dry-run" || rep.Outcome != nil || p.Incomplete {
		t.Fatalf("mode %s, outcome %v, incomplete %v", rep.Mode, rep.Outcome, p.Incomplete)
	}
	var ssd bool
	for _, h := range p.Headroom {
		if h.Metric == "SSD_TOTAL_GB" {
			ssd = true
			if h.UsedPct < 0.96 || h.UsedPct > 0.98 || !h.Known || h.PlanFrees != 200 || h.FinishedWorkflowGB != 600 ||
				h.RunsOutAt == nil || h.GrowthPerDay < 39 || h.GrowthPerDay > 41 || !h.Warning {
				t.Fatalf("SSD headroom: %+v", h)
			}
		}
	}
	if !ssd {
		t.Fatal("no SSD_TOTAL_GB headroom")
	}
	reasons := map[string][]string{}
	for _, d := range p.Decisions {
		if d.Kind == reconcile.KindDisk {
			reasons[string(d.Action)] = append(reasons[string(d.Action)], d.Reason)
		}
	}
	if n := len(reasons["delete"]); n != 8 {
		t.Fatalf("%d disks to delete, want the 8 true orphans", n)
	}
	all := strings.Join(reasons["keep"], "\n")
	for _, want := range []string{
		"bound to kafka/data-kafka-0",           // StatefulSet scaled to zero
		"in cluster prod-b (Released",           // only the second cluster knows it
		"protected by label reclaim-protect",    // opt-out
		"attached to instance gke-prod-a-pool-", // running pods
		"owned by Workflow data-eng/etl-nightly-00 (Failed)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no kept disk says %q", want)
		}
	}
	marks := strings.Join(reasons["mark"], "\n")
	if !strings.Contains(marks, "younger than min age") || !strings.Contains(marks, "deletable after") {
		t.Errorf("marks: %s", marks)
	}
	if len(reasons["report"]) != 1 || !strings.Contains(reasons["report"][0], "nothing proves Kubernetes created it") {
		t.Errorf("reports: %v", reasons["report"])
	}
	if p.Count(reconcile.KindPVC, reconcile.Report) != 30 || len(p.Holders) != 30 {
		t.Errorf("finished-workflow PVCs: %d reported, %d holders", p.Count(reconcile.KindPVC, reconcile.Report), len(p.Holders))
	}
}
