package kube

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"reclaim.dev/reclaim/inventory"
)

// WorkflowGVR is the Argo Workflow resource.
var WorkflowGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflows"}

// WorkflowLabel is the label Argo puts on the PVCs it creates for a workflow.
const WorkflowLabel = "workflows.argoproj.io/workflow"

// Resource names as they appear in problems (and in RBAC rules).
const (
	resPVs  = "persistentvolumes"
	resPVCs = "persistentvolumeclaims"
	resPods = "pods"
)

// Options controls one collection.
type Options struct {
	// PageSize is the list page size; <= 0 means the pager default (500).
	PageSize int64
	// Timeout bounds the whole collection of one cluster; 0 means none.
	Timeout time.Duration
	// ProtectLabel (e.g. reclaim.dev/protect) with value "true" on a PV or PVC
	// opts its disk out; empty disables the check.
	ProtectLabel string
	// Projects is copied into ClusterRefs.Projects.
	Projects []string
	// Images also lists every source of container image references (pods'
	// specs and statuses, and the pod templates of Deployments, ReplicaSets,
	// StatefulSets, DaemonSets, ControllerRevisions, Jobs and CronJobs) and
	// records the ECR ones in ClusterRefs.Images. Off by default: it needs
	// list on those apps and batch resources (deploy/base/rbac.yaml).
	Images bool
	// Accounts is copied into ClusterRefs.Accounts.
	Accounts []string
	// Workloads also lists Jobs, CronJobs and Nodes (one paginated pass
	// each) and records them, with every pod of the pod pass, in
	// ClusterRefs.Jobs, CronJobs, Pods and Nodes. Off by default: it needs
	// list on jobs.batch, cronjobs.batch and nodes (deploy/base/rbac.yaml).
	Workloads bool
	// RetentionAnnotation names the annotation whose value is copied
	// verbatim into Job.Retention and Pod.Retention; empty disables it.
	RetentionAnnotation string
	// Subnets is copied into ClusterRefs.Subnets.
	Subnets []string
	// Labels keeps each Job's and Pod's labels (for a label selector);
	// without it they are dropped: 100,000 label maps are ~100 MB.
	Labels bool
	// OwnerLabel, without Labels, keeps that one label of each Job and Pod
	// (notify.ownerLabel): one shared map per owner, not one per object.
	// It also lists the namespaces (list on namespaces) for their owner
	// label (ClusterRefs.NamespaceLabels).
	OwnerLabel string
	// Taps are the kinds' own reads, one paginated pass each (see Tap).
	Taps []Tap
}

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

// Collect lists one cluster's PersistentVolumes, PersistentVolumeClaims and
// Pods (each in one paginated pass) and returns every GCE disk reference with
// what uses it, and every PVC an Argo Workflow owns. opt.Taps are the kinds'
// own reads (the Workflows themselves are the k8s-pvc kind's). With opt.Images it also lists the workload
// kinds that hold pod templates (one paginated pass each) and returns every
// distinct ECR image reference, from those and from the same pass over pods.
// With opt.Workloads it also lists Jobs, CronJobs and Nodes (sharing the
// image passes over Jobs and CronJobs) and returns them with every pod of the
// same pass over pods. It never fails: whatever could not be listed makes the result incomplete
// and is described in Problems.
func Collect(ctx context.Context, name string, cs kubernetes.Interface, dyn dynamic.Interface, opt Options) inventory.ClusterRefs {
	start := time.Now()
	out := inventory.ClusterRefs{
		Name:     name,
		Projects: append([]string(nil), opt.Projects...),
		Accounts: append([]string(nil), opt.Accounts...),
		Subnets:  append([]string(nil), opt.Subnets...),
	}

	cctx := ctx
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	l := lister{ctx: cctx, parent: ctx, timeout: opt.Timeout, pageSize: opt.PageSize}

	var (
		pvs  = map[string]*pvInfo{}
		pvcs = map[string]*pvcInfo{}
		pods = map[string]*podInfo{}
		// protectedPVs holds every PV (GCE or not) carrying the protect label.
		protectedPVs = map[string]bool{}

		pvErr, pvcErr, podErr error
		wg                    sync.WaitGroup
	)
	protected := func(labels map[string]string) bool {
		return opt.ProtectLabel != "" && labels[opt.ProtectLabel] == "true"
	}

	var images *imageCollector
	if opt.Images {
		images = newImageCollector(name, cs)
	}
	var workloads *workloadCollector
	if opt.Workloads {
		workloads = newWorkloadCollector(cs, protected, opt.RetentionAnnotation)
		workloads.labels = opt.Labels
		workloads.ownedBy(cs, opt.OwnerLabel)
		workloads.start(l, &wg, images) // before images start: it shares their passes
	}
	if images != nil {
		images.start(l, &wg)
	}
	tapped := runTaps(l, name, dyn, opt.Taps, &wg)

	wg.Add(3)
	go func() {
		defer wg.Done()
		pvErr = l.each(resPVs, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().PersistentVolumes().List(ctx, o)
		}, func(obj runtime.Object) error {
			pv, ok := obj.(*corev1.PersistentVolume)
			if !ok {
				return fmt.Errorf("unexpected %T in PersistentVolume list", obj)
			}
			if protected(pv.Labels) {
				protectedPVs[pv.Name] = true
			}
			key, isGCE, err := PVDisk(pv)
			if !isGCE {
				delete(pvs, pv.Name) // a re-list may see a changed object
				return nil
			}
			info := &pvInfo{
				name:      pv.Name,
				phase:     string(pv.Status.Phase),
				protected: protected(pv.Labels),
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
			pvs[pv.Name] = info
			return nil
		})
	}()
	go func() {
		defer wg.Done()
		pvcErr = l.each(resPVCs, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, o)
		}, func(obj runtime.Object) error {
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
				protected:   protected(pvc.Labels),
			}
			info.wfName, info.wfUID = owningWorkflow(pvc.ObjectMeta)
			pvcs[nsKey(pvc.Namespace, pvc.Name)] = info
			return nil
		})
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
		podErr = l.each(resPods, list, func(obj runtime.Object) error {
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
				delete(pods, k)
				return nil
			}
			pods[k] = info
			return nil
		})
	}()
	wg.Wait()
	tapped(&out) // each tap says its own completeness

	complete := true
	for _, r := range []struct {
		res string
		err error
	}{{resPVs, pvErr}, {resPVCs, pvcErr}, {resPods, podErr}} {
		if r.err != nil {
			complete = false
			out.Problems = append(out.Problems, l.problem(r.res, r.err))
		}
	}
	if images != nil && !images.finish(&out, l, podErr) {
		complete = false
	}
	if workloads != nil && !workloads.finish(&out, l, podErr, images) {
		complete = false
	}
	out.Complete = complete

	// Link everything.
	claimPods := map[string][]inventory.PodRef{} // ns/claim -> pods
	for _, p := range pods {
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
				Cluster: name,
				Disk:    inventory.DiskKey{Project: inventory.Unspecified, Zone: inventory.Unspecified, Name: pd},
				Pods:    []inventory.PodRef{ref},
			})
		}
	}
	for _, ps := range claimPods {
		sortPods(ps)
	}
	workflowOf := func(c *pvcInfo) *inventory.WorkflowRef {
		if c == nil || c.wfName == "" {
			return nil
		}
		return &inventory.WorkflowRef{Namespace: c.ns, Name: c.wfName, UID: c.wfUID}
	}
	copyPods := func(p []inventory.PodRef) []inventory.PodRef {
		if len(p) == 0 {
			return nil
		}
		return append([]inventory.PodRef(nil), p...)
	}

	var badPVs []string
	for _, pv := range pvs {
		if pv.problem != "" {
			badPVs = append(badPVs, pv.problem)
		}
		if !pv.gce {
			continue
		}
		ref := inventory.PVRef{
			Cluster: name, Disk: pv.disk, PV: pv.name, Phase: pv.phase,
			ClaimNamespace: pv.claimNS, Claim: pv.claim,
			Protected: pv.protected, CapacityGB: pv.capGB,
		}
		if pv.claim != "" {
			k := nsKey(pv.claimNS, pv.claim)
			ref.Pods = copyPods(claimPods[k])
			if c := pvcs[k]; c != nil {
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

	for k, c := range pvcs {
		if c.wfName == "" {
			continue
		}
		ref := inventory.PVCRef{
			Cluster: name, Namespace: c.ns, Name: c.name, UID: c.uid,
			Volume: c.volume, CapacityGB: c.capGB, Created: c.created, Terminating: c.terminating,
			Protected: c.protected || (c.volume != "" && protectedPVs[c.volume]),
			Pods:      copyPods(claimPods[k]),
			Workflow:  workflowOf(c),
		}
		if pv := pvs[c.volume]; c.volume != "" && pv != nil && pv.gce {
			d := pv.disk
			ref.Disk = &d
		}
		out.PVCs = append(out.PVCs, ref)
	}
	sort.Slice(out.PVCs, func(i, j int) bool {
		return nsKey(out.PVCs[i].Namespace, out.PVCs[i].Name) < nsKey(out.PVCs[j].Namespace, out.PVCs[j].Name)
	})

	linkTaps(&out, opt.Taps)
	out.Duration = time.Since(start)
	return out
}

var errNoDynamic = errors.New("no dynamic client")

// owningWorkflow returns the Argo Workflow that owns a PVC: an owner reference
// of kind Workflow in group argoproj.io, or failing that the workflow label.
func owningWorkflow(m metav1.ObjectMeta) (name, uid string) {
	for _, o := range m.OwnerReferences {
		if o.Kind != "Workflow" || o.Name == "" {
			continue
		}
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err != nil || gv.Group != WorkflowGVR.Group {
			continue
		}
		return o.Name, string(o.UID)
	}
	return m.Labels[WorkflowLabel], ""
}

// notServed reports whether an error listing a custom resource means its CRD
// is not installed rather than that the list failed.
func notServed(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// lister runs one paginated pass per resource.
type lister struct {
	ctx      context.Context // the collection context (with the timeout)
	parent   context.Context // the caller's context
	timeout  time.Duration
	pageSize int64
}

// expiredError is returned when a continue token expired and the full
// re-list that replaces the paginated pass failed too.
type expiredError struct{ err error }

func (e *expiredError) Error() string {
	return "continue token expired; full re-list: " + e.err.Error()
}
func (e *expiredError) Unwrap() error { return e.err }

// each lists one resource with a pager, calling fn for every item. If the
// continue token expires (410) mid-way it falls back to one full list, as
// pager.List does; fn must therefore be idempotent per object (callers key
// their state by object name, so items seen twice are recorded once).
func (l lister) each(res string, list pager.ListPageFunc, fn func(runtime.Object) error) error {
	pageFn := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		obj, err := list(ctx, o)
		if err == nil && ctx.Err() != nil {
			// A client that ignored the context: do not trust a page that
			// arrived after the deadline to be followed by more.
			return nil, ctx.Err()
		}
		return obj, err
	}
	p := pager.New(pageFn)
	if l.pageSize > 0 {
		p.PageSize = l.pageSize
	}
	err := p.EachListItem(l.ctx, metav1.ListOptions{}, fn)
	if err == nil || !(apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) || l.ctx.Err() != nil {
		return err
	}
	// The pager's own fallback (pager.List): a full, unpaginated list.
	obj, err := pageFn(l.ctx, metav1.ListOptions{})
	if err != nil {
		return &expiredError{err}
	}
	if err := meta.EachListItem(obj, fn); err != nil {
		return &expiredError{err}
	}
	return nil
}

// problem turns a list error into a sentence an operator can act on.
func (l lister) problem(res string, err error) string {
	var ee *expiredError
	if errors.As(err, &ee) {
		return fmt.Sprintf("list %s: continue token expired (410) and the full re-list failed: %s", res, l.reason(res, ee.err))
	}
	return fmt.Sprintf("list %s: %s", res, l.reason(res, err))
}

func (l lister) reason(res string, err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("forbidden — the service account needs list on %s (see deploy/base/rbac.yaml)", res)
	case apierrors.IsUnauthorized(err):
		return "unauthorized — the cluster rejected reclaim's credentials; refresh the kubeconfig credentials or the service account token"
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		return fmt.Sprintf("continue token expired (410): %v", err)
	case apierrors.IsTooManyRequests(err):
		return fmt.Sprintf("throttled by the API server (429) — retry later or lower qps/page size: %v", err)
	}
	if l.ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if l.parent.Err() != nil {
			return fmt.Sprintf("canceled by the caller (%v)", context.Cause(l.parent))
		}
		if l.timeout > 0 {
			return fmt.Sprintf("timed out after %s", l.timeout)
		}
		return fmt.Sprintf("timed out: %v", err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		host := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			host = u.Scheme + "://" + u.Host
		}
		var ua x509.UnknownAuthorityError
		var hn x509.HostnameError
		var ci x509.CertificateInvalidError
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return fmt.Sprintf("cannot reach %s: connection refused", host)
		case errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci):
			return fmt.Sprintf("cannot reach %s: TLS verification failed (check certificate-authority-data and server in the kubeconfig): %v", host, ue.Err)
		}
		return fmt.Sprintf("cannot reach %s: %v", host, ue.Err)
	}
	if errors.Is(err, errNoDynamic) {
		return "no dynamic client was given, so it could not be listed"
	}
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		return fmt.Sprintf("%s (HTTP %d): %s", st.Reason, st.Code, st.Message)
	}
	return err.Error()
}

// malformedHandleName guesses the disk name in a handle or pdName that did not
// parse: its last non-empty path segment.
func malformedHandleName(pv *corev1.PersistentVolume) string {
	h := ""
	switch {
	case pv.Spec.CSI != nil:
		h = pv.Spec.CSI.VolumeHandle
	case pv.Spec.GCEPersistentDisk != nil:
		h = pv.Spec.GCEPersistentDisk.PDName
	}
	return inventory.LastSegment(strings.TrimRight(strings.TrimSpace(h), "/"))
}
