package ebssnapshot

import (
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
)

// Tags the EBS CSI driver puts on every snapshot it makes (its
// docs/tagging.md; CreateSnapshot in pkg/driver/controller.go):
// CSIVolumeSnapshotName, the name the snapshotter sidecar asked for
// ("snapshot-" and the VolumeSnapshot's uid), and ebs.csi.aws.com/cluster
// "true"; with the driver's --k8s-tag-cluster-id, also
// kubernetes.io/cluster/ID "owned" and ebs.csi.aws.com/cluster-name ID.
const (
	TagCSIName        = "CSIVolumeSnapshotName"
	TagCSIDriver      = "ebs.csi.aws.com/cluster"
	TagCSIClusterName = "ebs.csi.aws.com/cluster-name"
)

// CSIMade says whether the EBS CSI driver made a snapshot, by its tags:
// both of the two it puts on every one.
func CSIMade(tags map[string]string) bool {
	return tags[TagCSIDriver] == "true" && tags[TagCSIName] != ""
}

// csiClusters are the clusters a CSI snapshot's tags name.
func csiClusters(tags map[string]string) []string {
	out := inventory.ClustersTagged(tags)
	if c := tags[TagCSIClusterName]; c != "" && !slices.Contains(out, c) {
		out = append(out, c)
	}
	return out
}

// Classes of the CSI snapshots.
const (
	ClassCSIInUse  = "csi-in-use"
	ClassCSIOrphan = "csi-orphan"
)

// csiRead is what one plan needs to judge CSI snapshots: the clusters'
// contents, the fleet, and each region's clusters (made once).
type csiRead struct {
	ix      *csisnapshot.Index
	snap    *inventory.View
	regions map[string]engine.Users
}

func (k *Kind) csiOf(snap *inventory.View) *csiRead {
	return &csiRead{ix: csisnapshot.IndexOf(snap), snap: snap, regions: map[string]engine.Users{}}
}

// region are the clusters that could own an untagged CSI snapshot of an
// account and region: every one that could use its volumes.
func (c *csiRead) region(account, region string) engine.Users {
	key := account + "/" + region
	u, ok := c.regions[key]
	if !ok {
		u = ebsbase.RegionUsers(c.snap, account, region, csisnapshot.Tap)
		c.regions[key] = u
	}
	return u
}

// owners are the clusters that could own a CSI snapshot: those its tags
// name, as the fleet knows them (a name no member answers for is a
// cluster nobody read, which holds it, as for volumes), else every
// cluster of its account and region.
func (c *csiRead) owners(region engine.Users, l *ebs.SnapshotListing, s *ebs.Snapshot) engine.Users {
	tagged := csiClusters(s.Tags)
	if len(tagged) == 0 {
		return region
	}
	u := engine.Users{Reads: region.Reads, Scopes: region.Scopes}
	for _, name := range tagged {
		u.Clusters = append(u.Clusters, c.snap.Fleet.Resolve(inventory.EKS, l.Account+"/"+l.Region, name)...)
	}
	return u
}

// proposeCSI proposes a snapshot the EBS CSI driver made: kept when
// protected, managed by AWS Backup or DLM, not completed, used by an AMI
// or a volume being made, or named by any read cluster's
// VolumeSnapshotContent; else an orphan relying on its region's listings
// and on every cluster that could own it, reported unless csi.delete.
func (k *Kind) proposeCSI(c *csiRead, region engine.Users, l *ebs.SnapshotListing, s *ebs.Snapshot, users, keys []string, now time.Time) engine.Proposal {
	p, det, kept := k.first(l, s, users)
	det.CSIName = s.Tags[TagCSIName]
	if kept {
		return p
	}
	keep := func(class, reason string) engine.Proposal {
		p.Class, p.Reason = class, reason
		return p
	}
	made := "made by the EBS CSI driver as " + det.CSIName
	if s.State != "completed" {
		return keep(ClassNotCompleted, made+", "+s.State)
	}
	if len(users) > 0 {
		return keep(ClassInUse, "in use: "+strings.Join(users, ", "))
	}
	owners := c.owners(region, l, s)
	a := c.ix.Lookup(s.ID, det.CSIName, csisnapshot.Names(owners))
	if len(a.InUse) > 0 {
		det.UsedBy = a.InUse[0].Cluster + "/" + a.InUse[0].Name
		return keep(ClassCSIInUse, made+": "+a.Say())
	}
	why := ""
	if s.StorageTier == "archive" {
		why = "in the archive tier: reported, not deleted (archived snapshots are billed for 90 days at least; delete it by hand)"
	}
	p.Class = ClassCSIOrphan
	k.s.CSI.Orphan(&p, a, owners, c.snap.Fleet, keys, made, Key, s.Started, now, why)
	return p
}
