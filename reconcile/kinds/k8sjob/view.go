package k8sjob

import (
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

// Gauges are the kind's metrics.
var Gauges = finished.CountGaugeDefs("reclaim_k8s_jobs", "Jobs")

// CountsOf returns the plan's finished-Job counts.
func CountsOf(p *engine.Plan) []finished.Count {
	c, _ := p.Section("finishedJobs").([]finished.Count)
	return c
}

// View shows the finished Jobs per cluster and namespace (every run), the
// decisions, and the summary phrase.
func (k *Kind) View(p *engine.Plan, snap *inventory.Snapshot) engine.View {
	counts := finished.Counter{}
	for ci := range snap.Clusters {
		c := &snap.Clusters[ci]
		for ji := range c.Jobs {
			j := &c.Jobs[ji]
			if !j.Done() || !k.Policy.InScope(j.Namespace, j.Labels) || j.Finished.IsZero() {
				continue
			}
			v := k.Policy.Retain(j.Status == "Complete", j.Finished, j.Retention, p.GeneratedAt)
			counts.Add(c.Name, j.Namespace, j.Status == "Complete", v.Keep == "")
		}
	}
	return finished.View(p, Name, counts, finished.Texts{Key: "finishedJobs", Noun: "Jobs", GaugePrefix: "reclaim_k8s_jobs",
		Title:        "FINISHED JOBS: kept in etcd until deleted (each one's pods, on Fargate a node and a subnet address each, go with it)",
		DetailsTitle: "FINISHED JOBS"})
}
