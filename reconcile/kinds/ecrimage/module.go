package ecrimage

import (
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring (internal/app registers it): on with
// an ecr section, it relies on the clusters' images and the ecr and
// ecr-image-users reads.
var Module = kind.Module{
	Name:        Name,
	Section:     Key,
	New:         kind.WithCloud(Read, FromConfig),
	Reads:       []string{inventory.ReadImages},
	Clouds:      []string{Read, UsersRead},
	Permissions: Permissions,
	Gauges:      Gauges,
}
