package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
)

// A proposal that is not a candidate is kept, whatever else its kind said
// of it (report-only, due long ago by its clock, its own wait): only
// candidates pass fail-closed, grace, caps and the breaker. A kind cannot
// say more: Proposal has no Action (TestProposalSaysNothingTheEngineDecides).
func TestNonCandidateIsNeverDeleted(t *testing.T) {
	for name, f := range map[string]func(*engine.Proposal){
		"plain":       func(*engine.Proposal) {},
		"report-only": func(p *engine.Proposal) { p.ReportOnly = true },
		"waiting":     func(p *engine.Proposal) { p.Wait, p.NotBefore = "not ready", t0.Add(time.Hour) },
	} {
		p := orphan("d")
		p.Candidate = false
		f(&p)
		k := &fakeKind{lim: testLimits(), items: []engine.Proposal{p}}
		plan := build(k, seenSince(t0.Add(-48*time.Hour), p), t0, complete("a"))
		if got := enginetest.DecisionFor(t, plan, "d"); got.Action != engine.Keep || got.Held || got.OrphanSince != nil || got.DeletableAfter != nil {
			t.Errorf("%s non-candidate: %s held=%v since=%v after=%v, want a plain keep", name, got.Action, got.Held, got.OrphanSince, got.DeletableAfter)
		}
		if _, ok := plan.State.Resources[p.ID]; ok {
			t.Errorf("%s non-candidate kept its clock", name)
		}
	}
}

// What a person protected is kept, whatever the kind proposed: a candidate
// past its grace, a report-only one, a terminal one; its clock is
// forgotten, its reason is the opt-out, its class the kind's or
// "protected" (invariant 5, the engine's alone).
func TestProtectedIsKeptWhateverTheKindProposes(t *testing.T) {
	long := t0.Add(-30 * 24 * time.Hour)
	due := orphan("due")
	reportOnly := orphan("report-only")
	reportOnly.ReportOnly = true
	terminal := finishedJob("terminal", long, long)
	classed := orphan("classed")
	for _, p := range []*engine.Proposal{&due, &reportOnly, &terminal} {
		p.Class, p.Protected = "", "protected by the label reclaim-protect"
	}
	classed.Class, classed.Protected = "protected-tag", "tagged reclaim.dev/protect=true"
	k := terminalKind(due, reportOnly, terminal, classed)
	st := seenSince(t0.Add(-48*time.Hour), due, reportOnly, classed)
	for _, set := range []engine.Settings{{}, {RequireNotice: true}} {
		p := plan(k, st, t0, set)
		for name, class := range map[string]string{"due": "protected", "report-only": "protected", "terminal": "protected", "classed": "protected-tag"} {
			d := enginetest.DecisionFor(t, p, name)
			if d.Action != engine.Keep || d.Class != class || !strings.HasPrefix(d.Why(), "protected by") && !strings.HasPrefix(d.Why(), "tagged") {
				t.Errorf("%s: %s %q (%s), want keep %q with the opt-out as reason", name, d.Action, d.Class, d.Why(), class)
			}
			if _, ok := p.State.Resources[d.ID]; ok {
				t.Errorf("%s: a protected resource kept its clock", name)
			}
		}
	}
}

// A source no collector reported was not read: a decision relying on it is
// held, whether it names a cluster the fleet did not list or any other
// source, and the plan says it is incomplete.
func TestSourceNeverReportedHolds(t *testing.T) {
	for _, key := range []string{inventory.SourceKey("cluster", "ghost"), inventory.SourceKey("ecr-registry", "123456789012/us-east-1")} {
		d := orphan("d")
		d.Sources = []string{inventory.SourceKey("cluster", "a"), key}
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

// A tap's pass is a source of its own: an incomplete pass, or one that never
// ran in a cluster (the cluster could not be reached), holds what relies on
// it, while a complete pass in a complete cluster lets it go.
func TestTapCompletenessHolds(t *testing.T) {
	withTap := func(tapped *inventory.Tapped) inventory.ClusterRefs {
		c := complete("a")
		if tapped != nil {
			c.Taps = map[string]inventory.Tapped{"widgets": *tapped}
		}
		return c
	}
	for name, tc := range map[string]struct {
		cluster inventory.ClusterRefs
		want    engine.Action
		why     string
	}{
		"complete":   {withTap(&inventory.Tapped{Complete: true, Items: 1}), engine.Delete, ""},
		"incomplete": {withTap(&inventory.Tapped{Problem: "list widgets: forbidden"}), engine.Mark, "tap widgets a could not be read completely"},
		"never ran":  {withTap(nil), engine.Mark, "tap widgets:a was not read"},
	} {
		d := orphan("d")
		d.Sources = []string{inventory.ClusterKey("a"), inventory.TapKey("widgets", "a")}
		k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
		p := build(k, seenSince(t0.Add(-48*time.Hour), d), t0, tc.cluster)
		got := enginetest.DecisionFor(t, p, "d")
		if got.Action != tc.want || got.Held != (tc.why != "") || p.Incomplete != (tc.why != "") || !strings.Contains(got.Why(), tc.why) {
			t.Errorf("%s: %s held=%v incomplete=%v (%s), want %s with %q", name, got.Action, got.Held, p.Incomplete, got.Why(), tc.want, tc.why)
		}
		if name == "incomplete" && !slices.ContainsFunc(p.Blocked, func(b string) bool { return strings.Contains(b, "forbidden") }) {
			t.Errorf("incomplete: the held-back notes do not say why: %q", p.Blocked)
		}
	}
}

// A tap key of a cluster reclaim did not read holds the decision: said
// once through the cluster's key when the decision names it, and as "not
// read" when it names the tap key alone (never a silent pass).
func TestTapOfAnUnreadClusterHolds(t *testing.T) {
	for name, sources := range map[string][]string{
		"with its cluster": {inventory.ClusterKey("ghost"), inventory.TapKey(inventory.ReadWorkloads, "ghost")},
		"tap key alone":    {inventory.TapKey("widgets", "ghost")},
	} {
		d := orphan("d")
		d.Sources = sources
		k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
		p := build(k, seenSince(t0.Add(-48*time.Hour), d), t0, complete("a"))
		got := enginetest.DecisionFor(t, p, "d")
		if got.Action != engine.Mark || !got.Held || !strings.Contains(got.Why(), "not read") {
			t.Errorf("%s: %s held=%v (%s), want a held mark saying what was not read", name, got.Action, got.Held, got.Why())
		}
		if n := strings.Count(got.Why(), "ghost"); n != 1 {
			t.Errorf("%s: the unread cluster is named %d times, want once: %s", name, n, got.Why())
		}
	}
}

// The collector's own reads (a cluster's images, its workloads) hold what
// names them when the cluster was read without them: the engine's rule, not
// a kind's hold. A cluster that failed is held by its own source.
func TestReadNotAskedHolds(t *testing.T) {
	for name, tc := range map[string]struct {
		cluster inventory.ClusterRefs
		want    engine.Action
		why     string
	}{
		"asked":     {inventory.ClusterRefs{Name: "a", Complete: true, ImagesListed: true}, engine.Delete, ""},
		"not asked": {inventory.ClusterRefs{Name: "a", Complete: true}, engine.Mark, "cluster a was not asked for its images"},
		"failed":    {inventory.ClusterRefs{Name: "a", Problems: []string{"list pods: forbidden"}}, engine.Mark, "cluster a could not be read completely"},
	} {
		d := orphan("d")
		d.Sources = []string{inventory.ClusterKey("a"), inventory.TapKey(inventory.ReadImages, "a")}
		k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
		p := build(k, seenSince(t0.Add(-48*time.Hour), d), t0, tc.cluster)
		got := enginetest.DecisionFor(t, p, "d")
		if got.Action != tc.want || got.Held != (tc.why != "") || !strings.Contains(got.Why(), tc.why) {
			t.Errorf("%s: %s held=%v (%s), want %s with %q", name, got.Action, got.Held, got.Why(), tc.want, tc.why)
		}
		if name == "failed" && strings.Contains(got.Why(), "not asked") {
			t.Errorf("failed: a failed cluster is said to be not asked: %s", got.Why())
		}
		if len(p.Sources) != 1 {
			t.Errorf("%s: the collector's own reads became sources: %+v", name, p.Sources)
		}
	}
}

// A kind's own reason to distrust its evidence (Proposal.Hold) holds a
// candidate past its grace: marked, held, the plan incomplete.
func TestKindHoldHolds(t *testing.T) {
	d := orphan("d")
	d.Hold = "a reference could not be resolved"
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	p := build(k, seenSince(t0.Add(-48*time.Hour), d), t0, complete("a"))
	got := enginetest.DecisionFor(t, p, "d")
	if got.Action != engine.Mark || !got.Held || !p.Incomplete || !strings.Contains(got.Why(), d.Hold) {
		t.Fatalf("%s held=%v incomplete=%v: %s", got.Action, got.Held, p.Incomplete, got.Why())
	}
}

// A candidate younger than the kind's minimum age waits, whatever its clock.
func TestMinimumAge(t *testing.T) {
	d := orphan("d")
	d.Created = t0.Add(-2 * time.Hour) // min age 24h, grace 6h
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	p := build(k, seenSince(t0.Add(-48*time.Hour), d), t0, complete("a"))
	got := enginetest.DecisionFor(t, p, "d")
	if got.Action != engine.Mark || !strings.Contains(got.Why(), "younger than min age") {
		t.Fatalf("%s: %s", got.Action, got.Why())
	}
	if want := t0.Add(22 * time.Hour); got.DeletableAfter == nil || !got.DeletableAfter.Equal(want) {
		t.Fatalf("deletable after %v, want %v (made plus min age)", got.DeletableAfter, want)
	}
}

// A report-only candidate's clock runs, but it is never deleted.
func TestReportOnlyIsNeverDeleted(t *testing.T) {
	d := orphan("d")
	d.ReportOnly = true
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	p := build(k, seenSince(t0.Add(-48*time.Hour), d), t0, complete("a"))
	got := enginetest.DecisionFor(t, p, "d")
	if got.Action != engine.Report || got.OrphanSince == nil {
		t.Fatalf("%s since %v, want report with its clock", got.Action, got.OrphanSince)
	}
	if _, ok := p.State.Resources[d.ID]; !ok {
		t.Fatal("a report-only candidate's clock was dropped")
	}
}

// A due decision that waits for another (After) is deleted only in the same
// run as what it waits for; while that one is not due, it is marked.
func TestPlanDependencies(t *testing.T) {
	items := orphans("index", "child")
	items[1].After, items[1].AfterWhy = []string{fakeID("index")}, "its index"
	st := seenSince(t0.Add(-48*time.Hour), items[1])
	st.Seen(fakeID("index"), "v1", t0.Add(-time.Hour)) // within its grace
	k := &fakeKind{lim: testLimits(), items: items}
	p := build(k, st, t0, complete("a"))
	child := enginetest.DecisionFor(t, p, "child")
	if child.Action != engine.Mark || !strings.Contains(child.Why(), "waits for its index") {
		t.Fatalf("child %s: %s", child.Action, child.Why())
	}
	p = build(k, seenSince(t0.Add(-48*time.Hour), items...), t0, complete("a"))
	if a, b := enginetest.DecisionFor(t, p, "index").Action, enginetest.DecisionFor(t, p, "child").Action; a != engine.Delete || b != engine.Delete {
		t.Fatalf("both due: index %s, child %s", a, b)
	}
}

// A pending delete whose outcome the listing cannot tell (presence unknown)
// stays pending for a later run: neither confirmed nor planned anew.
func TestPendingWaitsOnUnknownPresence(t *testing.T) {
	st := engine.NewState()
	st.Pending[fakeID("a")] = engine.Pending{Kind: fakeName, Started: t0.Add(-time.Hour), Identity: "v1", Reason: "nobody uses it"}
	k := &fakeKind{lim: testLimits(), unknown: true}
	p := build(k, st, t0, complete("a"))
	if len(p.Confirmed) != 0 {
		t.Fatalf("confirmed %v on unknown presence", p.Confirmed)
	}
	if _, ok := p.State.Pending[fakeID("a")]; !ok {
		t.Fatal("the pending mark was dropped on unknown presence")
	}
}

// A re-read that says the resource changed (Skip) keeps it: no delete call,
// the result skipped, the audit saying so.
func TestApplyRereadSkipIsNotDeleted(t *testing.T) {
	k, p, a, buf, _ := applyFixture("a")
	k.verdicts["a"] = engine.Verdict{Result: engine.Skip, Reason: "skipped: in use again"}
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range k.calls {
		if c == "delete a" {
			t.Fatal("deleted what the re-read skipped")
		}
	}
	if len(out.Results) != 1 || out.Results[0].Result != audit.Skipped || out.Deleted != 0 {
		t.Fatalf("%+v", out)
	}
	if got := enginetest.AuditResults(t, buf)[fakeID("a")]; got != audit.Skipped {
		t.Fatalf("audit: %q", got)
	}
}

// streamKind proposes through a Stream, with a scope far larger than what
// it proposes (a registry of a million images proposes its notable few).
type streamKind struct{ fakeKind }

func (k *streamKind) Propose(*inventory.View, time.Time) engine.Proposals {
	return engine.Proposals{InScope: 10_000_000, Stream: func(yield func(*engine.Proposal) bool) {
		for i := range k.items {
			if !yield(&k.items[i]) {
				return
			}
		}
	}}
}

// The plan's decisions are sized by what kinds propose, never by their
// scope: room for ten million decisions would be gigabytes.
func TestPlanIsSizedByProposalsNotScope(t *testing.T) {
	k := &streamKind{fakeKind{lim: testLimits(), items: orphans("a", "b")}}
	p := engine.Build(snap(complete("a")), []engine.Kind{k}, engine.NewState(), t0)
	if len(p.Decisions) != 2 || cap(p.Decisions) > 1000 {
		t.Fatalf("%d decisions in room for %d", len(p.Decisions), cap(p.Decisions))
	}
}

// finishKind streams its proposals and says what it read when done.
type finishKind struct {
	fakeKind
	finished engine.Finished
}

func (k *finishKind) Propose(*inventory.View, time.Time) engine.Proposals {
	return engine.Proposals{
		Sources: []engine.Source{{Kind: "registry", Name: "r", Complete: true}},
		Stream: func(yield func(*engine.Proposal) bool) {
			for i := range k.items {
				if !yield(&k.items[i]) {
					return
				}
			}
		},
		Finish: func() engine.Finished { return k.finished },
	}
}

// A kind that reads as it streams says after the stream what it read: its
// sources replace those it gave first (an incomplete one makes the plan
// incomplete), and its scope is what the percent cap is a share of.
func TestFinishAfterTheStream(t *testing.T) {
	items := orphans("a", "b", "c", "d")
	lim := testLimits()
	lim.MaxDeletePercent = 0.5
	k := &finishKind{fakeKind: fakeKind{lim: lim, items: items}, finished: engine.Finished{
		Sources: []engine.Source{{Kind: "registry", Name: "r", Complete: false, Problems: []string{"repository x: throttled"}}},
		Blocked: []string{"registry r: repository x could not be listed"},
		InScope: 4,
	}}
	p := engine.Build(snap(complete("a")), []engine.Kind{k}, seenSince(t0.Add(-48*time.Hour), items...), t0)
	var got []engine.Source
	for _, s := range p.Sources {
		if s.Kind == "registry" {
			got = append(got, s)
		}
	}
	if len(got) != 1 || got[0].Complete || !p.Incomplete {
		t.Fatalf("registry sources %+v, plan incomplete %v: want the one the kind finished with", got, p.Incomplete)
	}
	if !strings.Contains(strings.Join(p.Blocked, "\n"), "repository x could not be listed") {
		t.Fatalf("blocked %v", p.Blocked)
	}
	if n := p.Count(fakeName, engine.Delete); n != 2 {
		t.Fatalf("%d deletes, want 2 (50%% of the 4 in scope the kind finished with)", n)
	}
}

// run --kind and --cluster: what the filter leaves out is held with the
// reason (and no exit status of its own), what it keeps is deleted, and the
// filter never makes anything deletable.
func TestFilterHoldsWhatItLeavesOut(t *testing.T) {
	inA, inB, cloud := orphan("a1"), orphan("b1"), orphan("disk")
	inA.ID, inB.ID = "clusters/a/namespaces/n/fakes/a1", "clusters/b/namespaces/n/fakes/b1"
	young := orphan("young")
	young.ID = "clusters/a/namespaces/n/fakes/young"
	items := []engine.Proposal{inA, inB, cloud, young}
	st := seenSince(t0.Add(-48*time.Hour), inA, inB, cloud)
	for _, c := range []struct {
		name   string
		f      engine.Filter
		delete []string
	}{
		{"no filter", engine.Filter{}, []string{"a1", "b1", "disk"}},
		{"its kind", engine.Filter{Kinds: []string{fakeName}}, []string{"a1", "b1", "disk"}},
		{"another kind", engine.Filter{Kinds: []string{"k8s-job"}}, nil},
		{"cluster a", engine.Filter{Clusters: []string{"a"}}, []string{"a1"}},
		{"clusters a and b", engine.Filter{Clusters: []string{"a", "b"}}, []string{"a1", "b1"}},
		{"its kind in cluster b", engine.Filter{Kinds: []string{fakeName}, Clusters: []string{"b"}}, []string{"b1"}},
	} {
		k := &fakeKind{lim: testLimits(), items: items}
		p := engine.Settings{Only: c.f}.Build(snap(complete("a"), complete("b")), []engine.Kind{k}, st, t0)
		for _, d := range p.Decisions {
			want := slices.Contains(c.delete, d.Name)
			switch {
			case want && d.Action != engine.Delete:
				t.Errorf("%s: %s is %s, want delete: %s", c.name, d.Name, d.Action, d.Why())
			case !want && d.Action == engine.Delete:
				t.Errorf("%s: %s deleted", c.name, d.Name)
			case !want && d.Name != "young" && (!d.Held || !strings.Contains(d.Why(), "this run deletes only")):
				t.Errorf("%s: %s held=%v, reason %q: want held by the filter", c.name, d.Name, d.Held, d.Why())
			}
		}
		if p.Incomplete || p.BreakerTripped {
			t.Errorf("%s: a filter made the plan incomplete or tripped the breaker", c.name)
		}
	}
}

// The breaker judges everything due, the filter's leftovers included; the
// caps are spent on what the filter keeps.
func TestFilterAfterBreakerBeforeCaps(t *testing.T) {
	old, newer := orphan("old"), orphan("new")
	old.ID, newer.ID = "clusters/b/namespaces/n/fakes/old", "clusters/a/namespaces/n/fakes/new"
	st := seenSince(t0.Add(-72*time.Hour), old)
	st.Seen(newer.ID, newer.Identity, t0.Add(-48*time.Hour))
	only := engine.Settings{Only: engine.Filter{Clusters: []string{"a"}}}

	lim := testLimits()
	lim.BreakerCandidates = 1
	p := only.Build(snap(complete("a"), complete("b")), []engine.Kind{&fakeKind{lim: lim, items: []engine.Proposal{old, newer}}}, st, t0)
	if !p.BreakerTripped {
		t.Error("two due with a breaker at 1: the filter hid the surge from the breaker")
	}

	lim = testLimits()
	lim.MaxDeletes = 1
	p = only.Build(snap(complete("a"), complete("b")), []engine.Kind{&fakeKind{lim: lim, items: []engine.Proposal{old, newer}}}, st, t0)
	if got := enginetest.DecisionFor(t, p, "new"); got.Action != engine.Delete {
		t.Errorf("cap 1, the oldest filtered out: new is %s (%s), want delete", got.Action, got.Why())
	}
}

// A failed listing proves nothing: only a complete one says gone.
func TestListedPresence(t *testing.T) {
	scope := func(id string) (string, bool) { s, _, ok := strings.Cut(id, "/"); return s, ok }
	p := engine.Listed(scope, map[string]bool{"a": true, "b": false}, map[string]bool{"a/x": true, "b/x": true})
	for id, want := range map[string]engine.Presence{
		"a/x": engine.Present, "a/y": engine.Gone, // a was listed completely
		"b/x": engine.Unknown, "b/y": engine.Unknown, // b's listing failed
		"c/x": engine.Unknown, "bad": engine.Unknown, // not listed, or no scope
	} {
		if got := p(id); got != want {
			t.Errorf("%s: %v, want %v", id, got, want)
		}
	}
}

// The breaker is for a wave of orphans: candidates of a quota class (a
// pool over its limit, trimmed back) do not count, the caps still pace
// them, and a wave among the rest holds everything of the kind.
func TestBreakerCountsOrphansNotQuotaTrims(t *testing.T) {
	quota := func(names ...string) []engine.Proposal {
		ps := orphans(names...)
		for i := range ps {
			ps[i].Class = "trim"
		}
		return ps
	}
	for _, c := range []struct {
		name    string
		items   []engine.Proposal
		tripped bool
		deleted int
	}{
		{"a backlog of quota trims", quota("q1", "q2", "q3", "q4"), false, 3},
		{"quota trims and orphans within the breaker", append(quota("q1", "q2", "q3"), orphans("o1", "o2")...), false, 3},
		{"a wave of orphans beside the trims", append(quota("q1", "q2"), orphans("o1", "o2", "o3")...), true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			lim := testLimits()
			lim.BreakerCandidates, lim.MaxDeletes, lim.QuotaClasses = 2, 3, []string{"trim"}
			p := build(&fakeKind{lim: lim, items: c.items}, seenSince(t0.Add(-7*time.Hour), c.items...), t0, complete("a"))
			if p.BreakerTripped != c.tripped || p.Count(fakeName, engine.Delete) != c.deleted {
				t.Fatalf("tripped %v, deleted %d; want %v, %d (held back %q)", p.BreakerTripped, p.Count(fakeName, engine.Delete), c.tripped, c.deleted, p.Blocked)
			}
		})
	}
}

// The presence rule: a scope not listed completely proves nothing, whatever
// the listing shows; a complete one shows an id or proves it gone.
func TestListedByHoldsWhatAnIncompleteScopeCannotProve(t *testing.T) {
	complete := map[string]bool{"a/1": true, "b/1": false}
	shown := map[string]bool{"a/1": true, "b/1": true}
	p := engine.ListedBy(func(id string) bool { return complete[id] || id == "a/2" }, func(id string) bool { return shown[id] })
	for id, want := range map[string]engine.Presence{"a/1": engine.Present, "a/2": engine.Gone, "b/1": engine.Unknown, "c/1": engine.Unknown} {
		if got := p(id); got != want {
			t.Errorf("%s: %v, want %v", id, got, want)
		}
	}
	l := engine.Listed(func(id string) (string, bool) { s, _, ok := strings.Cut(id, "/"); return s, ok },
		map[string]bool{"a": true, "b": false}, map[string]bool{"a/1": true, "b/1": true})
	for id, want := range map[string]engine.Presence{"a/1": engine.Present, "a/2": engine.Gone, "b/1": engine.Unknown, "bad": engine.Unknown} {
		if got := l(id); got != want {
			t.Errorf("Listed %s: %v, want %v", id, got, want)
		}
	}
}
