package inventory_test

import (
	"slices"
	"testing"

	"reclaim.dev/reclaim/inventory"
)

// Evidence that more than one member may mean holds by each: configured
// clusters of one cloud name in two locations of a project answer for a
// disk of their region, and both for one elsewhere or said nowhere.
func TestResolveHoldsByEveryCandidate(t *testing.T) {
	f := &inventory.Fleet{Discovery: true, Members: []inventory.FleetMember{
		{Name: "east", Configured: true, State: inventory.MemberRead, CloudName: "prod",
			Where: inventory.Place{Platform: inventory.GKE, Project: "p1", Location: "us-east1-b"}},
		{Name: "europe", Configured: true, State: inventory.MemberRead, CloudName: "prod",
			Where: inventory.Place{Platform: inventory.GKE, Project: "p1", Location: "europe-west1"}},
		{Name: "other", Configured: true, State: inventory.MemberRead, CloudName: "prod",
			Where: inventory.Place{Platform: inventory.GKE, Project: "p2", Location: "us-east1"}},
	}}
	for _, c := range []struct {
		location string
		want     []string
	}{
		{"us-east1-c", []string{"east"}},
		{"europe-west1-b", []string{"europe"}},
		{"asia-east1-a", []string{"east", "europe"}},
		{"", []string{"east", "europe"}},
	} {
		got := f.ResolveAt(inventory.GKE, "p1", c.location, "prod")
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("a disk of p1 in %q labelled prod: %v, want %v", c.location, got, c.want)
		}
	}
	if got := f.Resolve(inventory.GKE, "p3", "prod"); !slices.Equal(got, []string{"prod@p3"}) {
		t.Errorf("a label where no prod lives: %v", got)
	}
}

// Names reclaim gives are unique among those taken, and a namesake of one
// scope is named by its location whatever came first.
func TestMemberName(t *testing.T) {
	taken := map[string]bool{"prod": true}
	at := func(loc string) inventory.Place {
		return inventory.Place{Platform: inventory.GKE, Project: "p1", Location: loc}
	}
	got := []string{
		inventory.MemberName(taken, "prod", at("us-east1-b"), true),
		inventory.MemberName(taken, "prod", at("europe-west1"), true),
		inventory.MemberName(taken, "prod", at("us-east1-b"), true),
		inventory.MemberName(taken, "prod", at("asia-east1"), false),
		inventory.MemberName(taken, "prod", inventory.Place{Platform: inventory.EKS, Account: "111122223333", Location: "us-east-1"}, false),
	}
	want := []string{"prod@p1.us-east1-b", "prod@p1.europe-west1", "prod@p1.us-east1-b~2", "prod@p1", "prod@111122223333.us-east-1"}
	if !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
}
