package k8spvc

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile/engine"
)

// TapName names the kind's read of Argo Workflows: its source key is
// inventory.TapKey(TapName, cluster).
const TapName = "workflows"

// Tap reads every cluster's Argo Workflows (one paginated pass) and gives
// each Workflow-owned PVC, and the PV bound to it, its Workflow's phase and
// finish time. A cluster without Argo serves no Workflows: it has none, and
// its PVCs' Workflows are not finished. A pass that fails holds this kind's
// PVCs of that cluster (the engine checks the tap's source key) and nothing
// else: a disk's evidence of use is its PV, whatever the Workflow's phase.
var Tap = kube.Tap{Name: TapName, Resource: kube.WorkflowGVR, Optional: true,
	New:  func(string) kube.TapSink { return workflows{} },
	Link: link}

// workflow is what the tap keeps of one Workflow.
type workflow struct {
	uid      string
	phase    string
	finished time.Time
}

// workflows are one cluster's, by namespace/name.
type workflows map[string]workflow

func (w workflows) Add(u *unstructured.Unstructured) error {
	wf := workflow{uid: string(u.GetUID())}
	wf.phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	if s, _, _ := unstructured.NestedString(u.Object, "status", "finishedAt"); s != "" {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			wf.finished = t
		}
	}
	w[u.GetNamespace()+"/"+u.GetName()] = wf // a re-listed object is recorded once
	return nil
}

func (w workflows) Result() any { return w }

// link fills in the phase of each PVC's and PV's owning Workflow: the one
// of that name, unless the PVC's owner reference names another UID (a
// Workflow recreated under the same name does not own the old PVC).
func link(out *inventory.ClusterRefs, read inventory.Tapped) {
	wfs, _ := read.Data.(workflows)
	fill := func(ref *inventory.WorkflowRef) {
		if ref == nil {
			return
		}
		if w, ok := wfs[ref.Namespace+"/"+ref.Name]; ok && (ref.UID == "" || w.uid == "" || ref.UID == w.uid) {
			ref.Phase, ref.Finished = w.phase, w.finished
		}
	}
	for i := range out.PVs {
		fill(out.PVs[i].Workflow)
	}
	for i := range out.PVCs {
		fill(out.PVCs[i].Workflow)
	}
}

// sourcesOf are what a cluster's PVC proposals rely on: the cluster's
// PVC and pod listing, and the tap's Workflows.
func sourcesOf(cluster string) []string {
	return engine.Users{Clusters: []string{cluster}, Reads: []string{TapName}}.Keys(nil)
}
