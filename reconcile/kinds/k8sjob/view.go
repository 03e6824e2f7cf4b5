package k8sjob

import (
	"strings"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

// Gauges are the kind's metrics.
var Gauges = finished.CountGaugeDefs("reclaim_k8s_jobs", "Jobs")

// CountsOf returns the plan's finished-Job counts.
func CountsOf(p *engine.Plan) []finished.Count {
	return layout.DataOf[[]finished.Count](p.Sections, "finishedJobs")
}

// View shows the finished Jobs per cluster and namespace (every run), the
// decisions, and the summary phrase.
func (k *Kind) View(p *engine.Plan, snap *inventory.View) layout.View {
	counts := finished.Tally(snap, &k.Policy.Policy, p.GeneratedAt,
		func(c *inventory.ClusterRefs) []inventory.Job { return c.Jobs },
		func(j *inventory.Job) finished.Object {
			return finished.Object{Done: j.Done() && !j.Finished.IsZero(), Namespace: j.Namespace, Labels: j.Labels, Succeeded: j.Status == "Complete", At: j.Finished, Retention: j.Retention}
		})
	v := finished.View(p, Name, counts, finished.Texts{Key: "finishedJobs", Noun: "Jobs", GaugePrefix: "reclaim_k8s_jobs",
		Title:        "FINISHED JOBS: kept in etcd until deleted (each one's pods, on Fargate a node and a subnet address each, go with it)",
		DetailsTitle: "FINISHED JOBS"})
	v.Sections = append(v.Sections, LookAtSection(lookAt(snap)))
	return v
}

// LookAt is a Job a person should look at, which reclaim only reports: a
// pod of it stuck Running after its main container exited (the Job never
// finishes), or a failure a disruption caused, not its code.
type LookAt struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Job       string `json:"job"`
	Pod       string `json:"pod"`
	// Problem is "stuck" or "disrupted".
	Problem string `json:"problem"`
	Why     string `json:"why"`
}

// lookAt finds the stuck and the disrupted Jobs of every cluster.
func lookAt(snap *inventory.View) []LookAt {
	var out []LookAt
	for ci := range snap.Clusters {
		c := &snap.Clusters[ci]
		for pi := range c.Pods {
			pod := &c.Pods[pi]
			if pod.Owner == nil || pod.Owner.Kind != "Job" {
				continue
			}
			l := LookAt{Cluster: c.Name, Namespace: pod.Namespace, Job: pod.Owner.Name, Pod: pod.Name}
			switch {
			case pod.Stuck != "":
				l.Problem, l.Why = "stuck", pod.Stuck
			case pod.Disruption != "" && pod.Phase == "Failed":
				l.Problem, l.Why = "disrupted", "failed by "+pod.Disruption+", not by its code: a retry may succeed"
			default:
				continue
			}
			out = append(out, l)
		}
	}
	return out
}

// LookAtSection lists the stuck and disrupted Jobs (key "jobsToLookAt").
func LookAtSection(ls []LookAt) layout.Section {
	s := layout.Section{Key: "jobsToLookAt", Data: ls, Place: layout.Overview, Title: "JOBS TO LOOK AT: stuck Running after their main container exited, or failed by a disruption (report only)"}
	return layout.Table(s, len(ls), layout.Block{Indent: 2, Header: []string{"PROBLEM", "CLUSTER", "NAMESPACE", "JOB", "POD", "WHY"}}, func(b *layout.Block) {
		for _, l := range ls {
			b.Rows = append(b.Rows, []string{strings.ToUpper(l.Problem), l.Cluster, l.Namespace, l.Job, l.Pod, l.Why})
		}
	})
}
