package gcesnapshot

import (
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// MadeFor is what the kind's read shows made for a GKE cluster (the
// module's Evidence): a PD CSI snapshot labelled with the cluster's name
// (goog-k8s-cluster-name, which the driver puts on a snapshot only when
// run with it in --extra-labels) is what its VolumeSnapshotContents name
// (csisnapshot.Class), so a first record listing none is held. A snapshot
// without the label says nothing of its cluster.
func MadeFor(clouds map[string]any, t kube.Target, shown records.Shown) {
	read, ok := clouds[Name].(Read)
	if !ok || t.Place.Platform != inventory.GKE {
		return
	}
	for _, p := range read.Projects {
		if p.Listing.Project != t.Place.Project {
			continue
		}
		for i := range p.Listing.Snapshots {
			s := &p.Listing.Snapshots[i]
			if _, csi := CSIMade(s); csi && s.Labels[gcepd.ClusterLabel] == t.CloudName {
				shown.Add(csisnapshot.Class, "GCE snapshot "+s.Name)
			}
		}
	}
}
