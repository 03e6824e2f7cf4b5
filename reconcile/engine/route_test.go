package engine_test

import (
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/reconcile/engine"
)

// at is a Detail that says where its resource lives.
type at engine.Where

func (w at) Where() engine.Where { return engine.Where(w) }

func placed(name string, w engine.Where) engine.Proposal {
	p := orphan(name)
	p.Detail = at(w)
	return p
}

var teamRoutes = []engine.Route{
	{Owner: "etl", Namespaces: []string{"etl", "etl-*"}},
	{Owner: "ml", Clusters: []string{"ml-*"}, Labels: map[string]string{"team": "ml"}},
	{Owner: "catch-etl", Namespaces: []string{"etl*"}}, // after etl: never wins over it
	{Owner: "repos", Kinds: []string{"fake"}, Repositories: []string{"data/*"}},
}

// Each candidate is owned by the first route that matches it; every list a
// route gives must match, an unknown field matches no pattern, and a
// Detail that says nothing of where it lives is nobody's.
func TestRoutesNameTheFirstMatchingOwner(t *testing.T) {
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{
		placed("etl-job", engine.Where{Cluster: "prod", Namespace: "etl-nightly"}),
		placed("etl-x", engine.Where{Namespace: "etlx"}),
		placed("ml-disk", engine.Where{Cluster: "ml-use1", Labels: map[string]string{"team": "ml"}}),
		placed("ml-unlabelled", engine.Where{Cluster: "ml-use1"}),
		placed("image", engine.Where{Repository: "data/loader", Scope: "123456789012/us-east-1"}),
		placed("image-nested", engine.Where{Repository: "data/loader/v2"}),
		placed("nowhere", engine.Where{}),
		orphan("no-detail"),
	}}
	p := plan(k, engine.NewState(), t0, engine.Settings{Routes: teamRoutes})
	want := map[string]string{"etl-job": "etl", "etl-x": "catch-etl", "ml-disk": "ml", "ml-unlabelled": "",
		"image": "repos", "image-nested": "", "nowhere": "", "no-detail": ""}
	for name, owner := range want {
		if d := enginetest.DecisionFor(t, p, name); d.Owner != owner {
			t.Errorf("%s: owner %q, want %q", name, d.Owner, owner)
		}
	}
	if d := enginetest.DecisionFor(t, plan(k, engine.NewState(), t0), "etl-job"); d.Owner != "" {
		t.Errorf("without routes: owner %q", d.Owner)
	}
}

// requireNotice with routes: a candidate of a routed owner is announced only
// by a report cut to that owner; the fleet's (uncut) report announces the
// rest. A candidate whose owner was never told is never deleted, whoever
// else was.
func TestRoutedNoticeAnnouncesOnlyItsOwners(t *testing.T) {
	long := t0.Add(-30 * 24 * time.Hour)
	etl := finishedJob("etl-job", t0.Add(-30*time.Minute), long)
	etl.Detail = at{Namespace: "etl"}
	ml := finishedJob("ml-job", t0.Add(-30*time.Minute), long)
	ml.Detail = at{Cluster: "ml-use1", Labels: map[string]string{"team": "ml"}}
	other := finishedJob("other-job", t0.Add(-30*time.Minute), long)
	other.Detail = at{Namespace: "default"}
	k := terminalKind(etl, ml, other)
	opts := engine.Settings{RequireNotice: true, Routes: teamRoutes}
	p1 := plan(k, engine.NewState(), t0, opts)
	st := p1.State
	actions := func(when string, want map[string]engine.Action) {
		t.Helper()
		p := plan(k, st, t0.Add(7*time.Hour), opts)
		for name, a := range want {
			if d := enginetest.DecisionFor(t, p, name); d.Action != a {
				t.Errorf("%s: %s %s, want %s (%s)", when, name, d.Action, a, d.Why())
			}
		}
	}
	st.Announce(cut(p1, "etl"), t0.Add(time.Minute), "etl")
	actions("after etl's report", map[string]engine.Action{"etl-job": engine.Delete, "ml-job": engine.Mark, "other-job": engine.Mark})
	st.Announce(p1, t0.Add(2*time.Minute)) // the fleet's report lists ml's too, but is not ml's
	actions("after the fleet's report", map[string]engine.Action{"etl-job": engine.Delete, "ml-job": engine.Mark, "other-job": engine.Delete})
	st.Announce(cut(p1, "ml"), t0.Add(3*time.Minute), "ml")
	actions("after ml's report", map[string]engine.Action{"ml-job": engine.Delete})
}

// An owner label names the owner, over the routes' matching; an owner no
// route names is unrouted: the fleet's report gives its notice.
func TestOwnerLabelNamesTheOwner(t *testing.T) {
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{
		placed("labelled", engine.Where{Namespace: "etl", Labels: map[string]string{"team": "web"}}),
		placed("ml-labelled", engine.Where{Labels: map[string]string{"team": "ml"}}),
		placed("unlabelled", engine.Where{Namespace: "etl"}),
		placed("in-labelled-ns", engine.Where{Namespace: "etl", NamespaceLabels: map[string]string{"team": "data"}}),
		placed("own-over-ns", engine.Where{Labels: map[string]string{"team": "ml"}, NamespaceLabels: map[string]string{"team": "data"}})}}
	owner := func(p *engine.Plan, name string) string { return enginetest.DecisionFor(t, p, name).Owner }
	opts := engine.Settings{RequireNotice: true, OwnerLabel: "team", Routes: teamRoutes}
	p := plan(k, engine.NewState(), t0, opts)
	if owner(p, "labelled") != "web" || owner(p, "ml-labelled") != "ml" || owner(p, "unlabelled") != "etl" ||
		owner(p, "in-labelled-ns") != "data" || owner(p, "own-over-ns") != "ml" {
		t.Fatalf("owners %q %q %q %q %q", owner(p, "labelled"), owner(p, "ml-labelled"), owner(p, "unlabelled"), owner(p, "in-labelled-ns"), owner(p, "own-over-ns"))
	}
	st := p.State
	if n := st.Announce(p, t0); n != 2 {
		t.Fatalf("the fleet's report announced %d, want 2 (web's and data's: no route names them)", n)
	}
	p = plan(k, st, t0.Add(13*time.Hour), opts)
	for name, want := range map[string]engine.Action{"labelled": engine.Delete, "ml-labelled": engine.Mark, "unlabelled": engine.Mark} {
		if d := enginetest.DecisionFor(t, p, name); d.Action != want {
			t.Errorf("%s: %s, want %s (%s)", name, d.Action, want, d.Why())
		}
	}
}

// cut is p with only owner's decisions, as a routed target is sent.
func cut(p *engine.Plan, owner string) *engine.Plan {
	c := *p
	c.Decisions = nil
	for _, d := range p.Decisions {
		if d.Owner == owner {
			c.Decisions = append(c.Decisions, d)
		}
	}
	return &c
}

// A routed report announces only the clocked candidates it listed.
func TestRoutedNoticeOfClockedCandidates(t *testing.T) {
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{
		placed("etl-disk", engine.Where{Namespace: "etl"}), placed("other-disk", engine.Where{Namespace: "web"})}}
	opts := engine.Settings{RequireNotice: true, Routes: teamRoutes}
	p1 := plan(k, engine.NewState(), t0, opts)
	st := p1.State
	if n := st.Announce(cut(p1, "etl"), t0, "etl"); n != 1 {
		t.Fatalf("announced %d, want 1", n)
	}
	p2 := plan(k, st, t0.Add(13*time.Hour), opts)
	if d := enginetest.DecisionFor(t, p2, "etl-disk"); d.Action != engine.Delete {
		t.Errorf("etl-disk: %s (%s)", d.Action, d.Why())
	}
	if d := enginetest.DecisionFor(t, p2, "other-disk"); d.Action != engine.Mark {
		t.Errorf("other-disk, never in a delivered report: %s (%s)", d.Action, d.Why())
	}
}
