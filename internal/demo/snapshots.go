package demo

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"reclaim.dev/reclaim/providers/ebs/ebsfake"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
	"reclaim.dev/reclaim/reconcile/kinds/ebssnapshot"
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
