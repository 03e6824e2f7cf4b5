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
	counts := finished.Tally(snap, &k.Policy.Policy, p.GeneratedAt,
		func(c *inventory.ClusterRefs) []inventory.Job { return c.Jobs },
		func(j *inventory.Job) finished.Object {
			return finished.Object{Done: j.Done() && !j.Finished.IsZero(), Namespace: j.Namespace, Labels: j.Labels, Succeeded: j.Status == "Complete", At: j.Finished, Retention: j.Retention}
		})
	return finished.View(p, Name, counts, finished.Texts{Key: "finishedJobs", Noun: "Jobs", GaugePrefix: "reclaim_k8s_jobs",
		Title:        "FINISHED JOBS: kept in etcd until deleted (each one's pods, on Fargate a node and a subnet address each, go with it)",
		DetailsTitle: "FINISHED JOBS"})
}
