package gcedisk

import (
	"slices"
	"testing"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"
)

// The clusters a disk's deletion relies on: the clusters read that could
// reference its project, less a GKE cluster the cloud puts in another
// region; every discovered GKE cluster of its region, read or not; the
// cluster its goog-k8s-cluster-name label names; the project's discovery.
func TestDiskGuards(t *testing.T) {
	gkeAt := func(name, location string, state string) inventory.FleetMember {
		return inventory.FleetMember{Name: name, State: state, Discovered: true,
			Cloud: inventory.FleetCluster{Name: name, Platform: inventory.GKE, Project: "p1", Location: location}}
	}
	f := &inventory.Fleet{Discovery: true,
		Listings: []inventory.FleetListing{{Platform: inventory.GKE, Scope: "p1", Complete: true}},
		Members: []inventory.FleetMember{
			{Name: "static", CloudName: "static", Configured: true, State: inventory.MemberRead, Where: inventory.Place{Platform: inventory.GKE, Project: "p1"}},
			{Name: "nowhere", CloudName: "nowhere", Configured: true, State: inventory.MemberRead},
			gkeAt("east", "us-east1", inventory.MemberRead),
			gkeAt("east-zonal", "us-east1-b", inventory.MemberExcluded),
			gkeAt("west", "us-west1", inventory.MemberRead),
		}}
	configured := []string{"static", "east", "west"}
	disk := func(zone string, labels map[string]string) gce.Disk {
		return gce.Disk{Key: inventory.DiskKey{Project: "p1", Zone: zone, Name: "d"}, Labels: labels}
	}
	cases := []struct {
		name string
		d    gce.Disk
		want []string
	}{
		{"zonal disk in us-east1", disk("us-east1-c", nil), []string{"cluster:static", "cluster:east", "cluster:east-zonal", "discovery:gke p1"}},
		{"zonal disk in us-west1", disk("us-west1-b", nil), []string{"cluster:static", "cluster:west", "discovery:gke p1"}},
		{"labelled for an unknown cluster", disk("us-west1-a", map[string]string{ClusterLabel: "ghost"}),
			[]string{"cluster:static", "cluster:west", "discovery:gke p1", "cluster:ghost@p1"}},
		// A label names a cluster of the disk's own project: the discovered
		// one there, else a configured one that may live there.
		{"labelled for a discovered cluster", disk("us-west1-a", map[string]string{ClusterLabel: "west"}),
			[]string{"cluster:static", "cluster:west", "discovery:gke p1"}},
		{"labelled for a configured cluster that says it lives there", disk("us-west1-a", map[string]string{ClusterLabel: "static"}),
			[]string{"cluster:static", "cluster:west", "discovery:gke p1"}},
		// With discovery on, a name alone is no identity: a namesake nobody
		// listed may live in p1.
		{"labelled for a configured cluster that says nothing of where it lives", disk("us-west1-a", map[string]string{ClusterLabel: "nowhere"}),
			[]string{"cluster:static", "cluster:west", "discovery:gke p1", "cluster:nowhere@p1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := diskGuards(f, c.d, configured, map[string][]string{})
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(c.want))) {
				t.Errorf("got %v\nwant %v", got, c.want)
			}
		})
	}
	// Propose shares one cache over every disk of a listing: what one
	// disk's scope computed never changes another's guards, a labelled
	// disk after an unlabelled one of its region included.
	cache := map[string][]string{}
	for _, c := range cases {
		got := diskGuards(f, c.d, configured, cache)
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(c.want))) {
			t.Errorf("%s, after the disks above it: got %v\nwant %v", c.name, got, c.want)
		}
	}
}
