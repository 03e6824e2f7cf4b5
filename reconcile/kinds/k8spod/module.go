package k8spod

import (
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the kind for the wiring (internal/app registers it): on with
// a pods section, it relies on the clusters' workloads, and asks the
// collector for Pods' retention annotation and, with a selector, their labels.
var Module = kind.Module{
	Name:        Name,
	On:          func(cfg *config.Config) bool { return SectionOf(cfg) != nil },
	New:         kind.WithKube(FromConfig),
	Reads:       []string{inventory.ReadWorkloads},
	Collect:     collect,
	InCluster:   true,
	Permissions: Permissions,
	Gauges:      Gauges,
}

// collect: the collector reads the pods section's retention annotation, and
// the labels its selector matches.
func collect(cfg *config.Config) kind.Collect {
	s := SectionOf(cfg)
	if s == nil {
		return kind.Collect{}
	}
	return kind.Collect{RetentionAnnotation: s.RetentionAnnotation, Labels: s.Selector != ""}
}
