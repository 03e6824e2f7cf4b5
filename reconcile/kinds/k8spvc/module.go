package k8spvc

import (
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring (internal/app registers it). It is
// always on: it reports workflow PVCs whatever the config, and deletes
// them only with k8sPvcs.delete. Its clusters' view is its own
// (an agent runs it); the gce read, when there is one, says what its
// disks free.
var Module = kind.Module{
	Name:        Name,
	On:          func(*config.Config) bool { return true },
	New:         kind.WithKube(FromConfig),
	Taps:        func(*config.Config) []kube.Tap { return []kube.Tap{Tap} },
	Clouds:      []string{gcepd.Read},
	InCluster:   true,
	Permissions: Permissions,
}
