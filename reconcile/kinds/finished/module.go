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
// k8s-pod) for the wiring: on with its section (section), made by from,
// it relies on the clusters' workloads, runs in each cluster's agent, and
// asks the collector for the section's retention annotation and, with a
// selector, the objects' labels.
func Module[K interface {
	*T
	engine.Kind
}, T any](name string, section func(*config.Config) *Retention,
	from func(cfg *config.Config, client func(cluster string) (kubernetes.Interface, error)) K,
	permissions perms.Set, gauges []layout.GaugeDef) kind.Module {
	return kind.Module{
		Name:  name,
		On:    func(cfg *config.Config) bool { return section(cfg) != nil },
		New:   kind.WithKube(from),
		Reads: []string{inventory.ReadWorkloads},
		Collect: func(cfg *config.Config) kind.Collect {
			s := section(cfg)
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
