package k8spvc

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// The applier deletes a planned PVC only while it is the object planned: one
// recreated under the same name since the plan is a skip, never a failure.
func TestApplyPVC(t *testing.T) {
	failed := &inventory.WorkflowRef{Namespace: "argo", Name: "wf-1", Phase: "Failed", Finished: t0.Add(-48 * time.Hour)}
	c := inventory.ClusterRefs{Name: "a", Complete: true, PVCs: []inventory.PVCRef{
		{Namespace: "argo", Name: "wf-1-workdir", CapacityGB: 10, Workflow: failed, UID: "u1"}}}
	id := ID("a", "argo", "wf-1-workdir")
	cases := []struct {
		name    string
		liveUID string // "" : not there
		result  string
		left    bool // the PVC is still there after apply
	}{
		{"same object is deleted", "u1", audit.Deleted, false},
		{"recreated since the plan is skipped", "u2", audit.Skipped, true},
		{"gone is already gone", "", audit.AlreadyGone, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := k8sfake.NewClientset()
			if tc.liveUID != "" {
				cs = k8sfake.NewClientset(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
					Namespace: "argo", Name: "wf-1-workdir", UID: types.UID(tc.liveUID)}})
			}
			pol := testPolicy()
			pol.Delete = true
			k := &Kind{Policy: pol, Client: func(cluster string) (kubernetes.Interface, error) { return cs, nil }}
			st := engine.NewState()
			st.Seen(id, "u1", t0.Add(-7*time.Hour))
			p := enginetest.Build(snap(nil, c), []engine.Kind{k}, st, t0)
			if d := enginetest.DecisionFor(t, p, "wf-1-workdir"); d.Action != engine.Delete {
				t.Fatalf("not planned for deletion: %+v", d)
			}
			var buf bytes.Buffer
			a := &engine.Applier{Kinds: []engine.Kind{k}, Store: state.NewMemoryStore(st), Audit: audit.New(&buf), Log: zap.NewNop(),
				Now: func() time.Time { return t0 }}
			out, err := a.Apply(context.Background(), p, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != 1 || out.Results[0].Result != tc.result || out.Failed != 0 {
				t.Fatalf("%+v", out)
			}
			if !strings.Contains(buf.String(), `"result":"`+tc.result+`"`) {
				t.Fatalf("audit: %s", buf.String())
			}
			_, err = cs.CoreV1().PersistentVolumeClaims("argo").Get(context.Background(), "wf-1-workdir", metav1.GetOptions{})
			if left := err == nil; left != tc.left {
				t.Fatalf("PVC left %v, want %v (%v)", left, tc.left, err)
			}
		})
	}
}

// The delete names the UID planned as a precondition: a PVC recreated under
// the same name between the re-read and the delete is refused by the API
// server, not deleted.
func TestDeleteCarriesUIDPrecondition(t *testing.T) {
	cs := k8sfake.NewClientset(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "wf-1-workdir", UID: "u1"}})
	k := &Kind{Policy: testPolicy(), Client: func(string) (kubernetes.Interface, error) { return cs, nil }}
	d := &engine.Decision{ID: ID("a", "argo", "wf-1-workdir"), Name: "wf-1-workdir", Detail: &Detail{Cluster: "a", Location: "argo", UID: "u1"}}
	if _, err := k.Delete(context.Background(), []*engine.Decision{d}); err != nil {
		t.Fatal(err)
	}
	var n int
	for _, a := range cs.Actions() {
		del, ok := a.(k8stesting.DeleteAction)
		if !ok {
			continue
		}
		n++
		if o := del.GetDeleteOptions(); o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != "u1" {
			t.Errorf("delete of %s without the planned UID as a precondition: %+v", del.GetName(), o.Preconditions)
		}
	}
	if n != 1 {
		t.Fatalf("%d delete calls, want 1", n)
	}
}

// A delete the API server refuses (forbidden) fails that PVC only: the rest
// of the batch is deleted. No answer fails the batch (the outcome unknown).
func TestDeleteRefusalFailsOnePVC(t *testing.T) {
	pvc := func(name string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: name, UID: types.UID("u-" + name)}}
	}
	dec := func(name string) *engine.Decision {
		return &engine.Decision{ID: ID("a", "argo", name), Name: name, Detail: &Detail{Cluster: "a", Location: "argo", UID: "u-" + name}}
	}
	cs := k8sfake.NewClientset(pvc("locked"), pvc("free"))
	cs.PrependReactor("delete", "persistentvolumeclaims", func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
		if a.(k8stesting.DeleteAction).GetName() == "locked" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, "locked", errors.New("denied by policy"))
		}
		return false, nil, nil
	})
	k := &Kind{Policy: testPolicy(), Client: func(string) (kubernetes.Interface, error) { return cs, nil }}
	out, err := k.Delete(context.Background(), []*engine.Decision{dec("locked"), dec("free")})
	if err != nil {
		t.Fatalf("a refusal failed the batch: %v", err)
	}
	if out[0].Err == nil || !apierrors.IsForbidden(out[0].Err) || out[1].Err != nil {
		t.Fatalf("results %v, %v; want forbidden, deleted", out[0].Err, out[1].Err)
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims("argo").Get(context.Background(), "free", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the PVC after the refused one was not deleted: %v", err)
	}

	cs.PrependReactor("delete", "persistentvolumeclaims", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, apierrors.NewTimeoutError("slow etcd", 1)
	})
	if _, err := k.Delete(context.Background(), []*engine.Decision{dec("locked")}); err == nil {
		t.Fatal("a delete with no answer must fail the batch (outcome unknown)")
	}
}
