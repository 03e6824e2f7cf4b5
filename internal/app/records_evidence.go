package app

import (
	"fmt"
	"slices"
	"strings"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/reconcile/kinds/ebsvolume"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/netiface"
)

// evidence is what the clouds show made for one cluster, per class of
// evidence a record lists (classCounts): what a first record claiming
// none of the class is not believed against.
type evidence map[string][]string

func (e evidence) add(class, what string) { e[class] = append(e[class], what) }

// cloudEvidence is what the run's cloud reads show made for t, by the
// labels and tags the clouds' controllers put on what they make for a
// cluster: GKE's goog-k8s-cluster-name on its PD volumes (pvs) and boot
// disks (nodes); the VPC CNI's and EKS's cluster tags on the network
// interfaces in use (podIPs, nodes); the EBS CSI driver's on the volumes
// it made for PVs (the ebs-pvs tap).
func cloudEvidence(clouds map[string]any, t kube.Target) evidence {
	out := evidence{}
	name, p := t.CloudName, t.Place
	if gce, ok := clouds[gcepd.Source].(gcepd.Listing); ok && p.Platform == inventory.GKE {
		for _, l := range gce.Disks {
			if l.Project != p.Project {
				continue
			}
			for _, d := range l.Disks {
				if d.Labels[gcedisk.ClusterLabel] != name {
					continue
				}
				if _, pv := d.Labels["goog-gke-volume"]; pv {
					out.add("pvs", "GCE disk "+d.Key.Name)
				} else {
					out.add("nodes", "GCE disk "+d.Key.Name)
				}
			}
		}
	}
	if p.Platform != inventory.EKS {
		return out
	}
	if nets, ok := clouds[netiface.Source].([]inventory.NetworkListing); ok {
		for _, l := range nets {
			if l.Account != p.Account || l.Region != p.Location {
				continue
			}
			for _, n := range l.Interfaces {
				if n.Status == "in-use" && (n.Tags[inventory.InterfaceClusterTag] == name || slices.Contains(inventory.ClustersTagged(n.Tags), name)) {
					out.add("podIPs", "network interface "+n.ID)
					out.add("nodes", "network interface "+n.ID)
				}
			}
		}
	}
	if read, ok := clouds[ebsvolume.Name].(ebsvolume.Read); ok {
		for _, l := range read.Listings {
			if l.Account != p.Account || l.Region != p.Location {
				continue
			}
			for _, v := range l.Volumes {
				if madeFor(v, name) && v.Tags[ebsvolume.TagCreatedForPV] != "" {
					out.add("tap "+ebsvolume.TapPVs, "EBS volume "+v.ID)
				}
			}
		}
	}
	return out
}

func madeFor(v ebs.Volume, cluster string) bool {
	return v.Tags[ebsvolume.TagLegacyCluster] == cluster || slices.Contains(inventory.ClustersTagged(v.Tags), cluster)
}

// unseen says what the clouds show made for the cluster of class, which
// a first record lists none of.
func (e evidence) unseen(class string) string {
	what := e[class]
	more := ""
	if len(what) > 3 {
		more = fmt.Sprintf(" and %d more", len(what)-3)
		what = what[:3]
	}
	return fmt.Sprintf("no %s, where the clouds show %s%s made for the cluster", class, strings.Join(what, ", "), more)
}
