package finished

import (
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/base/perms"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Module is the module of a kind of finished workloads (k8s-job,
// k8s-pod) for the wiring: on with its section (key), made by from,
// it relies on the clusters' workloads, runs in each cluster's agent, and
// asks the collector for the section's retention annotation and, with a
// selector, the objects' labels.
func Module[K interface {
	*T
	engine.Kind
}, T any](name, key string,
	from func(cfg *config.Config, client func(cluster string) (kubernetes.Interface, error)) K,
	permissions perms.Set, gauges []layout.GaugeDef) kind.Module {
	return kind.Module{
		Name:    name,
		Section: key,
		New:     kind.WithKube(from),
		Reads:   []string{inventory.ReadWorkloads},
		Collect: func(cfg *config.Config) kind.Collect {
			s := Section(cfg, key)
			if s == nil {
				return kind.Collect{}
			}
			return kind.Collect{RetentionAnnotation: s.RetentionAnnotation, Labels: s.Selector != ""}
		},
		InCluster:   true,
		Permissions: permissions,
		Gauges:      gauges,
	}
}

// Section is the file's retention section under key, nil when it has none.
func Section(cfg *config.Config, key string) *Retention {
	return config.SectionOf[Retention](cfg, key)
}
