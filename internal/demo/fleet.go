// Package demo seeds a simulated fleet with the story reclaim was born from —
// failed Argo workflows filling SSD_TOTAL_GB — and runs reclaim on it.
package demo

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
)

const (
	Project = "demo-project"
	Region  = "asia-northeast1"
)

var zones = []string{"asia-northeast1-a", "asia-northeast1-b", "asia-northeast1-c"}

// Cluster is one simulated cluster's objects.
type Cluster struct {
	Name    string
	Objects []runtime.Object
	// Workflows are Argo Workflow objects for the dynamic client.
	Workflows []*unstructured.Unstructured
	// Dynamic are other custom objects for it (VolumeSnapshotContents).
	Dynamic []*unstructured.Unstructured
}

// Fleet is the seeded world: the GCE fake's disks and quotas, the clusters'
// objects, and the state of earlier runs (first-seen times).
type Fleet struct {
	GCE      *gcefake.Server
	Clusters []*Cluster
	State    engine.State
}

// Clientsets returns simulated API clients for c. The dynamic client,
// which the kinds' taps list through, serves the Workflows and the same
// PVs and Pods as the typed one.
func (c *Cluster) Clientsets() (*fake.Clientset, *dynfake.FakeDynamicClient) {
	objs := make([]runtime.Object, 0, len(c.Workflows)+len(c.Dynamic))
	for _, w := range c.Workflows {
		objs = append(objs, w)
	}
	for _, o := range c.Dynamic {
		objs = append(objs, o)
	}
	for _, o := range c.Objects {
		var kind string
		switch o.(type) {
		case *corev1.PersistentVolume:
			kind = "PersistentVolume"
		case *corev1.Pod:
			kind = "Pod"
		default:
			continue
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			panic(err) // a seeded object that does not convert is the seed's bug
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		objs = append(objs, u)
	}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{kube.WorkflowGVR: "WorkflowList", csisnapshot.Resource: "VolumeSnapshotContentList",
			{Version: "v1", Resource: "persistentvolumes"}: "PersistentVolumeList",
			{Version: "v1", Resource: "pods"}:              "PodList"}, objs...)
	return fake.NewSimpleClientset(c.Objects...), dyn
}

type seeder struct {
	f   *Fleet
	now time.Time
	n   int
}

func (s *seeder) uid() string {
	s.n++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", s.n)
}

// diskName is what the PD CSI driver names a dynamically provisioned disk.
func (s *seeder) diskName() string {
	s.n++
	return fmt.Sprintf("pvc-%08x-%04x-4%03x-8%03x-%012x", 0x5eed0000+s.n, s.n, s.n, s.n, s.n)
}

func csiDescription(pv, ns, pvc string) string {
	return fmt.Sprintf(`{"kubernetes.io/created-for/pv/name":%q,"kubernetes.io/created-for/pvc/name":%q,"kubernetes.io/created-for/pvc/namespace":%q,"storage.gke.io/created-by":"pd.csi.storage.gke.io"}`, pv, pvc, ns)
}

func instance(zone, name string) string {
	return fmt.Sprintf("https://www.googleapis.com/compute/v1/projects/%s/zones/%s/instances/%s", Project, zone, name)
}

// volume adds a dynamically provisioned disk, its PV and its PVC, as GKE's
// standard-rwo class makes them (pd-balanced), and returns the PVC.
func (s *seeder) volume(c *Cluster, ns, claim string, gb int64, zone string, created time.Time, users []string, lastDetach time.Time) *corev1.PersistentVolumeClaim {
	name := s.diskName()
	s.f.GCE.AddDisk(Project, gcefake.Disk{Zone: zone, Name: name, SizeGB: gb, Type: "pd-balanced", Users: users,
		Labels: map[string]string{"goog-gke-volume": ""}, Description: csiDescription(name, ns, claim),
		Created: created, LastAttach: created.Add(time.Minute), LastDetach: lastDetach})
	q := resource.MustParse(fmt.Sprintf("%dGi", gb))
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(s.uid())},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: q},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              "standard-rwo",
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "pd.csi.storage.gke.io", FSType: "ext4",
				VolumeHandle: fmt.Sprintf("projects/%s/zones/%s/disks/%s", Project, zone, name)}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	sc := "standard-rwo"
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: claim, UID: types.UID(s.uid()), CreationTimestamp: metav1.NewTime(created)},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &sc, VolumeName: name,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: q}},
	}
	c.Objects = append(c.Objects, pv, pvc)
	return pvc
}

func pod(ns, name, claim string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

// workflow adds an Argo Workflow and owns pvc by it, as Argo's volumeClaimTemplates do.
func (s *seeder) workflow(c *Cluster, ns, name, phase string, started, finished time.Time, pvc *corev1.PersistentVolumeClaim) {
	uid := s.uid()
	status := map[string]any{"phase": phase, "startedAt": started.UTC().Format(time.RFC3339)}
	if !finished.IsZero() {
		status["finishedAt"] = finished.UTC().Format(time.RFC3339)
	}
	c.Workflows = append(c.Workflows, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": uid},
		"spec":     map[string]any{"entrypoint": "main"},
		"status":   status,
	}})
	t := true
	pvc.Labels = map[string]string{"workflows.argoproj.io/workflow": name}
	pvc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: name,
		UID: types.UID(uid), Controller: &t, BlockOwnerDeletion: &t}}
}

// orphan adds a disk no PV references any more.
func (s *seeder) orphan(zone string, gb int64, ns, claim string, created, detached time.Time, labels map[string]string) string {
	name := s.diskName()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["goog-gke-volume"] = ""
	return s.f.GCE.AddDisk(Project, gcefake.Disk{Zone: zone, Name: name, SizeGB: gb, Type: "pd-balanced",
		Labels: labels, Description: csiDescription(name, ns, claim), Created: created, LastDetach: detached})
}

// seen records that the disk at key has been an orphan since t (its clock
// carries the disk's numeric id, as the planner's does).
func (f *Fleet) seen(key string, t time.Time) {
	d, _ := f.GCE.Disk(key)
	f.State.Seen(key, d.ID, t)
}

// Seed builds the story. now anchors every timestamp.
func Seed(srv *gcefake.Server, now time.Time) *Fleet {
	f := &Fleet{GCE: srv, State: engine.NewState()}
	s := &seeder{f: f, now: now}
	a := &Cluster{Name: "prod-a"}
	b := &Cluster{Name: "prod-b"}
	f.Clusters = []*Cluster{a, b}
	// Each step returns the SSD gigabytes its disks hold, for the quota.
	ssd := s.nodes() + s.failedWorkflows(a) + s.runningWorkflows(a) + s.database(a) + s.kafka(a) +
		s.releasedPV(b) + s.orphans()
	s.scratchDisk()
	s.quota(ssd)
	return f
}

// nodes are the GKE nodes' boot disks, attached.
func (s *seeder) nodes() (ssd int64) {
	for i, z := range zones {
		node := fmt.Sprintf("gke-prod-a-pool-1-%d", i)
		s.f.GCE.AddDisk(Project, gcefake.Disk{Zone: z, Name: node, SizeGB: 75, Type: "pd-balanced",
			Users: []string{instance(z, node)}, Created: s.now.Add(-40 * day)})
		ssd += 75
	}
	return ssd
}

// failedWorkflows are 30 failed Argo workflows: volumeClaimGC
// OnWorkflowSuccess left PVC, PV and disk.
func (s *seeder) failedWorkflows(a *Cluster) (ssd int64) {
	for i := 0; i < 30; i++ {
		wf := fmt.Sprintf("etl-nightly-%02d", i)
		ns := []string{"data-eng", "ml-train", "data-eng"}[i%3]
		started := s.now.Add(-time.Duration(30-i) * day)
		finished := started.Add(40 * time.Minute)
		pvc := s.volume(a, ns, wf+"-workdir", 20, zones[i%3], started, nil, finished)
		s.workflow(a, ns, wf, []string{"Failed", "Error", "Failed"}[i%3], started, finished, pvc)
		ssd += 20
	}
	return ssd
}

// runningWorkflows are two running workflows: their disks are attached to
// the nodes.
func (s *seeder) runningWorkflows(a *Cluster) (ssd int64) {
	for i := 0; i < 2; i++ {
		wf := fmt.Sprintf("train-%d", i)
		z := zones[i]
		started := s.now.Add(-time.Hour)
		pvc := s.volume(a, "ml-train", wf+"-workdir", 20, z, started, []string{instance(z, fmt.Sprintf("gke-prod-a-pool-1-%d", i))}, time.Time{})
		s.workflow(a, "ml-train", wf, "Running", started, time.Time{}, pvc)
		a.Objects = append(a.Objects, pod("ml-train", wf+"-step-1", pvc.Name, corev1.PodRunning))
		ssd += 20
	}
	return ssd
}

// database is a StatefulSet: running pods, attached disks.
func (s *seeder) database(a *Cluster) (ssd int64) {
	for i := 0; i < 3; i++ {
		z := zones[i]
		pvc := s.volume(a, "db", fmt.Sprintf("data-postgres-%d", i), 50, z, s.now.Add(-90*day), []string{instance(z, fmt.Sprintf("gke-prod-a-pool-1-%d", i))}, time.Time{})
		a.Objects = append(a.Objects, pod("db", fmt.Sprintf("postgres-%d", i), pvc.Name, corev1.PodRunning))
		ssd += 50
	}
	return ssd
}

// kafka is scaled to zero for maintenance: detached for days, still needed.
func (s *seeder) kafka(a *Cluster) (ssd int64) {
	s.volume(a, "kafka", "data-kafka-0", 100, zones[0], s.now.Add(-120*day), nil, s.now.Add(-3*day))
	return 100
}

// releasedPV is prod-b's Released PV (reclaim policy Retain) whose claim was
// deleted: only prod-b knows about this disk.
func (s *seeder) releasedPV(b *Cluster) (ssd int64) {
	pvc := s.volume(b, "reports", "archive", 50, zones[1], s.now.Add(-60*day), nil, s.now.Add(-20*day))
	for _, o := range b.Objects {
		if pv, ok := o.(*corev1.PersistentVolume); ok && pv.Spec.ClaimRef.Name == pvc.Name {
			pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
			pv.Status.Phase = corev1.VolumeReleased
		}
	}
	b.Objects = b.Objects[:1] // keep the PV, drop the PVC
	return 50
}

// orphans are disks no cluster knows, each a case of the rules.
func (s *seeder) orphans() (ssd int64) {
	now, f := s.now, s.f
	// True orphans: PVs deleted by hand after old failed workflows. Seen by
	// earlier runs 9 hours ago, so the 6h grace has passed.
	for i := 0; i < 8; i++ {
		key := s.orphan(zones[i%3], 25, "data-eng", fmt.Sprintf("backfill-%02d-workdir", i), now.Add(-45*day), now.Add(-44*day), nil)
		f.seen(key, now.Add(-9*time.Hour))
		ssd += 25
	}
	// An orphan someone protected while they investigate.
	key := s.orphan(zones[2], 50, "ml-train", "experiment-7-workdir", now.Add(-20*day), now.Add(-19*day), map[string]string{"reclaim-protect": "true"})
	f.seen(key, now.Add(-9*time.Hour))
	ssd += 50
	// An orphan made two hours ago: younger than minAge.
	s.orphan(zones[0], 20, "ml-train", "sweep-3-workdir", now.Add(-2*time.Hour), now.Add(-90*time.Minute), nil)
	ssd += 20
	// An orphan first seen two hours ago: its grace is running.
	key = s.orphan(zones[1], 20, "data-eng", "dedupe-1-workdir", now.Add(-10*day), now.Add(-3*time.Hour), nil)
	f.seen(key, now.Add(-2*time.Hour))
	return ssd + 20
}

// scratchDisk is a hand-made disk: no users, but nothing says Kubernetes
// made it.
func (s *seeder) scratchDisk() {
	s.f.GCE.AddDisk(Project, gcefake.Disk{Zone: zones[0], Name: "scratch-debug", SizeGB: 100, Type: "pd-standard", Created: s.now.Add(-30 * day)})
}

// quota sets the region's quotas for ssd GB in use. Earlier hourly runs saw
// SSD usage grow by one failed workflow's disks (20 GB) every twelve hours
// or so: five days of simulated history, on one straight line, for the
// report's projection and its chart.
func (s *seeder) quota(ssd int64) {
	srv, now, f := s.f.GCE, s.now, s.f
	srv.SetQuota(Project, Region, "SSD_TOTAL_GB", 1500, float64(ssd))
	f.State.Usage = map[string][]layout.Sample{}
	key := Project + "/" + Region + "/SSD_TOTAL_GB"
	for h := 5 * 24; h >= 1; h-- {
		f.State.Usage[key] = append(f.State.Usage[key], layout.Sample{T: now.Add(-time.Duration(h) * time.Hour), Usage: float64(ssd) - float64(h)*40/24})
	}
	srv.SetQuota(Project, Region, "DISKS_TOTAL_GB", 4096, 100)
}
