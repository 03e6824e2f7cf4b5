package ebsvolume

import (
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring (internal/app registers it): on with
// an ebs section, it opens and reads its own cloud (Open, Reader) and
// taps each cluster's volumes and claims.
var Module = kind.Module{
	Name:        Name,
	Section:     Key,
	New:         kind.WithSection(Name, Key, New),
	Taps:        Taps,
	Cloud:       &kind.Cloud{Open: Open, Read: Reader},
	Evidence:    MadeFor,
	Permissions: Permissions,
	Gauges:      Gauges,
}
