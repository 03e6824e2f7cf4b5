package gcedisk

import (
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring (internal/app registers it): on with a
// gce section, reading disks and quotas through the shared gce read.
var Module = kind.Module{
	Name:        Name,
	Section:     GCEKey,
	New:         kind.WithCloud(Source, FromConfig),
	Clouds:      []string{Source},
	Evidence:    MadeFor,
	Permissions: Permissions,
	Gauges:      Gauges,
}
