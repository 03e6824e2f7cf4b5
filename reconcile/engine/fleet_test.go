package engine_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// fleetSnap is a snapshot with cluster a read and the given fleet.
func fleetSnap(f *inventory.Fleet) *inventory.View {
	s := snap(complete("a"))
	s.Fleet = f
	return s
}

func member(name, state string) inventory.FleetMember {
	return inventory.FleetMember{Name: name, State: state, Discovered: true, Rule: "rule-of-" + name,
		Cloud: inventory.FleetCluster{Name: name, Platform: inventory.EKS, Account: "111122223333", Location: "us-east-1"}}
}

// A candidate that a cluster could use is held while that cluster is not
// read, whatever the reason, and the reason names the cluster and the fix.
func TestUnreadClusterHoldsWhatItCouldUse(t *testing.T) {
	due := seenSince(t0.Add(-48*time.Hour), orphan("d"))
	for _, c := range []struct {
		name  string
		fleet *inventory.Fleet
		want  string
	}{
		{"never read at all", nil, "cluster b was not read"},
		{"excluded", &inventory.Fleet{Discovery: true, Members: []inventory.FleetMember{member("b", inventory.MemberExcluded)}}, "excluded by rule-of-b"},
		{"discovered, not configured", &inventory.Fleet{Discovery: true, Members: []inventory.FleetMember{member("b", inventory.MemberUnlisted)}}, "not in the config"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := orphan("d")
			d.Sources = []string{inventory.ClusterKey("a"), inventory.ClusterKey("b")}
			k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
			p := engine.Build(fleetSnap(c.fleet), []engine.Kind{k}, due, t0)
			got := enginetest.DecisionFor(t, p, "d")
			if got.Action == engine.Delete || !got.Held {
				t.Fatalf("deletion not held: %+v", got)
			}
			if !strings.Contains(got.Why(), c.want) || !strings.Contains(got.Why(), "fleet.outOfScope") {
				t.Errorf("reason %q does not say %q and how to resolve it", got.Why(), c.want)
			}
			if !p.Incomplete {
				t.Error("a held deletion does not make the run incomplete")
			}
		})
	}
}

// A cluster declared out of scope holds nothing, and every report repeats
// the declaration.
func TestOutOfScopeClusterHoldsNothing(t *testing.T) {
	d := orphan("d")
	d.Sources = []string{inventory.ClusterKey("a"), inventory.ClusterKey("b")}
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	m := member("b", inventory.MemberOutOfScope)
	m.Reason = "decommissioned, OPS-1"
	p := engine.Build(fleetSnap(&inventory.Fleet{Discovery: true, Members: []inventory.FleetMember{m}}), []engine.Kind{k},
		seenSince(t0.Add(-48*time.Hour), orphan("d")), t0)
	if got := enginetest.DecisionFor(t, p, "d"); got.Action != engine.Delete {
		t.Fatalf("out-of-scope cluster held the deletion: %+v", got)
	}
	if len(p.Notices) != 1 || !strings.Contains(p.Notices[0], "decommissioned, OPS-1") {
		t.Errorf("notices %q do not repeat the declaration", p.Notices)
	}
	if p.Incomplete {
		t.Error("plan incomplete with nothing held")
	}
}

// An unread cluster nothing relies on holds nothing and does not make the
// run incomplete; the fleet section lists it first.
func TestUnreadClusterOnlyHoldsWhatItCouldUse(t *testing.T) {
	d := orphan("d")
	d.Sources = []string{inventory.ClusterKey("a")}
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	p := engine.Build(fleetSnap(&inventory.Fleet{Discovery: true, Members: []inventory.FleetMember{member("b", inventory.MemberExcluded)}}),
		[]engine.Kind{k}, seenSince(t0.Add(-48*time.Hour), orphan("d")), t0)
	if got := enginetest.DecisionFor(t, p, "d"); got.Action != engine.Delete {
		t.Fatalf("got %+v", got)
	}
	if p.Incomplete {
		t.Error("an unread cluster that holds nothing made the run incomplete")
	}
	if len(p.Sections) == 0 || p.Sections[0].Key != "fleet" {
		t.Fatal("the fleet section is not first")
	}
	rows := p.Sections[0].Data.([]engine.FleetRow)
	if len(rows) != 1 || rows[0].State != inventory.MemberExcluded || rows[0].Rule != "rule-of-b" {
		t.Errorf("fleet rows %+v", rows)
	}
}

// A discovery scope that failed holds everything its clusters could use.
func TestFailedDiscoveryHolds(t *testing.T) {
	f := &inventory.Fleet{Discovery: true, Listings: []inventory.FleetListing{{Platform: inventory.EKS, Scope: "111122223333/us-east-1", Problem: "AccessDenied"}}}
	d := orphan("d")
	d.Sources = engine.Users{Clusters: []string{"a"}, Scopes: []string{inventory.EKS + " 111122223333/us-east-1"}}.Keys(f)
	k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
	p := engine.Build(fleetSnap(f), []engine.Kind{k}, seenSince(t0.Add(-48*time.Hour), orphan("d")), t0)
	if got := enginetest.DecisionFor(t, p, "d"); got.Action == engine.Delete || !strings.Contains(got.Why(), "discovery eks 111122223333/us-east-1") {
		t.Fatalf("failed discovery did not hold: %+v", got)
	}
	if len(p.Blocked) == 0 {
		t.Error("the failed discovery is not among the run's held-back notes")
	}
}

// With discovery on, a scope no discovery listing covers (an explicit
// fleet.eks that leaves the region out) holds what a cluster there could
// use, and the run says where to look; a listed scope does not.
func TestUnlistedScopeHolds(t *testing.T) {
	f := &inventory.Fleet{Discovery: true, Listings: []inventory.FleetListing{{Platform: inventory.EKS, Scope: "111122223333/us-east-1", Complete: true}}}
	for _, c := range []struct {
		scope string
		held  bool
	}{{"111122223333/us-east-1", false}, {"111122223333/us-west-2", true}} {
		d := orphan("d")
		d.Sources = engine.Users{Clusters: []string{"a"}, Scopes: []string{inventory.EKS + " " + c.scope}}.Keys(f)
		k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
		p := engine.Build(fleetSnap(f), []engine.Kind{k}, seenSince(t0.Add(-48*time.Hour), orphan("d")), t0)
		got := enginetest.DecisionFor(t, p, "d")
		if !c.held {
			if got.Action != engine.Delete {
				t.Fatalf("%s: a listed scope held: %+v", c.scope, got)
			}
			continue
		}
		if got.Action == engine.Delete || !strings.Contains(got.Why(), "discovery does not look in eks "+c.scope) {
			t.Fatalf("%s: not held: %+v", c.scope, got)
		}
		if len(p.Blocked) != 1 || !strings.Contains(p.Blocked[0], "add it to fleet.eks") {
			t.Fatalf("held-back notes %q", p.Blocked)
		}
	}
}

// Discovery off: every report says the fleet is what the config lists.
func TestDiscoveryOffIsSaid(t *testing.T) {
	k := &fakeKind{lim: testLimits()}
	p := engine.Build(fleetSnap(&inventory.Fleet{}), []engine.Kind{k}, engine.NewState(), t0)
	if len(p.Notices) != 1 || !strings.Contains(p.Notices[0], "fleet discovery is off") {
		t.Fatalf("notices %q", p.Notices)
	}
}

// The run's own notices (a config key's old name) are every report's too,
// in the fleet section like the rest.
func TestRunNoticesAreSaid(t *testing.T) {
	k := &fakeKind{lim: testLimits()}
	p := engine.Settings{Notices: []string{"fleet.snapshots is now named fleet.records"}}.Build(fleetSnap(&inventory.Fleet{}), []engine.Kind{k}, engine.NewState(), t0)
	if len(p.Notices) != 2 || p.Notices[1] != "fleet.snapshots is now named fleet.records" {
		t.Fatalf("notices %q", p.Notices)
	}
	var said bool
	for _, s := range p.Sections {
		for _, b := range s.Blocks {
			said = said || slices.Contains(b.Lines, "  NOTE: fleet.snapshots is now named fleet.records")
		}
	}
	if !said {
		t.Fatalf("the fleet section does not say the notice: %+v", p.Sections)
	}
}

// A configured cluster that could not be read completely shows as failed,
// with its problem, in the fleet section.
func TestFleetSectionShowsFailedClusters(t *testing.T) {
	s := snap(complete("a"), inventory.ClusterRefs{Name: "b", Problems: []string{"connection refused"}})
	s.Fleet = &inventory.Fleet{Members: []inventory.FleetMember{
		{Name: "a", Configured: true, State: inventory.MemberRead},
		{Name: "b", Configured: true, State: inventory.MemberRead},
	}}
	p := engine.Build(s, []engine.Kind{&fakeKind{lim: testLimits()}}, engine.NewState(), t0)
	rows := layout.Data(p.Sections, "fleet").([]engine.FleetRow)
	if rows[0].State != inventory.MemberRead || rows[1].State != engine.StateFailed || rows[1].Reason != "connection refused" {
		t.Fatalf("rows %+v", rows)
	}
}

// Users are data; the engine derives the keys: each cluster, read or not,
// and each read of it the evidence comes from; the discovery scopes only
// while discovery is on (off, the config's list is the fleet).
func TestUsersKeys(t *testing.T) {
	u := engine.Users{Clusters: []string{"a", "b"}, Members: []inventory.FleetMember{{Name: "c"}, {Name: "a"}},
		Reads: []string{inventory.ReadWorkloads}, Scopes: []string{inventory.EKS + " 111122223333/us-east-1"}}
	tap := func(c string) string { return inventory.TapKey(inventory.ReadWorkloads, c) }
	want := []string{inventory.ClusterKey("a"), tap("a"), inventory.ClusterKey("b"), tap("b"), inventory.ClusterKey("c"), tap("c"),
		inventory.DiscoveryKey(inventory.EKS, "111122223333/us-east-1")}
	if got := u.Keys(&inventory.Fleet{Discovery: true}); !slices.Equal(got, want) {
		t.Errorf("discovery on: %v\nwant %v", got, want)
	}
	if got := u.Keys(&inventory.Fleet{}); !slices.Equal(got, want[:6]) {
		t.Errorf("discovery off: %v\nwant %v", got, want[:6])
	}
}

// A cluster declared out of scope answers for its reads too: a candidate
// naming its cluster and its read is not held by them, as it is by a
// cluster that is merely not read.
func TestOutOfScopeAnswersForItsReads(t *testing.T) {
	for _, c := range []struct {
		state string
		held  bool
	}{{inventory.MemberOutOfScope, false}, {inventory.MemberExcluded, true}} {
		f := &inventory.Fleet{Members: []inventory.FleetMember{member("b", c.state)}}
		d := orphan("d")
		d.Sources = engine.Users{Clusters: []string{"a", "b"}, Reads: []string{inventory.ReadWorkloads}}.Keys(f)
		s := fleetSnap(f)
		s.Clusters[0].WorkloadsListed = true
		k := &fakeKind{lim: testLimits(), items: []engine.Proposal{d}}
		p := engine.Build(s, []engine.Kind{k}, seenSince(t0.Add(-48*time.Hour), orphan("d")), t0)
		if got := enginetest.DecisionFor(t, p, "d"); got.Held != c.held {
			t.Errorf("b %s: held %v, want %v (%s)", c.state, got.Held, c.held, got.Why())
		}
	}
}
