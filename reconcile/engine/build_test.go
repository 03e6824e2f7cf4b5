package engine_test

import (
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

func TestGraceClock(t *testing.T) {
	k := &fakeKind{lim: testLimits(), items: orphans("d")}
	st := engine.NewState()
	// Orphan at t0, t0+3h, t0+6h: deletable only at t0+6h.
	for i, want := range []engine.Action{engine.Mark, engine.Mark, engine.Delete} {
		now := t0.Add(time.Duration(i) * 3 * time.Hour)
		p := build(k, st, now, complete("a"))
		if got := enginetest.DecisionFor(t, p, "d").Action; got != want {
			t.Fatalf("run %d: got %s want %s", i, got, want)
		}
		st = p.State
	}
	// In use again: the clock resets; unused again: starts over.
	k.items = []engine.Proposal{inUse("d")}
	p := build(k, st, t0.Add(7*time.Hour), complete("a"))
	if enginetest.DecisionFor(t, p, "d").Action != engine.Keep {
		t.Fatal("resource in use not kept")
	}
	k.items = orphans("d")
	p = build(k, p.State, t0.Add(8*time.Hour), complete("a"))
	if got := enginetest.DecisionFor(t, p, "d"); got.Action != engine.Mark || !got.OrphanSince.Equal(t0.Add(8*time.Hour)) {
		t.Fatalf("clock did not restart: %+v", got)
	}
}

func TestIncompleteClusterDoesNotStartClock(t *testing.T) {
	d := orphan("d")
	d.Sources = []string{inventory.SourceKey("cluster", "a"), inventory.SourceKey("cluster", "b")}
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	bad := inventory.ClusterRefs{Name: "b", Problems: []string{"timed out"}}
	p := build(k, engine.NewState(), t0, complete("a"), bad)
	if _, ok := p.State.Resources[d.ID]; ok {
		t.Fatal("an orphan clock started while a cluster was unreadable")
	}
	if !p.Incomplete || len(p.Blocked) == 0 {
		t.Fatal("plan does not say it is incomplete")
	}
}

func TestCapsAndBreaker(t *testing.T) {
	items := orphans("a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
	st := seenSince(t0.Add(-48*time.Hour), items...)
	// The oldest orphan goes first when capped.
	st.Seen(fakeID("j"), "v1", t0.Add(-100*time.Hour))

	cases := []struct {
		name  string
		limit func(*engine.Limits)
		want  int
	}{
		{"count cap", func(l *engine.Limits) { l.MaxDeletes = 3 }, 3},
		{"percent cap", func(l *engine.Limits) { l.MaxDeletePercent = 0.2 }, 2}, // of 10
		{"size cap", func(l *engine.Limits) { l.MaxFrees = amount.Amount{N: 250, Unit: testGB} }, 2},
		{"size cap of 0 GB", func(l *engine.Limits) { l.MaxFrees = amount.Amount{Unit: testGB} }, 0},
		// A cap counts only its own unit: the fakes free no addresses.
		{"cap of another unit", func(l *engine.Limits) { l.MaxFrees = amount.Amount{Unit: testAddresses} }, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lim := testLimits()
			c.limit(&lim)
			p := build(&fakeKind{lim: lim, items: items}, st, t0, complete("a"))
			if n := p.Count(fakeName, engine.Delete); n != c.want {
				t.Fatalf("%d deletes, want %d", n, c.want)
			}
			if c.want > 0 && enginetest.DecisionFor(t, p, "j").Action != engine.Delete {
				t.Fatal("oldest orphan was not first")
			}
		})
	}

	t.Run("breaker", func(t *testing.T) {
		lim := testLimits()
		lim.BreakerCandidates = 9
		p := build(&fakeKind{lim: lim, items: items}, st, t0, complete("a"))
		if n := p.Count(fakeName, engine.Delete); n != 0 || !p.BreakerTripped {
			t.Fatalf("breaker: %d deletes, tripped %v", n, p.BreakerTripped)
		}
		if !strings.Contains(enginetest.DecisionFor(t, p, "a").Why(), "breaker tripped (10 due > 9)") {
			t.Fatal(enginetest.DecisionFor(t, p, "a").Why())
		}
	})
}

func TestBuildIsPure(t *testing.T) {
	d := orphan("d")
	st := seenSince(t0.Add(-7*time.Hour), d)
	before := len(st.Resources)
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	p1 := build(k, st, t0, complete("a"))
	p2 := build(k, st, t0, complete("a"))
	if len(st.Resources) != before || len(p1.Decisions) != len(p2.Decisions) || p1.Decisions[0].Why() != p2.Decisions[0].Why() {
		t.Fatal("Build changed its input or is not deterministic")
	}
}

// RequireNotice: a due candidate waits until a delivered report announced it
// a grace period earlier; a new object under the id must be announced again.
func TestRequireNotice(t *testing.T) {
	for _, c := range []struct {
		name      string
		announced time.Duration // before t0; 0: never
		identity  string        // of the clock; "v1" is the object's
		want      engine.Action
		reason    string
	}{
		{"never announced", 0, "v1", engine.Mark, "not yet announced"},
		{"announced 2h ago, grace 6h", 2 * time.Hour, "v1", engine.Mark, "deletable after 2026-11-01T16:00:00Z"},
		{"announced 6h ago", 6 * time.Hour, "v1", engine.Delete, ""},
		{"announced, but for the object the id named before", 6 * time.Hour, "v0", engine.Mark, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := &fakeKind{lim: testLimits(), items: orphans("d")}
			st := engine.NewState()
			st.Seen(fakeID("d"), c.identity, t0.Add(-7*time.Hour))
			if c.announced > 0 {
				e := st.Resources[fakeID("d")]
				e.Announced = t0.Add(-c.announced)
				st.Resources[fakeID("d")] = e
			}
			p := engine.Settings{RequireNotice: true}.Build(snap(complete("a")), []engine.Kind{k}, st, t0)
			d := enginetest.DecisionFor(t, p, "d")
			if d.Action != c.want || !strings.Contains(d.Why(), c.reason) {
				t.Fatalf("%s %q, want %s with %q", d.Action, d.Why(), c.want, c.reason)
			}
			// Without the option the same plan deletes what is past grace.
			if c.identity == "v1" && enginetest.DecisionFor(t, engine.Build(snap(complete("a")), []engine.Kind{k}, st, t0), "d").Action != engine.Delete {
				t.Fatal("without RequireNotice the candidate is due")
			}
		})
	}
}

// Announce starts the notice for marked and due candidates only, once.
func TestAnnounce(t *testing.T) {
	k := &fakeKind{lim: testLimits(), items: append(orphans("new", "old"), inUse("kept"))}
	st := seenSince(t0.Add(-time.Hour), k.items[:2]...)
	e := st.Resources[fakeID("old")]
	e.Announced = t0.Add(-30 * time.Minute)
	st.Resources[fakeID("old")] = e
	p := engine.Settings{RequireNotice: true}.Build(snap(complete("a")), []engine.Kind{k}, st, t0)
	if n := p.State.Announce(p, t0); n != 1 {
		t.Fatalf("announced %d, want 1 (new)", n)
	}
	if got := p.State.Resources[fakeID("new")].Announced; !got.Equal(t0) {
		t.Fatalf("new announced %v", got)
	}
	if got := p.State.Resources[fakeID("old")].Announced; !got.Equal(t0.Add(-30 * time.Minute)) {
		t.Fatalf("old re-announced: %v", got)
	}
	if _, ok := p.State.Resources[fakeID("kept")]; ok {
		t.Fatal("a kept resource has no clock to announce")
	}
}

// The reasons say times and spans a person can tell apart: two times a
// reason compares that fall in one second are said with the precision
// that separates them (and only then), and a grace under a minute is said
// in seconds, not "0m".
func TestReasonsTellTimesAndSpansApart(t *testing.T) {
	began := t0.Add(-48*time.Hour + 500*time.Millisecond) // the clock
	for name, tc := range map[string]struct {
		grace  time.Duration
		since  time.Time // the clock; zero: started by this pass
		readAt time.Time // cluster a's view; zero: no FreshViews
		now    time.Time
		want   []string
	}{
		"read within the second before the grace began": {grace: 6 * time.Hour, since: began, readAt: began.Add(-300 * time.Millisecond), now: t0,
			want: []string{"read at 2026-10-30T12:00:00.200Z, before this candidate's grace began (2026-10-30T12:00:00.500Z)"}},
		"read an hour before the grace began": {grace: 6 * time.Hour, since: began, readAt: began.Add(-time.Hour), now: t0,
			want: []string{"read at 2026-10-30T11:00:00Z, before this candidate's grace began (2026-10-30T12:00:00Z)"}},
		"due with a grace of 0": {now: t0, want: []string{"orphan since 2026-11-01T12:00:00Z (grace 0s elapsed)"}},
		"due with a grace of 30s": {grace: 30 * time.Second, since: t0.Add(-time.Minute), now: t0,
			want: []string{"orphan since 2026-11-01T11:59:00Z (grace 30s elapsed)"}},
		"in a grace of 30s": {grace: 30 * time.Second, since: t0.Add(-10 * time.Second), now: t0,
			want: []string{"deletable after 2026-11-01T12:00:20Z (grace 30s)"}},
		"in a grace of 6h": {grace: 6 * time.Hour, since: t0.Add(-time.Hour), now: t0, want: []string{"(grace 6h)"}},
	} {
		d := orphan("d")
		d.Sources = []string{inventory.ClusterKey("a")}
		lim := testLimits()
		lim.Grace, lim.MinAge = tc.grace, 0
		k := &fakeKind{lim: lim, items: []engine.Proposal{d}}
		st := engine.NewState()
		if !tc.since.IsZero() {
			st = seenSince(tc.since, d)
		}
		set, c := engine.Settings{}, complete("a")
		if !tc.readAt.IsZero() {
			set = engine.Settings{FreshViews: true, FreshWithinName: "fleet.records.deleteMaxAge", FreshHint: freshHint}
			c = readAt("a", tc.readAt)
		}
		got := enginetest.DecisionFor(t, set.Build(snap(c), []engine.Kind{k}, st, tc.now), "d").Why()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the reason does not say %q: %s", name, w, got)
			}
		}
	}
}
