package engine_test

import (
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Two clusters read under one name cannot be told apart: the complete
// read of one never stands for the other, whatever the order.
func TestTwoClustersOfOneNameHold(t *testing.T) {
	d := orphan("d")
	d.Sources = []string{inventory.ClusterKey("prod")}
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	broken := inventory.ClusterRefs{Name: "prod", Problems: []string{"no record"}}
	for _, order := range [][]inventory.ClusterRefs{{complete("prod"), broken}, {broken, complete("prod")}} {
		p := build(k, seenSince(t0.Add(-7*time.Hour), d), t0, order...)
		if got := enginetest.DecisionFor(t, p, "d"); got.Action == engine.Delete || !got.Held {
			t.Fatalf("deleted on one of two same-name reads: %+v", got)
		}
		if !p.Incomplete || !strings.Contains(strings.Join(p.Blocked, "\n"), "cannot tell their reads apart") {
			t.Fatalf("incomplete %v, blocked %v", p.Incomplete, p.Blocked)
		}
	}
}
