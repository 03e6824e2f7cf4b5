package gcedisk

import (
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring (internal/app registers it): on with a
// gce section, it opens and reads its own cloud (Open, Reader): the gce
// read of disks and quotas, named gcepd.Read because k8s-pvc relies on
// it too.
var Module = kind.Module{
	Name:        Name,
	Section:     gcepd.GCEKey,
	New:         kind.WithCloud(gcepd.Read, FromConfig),
	Cloud:       &kind.Cloud{Name: gcepd.Read, Open: Open, Read: Reader},
	Evidence:    MadeFor,
	Permissions: Permissions,
	Gauges:      Gauges,
}
