package k8spvc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/engine"
)

// tapCluster is one cluster's Argo PVCs: wf-1's by owner reference (its
// Workflow Failed), wf-2's by label only (Running), wf-4's owned by a
// Workflow since recreated under the same name (another UID).
func tapCluster() (*fake.Clientset, *dynfake.FakeDynamicClient) {
	claim := func(name string, labels map[string]string, owner *metav1.OwnerReference) runtime.Object {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: name, UID: types.UID("uid-" + name), Labels: labels,
			CreationTimestamp: metav1.NewTime(t0.Add(-72 * time.Hour))},
			Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}}}
		if owner != nil {
			c.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return c
	}
	owner := func(name, uid string) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: name, UID: types.UID(uid)}
	}
	wf := func(name, uid, phase, finished string) runtime.Object {
		status := map[string]any{"phase": phase}
		if finished != "" {
			status["finishedAt"] = finished
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
			"metadata": map[string]any{"namespace": "argo", "name": name, "uid": uid}, "status": status}}
	}
	cs := fake.NewSimpleClientset(
		claim("wf-1-workdir", nil, owner("wf-1", "u1")),
		claim("wf-2-workdir", map[string]string{kube.WorkflowLabel: "wf-2"}, nil),
		claim("wf-4-workdir", nil, owner("wf-4", "old")))
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{kube.WorkflowGVR: "WorkflowList"},
		wf("wf-1", "u1", "Failed", t0.Add(-48*time.Hour).Format(time.RFC3339)),
		wf("wf-2", "u2", "Running", ""),
		wf("wf-4", "new", "Succeeded", t0.Add(-48*time.Hour).Format(time.RFC3339)))
	return cs, dyn
}

func collect(t *testing.T, cs *fake.Clientset, dyn *dynfake.FakeDynamicClient) inventory.ClusterRefs {
	t.Helper()
	return kube.Collect(context.Background(), "a", cs, dyn, kube.Options{Timeout: 10 * time.Second, Taps: []kube.Tap{Tap}})
}

func phaseOf(t *testing.T, c inventory.ClusterRefs, name string) *inventory.WorkflowRef {
	t.Helper()
	for _, p := range c.PVCs {
		if p.Name == name {
			return p.Workflow
		}
	}
	t.Fatalf("no PVC %s in %+v", name, c.PVCs)
	return nil
}

// The tap gives each PVC its owning Workflow's phase and finish time, by
// owner UID when the PVC has one.
func TestTapLinksEachPVCToItsWorkflow(t *testing.T) {
	cs, dyn := tapCluster()
	c := collect(t, cs, dyn)
	if !c.Complete || !c.Taps[TapName].Complete || c.Taps[TapName].Items != 3 {
		t.Fatalf("complete %v, tap %+v, problems %q", c.Complete, c.Taps[TapName], c.Problems)
	}
	if w := phaseOf(t, c, "wf-1-workdir"); w.Phase != "Failed" || !w.Finished.Equal(t0.Add(-48*time.Hour)) {
		t.Fatalf("wf-1: %+v", w)
	}
	if w := phaseOf(t, c, "wf-2-workdir"); w.Phase != "Running" {
		t.Fatalf("wf-2 (by label): %+v", w)
	}
	// A Workflow of the same name but another UID is not the owner.
	if w := phaseOf(t, c, "wf-4-workdir"); w.Phase != "" || w.UID != "old" {
		t.Fatalf("wf-4: %+v", w)
	}
	p := build(snap(nil, c), Policy{Delete: true, Safety: config.Safety{Grace: config.Duration(time.Hour), Caps: config.Caps{MaxDeletesPerRun: 10, MaxDeletePercent: 1, BreakerCandidates: 10}}}, engine.NewState(), t0)
	if d := enginetest.DecisionFor(t, p, "wf-1-workdir"); d.Action != engine.Mark || d.Held {
		t.Fatalf("wf-1's PVC: %+v", d)
	}
	if d := enginetest.DecisionFor(t, p, "wf-4-workdir"); d.Action != engine.Keep {
		t.Fatalf("wf-4's PVC: %+v", d)
	}
}

// A cluster without Argo serves no Workflows: complete, and no PVC's
// Workflow has finished.
func TestTapArgoNotInstalled(t *testing.T) {
	cs, dyn := tapCluster()
	dyn.PrependReactor("list", "workflows", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(kube.WorkflowGVR.GroupResource(), "")
	})
	c := collect(t, cs, dyn)
	if !c.Complete || !c.Taps[TapName].Complete || phaseOf(t, c, "wf-1-workdir").Phase != "" {
		t.Fatalf("complete %v, tap %+v", c.Complete, c.Taps[TapName])
	}
}

// A failed read of the Workflows holds the cluster's PVCs, through the
// tap's source key, and not the cluster: its disks are still planned.
func TestTapFailureHoldsOnlyThePVCs(t *testing.T) {
	cs, dyn := tapCluster()
	dyn.PrependReactor("list", "workflows", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(kube.WorkflowGVR.GroupResource(), "", fmt.Errorf("no"))
	})
	c := collect(t, cs, dyn)
	if !c.Complete || c.Taps[TapName].Complete || !strings.Contains(c.Taps[TapName].Problem, "needs list on workflows.argoproj.io") {
		t.Fatalf("complete %v, tap %+v", c.Complete, c.Taps[TapName])
	}
	// Say the Workflow was seen Failed before the pass failed: still held.
	for i := range c.PVCs {
		if c.PVCs[i].Name == "wf-1-workdir" {
			c.PVCs[i].Workflow.Phase, c.PVCs[i].Workflow.Finished = "Failed", t0.Add(-48*time.Hour)
		}
	}
	pol := Policy{Delete: true, Safety: config.Safety{Grace: config.Duration(time.Hour), Caps: config.Caps{MaxDeletesPerRun: 10, MaxDeletePercent: 1, BreakerCandidates: 10}}}
	st := engine.NewState()
	st = build(snap(nil, c), pol, st, t0.Add(-2*time.Hour)).State
	p := build(snap([]gce.Disk{orphanDisk("d-1")}, c), pol, st, t0)
	d := enginetest.DecisionFor(t, p, "wf-1-workdir")
	if d.Action == engine.Delete || !d.Held || !strings.Contains(d.Why(), "tap workflows") {
		t.Fatalf("a PVC relying on a failed tap: %+v (%s)", d, d.Why())
	}
	if dk := enginetest.DecisionFor(t, p, "d-1"); dk.Held {
		t.Fatalf("the tap held a disk: %s", dk.Why())
	}
}
