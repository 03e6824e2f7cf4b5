package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/imageref"
)

// Image sources other than pods, as they appear in problems (and in RBAC rules).
const (
	resDeployments         = "deployments.apps"
	resReplicaSets         = "replicasets.apps"
	resStatefulSets        = "statefulsets.apps"
	resDaemonSets          = "daemonsets.apps"
	resControllerRevisions = "controllerrevisions.apps"
	resJobs                = "jobs.batch"
	resCronJobs            = "cronjobs.batch"
)

// imageSet is the ECR references one paginated pass found. A pass that
// restarts (the full re-list after an expired continue token) starts its set
// again, so that no user is counted twice.
type imageSet struct {
	*imageref.Set
	cluster string
}

func newImageSet(cluster string) *imageSet {
	return &imageSet{Set: imageref.NewSet(), cluster: cluster}
}

// wrap makes a list function reset the set when the pass (re)starts: on
// every request without a continue token.
func (s *imageSet) wrap(list pager.ListPageFunc) pager.ListPageFunc {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		if o.Continue == "" {
			s.Reset()
		}
		return list(ctx, o)
	}
}

func (s *imageSet) where(ns, kind, name, what string) string {
	return s.cluster + "/" + ns + "/" + kind + "/" + name + " (" + what + ")"
}

// addPodSpec records the images of a pod spec or pod template.
func (s *imageSet) addPodSpec(ns, kind, name string, spec *corev1.PodSpec) {
	for _, c := range spec.InitContainers {
		s.Image(c.Image, s.where(ns, kind, name, c.Name))
	}
	for _, c := range spec.Containers {
		s.Image(c.Image, s.where(ns, kind, name, c.Name))
	}
	for _, c := range spec.EphemeralContainers {
		s.Image(c.Image, s.where(ns, kind, name, c.Name))
	}
	for _, v := range spec.Volumes {
		if v.Image != nil {
			s.Image(v.Image.Reference, s.where(ns, kind, name, "volume "+v.Name))
		}
	}
}

// addPod records a pod's images: what its spec asks for, and what its
// containers run (status image and imageID, the digest actually pulled). A
// status image that is the spec's image again is not a second user.
func (s *imageSet) addPod(pod *corev1.Pod) {
	s.addPodSpec(pod.Namespace, "Pod", pod.Name, &pod.Spec)
	specImage := func(name string) string {
		for _, c := range pod.Spec.InitContainers {
			if c.Name == name {
				return c.Image
			}
		}
		for _, c := range pod.Spec.Containers {
			if c.Name == name {
				return c.Image
			}
		}
		for _, c := range pod.Spec.EphemeralContainers {
			if c.Name == name {
				return c.Image
			}
		}
		return ""
	}
	for _, l := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for _, c := range l {
			w := s.where(pod.Namespace, "Pod", pod.Name, c.Name)
			if !sameImage(c.Image, specImage(c.Name)) {
				s.Image(c.Image, w)
			}
			s.ImageID(c.ImageID, w)
			for _, m := range c.VolumeMounts {
				if m.VolumeStatus != nil && m.VolumeStatus.Image != nil {
					s.ImageID(m.VolumeStatus.Image.ImageRef, s.where(pod.Namespace, "Pod", pod.Name, "volume "+m.Name))
				}
			}
		}
	}
}

// sameImage reports whether two references name the same ECR image (the
// runtime may report the spec's reference in another spelling).
func sameImage(a, b string) bool {
	if a == b {
		return true
	}
	ra, oka, erra := imageref.Parse(a)
	rb, okb, errb := imageref.Parse(b)
	return erra == nil && errb == nil && oka && okb && ra == rb
}

// addRevision records the images of a ControllerRevision: data is the raw
// JSON patch of a StatefulSet's or DaemonSet's spec (spec.template), read
// without assuming its shape.
func (s *imageSet) addRevision(cr *appsv1.ControllerRevision) {
	raw := cr.Data.Raw
	if len(raw) == 0 && cr.Data.Object != nil {
		raw, _ = json.Marshal(cr.Data.Object)
	}
	if len(raw) == 0 {
		return
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		// Not JSON: keep every ECR reference visible in the text.
		for _, u := range imageref.Find(string(raw)) {
			s.Put(u.Ref, s.where(cr.Namespace, "ControllerRevision", cr.Name, "data"), u.Problem)
		}
		return
	}
	imageref.WalkImages(doc, func(image, what string) {
		s.Image(image, s.where(cr.Namespace, "ControllerRevision", cr.Name, what))
	})
}

// imagePass is one paginated list of a workload kind.
type imagePass struct {
	res  string
	list pager.ListPageFunc
	fn   func(*imageSet, runtime.Object) error
}

// sharer is another collection fed by an image pass (the workload collection
// shares the Jobs and CronJobs passes): fn is given every object of the pass,
// and reset runs when the pass (re)starts (see onRestart).
type sharer struct {
	fn    func(runtime.Object) error
	reset func()
}

func imagePasses(cs kubernetes.Interface) []imagePass {
	all := metav1.NamespaceAll
	return []imagePass{
		{resDeployments, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.AppsV1().Deployments(all).List(ctx, o)
		}, func(s *imageSet, obj runtime.Object) error {
			d, ok := obj.(*appsv1.Deployment)
			if !ok {
				return fmt.Errorf("unexpected %T in Deployment list", obj)
			}
			s.addPodSpec(d.Namespace, "Deployment", d.Name, &d.Spec.Template.Spec)
			return nil
		}},
		// Every ReplicaSet, including those scaled to zero: they are a
		// Deployment's rollback targets.
		{resReplicaSets, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.AppsV1().ReplicaSets(all).List(ctx, o)
		}, func(s *imageSet, obj runtime.Object) error {
			r, ok := obj.(*appsv1.ReplicaSet)
			if !ok {
				return fmt.Errorf("unexpected %T in ReplicaSet list", obj)
			}
			s.addPodSpec(r.Namespace, "ReplicaSet", r.Name, &r.Spec.Template.Spec)
			return nil
		}},
		{resStatefulSets, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.AppsV1().StatefulSets(all).List(ctx, o)
		}, func(s *imageSet, obj runtime.Object) error {
			ss, ok := obj.(*appsv1.StatefulSet)
			if !ok {
				return fmt.Errorf("unexpected %T in StatefulSet list", obj)
			}
			s.addPodSpec(ss.Namespace, "StatefulSet", ss.Name, &ss.Spec.Template.Spec)
			return nil
		}},
		{resDaemonSets, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.AppsV1().DaemonSets(all).List(ctx, o)
		}, func(s *imageSet, obj runtime.Object) error {
			d, ok := obj.(*appsv1.DaemonSet)
			if !ok {
				return fmt.Errorf("unexpected %T in DaemonSet list", obj)
			}
			s.addPodSpec(d.Namespace, "DaemonSet", d.Name, &d.Spec.Template.Spec)
			return nil
		}},
		// StatefulSet and DaemonSet rollback targets.
		{resControllerRevisions, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.AppsV1().ControllerRevisions(all).List(ctx, o)
		}, func(s *imageSet, obj runtime.Object) error {
			cr, ok := obj.(*appsv1.ControllerRevision)
			if !ok {
				return fmt.Errorf("unexpected %T in ControllerRevision list", obj)
			}
			s.addRevision(cr)
			return nil
		}},
		{resJobs, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.BatchV1().Jobs(all).List(ctx, o)
		}, func(s *imageSet, obj runtime.Object) error {
			j, ok := obj.(*batchv1.Job)
			if !ok {
				return fmt.Errorf("unexpected %T in Job list", obj)
			}
			s.addPodSpec(j.Namespace, "Job", j.Name, &j.Spec.Template.Spec)
			return nil
		}},
		{resCronJobs, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.BatchV1().CronJobs(all).List(ctx, o)
		}, func(s *imageSet, obj runtime.Object) error {
			c, ok := obj.(*batchv1.CronJob)
			if !ok {
				return fmt.Errorf("unexpected %T in CronJob list", obj)
			}
			s.addPodSpec(c.Namespace, "CronJob", c.Name, &c.Spec.JobTemplate.Spec.Template.Spec)
			return nil
		}},
	}
}

// imageCollector runs the workload passes of one cluster; the pod pass is
// Collect's own and feeds pods.
type imageCollector struct {
	cluster string
	pods    *imageSet
	passes  []imagePass
	sharers []*sharer // per pass, nil when not shared
	sets    []*imageSet
	errs    []error
}

func newImageCollector(cluster string, cs kubernetes.Interface) *imageCollector {
	c := &imageCollector{cluster: cluster, pods: newImageSet(cluster), passes: imagePasses(cs)}
	c.sharers = make([]*sharer, len(c.passes))
	c.sets = make([]*imageSet, len(c.passes))
	c.errs = make([]error, len(c.passes))
	return c
}

// share makes the pass of res also hand every object to fn, with reset run
// when the pass (re)starts, so that another collection needs no list of its
// own. It reports false when there is no pass of res. Call it before start.
func (c *imageCollector) share(res string, reset func(), fn func(runtime.Object) error) bool {
	for i, p := range c.passes {
		if p.res == res && c.sharers[i] == nil {
			c.sharers[i] = &sharer{fn: fn, reset: reset}
			return true
		}
	}
	return false
}

// errOf is the error of the pass of res, once the passes are done.
func (c *imageCollector) errOf(res string) error {
	for i, p := range c.passes {
		if p.res == res {
			return c.errs[i]
		}
	}
	return nil
}

// start runs one goroutine per workload kind, each one paginated pass.
func (c *imageCollector) start(l lister, wg *sync.WaitGroup) {
	for i, p := range c.passes {
		s := newImageSet(c.cluster)
		c.sets[i] = s
		list := s.wrap(p.list)
		fn := func(obj runtime.Object) error { return p.fn(s, obj) }
		if sh := c.sharers[i]; sh != nil {
			list = onRestart(list, sh.reset)
			fn = func(obj runtime.Object) error {
				if err := p.fn(s, obj); err != nil {
					return err
				}
				return sh.fn(obj)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.errs[i] = l.each(p.res, list, fn)
		}()
	}
}

// finish records the passes' problems and, if every image list (the pod
// pass included: podErr) succeeded, ImagesListed. It returns whether all did.
func (c *imageCollector) finish(out *inventory.ClusterRefs, l lister, podErr error) bool {
	ok := podErr == nil
	for i, err := range c.errs {
		if err != nil {
			ok = false
			out.Problems = append(out.Problems, l.problem(c.passes[i].res, err))
		}
	}
	out.ImagesListed = ok
	all := imageref.NewSet()
	all.Merge(c.pods.Set)
	for _, s := range c.sets {
		all.Merge(s.Set)
	}
	out.Images = all.Uses()
	return ok
}
