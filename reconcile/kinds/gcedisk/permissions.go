package gcedisk

import "reclaim.dev/reclaim/base/perms"

// Permissions are the GCP permissions of the kind's read (disks and
// quotas) and its deletes (providers/gce makes the calls). Regional disks
// have no permissions of their own: regionDisks.* is authorized with
// compute.disks.*.
var Permissions = perms.Set{
	Read: perms.Grants{GCP: []string{
		"compute.disks.list",  // disks.aggregatedList: the inventory
		"compute.regions.get", // regional quotas, for the headroom report and metrics
	}},
	Delete: perms.Grants{GCP: []string{
		"compute.disks.get", // Recheck: re-read a disk just before deleting it
		"compute.disks.delete",
		"compute.disks.createSnapshot", // disks.snapshotBeforeDelete
		"compute.snapshots.create",     // the snapshot createSnapshot makes
		"compute.snapshots.setLabels",  // it carries disks.snapshotLabel
		"compute.snapshots.get",        // find this orphan period's snapshot, wait for it
		"compute.zoneOperations.get",   // wait for a zonal delete or snapshot
		"compute.regionOperations.get", // and a regional one
		"compute.globalOperations.get", // the client can wait on all three
	}},
}
