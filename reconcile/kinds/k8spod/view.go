package k8spod

import (
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

// Gauges are the kind's metrics.
var Gauges = finished.CountGaugeDefs("reclaim_k8s_pods", "Pods")

// CountsOf returns the plan's finished-Pod counts.
func CountsOf(p *engine.Plan) []finished.Count {
	return layout.DataOf[[]finished.Count](p.Sections, "finishedPods")
}

// View shows the finished Pods per cluster and namespace (every run), the
// decisions, and the summary phrase.
func (k *Kind) View(p *engine.Plan, snap *inventory.View) layout.View {
	counts := finished.Tally(snap, &k.Policy.Policy, p.GeneratedAt,
		func(c *inventory.ClusterRefs) []inventory.Pod { return c.Pods },
		func(j *inventory.Pod) finished.Object {
			return finished.Object{Done: j.Done(), Namespace: j.Namespace, Labels: j.Labels, Succeeded: j.Phase == "Succeeded", At: Finished(j), Retention: j.Retention}
		})
	return finished.View(p, Name, counts, finished.Texts{Key: "finishedPods", Noun: "Pods", GaugePrefix: "reclaim_k8s_pods",
		Title: "FINISHED PODS: each keeps its subnet address (and on Fargate its node) until deleted", DetailsTitle: "FINISHED PODS"})
}
