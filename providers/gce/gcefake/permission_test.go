package gcefake

import "testing"

func TestPermissionOfEachMethod(t *testing.T) {
	for method, want := range map[string]string{
		MethodDisksAggregatedList:       "compute.disks.list",
		MethodDisksGet:                  "compute.disks.get",
		MethodRegionDisksDelete:         "compute.disks.delete",
		MethodRegionDisksCreateSnapshot: "compute.disks.createSnapshot",
		MethodRegionsGet:                "compute.regions.get",
		MethodSnapshotsGet:              "compute.snapshots.get",
		MethodSnapshotsList:             "compute.snapshots.list",
		MethodSnapshotsDelete:           "compute.snapshots.delete",
		MethodImagesList:                "compute.images.list",
		MethodZoneOperationsWait:        "compute.zoneOperations.get",
		MethodGlobalOperationsGet:       "compute.globalOperations.get",
		MethodUnknown:                   "compute.unknown",
	} {
		if got := Permission(method); got != want {
			t.Errorf("Permission(%q) = %q, want %q", method, got, want)
		}
	}
}
