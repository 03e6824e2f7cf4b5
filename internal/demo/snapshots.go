package demo

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
	"reclaim.dev/reclaim/reconcile/kinds/ebssnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/gcesnapshot"
)

// The snapshot part of the demo: earlier runs deleted old-batch-use1's
// first leftovers with ebs.snapshotBeforeDelete on, and etl-use1 takes
// VolumeSnapshots of its Kafka volumes before each upgrade.
const backupTag = "reclaim.dev/snapshot-of" // ebs.snapshotTag's default

// Snapshots is what the snapshot part seeded, for the demo's narration
// and tests.
type Snapshots struct {
	// Expired are reclaim's backups past their 30-day retention, past
	// their grace too; Fresh is one within its retention; Imaged one past
	// it that an AMI was registered from.
	Expired []string
	Fresh   string
	Imaged  string
	// Restore is a CSI snapshot a VolumeSnapshotContent of etl-use1 names;
	// Orphan one whose content was deleted by hand.
	Restore string
	Orphan  string
}

// SeedSnapshots seeds the EBS fake's snapshots and an AMI, etl-use1's
// VolumeSnapshotContent (which SeedEBS's cluster carries) and the clocks
// of earlier runs.
func SeedSnapshots(srv *ebsfake.Server, f *Fleet, now time.Time) Snapshots {
	day := 24 * time.Hour
	var out Snapshots
	backup := func(vol string, gib int64, age time.Duration) string {
		return srv.AddSnapshot(EC2Account, ebsfake.Snapshot{VolumeID: vol, SizeGiB: gib, Started: now.Add(-age),
			Description: ebsbase.SnapshotDescription(vol, ""), Tags: map[string]string{backupTag: vol}})
	}
	seen := func(id string) {
		f.State.Seen(ebssnapshot.ID(EC2Account, EC2Region, id), id, now.Add(-30*time.Hour))
	}
	for _, vol := range []string{"vol-0b1d5e2a7c9f40001", "vol-0b1d5e2a7c9f40002", "vol-0b1d5e2a7c9f40003"} {
		id := backup(vol, 500, 40*day)
		seen(id)
		out.Expired = append(out.Expired, id)
	}
	out.Fresh = backup("vol-0b1d5e2a7c9f40004", 500, 6*day)
	// Someone registered an AMI from this backup to boot the old batch
	// image once more: the AMI keeps it.
	out.Imaged = backup("vol-0b1d5e2a7c9f40005", 100, 45*day)
	seen(out.Imaged)
	srv.AddImage(EC2Account, ebsfake.Image{Name: "old-batch-worker-2026-09", Snapshots: []string{out.Imaged}})

	var etl *Cluster
	for _, c := range f.Clusters {
		if c.Name == "etl-use1" {
			etl = c
		}
	}
	csi := func(uid string, age time.Duration) string {
		return srv.AddSnapshot(EC2Account, ebsfake.Snapshot{VolumeID: "vol-0c2e6f3b8d0a50001", SizeGiB: 1000, Started: now.Add(-age),
			Tags: map[string]string{ebssnapshot.TagCSIDriver: "true", ebssnapshot.TagCSIName: "snapshot-" + uid,
				"kubernetes.io/cluster/etl-use1": "owned"}})
	}
	// Taken before last week's Kafka upgrade, kept to restore from.
	uid := "6b0e1c1a-7d2f-4e55-9a31-000000000001"
	out.Restore = csi(uid, 9*day)
	etl.Dynamic = append(etl.Dynamic, volumeSnapshotContent("snapcontent-"+uid[:8], out.Restore, uid, "kafka", "data-kafka-0-pre-upgrade"))
	// Its content (deletionPolicy Retain) was deleted by hand: nothing
	// names the cloud snapshot any more.
	out.Orphan = csi("6b0e1c1a-7d2f-4e55-9a31-000000000002", 40*day)
	return out
}

// volumeSnapshotContent is a content the EBS CSI driver made, ready.
func volumeSnapshotContent(name, handle, uid, ns, snapshot string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshotContent",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"driver": "ebs.csi.aws.com", "deletionPolicy": "Delete",
			"source":            map[string]any{"volumeHandle": "vol-0c2e6f3b8d0a50001"},
			"volumeSnapshotRef": map[string]any{"kind": "VolumeSnapshot", "namespace": ns, "name": snapshot, "uid": uid}},
		"status": map[string]any{"snapshotHandle": handle, "readyToUse": true, "restoreSize": int64(1000 << 30)},
	}}
}

// GCESnapshots is what the GCE snapshot part seeded: reclaim's backups of
// old failed workflows' disks it deleted with disks.snapshotBeforeDelete.
type GCESnapshots struct {
	// Expired are past their 30-day retention and their grace; Fresh is
	// within it; Imaged is past it, but an image was made from it.
	Expired []string
	Fresh   string
	Imaged  string
}

// snapshotLabel is disks.snapshotLabel's default.
const snapshotLabel = "reclaim-snapshot-of"

// SeedGCESnapshots seeds the GCE fake's snapshots of deleted disks, an
// image made from one, and the clocks of earlier runs.
func SeedGCESnapshots(srv *gcefake.Server, f *Fleet, now time.Time) GCESnapshots {
	day := 24 * time.Hour
	var out GCESnapshots
	n := 0
	backup := func(disk string, stored int64, age time.Duration) string {
		n++
		path := "projects/" + Project + "/zones/" + zones[n%3] + "/disks/" + disk
		key, err := inventory.ParseDiskKey(path)
		if err != nil {
			panic(err) // the seed's own path
		}
		made := now.Add(-age)
		name := gcepd.SnapshotName(disk, made)
		id := fmt.Sprintf("73100000000000%05d", n)
		srv.AddSnapshot(Project, gcefake.Snapshot{Name: name, ID: id, SourceDisk: path, Labels: gcepd.SnapshotLabels(snapshotLabel, key),
			SizeGB: 25, StorageBytes: stored, Created: made})
		if age > 30*day {
			f.State.Seen(gcesnapshot.ID(Project, name), id, now.Add(-30*time.Hour))
		}
		return name
	}
	for i := range 2 {
		out.Expired = append(out.Expired, backup(fmt.Sprintf("pvc-backfill-old-%02d", i), 12*amount.GiB, 40*day))
	}
	out.Fresh = backup("pvc-backfill-old-02", 12*amount.GiB, 6*day)
	// A team made an image from this backup to rebuild a test VM: the
	// image keeps it.
	out.Imaged = backup("pvc-backfill-old-03", 12*amount.GiB, 45*day)
	srv.AddImage(Project, gcefake.Image{Name: "backfill-debug-vm", SourceSnapshot: "projects/" + Project + "/global/snapshots/" + out.Imaged})
	return out
}
