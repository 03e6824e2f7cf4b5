package ec2interface

import (
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring (internal/app registers it): on with
// an ec2Interfaces section, it relies on the clusters' workloads and the ec2 read.
var Module = kind.Module{
	Name:        Name,
	Section:     Key,
	New:         kind.WithCloud(Read, FromConfig),
	Reads:       []string{inventory.ReadWorkloads},
	Clouds:      []string{Read},
	Evidence:    MadeFor,
	Permissions: Permissions,
	Gauges:      Gauges,
}
