package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
)

// workflowPVC creates an Argo Workflow in phase and a PVC it owns, as Argo's
// volumeClaimTemplates do, bound to a PV of the disk key.
func (w *world) workflowPVC(ns, wf, phase, diskKey string) *corev1.PersistentVolumeClaim {
	w.t.Helper()
	ctx := context.Background()
	if _, err := prodA.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		w.t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
		"metadata": map[string]any{"name": wf, "namespace": ns},
		"spec":     map[string]any{"entrypoint": "main"},
		"status":   map[string]any{"phase": phase, "finishedAt": w.now.Add(-48 * time.Hour).Format(time.RFC3339)},
	}}
	created, err := prodA.Dynamic.Resource(kube.WorkflowGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	pvName := w.pv(prodA, diskKey)
	yes := true
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: wf + "-workdir",
			Labels: map[string]string{"workflows.argoproj.io/workflow": wf},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: wf,
				UID: created.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeName: pvName,
			Resources:  corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")}}},
	}
	pvc, err = prodA.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return pvc
}

// PVCs of finished workflows: reported by default; with the switch on, deleted
// after the grace period and only then, and never while a pod mounts them.
func TestFinishedWorkflowPVCs(t *testing.T) {
	w := newWorld(t)
	ns := w.name("argo")
	failedDisk := w.gce.AddDisk(project, gcefakeDisk(w, "failed-wf"))
	runningDisk := w.gce.AddDisk(project, gcefakeDisk(w, "running-wf"))
	mountedDisk := w.gce.AddDisk(project, gcefakeDisk(w, "mounted"))
	failed := w.workflowPVC(ns, "etl-1", "Failed", failedDisk)
	running := w.workflowPVC(ns, "etl-2", "Running", runningDisk)
	mounted := w.workflowPVC(ns, "etl-3", "Failed", mountedDisk)
	ctx := context.Background()
	_, err := prodA.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: mounted.Name}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := func(p *corev1.PersistentVolumeClaim) string {
		return "clusters/prod-a/namespaces/" + p.Namespace + "/persistentvolumeclaims/" + p.Name
	}

	// Default: only reported, with the GB it holds; no cluster mutation.
	rep := w.run(true)
	if d := decision(t, rep, id(failed)); d.Action != engine.Report {
		t.Fatalf("default: %+v", d)
	}
	found := false
	for _, h := range k8spvc.HoldersOf(rep.Plan) {
		found = found || (h.Workflow == "etl-1" && h.GB == 20 && h.Phase == "Failed")
	}
	if !found {
		t.Fatalf("holders: %+v", k8spvc.HoldersOf(rep.Plan))
	}

	// The k8sPvcs section follows the disks' keys (disks.grace, 6h, is its grace).
	w.disksYAML = "  maxDeletePercent: 100%\nk8sPvcs:\n  delete: true\n  maxDeletePercent: 100%\n"
	start := w.now
	rep = w.run(true)
	if d := decision(t, rep, id(failed)); d.Action != engine.Mark {
		t.Fatalf("switch on, first sight: %+v", d)
	}
	w.now = start.Add(6*time.Hour + time.Minute)
	rep = w.run(true)
	if rep.Outcome == nil || rep.Outcome.Deleted != 1 {
		t.Fatalf("after grace: %+v\n%s", rep.Outcome, text(rep))
	}
	get := func(p *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
		got, err := prodA.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return got
	}
	// Without a controller-manager the pvc-protection finalizer keeps the
	// object Terminating; what matters is that the delete was made.
	if g := get(failed); g != nil && g.DeletionTimestamp == nil {
		t.Fatal("finished workflow's PVC was not deleted")
	}
	for _, p := range []*corev1.PersistentVolumeClaim{running, mounted} {
		if g := get(p); g == nil || g.DeletionTimestamp != nil {
			t.Fatalf("%s was deleted", p.Name)
		}
	}
	if d := decision(t, rep, id(mounted)); d.Action != engine.Keep || !strings.Contains(d.Why(), "mounted by pod") {
		t.Fatalf("mounted: %+v", d)
	}
	if w.gce.MutatingCalls() != 0 {
		t.Fatal("PVC cleanup touched the cloud directly")
	}
	// The deleted PVC stays Terminating (pvc-protection): the next run keeps
	// it, and the audit log still has its delete exactly once.
	w.now = w.now.Add(time.Hour)
	rep = w.run(true)
	if d := decision(t, rep, id(failed)); d.Action != engine.Keep || !strings.Contains(d.Why(), "already being deleted") {
		t.Fatalf("terminating PVC: %+v", d)
	}
	deletes := 0
	for _, r := range w.audit() {
		if r.ID == id(failed) && r.Action == "delete" {
			deletes++
		}
	}
	if deletes != 1 {
		t.Fatalf("audit has %d deletes of %s", deletes, id(failed))
	}
}
