package fleetsim

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
)

// workloadReactors make the clientset's Jobs and Pods the truth's: reads
// and deletes go to the world, with the apiserver's UID precondition and
// the garbage collector's Background propagation.
func (f *fleet) workloadReactors(cs *k8sfake.Clientset, c *cluster) {
	jobsGR := batchv1.Resource("jobs")
	podsGR := corev1.Resource("pods")
	meta := func(ns, name, uid string, protected bool, ann string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), Labels: map[string]string{"app": "batch"}}
		if protected {
			m.Labels[protectLabel] = "true"
		}
		if ann != "" {
			m.Annotations = map[string]string{retentionAnn: ann}
		}
		return m
	}
	cs.PrependReactor("get", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		f.mu.Lock() // the Job and Pod deleter re-reads and deletes a batch in parallel
		defer f.mu.Unlock()
		if f.killed {
			return true, nil, errKilled
		}
		name := a.(k8stesting.GetAction).GetName()
		j := c.jobNamed(a.GetNamespace(), name)
		if j == nil {
			return true, nil, apierrors.NewNotFound(jobsGR, name)
		}
		obj := &batchv1.Job{ObjectMeta: meta(j.ns, j.name, j.uid, j.protected, j.retention)}
		if j.done() {
			t := batchv1.JobComplete
			if j.status == "Failed" {
				t = batchv1.JobFailed
			}
			obj.Status.Conditions = []batchv1.JobCondition{{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(j.finished)}}
		}
		return true, obj, nil
	})
	cs.PrependReactor("delete", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		f.mu.Lock() // the Job and Pod deleter re-reads and deletes a batch in parallel
		defer f.mu.Unlock()
		da := a.(k8stesting.DeleteAction)
		name := da.GetName()
		if err := f.begin(context.Background(), "delete Job "+c.name+"/"+name); err != nil {
			return true, nil, err
		}
		defer f.end()
		j := c.jobNamed(a.GetNamespace(), name)
		if j == nil {
			return true, nil, apierrors.NewNotFound(jobsGR, name)
		}
		o := da.GetDeleteOptions()
		what := fmt.Sprintf("Job %s/%s/%s", c.name, j.ns, j.name)
		if o.PropagationPolicy == nil || *o.PropagationPolicy != metav1.DeletePropagationBackground {
			f.violate("delete of %s without propagationPolicy Background (%v): its pods would be orphaned", what, o.PropagationPolicy)
		}
		if o.Preconditions == nil || o.Preconditions.UID == nil {
			f.violate("delete of %s without a UID precondition", what)
		} else if string(*o.Preconditions.UID) != j.uid {
			return true, nil, apierrors.NewConflict(jobsGR, name, fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *o.Preconditions.UID, j.uid))
		}
		f.attempts[k8sjob.Name]++
		if f.failCall() {
			return true, nil, apierrors.NewServiceUnavailable("etcdserver: request timed out")
		}
		f.checkJob(c, j)
		f.removeJob(c, j, true)
		f.deleted(k8sjob.Name, k8sjob.ID(c.name, j.ns, j.name))
		if f.loseResponse() {
			return true, nil, apierrors.NewTimeoutError("request did not complete within the allowed duration", 0)
		}
		return true, nil, nil
	})
	cs.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		f.mu.Lock() // the Job and Pod deleter re-reads and deletes a batch in parallel
		defer f.mu.Unlock()
		if f.killed {
			return true, nil, errKilled
		}
		name := a.(k8stesting.GetAction).GetName()
		p := c.wpodNamed(a.GetNamespace(), name)
		if p == nil {
			return true, nil, apierrors.NewNotFound(podsGR, name)
		}
		obj := &corev1.Pod{ObjectMeta: meta(p.ns, p.name, p.uid, p.protected, p.retention), Status: corev1.PodStatus{Phase: corev1.PodPhase(p.phase)}}
		if o := p.owner; o != nil {
			yes := true
			obj.OwnerReferences = []metav1.OwnerReference{{Kind: o.Kind, Name: o.Name, UID: types.UID(o.UID), Controller: &yes}}
		}
		return true, obj, nil
	})
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		f.mu.Lock() // the Job and Pod deleter re-reads and deletes a batch in parallel
		defer f.mu.Unlock()
		da := a.(k8stesting.DeleteAction)
		name := da.GetName()
		if err := f.begin(context.Background(), "delete pod "+c.name+"/"+name); err != nil {
			return true, nil, err
		}
		defer f.end()
		p := c.wpodNamed(a.GetNamespace(), name)
		if p == nil {
			return true, nil, apierrors.NewNotFound(podsGR, name)
		}
		o := da.GetDeleteOptions()
		if o.Preconditions == nil || o.Preconditions.UID == nil {
			f.violate("delete of pod %s/%s/%s without a UID precondition", c.name, p.ns, p.name)
		} else if string(*o.Preconditions.UID) != p.uid {
			return true, nil, apierrors.NewConflict(podsGR, name, fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *o.Preconditions.UID, p.uid))
		}
		f.attempts[k8spod.Name]++
		if f.failCall() {
			return true, nil, apierrors.NewServiceUnavailable("etcdserver: request timed out")
		}
		f.checkWPod(c, p)
		f.removePod(c, p, true)
		f.deleted(k8spod.Name, k8spod.ID(c.name, p.ns, p.name))
		if f.loseResponse() {
			return true, nil, apierrors.NewTimeoutError("request did not complete within the allowed duration", 0)
		}
		return true, nil, nil
	})
}
