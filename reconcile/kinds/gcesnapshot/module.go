package gcesnapshot

import "reclaim.dev/reclaim/reconcile/kinds/kind"

// Module is the kind for the wiring (internal/app registers it): on with a
// gceSnapshots section (which needs the gce section), it opens and reads
// its own cloud (Open, Reader) over the gce section's projects.
var Module = kind.Module{
	Name:        Name,
	Section:     Key,
	New:         kind.WithCloud(Name, FromConfig),
	Cloud:       &kind.Cloud{Open: Open, Read: Reader},
	Permissions: Permissions,
}
