package ebsvolume

import (
	"slices"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
)

// MadeFor is what the kind's read shows made for an EKS cluster (the
// module's Evidence): the volumes the EBS CSI driver made for the
// cluster's PVs, tagged with the cluster and the PV, are what its tap of
// the PVs' volume handles lists ("tap " + TapPVs).
func MadeFor(clouds map[string]any, t kube.Target, shown records.Shown) {
	read, ok := clouds[Name].(Read)
	if !ok || t.Place.Platform != inventory.EKS {
		return
	}
	for _, l := range read.Listings {
		if l.Account != t.Place.Account || l.Region != t.Place.Location {
			continue
		}
		for _, v := range l.Volumes {
			tagged := v.Tags[TagLegacyCluster] == t.CloudName || slices.Contains(inventory.ClustersTagged(v.Tags), t.CloudName)
			if tagged && v.Tags[TagCreatedForPV] != "" {
				shown.Add("tap "+TapPVs, "EBS volume "+v.ID)
			}
		}
	}
}
