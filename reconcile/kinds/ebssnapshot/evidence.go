package ebssnapshot

import (
	"slices"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
)

// MadeFor is what the kind's read shows made for an EKS cluster (the
// module's Evidence): the snapshots the EBS CSI driver made and tagged
// with the cluster are what its VolumeSnapshotContents name
// (csisnapshot.Class), so a first record listing none is held.
func MadeFor(clouds map[string]any, t kube.Target, shown records.Shown) {
	read, ok := clouds[Name].(Read)
	if !ok || t.Place.Platform != inventory.EKS {
		return
	}
	for _, r := range read.Regions {
		l := &r.Listing
		if l.Account != t.Place.Account || l.Region != t.Place.Location {
			continue
		}
		for i := range l.Snapshots {
			s := &l.Snapshots[i]
			if CSIMade(s.Tags) && slices.Contains(csiClusters(s.Tags), t.CloudName) {
				shown.Add(csisnapshot.Class, "EBS snapshot "+s.ID)
			}
		}
	}
}
