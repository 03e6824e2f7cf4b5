package gcesnapshot

import (
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring (internal/app registers it): on with a
// gceSnapshots section (which needs the gce section), it opens and reads
// its own cloud (Open, Reader) over the gce section's projects, and taps
// each cluster's VolumeSnapshotContents for the CSI snapshots.
var Module = kind.Module{
	Name:        Name,
	Section:     Key,
	New:         kind.WithCloud(Name, FromConfig),
	Cloud:       &kind.Cloud{Open: Open, Read: Reader},
	Taps:        csisnapshot.Taps,
	Evidence:    MadeFor,
	Permissions: Permissions,
}
