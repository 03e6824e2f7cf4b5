package examplekind

import (
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring: the one value a kind exports, and the
// one line internal/app's Registered gains (here, TestAKindIsOnePackage
// registers it). On with its section, it taps ConfigMaps and deletes
// through each cluster's client.
var Module = kind.Module{
	Name: Name,
	On:   func(cfg *config.Config) bool { return config.SectionOf[Section](cfg, Key) != nil },
	New:  kind.WithKube(FromConfig),
	Taps: Taps,
}
