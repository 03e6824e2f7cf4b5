package kube

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
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

	"reclaim.dev/reclaim/base/optout"
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
	// ProtectLabel (e.g. reclaim.dev/protect), with any value, on a PV, PVC,
	// Job or Pod opts it out (package optout); empty disables the check.
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

// Collect reads one cluster, each resource in one paginated pass, all passes
// at once:
//   - the volumes: PersistentVolumes, PersistentVolumeClaims and Pods, into
//     every GCE disk reference with what uses it, and every PVC an Argo
//     Workflow owns (volumeCollector);
//   - with opt.Images, the workload kinds that hold pod templates, into every
//     distinct ECR image reference, from those and the same pod pass
//     (imageCollector);
//   - with opt.Workloads, Jobs, CronJobs and Nodes (sharing the image passes
//     over Jobs and CronJobs), returned with every pod of the same pod pass
//     (workloadCollector);
//   - opt.Taps, the kinds' own reads, each with its own completeness (the
//     Argo Workflows are the k8s-pvc kind's).
//
// It never fails: whatever could not be listed makes the result incomplete
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

	var wg sync.WaitGroup
	protected := func(labels map[string]string) bool {
		_, ok := optout.Protects(opt.ProtectLabel, labels)
		return ok
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

	volumes := newVolumeCollector(protected)
	volumes.start(l, &wg, cs, images, workloads)
	wg.Wait()
	tapped(&out) // each tap says its own completeness

	complete := volumes.finish(&out, l)
	if images != nil && !images.finish(&out, l, volumes.podErr) {
		complete = false
	}
	if workloads != nil && !workloads.finish(&out, l, volumes.podErr, images) {
		complete = false
	}
	out.Complete = complete
	volumes.link(&out, name)
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
