package k8sjob

import (
	"testing"

	"reclaim.dev/reclaim/inventory"
)

// A Job's pod stuck Running after its main container exited, and a failed
// pod a disruption caused, are named; a plain failure, a running pod and a
// bare stuck pod (no Job) are not.
func TestLookAt(t *testing.T) {
	job := func(name string) *inventory.Owner { return &inventory.Owner{Kind: "Job", Name: name} }
	snap := &inventory.View{Clusters: []inventory.ClusterRefs{{Name: "c", Pods: []inventory.Pod{
		{Namespace: "n", Name: "zombie", Phase: "Running", Owner: job("z"), Stuck: "main exited 0; istio-proxy still running"},
		{Namespace: "n", Name: "preempted", Phase: "Failed", Owner: job("p"), Disruption: "PreemptionByScheduler"},
		{Namespace: "n", Name: "crashed", Phase: "Failed", Owner: job("x")},
		{Namespace: "n", Name: "working", Phase: "Running", Owner: job("w")},
		{Namespace: "n", Name: "bare", Phase: "Running", Stuck: "a exited 1; b still running"},
	}}}}
	got := lookAt(snap)
	if len(got) != 2 || got[0].Job != "z" || got[0].Problem != "stuck" || got[1].Job != "p" || got[1].Problem != "disrupted" {
		t.Fatalf("look at %+v", got)
	}
	if s := LookAtSection(got); s.Key != "jobsToLookAt" || len(s.Blocks) != 1 || len(s.Blocks[0].Rows) != 2 {
		t.Fatalf("section %+v", s)
	}
}
