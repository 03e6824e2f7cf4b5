package gcedisk

import (
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// MadeFor is what the gce read shows made for a GKE cluster (the module's
// Evidence): GKE labels the PD volumes (pvs) and boot disks (nodes) it
// makes for a cluster with the cluster's name (ClusterLabel).
func MadeFor(clouds map[string]any, t kube.Target, shown records.Shown) {
	read, ok := clouds[gcepd.Read].(gcepd.Listing)
	if !ok || t.Place.Platform != inventory.GKE {
		return
	}
	for _, l := range read.Disks {
		if l.Project != t.Place.Project {
			continue
		}
		for _, d := range l.Disks {
			if d.Labels[ClusterLabel] != t.CloudName {
				continue
			}
			if _, pv := d.Labels["goog-gke-volume"]; pv {
				shown.Add("pvs", "GCE disk "+d.Key.Name)
			} else {
				shown.Add("nodes", "GCE disk "+d.Key.Name)
			}
		}
	}
}
