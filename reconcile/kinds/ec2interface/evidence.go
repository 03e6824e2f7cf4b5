package ec2interface

import (
	"slices"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
)

// MadeFor is what the ec2 read shows made for an EKS cluster (the
// module's Evidence): the network interfaces in use that the VPC CNI and
// EKS tag with the cluster's name carry its pods' addresses (podIPs) and
// its nodes'.
func MadeFor(clouds map[string]any, t kube.Target, shown records.Shown) {
	nets, ok := clouds[Read].([]inventory.NetworkListing)
	if !ok || t.Place.Platform != inventory.EKS {
		return
	}
	for _, l := range nets {
		if l.Account != t.Place.Account || l.Region != t.Place.Location {
			continue
		}
		for _, n := range l.Interfaces {
			if n.Status == "in-use" && (n.Tags[inventory.InterfaceClusterTag] == t.CloudName || slices.Contains(inventory.ClustersTagged(n.Tags), t.CloudName)) {
				shown.Add("podIPs", "network interface "+n.ID)
				shown.Add("nodes", "network interface "+n.ID)
			}
		}
	}
}
