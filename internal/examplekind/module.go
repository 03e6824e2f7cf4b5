package examplekind

import (
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring: the one value a kind exports, and the
// one line internal/app's Registered gains (here, TestAKindIsOnePackage
// registers it). On with its section, it taps ConfigMaps and deletes
// through each cluster's client.
var Module = kind.Module{
	Name:    Name,
	Section: Key,
	New:     kind.WithKube(FromConfig),
	Taps:    Taps,
}
