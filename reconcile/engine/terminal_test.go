package engine_test

import (
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// finishedJob is a terminal candidate: a candidate by its own evidence
// since from (finished plus retention), shown by the listing "cluster:a".
func finishedJob(name string, created, from time.Time) engine.Proposal {
	p := orphan(name)
	p.Created, p.CandidateFrom = created, from
	p.Witnesses = []engine.Witness{{Listing: "cluster:a", Version: "100"}}
	return p
}

func terminalKind(items ...engine.Proposal) *fakeKind {
	lim := testLimits()
	lim.MinAge = 0
	return &fakeKind{lim: lim, items: items, listings: map[string]engine.Read{"cluster:a": {Complete: true, Version: "1000"}}}
}

// plan builds k's plan with the settings, if any.
func plan(k *fakeKind, st engine.State, now time.Time, set ...engine.Settings) *engine.Plan {
	var s engine.Settings
	if len(set) > 0 {
		s = set[0]
	}
	return s.Build(&inventory.View{TakenAt: now}, []engine.Kind{k}, st, now)
}

// A backlog of terminal candidates costs the state the listing's reads, not
// a clock each; and still none is deleted on first sight, however long ago
// its own evidence made it a candidate.
func TestTerminalCandidatesNeedNoClockOfTheirOwn(t *testing.T) {
	long := t0.Add(-30 * 24 * time.Hour)
	k := terminalKind(finishedJob("old", long, long), finishedJob("older", long, long.Add(-time.Hour)))
	p1 := plan(k, engine.NewState(), t0)
	for _, n := range []string{"old", "older"} {
		if d := enginetest.DecisionFor(t, p1, n); d.Action != engine.Mark || !d.OrphanSince.Equal(t0) {
			t.Fatalf("first sight: %s %s since %v", n, d.Action, d.OrphanSince)
		}
	}
	if len(p1.State.Resources) != 0 || len(p1.State.Reads["fake cluster:a"]) != 1 {
		t.Fatalf("state: clocks %v, reads %v", p1.State.Resources, p1.State.Reads)
	}
	p2 := plan(k, p1.State, t0.Add(time.Hour))
	if d := enginetest.DecisionFor(t, p2, "old"); d.Action != engine.Mark {
		t.Fatalf("within grace: %s (%s)", d.Action, d.Why())
	}
	p3 := plan(k, p2.State, t0.Add(6*time.Hour))
	if d := enginetest.DecisionFor(t, p3, "old"); d.Action != engine.Delete || !d.OrphanSince.Equal(t0) {
		t.Fatalf("after grace: %s since %v", d.Action, d.OrphanSince)
	}
}

// An object made after a read was not seen by it: its clock starts at the
// first read after it was made, even if its own times say it finished long
// before (a Job recreated under the same name).
func TestTerminalCandidateCountsFromTheFirstReadAfterItWasMade(t *testing.T) {
	k := terminalKind()
	p := plan(k, engine.NewState(), t0)
	k.items = []engine.Proposal{finishedJob("new", t0.Add(time.Minute), t0.Add(-48*time.Hour))}
	p = plan(k, p.State, t0.Add(time.Hour))
	if d := enginetest.DecisionFor(t, p, "new"); d.Action != engine.Mark || !d.OrphanSince.Equal(t0.Add(time.Hour)) {
		t.Fatalf("%s since %v", d.Action, d.OrphanSince)
	}
	// And from the first read after it became a candidate.
	k.items = []engine.Proposal{finishedJob("late", t0.Add(-time.Hour), t0.Add(90*time.Minute))}
	p = plan(k, p.State, t0.Add(2*time.Hour))
	if d := enginetest.DecisionFor(t, p, "late"); !d.OrphanSince.Equal(t0.Add(2 * time.Hour)) {
		t.Fatalf("since %v, want the read at +2h", d.OrphanSince)
	}
}

// An incomplete read records nothing and keeps the earlier reads; a policy
// change (the key no longer named) starts every derived clock anew.
func TestTerminalCoverageAcrossIncompleteReadsAndPolicyChanges(t *testing.T) {
	long := t0.Add(-30 * 24 * time.Hour)
	k := terminalKind(finishedJob("j", long, long))
	p := plan(k, engine.NewState(), t0)
	k.listings["cluster:a"] = engine.Read{Version: "1001"}
	p = plan(k, p.State, t0.Add(3*time.Hour))
	if reads := p.State.Reads["fake cluster:a"]; len(reads) != 1 || !reads[0].At.Equal(t0) {
		t.Fatalf("reads after an incomplete one: %v", reads)
	}
	k.listings["cluster:a"] = engine.Read{Complete: true, Version: "1002"}
	if d := enginetest.DecisionFor(t, plan(k, p.State, t0.Add(7*time.Hour)), "j"); d.Action != engine.Delete {
		t.Fatalf("%s (%s)", d.Action, d.Why())
	}
	// The policy changed: the key is another one.
	k.listings = map[string]engine.Read{"cluster:a policy:2": {Complete: true, Version: "1003"}}
	k.items[0].Witnesses = []engine.Witness{{Listing: "cluster:a policy:2", Version: "100"}}
	p = plan(k, p.State, t0.Add(7*time.Hour))
	if d := enginetest.DecisionFor(t, p, "j"); d.Action != engine.Mark || !d.OrphanSince.Equal(t0.Add(7*time.Hour)) {
		t.Fatalf("after a policy change: %s since %v", d.Action, d.OrphanSince)
	}
	if _, ok := p.State.Reads["fake cluster:a"]; ok {
		t.Fatal("the old key's reads were kept")
	}
}

// Reads are pruned to the last two grace periods and the newest before them.
func TestTerminalCoverageIsBounded(t *testing.T) {
	k := terminalKind()
	st := engine.NewState()
	for h := range 100 {
		st = plan(k, st, t0.Add(time.Duration(h)*time.Hour)).State
	}
	reads := st.Reads["fake cluster:a"]
	if len(reads) != 14 || !reads[0].At.Equal(t0.Add(86*time.Hour)) {
		t.Fatalf("%d reads from %v, want 14 from +86h", len(reads), reads[0].At)
	}
}

// A clock kept from before is honoured (an upgrade restarts nothing).
func TestTerminalCandidateKeepsAnExistingClock(t *testing.T) {
	long := t0.Add(-30 * 24 * time.Hour)
	k := terminalKind(finishedJob("j", long, long))
	st := engine.NewState()
	st.Seen(fakeID("j"), "v1", t0.Add(-7*time.Hour))
	p := plan(k, st, t0)
	if d := enginetest.DecisionFor(t, p, "j"); d.Action != engine.Delete {
		t.Fatalf("%s (%s)", d.Action, d.Why())
	}
	if _, ok := p.State.Resources[fakeID("j")]; !ok {
		t.Fatal("the existing clock was dropped")
	}
}

// requireNotice: a terminal candidate is announced by the first delivered
// report of a run that saw it, not by one before.
func TestTerminalCandidateNotice(t *testing.T) {
	long := t0.Add(-30 * 24 * time.Hour)
	k := terminalKind()
	p0 := plan(k, engine.NewState(), t0.Add(-time.Hour), engine.Settings{RequireNotice: true})
	st := p0.State
	st.Announce(p0, t0.Add(-time.Hour+time.Minute)) // a report before the Job was made
	k.items = []engine.Proposal{finishedJob("j", t0.Add(-30*time.Minute), long)}
	p1 := plan(k, st, t0, engine.Settings{RequireNotice: true})
	st = p1.State
	p2 := plan(k, st, t0.Add(7*time.Hour), engine.Settings{RequireNotice: true})
	if d := enginetest.DecisionFor(t, p2, "j"); d.Action == engine.Delete {
		t.Fatalf("deleted without notice: %s", d.Why())
	}
	st.Announce(p1, t0.Add(time.Minute))
	if d := enginetest.DecisionFor(t, plan(k, st, t0.Add(7*time.Hour), engine.Settings{RequireNotice: true}), "j"); d.Action != engine.Delete {
		t.Fatalf("announced 7h ago: %s (%s)", d.Action, d.Why())
	}
}

// A candidate changed since a read (a protect label removed, a retention
// annotation shortened: its version is newer) was not this candidate then:
// its clock starts at the first read that showed its version.
func TestTerminalCandidateChangedSinceARead(t *testing.T) {
	long := t0.Add(-30 * 24 * time.Hour)
	j := finishedJob("j", long, long)
	k := terminalKind()
	p := plan(k, engine.NewState(), t0) // j was kept then (protected): no proposal
	j.Witnesses[0].Version = "1500"     // the label removed after that read
	k.items = []engine.Proposal{j}
	k.listings["cluster:a"] = engine.Read{Complete: true, Version: "2000"}
	p = plan(k, p.State, t0.Add(time.Hour))
	if d := enginetest.DecisionFor(t, p, "j"); d.Action != engine.Mark || !d.OrphanSince.Equal(t0.Add(time.Hour)) {
		t.Fatalf("changed after the first read: %s since %v", d.Action, d.OrphanSince)
	}
	p = plan(k, p.State, t0.Add(6*time.Hour))
	if d := enginetest.DecisionFor(t, p, "j"); d.Action != engine.Mark {
		t.Fatalf("deleted 5h after it became a candidate (grace 6h): %s", d.Why())
	}
	if d := enginetest.DecisionFor(t, plan(k, p.State, t0.Add(7*time.Hour)), "j"); d.Action != engine.Delete {
		t.Fatalf("after its grace: %s (%s)", d.Action, d.Why())
	}
}

// Every witness must have shown its version at the same run (a pod and its
// Job); a version that is not a resourceVersion falls back to a clock.
func TestTerminalCandidateWithTwoWitnesses(t *testing.T) {
	long := t0.Add(-30 * 24 * time.Hour)
	pod := finishedJob("pod", long, long)
	pod.Witnesses = append(pod.Witnesses, engine.Witness{Listing: "cluster:a jobs", Version: "900"})
	k := terminalKind(pod)
	k.listings["cluster:a jobs"] = engine.Read{Complete: true, Version: "800"} // its Job changed since
	p := plan(k, engine.NewState(), t0)
	k.listings["cluster:a jobs"] = engine.Read{Complete: true, Version: "950"}
	p = plan(k, p.State, t0.Add(time.Hour))
	p = plan(k, p.State, t0.Add(6*time.Hour))
	if d := enginetest.DecisionFor(t, p, "pod"); d.Action != engine.Mark || !d.OrphanSince.Equal(t0.Add(time.Hour)) {
		t.Fatalf("%s since %v, want since the read that showed its Job's version", d.Action, d.OrphanSince)
	}
	odd := finishedJob("odd", long, long)
	odd.Witnesses[0].Version = "abc"
	k.items = []engine.Proposal{odd}
	p = plan(k, p.State, t0.Add(7*time.Hour))
	if _, ok := p.State.Resources[fakeID("odd")]; !ok {
		t.Fatal("no clock for a candidate whose version cannot be compared")
	}
}
