package k8sjob

import (
	"fmt"

	"reclaim.dev/reclaim/engine"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/kinds/finished"
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
	cs := counts.Sorted(p, Name)
	v := engine.View{Sections: []engine.Section{
		finished.CountsSection("finishedJobs", "FINISHED JOBS: kept in etcd until deleted (each one's pods, on Fargate a node and a subnet address each, go with it)", "Jobs", cs),
		finished.DecisionSection(p, Name, "FINISHED JOBS"),
	}, Gauges: finished.CountGauges("reclaim_k8s_jobs", cs)}
	ips := 0
	for i := range p.Decisions {
		if d := &p.Decisions[i]; d.Kind == Name && d.Action == engine.Delete {
			ips += d.Frees.IPs
		}
	}
	v.Summary = fmt.Sprintf("Jobs delete %d (frees %d subnet addresses), wait %d", p.Count(Name, engine.Delete), ips, p.Count(Name, engine.Mark))
	return v
}
