package k8spod

import (
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

// Gauges are the kind's metrics.
var Gauges = finished.CountGaugeDefs("reclaim_k8s_pods", "Pods")

// CountsOf returns the plan's finished-Pod counts.
func CountsOf(p *engine.Plan) []finished.Count {
	c, _ := p.Section("finishedPods").([]finished.Count)
	return c
}

// View shows the finished Pods per cluster and namespace (every run), the
// decisions, and the summary phrase.
func (k *Kind) View(p *engine.Plan, snap *inventory.Snapshot) engine.View {
	counts := finished.Counter{}
	for ci := range snap.Clusters {
		c := &snap.Clusters[ci]
		for pi := range c.Pods {
			pod := &c.Pods[pi]
			if !pod.Done() || !k.Policy.InScope(pod.Namespace, pod.Labels) {
				continue
			}
			v := k.Policy.Retain(pod.Phase == "Succeeded", Finished(pod), pod.Retention, p.GeneratedAt)
			counts.Add(c.Name, pod.Namespace, pod.Phase == "Succeeded", v.Keep == "")
		}
	}
	return finished.View(p, Name, counts, finished.Texts{Key: "finishedPods", Noun: "Pods", GaugePrefix: "reclaim_k8s_pods",
		Title: "FINISHED PODS: each keeps its subnet address (and on Fargate its node) until deleted", DetailsTitle: "FINISHED PODS"})
}
