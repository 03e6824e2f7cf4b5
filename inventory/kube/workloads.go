package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"reclaim.dev/reclaim/inventory"
)

// resNodes is the Node resource as it appears in problems (and in RBAC
// rules); Jobs and CronJobs are resJobs and resCronJobs.
const resNodes = "nodes"

// CronJob history limits when the spec leaves them unset (the batch/v1
// defaults).
const (
	defaultSuccessfulJobsHistoryLimit = 3
	defaultFailedJobsHistoryLimit     = 1
)

type nsName struct{ ns, name string }

func lessNsName(ans, aname, bns, bname string) bool {
	if ans != bns {
		return ans < bns
	}
	return aname < bname
}

// workloadPass is one paginated list of Jobs, CronJobs or Nodes. reset runs
// when the pass (re)starts, so that a re-list after an expired continue token
// does not keep objects deleted in between.
type workloadPass struct {
	res   string
	list  pager.ListPageFunc
	reset func()
	fn    func(runtime.Object) error
}

// workloadCollector gathers one cluster's Jobs, CronJobs, Pods and Nodes. The
// pods come from Collect's own pod pass (addPod); Jobs and CronJobs share the
// image collector's passes when images are collected too, so that no kind is
// listed twice.
type workloadCollector struct {
	protected  func(map[string]string) bool
	annotation string
	labels     bool // keep labels (Options.Labels)
	ownerLabel string
	owners     inventory.OwnerLabels        // shared by the pod and Job passes
	namespaces map[string]map[string]string // namespace → its owner's map

	// Keyed by object, so that an object seen twice is recorded once. Only
	// the converted values are kept, never the Kubernetes objects.
	pods     map[nsName]inventory.Pod
	jobs     map[nsName]inventory.Job
	cronJobs map[nsName]inventory.CronJob
	nodes    map[string]inventory.Node

	passes []workloadPass
	errs   []error
	shared []bool // the pass is run by the image collector
}

func newWorkloadCollector(cs kubernetes.Interface, protected func(map[string]string) bool, annotation string) *workloadCollector {
	w := &workloadCollector{
		protected:  protected,
		annotation: annotation,
		pods:       map[nsName]inventory.Pod{},
		jobs:       map[nsName]inventory.Job{},
		cronJobs:   map[nsName]inventory.CronJob{},
		nodes:      map[string]inventory.Node{},
	}
	all := metav1.NamespaceAll
	w.passes = []workloadPass{
		{resJobs, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.BatchV1().Jobs(all).List(ctx, o)
		}, func() { clear(w.jobs) }, w.addJob},
		{resCronJobs, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.BatchV1().CronJobs(all).List(ctx, o)
		}, func() { clear(w.cronJobs) }, w.addCronJob},
		{resNodes, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Nodes().List(ctx, o)
		}, func() { clear(w.nodes) }, w.addNode},
	}
	w.errs = make([]error, len(w.passes))
	w.shared = make([]bool, len(w.passes))
	return w
}

// resNamespaces is the Namespace resource as problems name it.
const resNamespaces = "namespaces"

// ownedBy keeps each Job's and Pod's owner label (keep) and lists the
// namespaces for theirs (ClusterRefs.NamespaceLabels): an object without
// the label is its namespace's. A failed namespace list leaves the
// workloads unlisted, as any failed pass does: an owner unknown would
// make another's report its notice.
func (w *workloadCollector) ownedBy(cs kubernetes.Interface, ownerLabel string) {
	if ownerLabel == "" {
		return
	}
	w.ownerLabel, w.owners.Key, w.namespaces = ownerLabel, ownerLabel, map[string]map[string]string{}
	w.passes = append(w.passes, workloadPass{resNamespaces, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Namespaces().List(ctx, o)
	}, func() { clear(w.namespaces) }, w.addNamespace})
	w.errs = append(w.errs, nil)
	w.shared = append(w.shared, false)
}

func (w *workloadCollector) addNamespace(obj runtime.Object) error {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return fmt.Errorf("unexpected %T in Namespace list", obj)
	}
	if v := ns.Labels[w.ownerLabel]; v != "" {
		w.namespaces[ns.Name] = w.owners.Of(v)
	}
	return nil
}

// start hands the Job and CronJob passes to images (when not nil; it must not
// have started yet) and runs every other pass in its own goroutine.
func (w *workloadCollector) start(l lister, wg *sync.WaitGroup, images *imageCollector) {
	for i, p := range w.passes {
		if images != nil && images.share(p.res, p.reset, p.fn) {
			w.shared[i] = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.errs[i] = l.each(p.res, onRestart(p.list, p.reset), p.fn)
		}()
	}
}

// wrapPods makes the pod pass's list function forget the pods seen so far
// when the pass restarts.
func (w *workloadCollector) wrapPods(list pager.ListPageFunc) pager.ListPageFunc {
	return onRestart(list, func() { clear(w.pods) })
}

// finish records the problems of the passes it ran itself (a shared pass's
// problem is the image collector's to report), sets WorkloadsListed if every
// list succeeded (the pod pass included: podErr), and fills Jobs, CronJobs,
// Pods and Nodes in a stable order. It returns whether every list succeeded.
func (w *workloadCollector) finish(out *inventory.ClusterRefs, l lister, podErr error, images *imageCollector) bool {
	ok := podErr == nil
	for i, p := range w.passes {
		err := w.errs[i]
		if w.shared[i] {
			err = images.errOf(p.res)
		} else if err != nil {
			out.Problems = append(out.Problems, l.problem(p.res, err))
		}
		if err != nil {
			ok = false
		}
	}
	out.WorkloadsListed = ok

	out.Jobs = make([]inventory.Job, 0, len(w.jobs))
	for _, j := range w.jobs {
		out.Jobs = append(out.Jobs, j)
		out.JobsVersion = newer(out.JobsVersion, j.Version)
	}
	sort.Slice(out.Jobs, func(i, j int) bool {
		return lessNsName(out.Jobs[i].Namespace, out.Jobs[i].Name, out.Jobs[j].Namespace, out.Jobs[j].Name)
	})
	out.CronJobs = make([]inventory.CronJob, 0, len(w.cronJobs))
	for _, c := range w.cronJobs {
		out.CronJobs = append(out.CronJobs, c)
	}
	sort.Slice(out.CronJobs, func(i, j int) bool {
		return lessNsName(out.CronJobs[i].Namespace, out.CronJobs[i].Name, out.CronJobs[j].Namespace, out.CronJobs[j].Name)
	})
	out.Pods = make([]inventory.Pod, 0, len(w.pods))
	for _, p := range w.pods {
		out.Pods = append(out.Pods, p)
		out.PodsVersion = newer(out.PodsVersion, p.Version)
	}
	sort.Slice(out.Pods, func(i, j int) bool {
		return lessNsName(out.Pods[i].Namespace, out.Pods[i].Name, out.Pods[j].Namespace, out.Pods[j].Name)
	})
	out.Nodes = make([]inventory.Node, 0, len(w.nodes))
	for _, n := range w.nodes {
		out.Nodes = append(out.Nodes, n)
	}
	sort.Slice(out.Nodes, func(i, j int) bool { return out.Nodes[i].Name < out.Nodes[j].Name })
	out.NamespaceLabels = w.namespaces
	// Let the maps go while Collect links the rest (100,000 pods are tens of MB).
	w.pods, w.jobs, w.cronJobs, w.nodes = nil, nil, nil, nil
	return ok
}

// newer returns the newer of two resourceVersions of one resource. The
// newest of a listing's objects stands for the listing's version: every
// object it showed is at most that, and one changed after it is newer.
func newer(a, b string) string {
	if _, err := resourceversion.CompareResourceVersion(b, b); err != nil {
		return a // not a resourceVersion
	}
	if c, err := resourceversion.CompareResourceVersion(b, a); a == "" || err == nil && c > 0 {
		return b
	}
	return a
}

func (w *workloadCollector) retention(annotations map[string]string) string {
	if w.annotation == "" {
		return ""
	}
	return annotations[w.annotation]
}

func controller(m *metav1.ObjectMeta) *inventory.Owner {
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil {
		return nil
	}
	return &inventory.Owner{Kind: ref.Kind, Name: ref.Name, UID: string(ref.UID)}
}

// keep returns labels when they are kept (Options.Labels), else the owner
// label alone (Options.OwnerLabel), else nil.
func (w *workloadCollector) keep(labels map[string]string) map[string]string {
	if w.labels {
		return labels
	}
	v := labels[w.ownerLabel]
	if w.ownerLabel == "" || v == "" {
		return nil
	}
	return w.owners.Of(v)
}

// addPod records a pod of Collect's pod pass.
func (w *workloadCollector) addPod(pod *corev1.Pod) {
	p := inventory.Pod{
		Namespace:   pod.Namespace,
		Name:        pod.Name,
		UID:         string(pod.UID),
		Version:     pod.ResourceVersion,
		Labels:      w.keep(pod.Labels),
		Protected:   w.protected(pod.Labels),
		Retention:   w.retention(pod.Annotations),
		Phase:       string(pod.Status.Phase),
		Node:        pod.Spec.NodeName,
		Created:     pod.CreationTimestamp.Time,
		Owner:       controller(&pod.ObjectMeta),
		Terminating: pod.DeletionTimestamp != nil,
	}
	// A hostNetwork pod reports its node's address: it holds none itself.
	if !pod.Spec.HostNetwork {
		for _, ip := range pod.Status.PodIPs {
			if ip.IP != "" {
				p.IPs = append(p.IPs, ip.IP)
			}
		}
		if len(p.IPs) == 0 && pod.Status.PodIP != "" {
			p.IPs = []string{pod.Status.PodIP}
		}
	}
	for _, l := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, c := range l {
			if t := c.State.Terminated; t != nil && t.FinishedAt.After(p.Finished) {
				p.Finished = t.FinishedAt.Time
			}
		}
	}
	if pod.Status.Phase == corev1.PodRunning {
		p.Stuck = stuck(pod.Status.ContainerStatuses)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			p.Disruption = c.Reason
		}
	}
	w.pods[nsName{pod.Namespace, pod.Name}] = p
}

// stuck names the containers of a Running pod that exited while others
// keep running, or "" (init containers, native sidecars included, are not
// looked at: they are meant to stop, or to stop with the pod).
func stuck(cs []corev1.ContainerStatus) string {
	var exited, running []string
	for _, c := range cs {
		switch {
		case c.State.Terminated != nil:
			t := c.State.Terminated
			exited = append(exited, fmt.Sprintf("%s exited %d at %s", c.Name, t.ExitCode, t.FinishedAt.UTC().Format(time.RFC3339)))
		case c.State.Running != nil:
			running = append(running, c.Name)
		}
	}
	if len(exited) == 0 || len(running) == 0 {
		return ""
	}
	return strings.Join(exited, ", ") + "; " + strings.Join(running, ", ") + " still running"
}

func (w *workloadCollector) addJob(obj runtime.Object) error {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return fmt.Errorf("unexpected %T in Job list", obj)
	}
	j := inventory.Job{
		Namespace:   job.Namespace,
		Name:        job.Name,
		UID:         string(job.UID),
		Version:     job.ResourceVersion,
		Labels:      w.keep(job.Labels),
		Protected:   w.protected(job.Labels),
		Retention:   w.retention(job.Annotations),
		Created:     job.CreationTimestamp.Time,
		Active:      job.Status.Active,
		Terminating: job.DeletionTimestamp != nil,
	}
	j.Status, j.Finished = jobStatus(job.Status.Conditions)
	if t := job.Spec.TTLSecondsAfterFinished; t != nil {
		ttl := *t
		j.TTL = &ttl
	}
	if o := controller(&job.ObjectMeta); o != nil && o.Kind == "CronJob" {
		j.CronJob = o
	}
	w.jobs[nsName{job.Namespace, job.Name}] = j
	return nil
}

// jobStatus is "Complete" when that condition is True, else "Failed" when
// that one is, else "" (running, or only about to fail); finished is the
// condition's lastTransitionTime.
func jobStatus(conds []batchv1.JobCondition) (status string, finished time.Time) {
	for _, want := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
		for _, c := range conds {
			if c.Type == want && c.Status == corev1.ConditionTrue {
				return string(want), c.LastTransitionTime.Time
			}
		}
	}
	return "", time.Time{}
}

func (w *workloadCollector) addCronJob(obj runtime.Object) error {
	cj, ok := obj.(*batchv1.CronJob)
	if !ok {
		return fmt.Errorf("unexpected %T in CronJob list", obj)
	}
	c := inventory.CronJob{
		Namespace:       cj.Namespace,
		Name:            cj.Name,
		UID:             string(cj.UID),
		SuccessfulLimit: defaultSuccessfulJobsHistoryLimit,
		FailedLimit:     defaultFailedJobsHistoryLimit,
	}
	if n := cj.Spec.SuccessfulJobsHistoryLimit; n != nil {
		c.SuccessfulLimit = *n
	}
	if n := cj.Spec.FailedJobsHistoryLimit; n != nil {
		c.FailedLimit = *n
	}
	w.cronJobs[nsName{cj.Namespace, cj.Name}] = c
	return nil
}

func (w *workloadCollector) addNode(obj runtime.Object) error {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return fmt.Errorf("unexpected %T in Node list", obj)
	}
	n := inventory.Node{Name: node.Name, Instance: inventory.InstanceOfProviderID(node.Spec.ProviderID)}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != "" {
			n.IPs = append(n.IPs, a.Address)
		}
	}
	w.nodes[node.Name] = n
	return nil
}

// onRestart wraps list so that reset runs each time a pass (re)starts: once
// the first page of a request without a continue token has arrived. A full
// re-list after an expired token then does not keep objects deleted in
// between, while a re-list that fails keeps what the first attempt saw (the
// result is incomplete then, and more is never less safe).
func onRestart(list pager.ListPageFunc, reset func()) pager.ListPageFunc {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		obj, err := list(ctx, o)
		if err == nil && o.Continue == "" {
			reset()
		}
		return obj, err
	}
}
