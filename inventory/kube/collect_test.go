package kube

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
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
	"k8s.io/client-go/dynamic"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"reclaim.dev/reclaim/inventory"
)

const protect = "reclaim.dev/protect"

func newDyn(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{WorkflowGVR: "WorkflowList"}, objs...)
}

func workflow(ns, name, uid, phase, finishedAt string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Workflow",
		"metadata":   map[string]any{"namespace": ns, "name": name, "uid": uid},
		"status":     map[string]any{"phase": phase},
	}}
	if finishedAt != "" {
		_ = unstructured.SetNestedField(u.Object, finishedAt, "status", "finishedAt")
	}
	return u
}

func boundPV(pv *corev1.PersistentVolume, ns, claim, size string) *corev1.PersistentVolume {
	pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim}
	pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	pv.Status.Phase = corev1.VolumeBound
	return pv
}

func pvc(ns, name, volume string, labels map[string]string, owners ...metav1.OwnerReference) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: labels, OwnerReferences: owners,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))},
		Spec: corev1.PersistentVolumeClaimSpec{
			VolumeName: volume,
			Resources:  corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

func wfOwner(name, uid string) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: name, UID: types.UID(uid), Controller: &t}
}

func pod(ns, name string, phase corev1.PodPhase, vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{Volumes: vols}, Status: corev1.PodStatus{Phase: phase}}
}

func claimVol(vol, claim string) corev1.Volume {
	return corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func findPV(t *testing.T, r inventory.ClusterRefs, name string) inventory.PVRef {
	t.Helper()
	for _, p := range r.PVs {
		if p.PV == name {
			return p
		}
	}
	t.Fatalf("PV %s not in result %+v", name, r.PVs)
	return inventory.PVRef{}
}

func findPVC(t *testing.T, r inventory.ClusterRefs, ns, name string) inventory.PVCRef {
	t.Helper()
	for _, p := range r.PVCs {
		if p.Namespace == ns && p.Name == name {
			return p
		}
	}
	t.Fatalf("PVC %s/%s not in result %+v", ns, name, r.PVCs)
	return inventory.PVCRef{}
}

func opts() Options {
	return Options{PageSize: 2, Timeout: 10 * time.Second, ProtectLabel: protect, Projects: []string{"p1"}, Taps: []Tap{phaseTap()}}
}

// phaseTap is a test tap over Argo Workflows whose Link copies each
// Workflow's phase to the refs that name it: the tap plumbing through
// Collect (paging, re-lists, Link after the refs are built). The k8s-pvc
// kind's own tap (owner UIDs, finish times) is tested in its package.
func phaseTap() Tap {
	return Tap{Name: "wf", Resource: WorkflowGVR, Optional: true,
		New: func(string) TapSink { return phases{} },
		Link: func(out *inventory.ClusterRefs, read inventory.Tapped) {
			ph, _ := read.Data.(phases)
			set := func(w *inventory.WorkflowRef) {
				if w != nil {
					w.Phase = ph[w.Namespace+"/"+w.Name]
				}
			}
			for i := range out.PVs {
				set(out.PVs[i].Workflow)
			}
			for i := range out.PVCs {
				set(out.PVCs[i].Workflow)
			}
		}}
}

type phases map[string]string

func (p phases) Add(u *unstructured.Unstructured) error {
	p[u.GetNamespace()+"/"+u.GetName()], _, _ = unstructured.NestedString(u.Object, "status", "phase")
	return nil
}

func (p phases) Result() any { return p }

func TestCollectLinking(t *testing.T) {
	finished := "2026-03-04T05:06:07Z"
	cs := fake.NewSimpleClientset(
		// PV -> PVC owned by a Workflow (owner reference) -> pod.
		boundPV(csiPV("pv-wf", PDCSIDriver, "projects/p1/zones/us-east1-b/disks/pvc-wf"), "argo", "wf1-workdir", "10Gi"),
		pvc("argo", "wf1-workdir", "pv-wf", nil, wfOwner("wf1", "wf1-uid")),
		pod("argo", "wf1-step-1", corev1.PodSucceeded, claimVol("workdir", "wf1-workdir")),
		pod("argo", "wf1-step-2", corev1.PodRunning, claimVol("workdir", "wf1-workdir")),
		// Label fallback; the PVC (not the PV) is protected.
		boundPV(csiPV("pv-lbl", PDCSIDriver, "projects/p1/regions/us-east1/disks/pvc-lbl"), "argo", "wf2-workdir", "1536Mi"),
		pvc("argo", "wf2-workdir", "pv-lbl", map[string]string{WorkflowLabel: "wf2", protect: "true"}),
		// Workflow that no longer exists.
		boundPV(csiPV("pv-gone", PDCSIDriver, "projects/p1/zones/us-east1-b/disks/pvc-gone"), "argo", "wf3-workdir", "5Gi"),
		pvc("argo", "wf3-workdir", "pv-gone", nil, wfOwner("wf3", "wf3-uid")),
		// Owner ref whose UID does not match the live workflow of the same name.
		pvc("argo", "wf4-workdir", "", nil, wfOwner("wf4", "old-uid")),
		// Owner ref of another group is not a Workflow.
		pvc("argo", "other", "", nil, metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Workflow", Name: "x"}),
		// Generic ephemeral volume: PVC <pod>-<volume>, owned by the pod.
		boundPV(csiPV("pv-eph", PDCSIDriver, "projects/p1/zones/us-east1-c/disks/pvc-eph"), "apps", "web-0-scratch", "1Gi"),
		pvc("apps", "web-0-scratch", "pv-eph", nil),
		pod("apps", "web-0", corev1.PodRunning, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}),
		// Protected PV, unbound.
		func() *corev1.PersistentVolume {
			pv := csiPV("pv-prot", PDCSIDriver, "projects/p1/zones/us-east1-b/disks/keep")
			pv.Labels = map[string]string{protect: "true"}
			pv.Status.Phase = corev1.VolumeReleased
			return pv
		}(),
		// Inline gcePersistentDisk in a pod.
		pod("legacy", "test-pd", corev1.PodRunning, corev1.Volume{Name: "test-volume", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "my-data-disk"}}}),
		// Noise: non-GCE PV, pod without volumes, protect label with another value.
		csiPV("pv-ebs", "ebs.csi.aws.com", "vol-1"),
		pod("apps", "novol", corev1.PodRunning),
	)
	dyn := newDyn(
		workflow("argo", "wf1", "wf1-uid", "Succeeded", finished),
		workflow("argo", "wf2", "wf2-uid", "Running", ""),
		workflow("argo", "wf4", "new-uid", "Succeeded", finished),
	)
	r := Collect(context.Background(), "c1", cs, dyn, opts())
	if !r.Complete || len(r.Problems) != 0 || !r.Taps["wf"].Complete || r.Taps["wf"].Items != 3 {
		t.Fatalf("complete=%v workflows=%+v problems=%q", r.Complete, r.Taps["wf"], r.Problems)
	}
	if r.Name != "c1" || !reflect.DeepEqual(r.Projects, []string{"p1"}) || r.Duration <= 0 {
		t.Fatalf("name/projects/duration: %q %v %v", r.Name, r.Projects, r.Duration)
	}

	wf := findPV(t, r, "pv-wf")
	want := inventory.PVRef{
		Cluster: "c1", PV: "pv-wf", Phase: "Bound", ClaimNamespace: "argo", Claim: "wf1-workdir", CapacityGB: 10,
		Disk:     inventory.DiskKey{Project: "p1", Zone: "us-east1-b", Name: "pvc-wf"},
		Pods:     []inventory.PodRef{{Namespace: "argo", Name: "wf1-step-1", Phase: "Succeeded"}, {Namespace: "argo", Name: "wf1-step-2", Phase: "Running"}},
		Workflow: &inventory.WorkflowRef{Namespace: "argo", Name: "wf1", UID: "wf1-uid", Phase: "Succeeded"},
	}
	if !reflect.DeepEqual(wf, want) {
		t.Fatalf("pv-wf:\n got %+v\nwant %+v", wf, want)
	}
	lbl := findPV(t, r, "pv-lbl")
	if !lbl.Protected || lbl.CapacityGB != 2 || lbl.Workflow == nil || lbl.Workflow.Name != "wf2" || lbl.Workflow.Phase != "Running" || lbl.Disk.Region != "us-east1" {
		t.Fatalf("pv-lbl: %+v wf=%+v", lbl, lbl.Workflow)
	}
	gone := findPV(t, r, "pv-gone")
	if gone.Workflow == nil || *gone.Workflow != (inventory.WorkflowRef{Namespace: "argo", Name: "wf3", UID: "wf3-uid"}) {
		t.Fatalf("pv-gone workflow: %+v", gone.Workflow)
	}
	eph := findPV(t, r, "pv-eph")
	if !reflect.DeepEqual(eph.Pods, []inventory.PodRef{{Namespace: "apps", Name: "web-0", Phase: "Running"}}) || eph.Workflow != nil {
		t.Fatalf("pv-eph: %+v", eph)
	}
	prot := findPV(t, r, "pv-prot")
	if !prot.Protected || prot.Phase != "Released" || prot.Claim != "" || len(prot.Pods) != 0 {
		t.Fatalf("pv-prot: %+v", prot)
	}
	for _, p := range r.PVs {
		if p.PV == "pv-ebs" {
			t.Fatalf("non-GCE PV in result: %+v", p)
		}
	}
	inline := findPV(t, r, "")
	wantInline := inventory.PVRef{Cluster: "c1", Disk: inventory.DiskKey{Project: inventory.Unspecified, Zone: inventory.Unspecified, Name: "my-data-disk"},
		Pods: []inventory.PodRef{{Namespace: "legacy", Name: "test-pd", Phase: "Running"}}}
	if !reflect.DeepEqual(inline, wantInline) {
		t.Fatalf("inline:\n got %+v\nwant %+v", inline, wantInline)
	}
	if len(r.PVs) != 6 {
		t.Fatalf("want 6 PV refs, got %d: %+v", len(r.PVs), r.PVs)
	}

	// PVCs: only Workflow-owned ones.
	var names []string
	for _, p := range r.PVCs {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	if want := []string{"argo/wf1-workdir", "argo/wf2-workdir", "argo/wf3-workdir", "argo/wf4-workdir"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("PVCs %v, want %v", names, want)
	}
	c1 := findPVC(t, r, "argo", "wf1-workdir")
	wantDisk := inventory.DiskKey{Project: "p1", Zone: "us-east1-b", Name: "pvc-wf"}
	if c1.UID != "uid-wf1-workdir" || c1.Volume != "pv-wf" || c1.CapacityGB != 1 || c1.Protected || len(c1.Pods) != 2 ||
		c1.Disk == nil || *c1.Disk != wantDisk || c1.Workflow == nil || c1.Workflow.Phase != "Succeeded" || !c1.Created.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || c1.Cluster != "c1" {
		t.Fatalf("wf1-workdir: %+v", c1)
	}
	if c2 := findPVC(t, r, "argo", "wf2-workdir"); !c2.Protected {
		t.Fatalf("wf2-workdir not protected: %+v", c2)
	}
	if c4 := findPVC(t, r, "argo", "wf4-workdir"); c4.Disk != nil || c4.Workflow == nil || c4.Workflow.UID != "old-uid" {
		t.Fatalf("wf4-workdir keeps its owner reference's UID: %+v %+v", c4, c4.Workflow)
	}
}

// The PVC Argo creates for a volumeClaimTemplate (reconstructed from the Argo
// controller source), with a status as the apiserver fills it.
const argoPVC = `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: volumes-pvc-abcde-workdir
  namespace: argo
  uid: 0b7e1c3e-1111-2222-3333-444455556666
  creationTimestamp: "2026-01-01T00:00:00Z"
  labels:
    workflows.argoproj.io/workflow: volumes-pvc-abcde
  ownerReferences:
  - apiVersion: argoproj.io/v1alpha1
    kind: Workflow
    name: volumes-pvc-abcde
    uid: 9d1a0000-aaaa-bbbb-cccc-ddddeeeeffff
    controller: true
    blockOwnerDeletion: true
spec:
  accessModes: [ "ReadWriteOnce" ]
  resources:
    requests:
      storage: 1Gi
  volumeName: pvc-0b7e1c3e-1111-2222-3333-444455556666
status:
  phase: Bound
  capacity:
    storage: 3Gi
`

func TestCollectArgoSample(t *testing.T) {
	var c corev1.PersistentVolumeClaim
	if err := yaml.Unmarshal([]byte(argoPVC), &c); err != nil {
		t.Fatal(err)
	}
	pv := boundPV(csiPV(c.Spec.VolumeName, PDCSIDriver, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/"+c.Spec.VolumeName), "argo", c.Name, "3Gi")
	cs := fake.NewSimpleClientset(&c, pv)
	dyn := newDyn(workflow("argo", "volumes-pvc-abcde", "9d1a0000-aaaa-bbbb-cccc-ddddeeeeffff", "Failed", "2026-01-01T01:00:00Z"))
	r := Collect(context.Background(), "c", cs, dyn, opts())
	if !r.Complete {
		t.Fatal(r.Problems)
	}
	got := findPVC(t, r, "argo", c.Name)
	if got.CapacityGB != 3 || got.Workflow == nil || !got.Workflow.Done() || got.Workflow.UID != "9d1a0000-aaaa-bbbb-cccc-ddddeeeeffff" || got.Disk == nil || got.Disk.Project != inventory.Unspecified {
		t.Fatalf("%+v %+v", got, got.Workflow)
	}
}

func TestCollectMalformedHandleIsVisibleButComplete(t *testing.T) {
	cs := fake.NewSimpleClientset(csiPV("pv-bad", PDCSIDriver, "not-a-handle"), csiPV("pv-ok", PDCSIDriver, "projects/p/zones/z-a/disks/d"))
	r := Collect(context.Background(), "c", cs, newDyn(), opts())
	if !r.Complete {
		t.Fatalf("malformed handle must not make the cluster incomplete: %q", r.Problems)
	}
	want := `pv pv-bad: unparseable spec.csi.volumeHandle: disk handle "not-a-handle": want projects/P/zones/Z/disks/D or projects/P/regions/R/disks/D; reclaim cannot tell which disk it references`
	if !reflect.DeepEqual(r.Problems, []string{want}) {
		t.Fatalf("problems %q\nwant %q", r.Problems, want)
	}
	// Fail closed: the malformed handle still keeps any disk it could name.
	var bad *inventory.PVRef
	for i := range r.PVs {
		if r.PVs[i].PV == "pv-bad" {
			bad = &r.PVs[i]
		}
	}
	if len(r.PVs) != 2 || bad == nil || bad.Disk != (inventory.DiskKey{Project: inventory.Unspecified, Zone: inventory.Unspecified, Name: "not-a-handle"}) {
		t.Fatalf("PVs %+v", r.PVs)
	}
}

// pagingReactor serves a resource's list in pages of the requested Limit with
// numeric continue tokens, as the apiserver does (the fake clientset itself
// ignores Limit and Continue). expireAt, if > 0, makes the continue token at
// that offset answer 410 Expired once.
type pagingReactor struct {
	mu       sync.Mutex
	items    []runtime.Object
	mkList   func(items []runtime.Object, cont string) runtime.Object
	expireAt int
	expired  bool
	failFull error // returned for the full (Limit=0) list, if set

	limits    []int64
	continues []string
}

func (p *pagingReactor) react(action k8stesting.Action) (bool, runtime.Object, error) {
	return p.serve(action.(k8stesting.ListActionImpl).GetListOptions())
}

func (p *pagingReactor) serve(o metav1.ListOptions) (bool, runtime.Object, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.limits = append(p.limits, o.Limit)
	p.continues = append(p.continues, o.Continue)
	if o.Limit == 0 {
		if p.failFull != nil {
			return true, nil, p.failFull
		}
		return true, p.mkList(p.items, ""), nil
	}
	start := 0
	if o.Continue != "" {
		n, err := strconv.Atoi(o.Continue)
		if err != nil {
			return true, nil, apierrors.NewBadRequest("bad continue")
		}
		start = n
		if p.expireAt > 0 && n == p.expireAt && !p.expired {
			p.expired = true
			return true, nil, apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
		}
	}
	end := min(start+int(o.Limit), len(p.items))
	cont := ""
	if end < len(p.items) {
		cont = strconv.Itoa(end)
	}
	return true, p.mkList(p.items[start:end], cont), nil
}

// pagedDyn serves workflows from a pagingReactor. The dynamic fake cannot be
// used for paging: for cluster-wide lists it drops Limit and Continue from the
// action it hands to reactors.
type pagedDyn struct {
	dynamic.Interface
	r *pagingReactor
}

type pagedRes struct {
	dynamic.NamespaceableResourceInterface
	r *pagingReactor
}

func (d pagedDyn) Resource(schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return pagedRes{r: d.r}
}

func (r pagedRes) Namespace(string) dynamic.ResourceInterface { return r }

func (r pagedRes) List(_ context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	_, obj, err := r.r.serve(o)
	if err != nil {
		return nil, err
	}
	return obj.(*unstructured.UnstructuredList), nil
}

func podList(items []runtime.Object, cont string) runtime.Object {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{Continue: cont}}
	for _, o := range items {
		l.Items = append(l.Items, *o.(*corev1.Pod))
	}
	return l
}

func pvList(items []runtime.Object, cont string) runtime.Object {
	l := &corev1.PersistentVolumeList{ListMeta: metav1.ListMeta{Continue: cont}}
	for _, o := range items {
		l.Items = append(l.Items, *o.(*corev1.PersistentVolume))
	}
	return l
}

func wfList(items []runtime.Object, cont string) runtime.Object {
	l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "WorkflowList"}}
	l.SetContinue(cont)
	for _, o := range items {
		l.Items = append(l.Items, *o.(*unstructured.Unstructured))
	}
	return l
}

// pagedCluster builds n PVs, each bound to a PVC with one pod, and n workflows.
func pagedCluster(n int) (pvs, pods, wfs []runtime.Object, pvcs []runtime.Object) {
	for i := range n {
		name := fmt.Sprintf("wf%03d", i)
		pvs = append(pvs, boundPV(csiPV("pv-"+name, PDCSIDriver, "projects/p/zones/us-east1-b/disks/d-"+name), "argo", name+"-w", "1Gi"))
		pvcs = append(pvcs, pvc("argo", name+"-w", "pv-"+name, nil, wfOwner(name, "uid-"+name)))
		pods = append(pods, pod("argo", name+"-pod", corev1.PodSucceeded, claimVol("w", name+"-w")))
		wfs = append(wfs, workflow("argo", name, "uid-"+name, "Succeeded", "2026-01-01T00:00:00Z"))
	}
	return
}

func checkPaged(t *testing.T, r inventory.ClusterRefs, n int) {
	t.Helper()
	if len(r.PVs) != n || len(r.PVCs) != n {
		t.Fatalf("want %d PVs and PVCs, got %d and %d", n, len(r.PVs), len(r.PVCs))
	}
	seen := map[string]bool{}
	for _, p := range r.PVs {
		if seen[p.PV] {
			t.Fatalf("PV %s twice", p.PV)
		}
		seen[p.PV] = true
		if len(p.Pods) != 1 || p.Workflow == nil || p.Workflow.Phase != "Succeeded" {
			t.Fatalf("PV %s not linked: %+v", p.PV, p)
		}
	}
}

func TestCollectPaginates(t *testing.T) {
	const n, page = 11, 3
	pvs, pods, wfs, pvcs := pagedCluster(n)
	cs := fake.NewSimpleClientset(pvcs...)
	pvR := &pagingReactor{items: pvs, mkList: pvList}
	podR := &pagingReactor{items: pods, mkList: podList}
	cs.PrependReactor("list", "persistentvolumes", pvR.react)
	cs.PrependReactor("list", "pods", podR.react)
	wfR := &pagingReactor{items: wfs, mkList: wfList}
	dyn := pagedDyn{r: wfR}

	o := opts()
	o.PageSize = page
	r := Collect(context.Background(), "c", cs, dyn, o)
	if !r.Complete || len(r.Problems) != 0 || !r.Taps["wf"].Complete {
		t.Fatalf("complete=%v problems=%q", r.Complete, r.Problems)
	}
	checkPaged(t, r, n)
	for name, pr := range map[string]*pagingReactor{"pvs": pvR, "pods": podR, "workflows": wfR} {
		wantCalls := (n + page - 1) / page
		if len(pr.limits) != wantCalls {
			t.Errorf("%s: %d list calls, want %d (continues %q)", name, len(pr.limits), wantCalls, pr.continues)
		}
		for _, l := range pr.limits {
			if l != page {
				t.Errorf("%s: list with limit %d, want %d", name, l, page)
			}
		}
	}
}

func TestCollectExpiredContinueRelists(t *testing.T) {
	const n, page = 10, 4
	pvs, pods, wfs, pvcs := pagedCluster(n)
	cs := fake.NewSimpleClientset(pvcs...)
	pvR := &pagingReactor{items: pvs, mkList: pvList, expireAt: 4}
	podR := &pagingReactor{items: pods, mkList: podList, expireAt: 8}
	cs.PrependReactor("list", "persistentvolumes", pvR.react)
	cs.PrependReactor("list", "pods", podR.react)
	wfR := &pagingReactor{items: wfs, mkList: wfList, expireAt: 4}
	dyn := pagedDyn{r: wfR}

	o := opts()
	o.PageSize = page
	r := Collect(context.Background(), "c", cs, dyn, o)
	if !r.Complete || len(r.Problems) != 0 {
		t.Fatalf("re-list after 410 should complete: %q", r.Problems)
	}
	checkPaged(t, r, n)
	for name, pr := range map[string]*pagingReactor{"pvs": pvR, "pods": podR, "workflows": wfR} {
		if !pr.expired || pr.limits[len(pr.limits)-1] != 0 {
			t.Errorf("%s: expected a 410 then a full re-list, limits %v continues %q", name, pr.limits, pr.continues)
		}
	}
}

func TestCollectExpiredContinueRelistFails(t *testing.T) {
	pvs, pods, _, pvcs := pagedCluster(6)
	cs := fake.NewSimpleClientset(pvcs...)
	cs.PrependReactor("list", "persistentvolumes", (&pagingReactor{items: pvs, mkList: pvList}).react)
	podR := &pagingReactor{items: pods, mkList: podList, expireAt: 2,
		failFull: apierrors.NewInternalError(fmt.Errorf("etcd leader changed"))}
	cs.PrependReactor("list", "pods", podR.react)
	o := opts()
	r := Collect(context.Background(), "c", cs, newDyn(), o)
	if r.Complete {
		t.Fatal("a failed re-list must make the cluster incomplete")
	}
	want := "list pods: continue token expired (410) and the full re-list failed: InternalError (HTTP 500): Internal error occurred: etcd leader changed"
	if !reflect.DeepEqual(r.Problems, []string{want}) {
		t.Fatalf("problems %q\nwant %q", r.Problems, want)
	}
	// What was seen before the failure is still reported (never less safe).
	if len(r.PVs) != 6 {
		t.Fatalf("PVs %d", len(r.PVs))
	}
}

func errReactor(err error) k8stesting.ReactionFunc {
	return func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err }
}

func TestCollectCompleteness(t *testing.T) {
	forbidden := func(res string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: res}, "", fmt.Errorf(`User "system:serviceaccount:reclaim:reclaim" cannot list resource %q`, res))
	}
	tests := []struct {
		name          string
		setup         func(cs *fake.Clientset, dyn *dynfake.FakeDynamicClient)
		complete      bool
		tapProblem    string // the workflows tap's ("" complete)
		problems      []string
		problemPrefix string
	}{
		{"all fine", func(*fake.Clientset, *dynfake.FakeDynamicClient) {}, true, "", nil, ""},
		{"pv forbidden", func(cs *fake.Clientset, _ *dynfake.FakeDynamicClient) {
			cs.PrependReactor("list", "persistentvolumes", errReactor(forbidden("persistentvolumes")))
		}, false, "", []string{"list persistentvolumes: forbidden — the service account needs list on persistentvolumes (see deploy/base/rbac.yaml)"}, ""},
		{"pvc forbidden", func(cs *fake.Clientset, _ *dynfake.FakeDynamicClient) {
			cs.PrependReactor("list", "persistentvolumeclaims", errReactor(forbidden("persistentvolumeclaims")))
		}, false, "", []string{"list persistentvolumeclaims: forbidden — the service account needs list on persistentvolumeclaims (see deploy/base/rbac.yaml)"}, ""},
		{"pods unauthorized", func(cs *fake.Clientset, _ *dynfake.FakeDynamicClient) {
			cs.PrependReactor("list", "pods", errReactor(apierrors.NewUnauthorized("token expired")))
		}, false, "", []string{"list pods: unauthorized — the cluster rejected reclaim's credentials; refresh the kubeconfig credentials or the service account token"}, ""},
		{"workflows not served", func(_ *fake.Clientset, dyn *dynfake.FakeDynamicClient) {
			dyn.PrependReactor("list", "workflows", errReactor(apierrors.NewNotFound(WorkflowGVR.GroupResource(), "")))
		}, true, "", nil, ""},
		// A failed tap is the tap's problem, not the cluster's: it holds what
		// relies on it (the engine's TapKey), not the cluster's disks.
		{"workflows forbidden", func(_ *fake.Clientset, dyn *dynfake.FakeDynamicClient) {
			dyn.PrependReactor("list", "workflows", errReactor(forbidden("workflows")))
		}, true, "list workflows.argoproj.io: forbidden — the service account needs list on workflows.argoproj.io (see deploy/base/rbac.yaml)", nil, ""},
		{"workflows server error", func(_ *fake.Clientset, dyn *dynfake.FakeDynamicClient) {
			dyn.PrependReactor("list", "workflows", errReactor(apierrors.NewServiceUnavailable("conversion webhook down")))
		}, true, "list workflows.argoproj.io: ServiceUnavailable (HTTP 503): conversion webhook down", nil, ""},
		{"first page expired", func(cs *fake.Clientset, _ *dynfake.FakeDynamicClient) {
			cs.PrependReactor("list", "pods", errReactor(apierrors.NewResourceExpired("too old resource version")))
		}, false, "", []string{"list pods: continue token expired (410) and the full re-list failed: continue token expired (410): too old resource version"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset(boundPV(csiPV("pv", PDCSIDriver, "projects/p/zones/z-a/disks/d"), "ns", "c", "1Gi"))
			dyn := newDyn()
			tc.setup(cs, dyn)
			r := Collect(context.Background(), "c", cs, dyn, opts())
			if wf := r.Taps["wf"]; r.Complete != tc.complete || wf.Complete != (tc.tapProblem == "") || wf.Problem != tc.tapProblem {
				t.Fatalf("complete=%v workflows=%+v, want %v %q; problems %q", r.Complete, wf, tc.complete, tc.tapProblem, r.Problems)
			}
			if tc.problemPrefix != "" {
				if len(r.Problems) != 1 || !strings.HasPrefix(r.Problems[0], tc.problemPrefix) {
					t.Fatalf("problems %q, want prefix %q", r.Problems, tc.problemPrefix)
				}
			} else if !reflect.DeepEqual(r.Problems, tc.problems) {
				t.Fatalf("problems %q\nwant %q", r.Problems, tc.problems)
			}
			// Whatever was listed is still reported.
			if tc.name != "pv forbidden" && len(r.PVs) != 1 {
				t.Fatalf("PVs %+v", r.PVs)
			}
		})
	}
}

func TestCollectTimeout(t *testing.T) {
	cs := fake.NewSimpleClientset()
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		time.Sleep(300 * time.Millisecond) // the fake ignores the context
		return true, &corev1.PodList{}, nil
	})
	o := opts()
	o.Timeout = 50 * time.Millisecond
	start := time.Now()
	r := Collect(context.Background(), "c", cs, newDyn(), o)
	if r.Complete {
		t.Fatalf("timed-out collection must be incomplete")
	}
	found := false
	for _, p := range r.Problems {
		found = found || p == "list pods: timed out after 50ms"
	}
	if !found {
		t.Fatalf("problems %q lack the pods timeout", r.Problems)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("too slow")
	}
}

func TestCollectCallerCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Collect(ctx, "c", fake.NewSimpleClientset(), newDyn(), opts())
	if r.Complete || len(r.Problems) != 3 || !strings.HasPrefix(r.Problems[0], "list persistentvolumes: canceled by the caller") ||
		!strings.Contains(r.Taps["wf"].Problem, "canceled by the caller") {
		t.Fatalf("complete=%v problems=%q", r.Complete, r.Problems)
	}
}

// Without a dynamic client the taps cannot read: each is incomplete (and
// holds what relies on it), even an optional one; the cluster is not.
func TestCollectNilDynamic(t *testing.T) {
	r := Collect(context.Background(), "c", fake.NewSimpleClientset(), nil, opts())
	if wf := r.Taps["wf"]; !r.Complete || wf.Complete || !strings.Contains(wf.Problem, "workflows.argoproj.io") {
		t.Fatalf("complete=%v problems=%q tap %+v", r.Complete, r.Problems, wf)
	}
}

// Only an optional tap reads "not served" as none: for any other, a
// resource the cluster does not serve is a failed pass.
func TestCollectTapNotServed(t *testing.T) {
	for _, optional := range []bool{true, false} {
		dyn := newDyn()
		dyn.PrependReactor("list", "workflows", errReactor(apierrors.NewNotFound(WorkflowGVR.GroupResource(), "")))
		o := opts()
		o.Taps[0].Optional = optional
		wf := Collect(context.Background(), "c", fake.NewSimpleClientset(), dyn, o).Taps["wf"]
		if wf.Complete != optional || (wf.Problem == "") != optional {
			t.Fatalf("optional=%v: %+v", optional, wf)
		}
	}
}

func TestCollectTerminatingPVC(t *testing.T) {
	gone := pvc("argo", "wf1-workdir", "", nil, wfOwner("wf1", "wf1-uid"))
	now := metav1.Now()
	gone.DeletionTimestamp = &now
	gone.Finalizers = []string{"kubernetes.io/pvc-protection"}
	live := pvc("argo", "wf2-workdir", "", nil, wfOwner("wf2", "wf2-uid"))
	r := Collect(context.Background(), "c", fake.NewSimpleClientset(gone, live), newDyn(), opts())
	if !findPVC(t, r, "argo", "wf1-workdir").Terminating || findPVC(t, r, "argo", "wf2-workdir").Terminating {
		t.Fatalf("%+v", r.PVCs)
	}
}
