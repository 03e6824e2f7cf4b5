package kube

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"reclaim.dev/reclaim/inventory"
)

type pvInfo struct {
	name      string
	disk      inventory.DiskKey
	gce       bool // references a GCE disk (disk is valid)
	problem   string
	phase     string
	claimNS   string
	claim     string
	protected bool
	capGB     int64
}

type pvcInfo struct {
	ns, name, uid string
	volume        string
	capGB         int64
	created       time.Time
	terminating   bool
	protected     bool
	wfName        string // owning Workflow, if any
	wfUID         string // from the owner reference; "" when found by label
}

type podInfo struct {
	ns, name, phase string
	claims          []string // PVC names in the pod's namespace
	inlinePDs       []string // spec.volumes[].gcePersistentDisk.pdName
}

func nsKey(ns, name string) string { return ns + "/" + name }

// volumeCollector reads what references GCE disks: one paginated pass each
// over PersistentVolumes, PersistentVolumeClaims and Pods (the pod pass
// shared with the image and workload collectors), linked into PVRefs and the
// PVCs that Argo Workflows own.
type volumeCollector struct {
	protected func(labels map[string]string) bool

	pvs  map[string]*pvInfo
	pvcs map[string]*pvcInfo
	pods map[string]*podInfo
	// protectedPVs holds every PV (GCE or not) carrying the protect label.
	protectedPVs map[string]bool

	pvErr, pvcErr, podErr error
}

func newVolumeCollector(protected func(map[string]string) bool) *volumeCollector {
	return &volumeCollector{protected: protected, pvs: map[string]*pvInfo{}, pvcs: map[string]*pvcInfo{},
		pods: map[string]*podInfo{}, protectedPVs: map[string]bool{}}
}

// start runs the three passes; images and workloads, if set, also take
// every pod of the pod pass.
func (v *volumeCollector) start(l lister, wg *sync.WaitGroup, cs kubernetes.Interface, images *imageCollector, workloads *workloadCollector) {
	wg.Add(3)
	go func() {
		defer wg.Done()
		v.pvErr = l.each(resPVs, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().PersistentVolumes().List(ctx, o)
		}, v.addPV)
	}()
	go func() {
		defer wg.Done()
		v.pvcErr = l.each(resPVCs, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, o)
		}, v.addPVC)
	}()
	go func() {
		defer wg.Done()
		var list pager.ListPageFunc = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
		}
		if images != nil {
			list = images.pods.wrap(list)
		}
		if workloads != nil {
			list = workloads.wrapPods(list)
		}
		v.podErr = l.each(resPods, list, func(obj runtime.Object) error {
			pod, ok := obj.(*corev1.Pod)
			if !ok {
				return fmt.Errorf("unexpected %T in Pod list", obj)
			}
			if images != nil {
				images.pods.addPod(pod)
			}
			if workloads != nil {
				workloads.addPod(pod)
			}
			v.addPod(pod)
			return nil
		})
	}()
}

// addPV notes a PV of the PV pass: the GCE disk it references, or, when
// its handle is malformed, every disk the handle could name.
func (v *volumeCollector) addPV(obj runtime.Object) error {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return fmt.Errorf("unexpected %T in PersistentVolume list", obj)
	}
	if v.protected(pv.Labels) {
		v.protectedPVs[pv.Name] = true
	}
	key, isGCE, err := PVDisk(pv)
	if !isGCE {
		delete(v.pvs, pv.Name) // a re-list may see a changed object
		return nil
	}
	info := &pvInfo{
		name:      pv.Name,
		phase:     string(pv.Status.Phase),
		protected: v.protected(pv.Labels),
		capGB:     gib(storage(pv.Spec.Capacity)),
	}
	if err != nil {
		info.problem = fmt.Sprintf("pv %s: %v; reclaim cannot tell which disk it references", pv.Name, err)
		// Fail closed: keep every disk the handle could name, in any
		// project and zone, by its last path segment.
		if name := malformedHandleName(pv); name != "" {
			info.gce, info.disk = true, inventory.DiskKey{Project: inventory.Unspecified, Zone: inventory.Unspecified, Name: name}
		}
	} else {
		info.gce, info.disk = true, key
	}
	if cr := pv.Spec.ClaimRef; cr != nil {
		info.claimNS, info.claim = cr.Namespace, cr.Name
	}
	v.pvs[pv.Name] = info
	return nil
}

// addPVC notes a PVC of the PVC pass, and the Workflow that owns it.
func (v *volumeCollector) addPVC(obj runtime.Object) error {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return fmt.Errorf("unexpected %T in PersistentVolumeClaim list", obj)
	}
	q := storage(pvc.Status.Capacity)
	if q == nil {
		q = storage(pvc.Spec.Resources.Requests)
	}
	info := &pvcInfo{
		ns: pvc.Namespace, name: pvc.Name, uid: string(pvc.UID),
		volume:      pvc.Spec.VolumeName,
		capGB:       gib(q),
		created:     pvc.CreationTimestamp.Time,
		terminating: pvc.DeletionTimestamp != nil,
		protected:   v.protected(pvc.Labels),
	}
	info.wfName, info.wfUID = owningWorkflow(pvc.ObjectMeta)
	v.pvcs[nsKey(pvc.Namespace, pvc.Name)] = info
	return nil
}

// addPod notes the claims and inline GCE disks a pod of the pod pass
// mounts.
func (v *volumeCollector) addPod(pod *corev1.Pod) {
	info := &podInfo{ns: pod.Namespace, name: pod.Name, phase: string(pod.Status.Phase)}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "":
			info.claims = append(info.claims, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			// Generic ephemeral volume: the PVC is named <pod>-<volume>.
			info.claims = append(info.claims, pod.Name+"-"+v.Name)
		case v.GCEPersistentDisk != nil && v.GCEPersistentDisk.PDName != "":
			info.inlinePDs = append(info.inlinePDs, v.GCEPersistentDisk.PDName)
		}
	}
	k := nsKey(pod.Namespace, pod.Name)
	if len(info.claims) == 0 && len(info.inlinePDs) == 0 {
		delete(v.pods, k)
		return
	}
	v.pods[k] = info
}

// finish says whether the three passes completed, adding their problems.
func (v *volumeCollector) finish(out *inventory.ClusterRefs, l lister) bool {
	complete := true
	for _, r := range []struct {
		res string
		err error
	}{{resPVs, v.pvErr}, {resPVCs, v.pvcErr}, {resPods, v.podErr}} {
		if r.err != nil {
			complete = false
			out.Problems = append(out.Problems, l.problem(r.res, r.err))
		}
	}
	return complete
}

// link records every GCE disk reference (PVs and inline pod volumes, with
// the pods that mount them) and every Workflow-owned PVC.
func (v *volumeCollector) link(out *inventory.ClusterRefs, cluster string) {
	claimPods := v.claimPods(out, cluster)
	v.linkPVs(out, cluster, claimPods)
	v.linkPVCs(out, cluster, claimPods)
}

// claimPods are the pods that mount each claim (ns/claim); a pod's inline
// GCE disks are references of their own.
func (v *volumeCollector) claimPods(out *inventory.ClusterRefs, cluster string) map[string][]inventory.PodRef {
	claimPods := map[string][]inventory.PodRef{}
	for _, p := range v.pods {
		ref := inventory.PodRef{Namespace: p.ns, Name: p.name, Phase: p.phase}
		seen := map[string]bool{}
		for _, c := range p.claims {
			k := nsKey(p.ns, c)
			if !seen[k] {
				seen[k] = true
				claimPods[k] = append(claimPods[k], ref)
			}
		}
		for _, pd := range p.inlinePDs {
			out.PVs = append(out.PVs, inventory.PVRef{
				Cluster: cluster,
				Disk:    inventory.DiskKey{Project: inventory.Unspecified, Zone: inventory.Unspecified, Name: pd},
				Pods:    []inventory.PodRef{ref},
			})
		}
	}
	for _, ps := range claimPods {
		sortPods(ps)
	}
	return claimPods
}

func workflowOf(c *pvcInfo) *inventory.WorkflowRef {
	if c == nil || c.wfName == "" {
		return nil
	}
	return &inventory.WorkflowRef{Namespace: c.ns, Name: c.wfName, UID: c.wfUID}
}

func copyPods(p []inventory.PodRef) []inventory.PodRef {
	if len(p) == 0 {
		return nil
	}
	return append([]inventory.PodRef(nil), p...)
}

// linkPVs records each GCE PV with the pods of its claim, and the PVs
// whose disk reclaim could not tell as problems.
func (v *volumeCollector) linkPVs(out *inventory.ClusterRefs, cluster string, claimPods map[string][]inventory.PodRef) {
	var badPVs []string
	for _, pv := range v.pvs {
		if pv.problem != "" {
			badPVs = append(badPVs, pv.problem)
		}
		if !pv.gce {
			continue
		}
		ref := inventory.PVRef{
			Cluster: cluster, Disk: pv.disk, PV: pv.name, Phase: pv.phase,
			ClaimNamespace: pv.claimNS, Claim: pv.claim,
			Protected: pv.protected, CapacityGB: pv.capGB,
		}
		if pv.claim != "" {
			k := nsKey(pv.claimNS, pv.claim)
			ref.Pods = copyPods(claimPods[k])
			if c := v.pvcs[k]; c != nil {
				ref.Protected = ref.Protected || c.protected
				ref.Workflow = workflowOf(c)
			}
		}
		out.PVs = append(out.PVs, ref)
	}
	sort.Strings(badPVs)
	out.Problems = append(out.Problems, badPVs...)
	sort.SliceStable(out.PVs, func(i, j int) bool {
		a, b := out.PVs[i], out.PVs[j]
		if a.PV != b.PV {
			return a.PV < b.PV
		}
		if a.Disk.Name != b.Disk.Name {
			return a.Disk.Name < b.Disk.Name
		}
		if len(a.Pods) == 0 || len(b.Pods) == 0 {
			return len(a.Pods) < len(b.Pods)
		}
		return nsKey(a.Pods[0].Namespace, a.Pods[0].Name) < nsKey(b.Pods[0].Namespace, b.Pods[0].Name)
	})
}

// linkPVCs records each Workflow-owned PVC with its pods and its disk.
func (v *volumeCollector) linkPVCs(out *inventory.ClusterRefs, cluster string, claimPods map[string][]inventory.PodRef) {
	for k, c := range v.pvcs {
		if c.wfName == "" {
			continue
		}
		ref := inventory.PVCRef{
			Cluster: cluster, Namespace: c.ns, Name: c.name, UID: c.uid,
			Volume: c.volume, CapacityGB: c.capGB, Created: c.created, Terminating: c.terminating,
			Protected: c.protected || (c.volume != "" && v.protectedPVs[c.volume]),
			Pods:      copyPods(claimPods[k]),
			Workflow:  workflowOf(c),
		}
		if pv := v.pvs[c.volume]; c.volume != "" && pv != nil && pv.gce {
			d := pv.disk
			ref.Disk = &d
		}
		out.PVCs = append(out.PVCs, ref)
	}
	sort.Slice(out.PVCs, func(i, j int) bool {
		return nsKey(out.PVCs[i].Namespace, out.PVCs[i].Name) < nsKey(out.PVCs[j].Namespace, out.PVCs[j].Name)
	})
}
