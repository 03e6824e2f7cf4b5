package engine_test

import (
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/engine"
	"reclaim.dev/reclaim/internal/enginetest"
)

// A proposal that is not a candidate is kept whatever Action its kind gave
// it: only candidates pass fail-closed, grace, caps and the breaker.
func TestNonCandidateIsNeverDeleted(t *testing.T) {
	for _, a := range []engine.Action{engine.Delete, engine.Mark, engine.Report, ""} {
		p := orphan("d")
		p.Candidate, p.Action = false, a
		k := &fakeKind{lim: testLimits(), items: []engine.Proposal{p}}
		plan := build(k, seenSince(t0.Add(-48*time.Hour), p), t0, complete("a"))
		if got := enginetest.DecisionFor(t, plan, "d").Action; got != engine.Keep {
			t.Errorf("non-candidate the kind set to %q: %s, want keep", a, got)
		}
		if _, ok := plan.State.Resources[p.ID]; ok {
			t.Errorf("non-candidate the kind set to %q kept its clock", a)
		}
	}
}

// A source no collector reported was not read: a decision relying on it is
// held, whether it names a cluster the fleet did not list or any other
// source, and the plan says it is incomplete.
func TestSourceNeverReportedHolds(t *testing.T) {
	for _, key := range []string{engine.SourceKey("cluster", "ghost"), engine.SourceKey("ecr-registry", "123456789012/us-east-1")} {
		d := orphan("d")
		d.Sources = []string{engine.SourceKey("cluster", "a"), key}
		k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
		p := build(k, seenSince(t0.Add(-48*time.Hour), d), t0, complete("a"))
		got := enginetest.DecisionFor(t, p, "d")
		if got.Action != engine.Mark || !got.Held || !p.Incomplete {
			t.Errorf("%s never reported: %s held=%v incomplete=%v, want a held mark", key, got.Action, got.Held, p.Incomplete)
		}
		if !strings.Contains(got.Why(), "not read") {
			t.Errorf("%s never reported: the reason does not say it was not read: %s", key, got.Why())
		}
	}
}
