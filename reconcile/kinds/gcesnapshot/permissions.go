package gcesnapshot

import "reclaim.dev/reclaim/base/perms"

// Permissions: every run lists the projects' snapshots and, when one of
// them is reclaim's, what was made from them (disks, images); with
// --apply the re-read (snapshots.get and the same listings) and the
// delete, waited on as a global operation.
var Permissions = perms.Set{
	Read: perms.Grants{GCP: []string{
		"compute.snapshots.list", // snapshots.list
		"compute.disks.list",     // disks.aggregatedList: disks made from a snapshot
		"compute.images.list",    // images.list: images made from a snapshot
	}},
	Delete: perms.Grants{GCP: []string{
		"compute.snapshots.get", // Recheck: re-read a snapshot just before deleting it
		"compute.snapshots.delete",
		"compute.globalOperations.get", // wait for the delete
	}},
}
