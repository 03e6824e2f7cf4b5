package k8spvc_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
	"reclaim.dev/reclaim/reconcile/state"
)

// A PVC that changed between plan and delete is skipped, like a disk: not a
// failure, no exit 4, no failure streak. (Regression: it used to be
// reported failed.)
func TestChangedPVCIsSkippedNotFailed(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	failed := &inventory.WorkflowRef{Namespace: "argo", Name: "wf-1", Phase: "Failed", Finished: t0.Add(-48 * time.Hour)}
	snap := inventory.View{Clusters: []inventory.ClusterRefs{{Name: "a", Complete: true, PVCs: []inventory.PVCRef{
		{Namespace: "argo", Name: "wf-1-workdir", CapacityGB: 10, Workflow: failed, UID: "planned"}},
		Taps: map[string]inventory.Tapped{k8spvc.TapName: {Complete: true}}}}}
	pol := k8spvc.Policy{Delete: true, ProtectLabel: "reclaim-protect",
		Safety: config.Safety{Grace: config.Duration(6 * time.Hour), Caps: config.Caps{MaxDeletesPerRun: 10, MaxDeletePercent: 1, BreakerCandidates: 10}}}
	plan := func(k engine.Kind) *engine.Plan {
		first := enginetest.Build(&snap, []engine.Kind{k}, engine.NewState(), t0.Add(-7*time.Hour))
		return enginetest.Build(&snap, []engine.Kind{k}, first.State, t0)
	}
	for name, obj := range map[string]*corev1.PersistentVolumeClaim{
		"recreated": {ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "wf-1-workdir", UID: "other"}},
		"protected": {ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "wf-1-workdir", UID: "planned", Labels: map[string]string{"reclaim-protect": "true"}}},
	} {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset(obj)
			k := &k8spvc.Kind{Policy: pol, Client: func(string) (kubernetes.Interface, error) { return cs, nil }}
			p := plan(k)
			if p.Count(k8spvc.Name, engine.Delete) != 1 {
				t.Fatalf("setup: %+v", p.Decisions)
			}
			a := &engine.Applier{Kinds: []engine.Kind{k}, Store: state.NewMemoryStore(engine.NewState()), Log: zap.NewNop(),
				Now: func() time.Time { return t0 }, MaxConsecutiveFailures: 1}
			out, err := a.Apply(context.Background(), p, true)
			if err != nil {
				t.Fatal(err)
			}
			if out.Failed != 0 || out.Skipped != 1 || out.Stopped != "" {
				t.Fatalf("failed %d skipped %d stopped %q: %+v", out.Failed, out.Skipped, out.Stopped, out.Results)
			}
		})
	}
}
