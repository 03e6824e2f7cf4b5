package k8spvc

import (
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// A PVC recreated under the same name (new UID) is a new object: its clock
// starts when it is first seen, not when its predecessor was.
func TestRecreatedPVCStartsItsOwnClock(t *testing.T) {
	failed := &inventory.WorkflowRef{Namespace: "argo", Name: "wf-1", Phase: "Failed", Finished: t0.Add(-48 * time.Hour)}
	pvc := func(uid string) inventory.ClusterRefs {
		return inventory.ClusterRefs{Name: "a", Complete: true, PVCs: []inventory.PVCRef{
			{Namespace: "argo", Name: "wf-1-workdir", CapacityGB: 10, Workflow: failed, UID: uid}}}
	}
	pol := testPolicy()
	pol.Delete = true
	p := build(snap(nil, pvc("old")), pol, engine.NewState(), t0)
	// The old PVC goes; a new one with the same name appears 7h later (past grace).
	p = build(snap(nil, pvc("new")), pol, p.State, t0.Add(7*time.Hour))
	if d := enginetest.DecisionFor(t, p, "wf-1-workdir"); d.Action == engine.Delete {
		t.Fatalf("recreated PVC deleted on first sight with its predecessor's clock: %s %q", d.Action, d.Why())
	}
}
