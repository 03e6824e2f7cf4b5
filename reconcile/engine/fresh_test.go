package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
)

// readAt is a complete cluster whose view began at t.
func readAt(name string, t time.Time) inventory.ClusterRefs {
	c := complete(name)
	c.ReadAt = t
	return c
}

const freshHint = "is its agent running in watch mode?"

// A delete is planned only on cluster views taken after the candidate's
// grace began and no older than the bound: an older view holds it, with
// the cluster, the view's age, the bound and what to check; a fresh one
// lets it go. Without FreshViews the same old view would delete.
func TestStaleViewHoldsDeletes(t *testing.T) {
	bound := 5 * time.Minute
	since := t0.Add(-48 * time.Hour) // the clock: grace 6h long elapsed
	for name, tc := range map[string]struct {
		readAt time.Time
		bound  time.Duration
		why    []string // empty: deleted
	}{
		"fresh":                {t0.Add(-time.Minute), bound, nil},
		"older than the bound": {t0.Add(-40 * time.Minute), bound, []string{"cluster a was read 40m", "more than fleet.records.deleteMaxAge 5m", freshHint}},
		"before grace began":   {since.Add(-time.Hour), 0, []string{"cluster a was read at", "before this candidate's grace began", freshHint}},
		"no read time":         {time.Time{}, bound, []string{"cluster a's view has no read time"}},
	} {
		d := orphan("d")
		d.Sources = []string{inventory.ClusterKey("a")}
		k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
		st := seenSince(since, d)
		p := engine.Settings{FreshViews: true, FreshWithin: tc.bound, FreshWithinName: "fleet.records.deleteMaxAge", FreshHint: freshHint}.Build(snap(readAt("a", tc.readAt)), []engine.Kind{k}, st, t0)
		got := enginetest.DecisionFor(t, p, "d")
		if len(tc.why) == 0 {
			if got.Action != engine.Delete || got.Held || p.Incomplete {
				t.Errorf("%s: %s held=%v incomplete=%v (%s), want delete", name, got.Action, got.Held, p.Incomplete, got.Why())
			}
			continue
		}
		if got.Action != engine.Mark || !got.Held || !p.Incomplete {
			t.Errorf("%s: %s held=%v incomplete=%v (%s), want a held mark in a plan held back", name, got.Action, got.Held, p.Incomplete, got.Why())
		}
		for _, w := range tc.why {
			if !strings.Contains(got.Why(), w) {
				t.Errorf("%s: the reason does not say %q: %s", name, w, got.Why())
			}
		}
		if e, ok := p.State.Resources[d.ID]; !ok || !e.FirstSeen.Equal(since) {
			t.Errorf("%s: the clock was not kept: %+v", name, e)
		}
		// Without the rule the same view deletes: the rule is what holds.
		p = engine.Build(snap(readAt("a", tc.readAt)), []engine.Kind{k}, seenSince(since, d), t0)
		if got := enginetest.DecisionFor(t, p, "d"); got.Action != engine.Delete {
			t.Errorf("%s without FreshViews: %s, want delete", name, got.Action)
		}
	}
}

// A stale view still reports: what it shows in use is kept (not held, not
// a candidate), its cluster is complete, and a candidate that relies only
// on another cluster, read fresh, is deleted.
func TestStaleViewKeepsItsEvidence(t *testing.T) {
	used := inUse("used")
	used.Sources = []string{inventory.ClusterKey("old")}
	elsewhere := orphan("elsewhere")
	elsewhere.Sources = []string{inventory.ClusterKey("new")}
	held := orphan("held")
	held.Sources = []string{inventory.ClusterKey("new"), inventory.ClusterKey("old")}
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{used, elsewhere, held}}
	st := seenSince(t0.Add(-48*time.Hour), elsewhere, held)
	set := engine.Settings{FreshViews: true, FreshWithin: 10 * time.Minute, FreshWithinName: "fleet.records.deleteMaxAge", FreshHint: freshHint}
	p := set.Build(snap(readAt("old", t0.Add(-2*time.Hour)), readAt("new", t0.Add(-time.Minute))), []engine.Kind{k}, st, t0)
	if d := enginetest.DecisionFor(t, p, "used"); d.Action != engine.Keep || d.Held {
		t.Errorf("what the old view shows in use: %s held=%v, want keep", d.Action, d.Held)
	}
	if d := enginetest.DecisionFor(t, p, "elsewhere"); d.Action != engine.Delete {
		t.Errorf("a candidate only a fresh cluster could use: %s (%s), want delete", d.Action, d.Why())
	}
	if d := enginetest.DecisionFor(t, p, "held"); d.Action != engine.Mark || !d.Held || !strings.Contains(d.Why(), "cluster old was read 2h") {
		t.Errorf("a candidate the old cluster could use: %s held=%v (%s), want held naming cluster old", d.Action, d.Held, d.Why())
	}
	if !slices.ContainsFunc(p.Blocked, func(b string) bool { return strings.Contains(b, "cluster old could object to") }) {
		t.Errorf("the held-back notes do not name the stale cluster: %q", p.Blocked)
	}
	for _, s := range p.Sources {
		if s.Kind == "cluster" && !s.Complete {
			t.Errorf("cluster %s reads as incomplete: a stale view still reports", s.Name)
		}
	}
}

// A clock this very pass starts (grace 0) is not held for a view begun a
// moment before it; the bound still applies.
func TestFreshViewOfAClockStartedThisPass(t *testing.T) {
	d := orphan("d")
	d.Sources = []string{inventory.ClusterKey("a")}
	lim := testLimits()
	lim.Grace = 0
	k := &fakeKind{lim: lim, items: []engine.Proposal{d}}
	opt := engine.Settings{FreshViews: true, FreshWithin: 5 * time.Minute, FreshWithinName: "fleet.records.deleteMaxAge", FreshHint: freshHint}
	p := opt.Build(snap(readAt("a", t0.Add(-2*time.Second))), []engine.Kind{k}, engine.NewState(), t0)
	if got := enginetest.DecisionFor(t, p, "d"); got.Action != engine.Delete {
		t.Errorf("grace 0, view 2s old: %s (%s), want delete", got.Action, got.Why())
	}
	p = opt.Build(snap(readAt("a", t0.Add(-time.Hour))), []engine.Kind{k}, engine.NewState(), t0)
	if got := enginetest.DecisionFor(t, p, "d"); !got.Held {
		t.Errorf("grace 0, view 1h old: %s (%s), want held", got.Action, got.Why())
	}
}

// A candidate that names only a tap of a stale cluster (the tap's pass is
// the cluster's read) is held as if it named the cluster.
func TestStaleViewHoldsWhatReliesOnItsTaps(t *testing.T) {
	d := orphan("d")
	d.Sources = []string{inventory.TapKey("widgets", "a")}
	c := readAt("a", t0.Add(-time.Hour))
	c.Taps = map[string]inventory.Tapped{"widgets": {Complete: true, Items: 1}}
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	p := engine.Settings{FreshViews: true, FreshWithin: 5 * time.Minute, FreshWithinName: "fleet.records.deleteMaxAge", FreshHint: freshHint}.Build(snap(c), []engine.Kind{k}, seenSince(t0.Add(-48*time.Hour), d), t0)
	if got := enginetest.DecisionFor(t, p, "d"); !got.Held || !strings.Contains(got.Why(), "cluster a was read 1h") {
		t.Errorf("a candidate relying on a stale cluster's tap: %s held=%v (%s), want held", got.Action, got.Held, got.Why())
	}
}

// A settling view (a cluster's first records) keeps what it shows in use
// and holds every due delete relying on it until it settles, saying when:
// the plan is not incomplete, the clock is kept, and a candidate relying
// only on a settled cluster goes. Once settled, the same view deletes.
func TestSettlingViewReleasesNothing(t *testing.T) {
	since := t0.Add(-48 * time.Hour)
	settles := t0.Add(3 * time.Hour)
	newer := readAt("new", t0.Add(-time.Minute))
	newer.Settles = settles
	older := readAt("old", t0.Add(-time.Minute))
	older.Settles = t0.Add(-time.Hour) // settled an hour ago
	held := orphan("held")
	held.Sources = []string{inventory.ClusterKey("old"), inventory.ClusterKey("new")}
	goes := orphan("goes")
	goes.Sources = []string{inventory.ClusterKey("old")}
	used := inUse("used")
	used.Sources = []string{inventory.ClusterKey("new")}
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{held, goes, used}}
	set := engine.Settings{FreshViews: true, FreshWithin: 5 * time.Minute, FreshWithinName: "fleet.records.deleteMaxAge",
		FreshHint: freshHint, SettleHint: "fleet.records.dropSettle"}
	p := set.Build(snap(newer, older), []engine.Kind{k}, seenSince(since, held, goes), t0)
	got := enginetest.DecisionFor(t, p, "held")
	if got.Action != engine.Mark || !got.Held {
		t.Fatalf("held: %s held=%v (%s), want a held mark", got.Action, got.Held, got.Why())
	}
	for _, w := range []string{"cluster new's view settles at " + settles.Format(time.RFC3339), "fleet.records.dropSettle"} {
		if !strings.Contains(got.Why(), w) {
			t.Errorf("the reason does not say %q: %s", w, got.Why())
		}
	}
	if p.Incomplete {
		t.Errorf("a settling view made the plan incomplete: it is whole, only waiting")
	}
	if e, ok := p.State.Resources[held.ID]; !ok || !e.FirstSeen.Equal(since) {
		t.Errorf("the clock was not kept: %+v", e)
	}
	if got := enginetest.DecisionFor(t, p, "goes"); got.Action != engine.Delete {
		t.Errorf("goes relies only on a settled cluster: %s (%s), want delete", got.Action, got.Why())
	}
	if got := enginetest.DecisionFor(t, p, "used"); got.Action != engine.Keep {
		t.Errorf("used: %s, want keep", got.Action)
	}
	if !slices.ContainsFunc(p.Blocked, func(b string) bool {
		return strings.Contains(b, "cluster new could object to is made before "+settles.Format(time.RFC3339))
	}) {
		t.Errorf("the held-back notes do not say when cluster new settles: %q", p.Blocked)
	}
	// Settled: fresh views of the same clusters delete.
	newer.ReadAt, older.ReadAt = settles.Add(-time.Minute), settles.Add(-time.Minute)
	p = set.Build(snap(newer, older), []engine.Kind{k}, seenSince(since, held, goes), settles)
	if got := enginetest.DecisionFor(t, p, "held"); got.Action != engine.Delete {
		t.Errorf("at settle time: %s (%s), want delete", got.Action, got.Why())
	}
}

// The views' ages hold at the delete call, not only when the plan is made:
// a view fresh at planning that went stale while the delete waited (for
// its snapshot, up to snapshotTimeout, or its re-read) turns the delete
// into a deferral — no delete call, held (exit 3), its clock kept, the
// reason said — and a view still fresh lets it go. Rows (Proposal.Remake)
// carry their view as whole decisions do.
func TestFreshnessHoldsAtTheDeleteCall(t *testing.T) {
	const bound = 12 * time.Minute
	since := t0.Add(-48 * time.Hour)
	for name, tc := range map[string]struct {
		snapshot bool          // the clock moves during the snapshot wait; else during the re-read
		compact  bool          // the candidate is a row
		read     time.Duration // how old the view is at planning
		wait     time.Duration // how long the applier waited before the delete call
		deferred []string      // why; empty: deleted
	}{
		"snapshot wait, still fresh": {snapshot: true, read: 2 * time.Minute, wait: 5 * time.Minute},
		"snapshot wait, stale": {snapshot: true, read: 2 * time.Minute, wait: 30 * time.Minute,
			deferred: []string{"cluster a was read 32m ago", "more than fleet.records.deleteMaxAge 12m", freshHint, "right before the delete call"}},
		"snapshot wait, stale, a row": {snapshot: true, compact: true, read: 2 * time.Minute, wait: 30 * time.Minute,
			deferred: []string{"cluster a was read 32m ago"}},
		"re-read, still fresh": {read: 2 * time.Minute, wait: time.Minute},
		"re-read, stale":       {read: 11 * time.Minute, wait: 2 * time.Minute, deferred: []string{"cluster a was read 13m ago"}},
	} {
		t.Run(name, func(t *testing.T) {
			sk := newSnapKind("d")
			sk.reads = 1 // pending once, then done
			var k engine.Kind = sk
			if !tc.snapshot {
				k = sk.fakeKind
			}
			sk.items[0].Sources = []string{inventory.ClusterKey("a")}
			if tc.compact {
				sk.items, _ = compacted(sk.items)
			}
			set := engine.Settings{FreshViews: true, FreshWithin: bound, FreshWithinName: "fleet.records.deleteMaxAge", FreshHint: freshHint}
			p := set.Build(snap(readAt("a", t0.Add(-tc.read))), []engine.Kind{k}, seenSince(since, sk.items...), t0)
			if d := enginetest.DecisionFor(t, p, "d"); d.Action != engine.Delete {
				t.Fatalf("at planning: %s (%s), want delete", d.Action, d.Why())
			}
			a, buf, _ := enginetest.Applier(t0, 3, k)
			a.SnapshotPoll = time.Millisecond
			now := t0
			a.Now = func() time.Time { return now }
			wait := func() { now = t0.Add(tc.wait) }
			if tc.snapshot {
				sk.onState = wait
			} else {
				sk.onRecheck = wait
			}
			out, err := a.Apply(context.Background(), p, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.deferred) == 0 {
				if out.Deleted != 1 || !slices.Contains(sk.calls, "delete d") {
					t.Fatalf("still fresh: %+v, calls %v; want deleted", out.Results, sk.calls)
				}
				return
			}
			if out.Deferred != 1 || out.Deleted != 0 || out.Failed != 0 || slices.Contains(sk.calls, "delete d") {
				t.Fatalf("stale at the delete: %+v, calls %v; want deferred, no delete call", out.Results, sk.calls)
			}
			r := out.Results[0]
			for _, w := range tc.deferred {
				if !strings.Contains(r.Reason, w) {
					t.Errorf("the deferral does not say %q: %s", w, r.Reason)
				}
			}
			if got := enginetest.AuditResults(t, buf)[fakeID("d")]; !strings.HasSuffix(got, audit.Deferred) {
				t.Errorf("audit %q, want deferred", got)
			}
			if len(out.Saved.Pending) != 0 {
				t.Errorf("a pending mark stays for a delete never sent: %v", out.Saved.Pending)
			}
			if e, ok := out.Saved.Resources[fakeID("d")]; !ok || !e.FirstSeen.Equal(since) {
				t.Errorf("the clock was not kept: %+v", e)
			}
			if report.ExitCode(p, out) != report.ExitIncomplete {
				t.Errorf("exit %d, want %d: held back, not failed", report.ExitCode(p, out), report.ExitIncomplete)
			}
		})
	}
}
