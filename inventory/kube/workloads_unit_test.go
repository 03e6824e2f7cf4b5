package kube

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"reclaim.dev/reclaim/inventory"
)

// The tests against a real kube-apiserver are in workloads_test.go; these
// cover what it cannot produce (a CronJob with unset history limits, an
// expired continue token) or what is quicker to check with the fake.

func wlOpts() Options {
	o := opts()
	o.Workloads = true
	o.RetentionAnnotation = "reclaim.dev/retention"
	o.Subnets = []string{"subnet-1"}
	o.Labels = true
	return o
}

// Without Options.Labels no label map is kept (100,000 of them are ~100 MB),
// while the protect label is still read.
func TestWorkloadsDropLabels(t *testing.T) {
	cs := fake.NewSimpleClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "p",
		Labels: map[string]string{"app": "x", "reclaim.dev/protect": "true"}}})
	o := wlOpts()
	o.Labels = false
	out := Collect(context.Background(), "c", cs, nil, o)
	if len(out.Pods) != 1 || out.Pods[0].Labels != nil || !out.Pods[0].Protected {
		t.Fatalf("%+v", out.Pods)
	}
}

// With Options.OwnerLabel (and no selector) each Job and Pod keeps its owner
// label alone, every object of one owner sharing one map.
func TestWorkloadsKeepTheOwnerLabelAlone(t *testing.T) {
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: name, Labels: labels}}
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "j", Labels: map[string]string{"team": "etl", "app": "x"}}}
	cs := fake.NewSimpleClientset(pod("a", map[string]string{"team": "etl", "app": "x"}), pod("b", map[string]string{"team": "etl"}),
		pod("c", map[string]string{"app": "y"}), job)
	o := wlOpts()
	o.Labels, o.OwnerLabel = false, "team"
	out := Collect(context.Background(), "c", cs, nil, o)
	labels := map[string]map[string]string{}
	for _, p := range out.Pods {
		labels[p.Name] = p.Labels
	}
	if !reflect.DeepEqual(labels["a"], map[string]string{"team": "etl"}) || labels["c"] != nil || len(out.Jobs) != 1 ||
		!reflect.DeepEqual(out.Jobs[0].Labels, map[string]string{"team": "etl"}) {
		t.Fatalf("pods %v, jobs %+v", labels, out.Jobs)
	}
	if reflect.ValueOf(labels["a"]).UnsafePointer() != reflect.ValueOf(labels["b"]).UnsafePointer() {
		t.Error("two pods of one owner hold a map each")
	}
}

// With Options.OwnerLabel the namespaces are listed for theirs; a failed
// namespace list leaves the workloads unlisted (their owners unknown).
func TestWorkloadsListNamespaceOwners(t *testing.T) {
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	objs := []runtime.Object{ns("etl", map[string]string{"team": "etl"}), ns("web", nil),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "etl", Name: "p"}}}
	o := wlOpts()
	o.Labels, o.OwnerLabel = false, "team"
	out := Collect(context.Background(), "c", fake.NewSimpleClientset(objs...), nil, o)
	if !out.WorkloadsListed || !reflect.DeepEqual(out.NamespaceLabels, map[string]map[string]string{"etl": {"team": "etl"}}) {
		t.Fatalf("listed %v, namespace labels %v (%v)", out.WorkloadsListed, out.NamespaceLabels, out.Problems)
	}
	cs := fake.NewSimpleClientset(objs...)
	cs.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", fmt.Errorf("no"))
	})
	out = Collect(context.Background(), "c", cs, nil, o)
	if out.WorkloadsListed || !strings.Contains(strings.Join(out.Problems, "; "), "list namespaces: forbidden") {
		t.Fatalf("a failed namespace list: listed %v, problems %v", out.WorkloadsListed, out.Problems)
	}
	o.OwnerLabel = ""
	cs = fake.NewSimpleClientset(objs...)
	cs.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		t.Error("namespaces listed without an owner label")
		return false, nil, nil
	})
	Collect(context.Background(), "c", cs, nil, o)
}

func TestJobStatus(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(int64(s), 0)) }
	cond := func(typ batchv1.JobConditionType, st corev1.ConditionStatus, s int) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: st, LastTransitionTime: at(s)}
	}
	tests := []struct {
		name   string
		conds  []batchv1.JobCondition
		status string
		fin    int
	}{
		{"running", nil, "", 0},
		{"complete", []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, 5), cond(batchv1.JobComplete, corev1.ConditionTrue, 7)}, "Complete", 7},
		{"failed", []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue, 5), cond(batchv1.JobFailed, corev1.ConditionTrue, 9)}, "Failed", 9},
		{"only about to fail", []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue, 5)}, "", 0},
		{"complete false", []batchv1.JobCondition{cond(batchv1.JobComplete, corev1.ConditionFalse, 5)}, "", 0},
		{"complete wins", []batchv1.JobCondition{cond(batchv1.JobFailed, corev1.ConditionTrue, 3), cond(batchv1.JobComplete, corev1.ConditionTrue, 4)}, "Complete", 4},
		{"failed after complete false", []batchv1.JobCondition{cond(batchv1.JobComplete, corev1.ConditionFalse, 3), cond(batchv1.JobFailed, corev1.ConditionTrue, 4)}, "Failed", 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, fin := jobStatus(tc.conds)
			want := time.Time{}
			if tc.fin != 0 {
				want = time.Unix(int64(tc.fin), 0)
			}
			if st != tc.status || !fin.Equal(want) {
				t.Fatalf("got %q %v, want %q %v", st, fin, tc.status, want)
			}
		})
	}
}

func TestWorkloadsCronJobDefaults(t *testing.T) {
	five, zero := int32(5), int32(0)
	cs := fake.NewSimpleClientset(
		&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "unset", UID: "u1"}},
		&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "set", UID: "u2"},
			Spec: batchv1.CronJobSpec{SuccessfulJobsHistoryLimit: &five, FailedJobsHistoryLimit: &zero}},
	)
	r := Collect(context.Background(), "c", cs, newDyn(), wlOpts())
	if !r.Complete || !r.WorkloadsListed {
		t.Fatalf("complete=%v listed=%v problems=%q", r.Complete, r.WorkloadsListed, r.Problems)
	}
	want := []inventory.CronJob{
		{Namespace: "a", Name: "set", UID: "u2", SuccessfulLimit: 5, FailedLimit: 0},
		{Namespace: "b", Name: "unset", UID: "u1", SuccessfulLimit: 3, FailedLimit: 1},
	}
	if !reflect.DeepEqual(r.CronJobs, want) {
		t.Fatalf("cronjobs\n got %+v\nwant %+v", r.CronJobs, want)
	}
	if !reflect.DeepEqual(r.Subnets, []string{"subnet-1"}) {
		t.Fatalf("subnets %v", r.Subnets)
	}
}

func TestWorkloadsPodFields(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctrl := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "p", UID: "pu", Labels: map[string]string{protect: "true", "app": "x"},
			Annotations: map[string]string{"reclaim.dev/retention": "keep"}, CreationTimestamp: metav1.NewTime(t0),
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "Node", Name: "not-controller", UID: "nu"},
				{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "ju", Controller: &ctrl},
			}},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, PodIP: "10.0.0.1",
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "i", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(3 * time.Minute))}}}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(2 * time.Minute))}}},
				{Name: "b", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
					// A previous run's termination is not this pod's end.
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(time.Hour))}}},
			}},
	}
	r := Collect(context.Background(), "c", fake.NewSimpleClientset(p), newDyn(), wlOpts())
	want := []inventory.Pod{{
		Namespace: "n", Name: "p", UID: "pu", Labels: p.Labels, Protected: true, Retention: "keep", Phase: "Failed",
		IPs: []string{"10.0.0.1"}, Node: "node-1", Created: t0, Finished: t0.Add(3 * time.Minute),
		Owner: &inventory.Owner{Kind: "Job", Name: "j", UID: "ju"},
	}}
	if !reflect.DeepEqual(r.Pods, want) {
		t.Fatalf("pods\n got %+v\nwant %+v", r.Pods, want)
	}
}

func TestWorkloadsOffByDefault(t *testing.T) {
	cs := fake.NewSimpleClientset(pod("n", "p", corev1.PodRunning), &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "j"}})
	r := Collect(context.Background(), "c", cs, newDyn(), opts())
	if !r.Complete || r.WorkloadsListed || r.Pods != nil || r.Jobs != nil || r.Nodes != nil || r.CronJobs != nil {
		t.Fatalf("%+v", r)
	}
	for _, a := range cs.Actions() {
		if res := a.GetResource().Resource; res == "jobs" || res == "cronjobs" || res == "nodes" {
			t.Fatalf("listed %s without Workloads", res)
		}
	}
}

// With images collected too, Jobs and CronJobs are listed once for both.
func TestWorkloadsShareImagePasses(t *testing.T) {
	cs := fake.NewSimpleClientset(
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "j"}},
		&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "cj"}},
		pod("n", "p", corev1.PodRunning),
	)
	o := wlOpts()
	o.Images = true
	r := Collect(context.Background(), "c", cs, newDyn(), o)
	if !r.Complete || !r.WorkloadsListed || !r.ImagesListed || len(r.Jobs) != 1 || len(r.CronJobs) != 1 || len(r.Pods) != 1 {
		t.Fatalf("complete=%v listed=%v images=%v problems=%q %+v", r.Complete, r.WorkloadsListed, r.ImagesListed, r.Problems, r)
	}
	lists := map[string]int{}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "list" {
			lists[a.GetResource().Resource]++
		}
	}
	for _, res := range []string{"jobs", "cronjobs", "pods", "nodes"} {
		if lists[res] != 1 {
			t.Errorf("%s listed %d times, want once (%v)", res, lists[res], lists)
		}
	}
}

func TestWorkloadsCompleteness(t *testing.T) {
	forbidden := func(gr schema.GroupResource) error {
		return apierrors.NewForbidden(gr, "", fmt.Errorf("cannot list resource %q", gr.Resource))
	}
	tests := []struct {
		name     string
		images   bool
		res      string
		err      error
		problems []string
	}{
		{"nodes forbidden", false, "nodes", forbidden(schema.GroupResource{Resource: "nodes"}),
			[]string{"list nodes: forbidden — the service account needs list on nodes (see deploy/base/rbac.yaml)"}},
		{"jobs forbidden", false, "jobs", forbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}),
			[]string{"list jobs.batch: forbidden — the service account needs list on jobs.batch (see deploy/base/rbac.yaml)"}},
		// A shared pass's failure is reported once, and fails both users.
		{"jobs forbidden, shared with images", true, "jobs", forbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}),
			[]string{"list jobs.batch: forbidden — the service account needs list on jobs.batch (see deploy/base/rbac.yaml)"}},
		{"cronjobs unavailable", false, "cronjobs", apierrors.NewServiceUnavailable("etcd"),
			[]string{"list cronjobs.batch: ServiceUnavailable (HTTP 503): etcd"}},
		{"pods unauthorized", false, "pods", apierrors.NewUnauthorized("expired"),
			[]string{"list pods: unauthorized — the cluster rejected reclaim's credentials; refresh the kubeconfig credentials or the service account token"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
			cs.PrependReactor("list", tc.res, errReactor(tc.err))
			o := wlOpts()
			o.Images = tc.images
			r := Collect(context.Background(), "c", cs, newDyn(), o)
			if r.Complete || r.WorkloadsListed {
				t.Fatalf("complete=%v listed=%v, want both false", r.Complete, r.WorkloadsListed)
			}
			if tc.images && r.ImagesListed {
				t.Fatal("images listed despite a failed jobs list")
			}
			if !reflect.DeepEqual(r.Problems, tc.problems) {
				t.Fatalf("problems %q\nwant %q", r.Problems, tc.problems)
			}
			// What was listed is still reported.
			if tc.res != "nodes" && len(r.Nodes) != 1 {
				t.Fatalf("nodes %+v", r.Nodes)
			}
		})
	}
}

// relistReactor serves page one (a, b), answers 410 for its continue token,
// and then serves the full re-list (b, c): a was deleted in between.
type relistReactor struct {
	mk    func(names ...string) runtime.Object
	calls []metav1.ListOptions
}

func (r *relistReactor) react(action k8stesting.Action) (bool, runtime.Object, error) {
	o := action.(k8stesting.ListActionImpl).GetListOptions()
	r.calls = append(r.calls, o)
	switch {
	case o.Limit == 0:
		return true, r.mk("b", "c"), nil
	case o.Continue == "":
		l := r.mk("a", "b")
		l.(metav1.ListInterface).SetContinue("2")
		return true, l, nil
	default:
		return true, nil, apierrors.NewResourceExpired("continue too old")
	}
}

func TestWorkloadsRelistForgetsDeleted(t *testing.T) {
	cs := fake.NewSimpleClientset()
	pods := &relistReactor{mk: func(names ...string) runtime.Object {
		l := &corev1.PodList{}
		for _, n := range names {
			l.Items = append(l.Items, *pod("n", n, corev1.PodRunning))
		}
		return l
	}}
	jobs := &relistReactor{mk: func(names ...string) runtime.Object {
		l := &batchv1.JobList{}
		for _, n := range names {
			l.Items = append(l.Items, batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: n}})
		}
		return l
	}}
	nodes := &relistReactor{mk: func(names ...string) runtime.Object {
		l := &corev1.NodeList{}
		for _, n := range names {
			l.Items = append(l.Items, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
		return l
	}}
	cs.PrependReactor("list", "pods", pods.react)
	cs.PrependReactor("list", "jobs", jobs.react)
	cs.PrependReactor("list", "nodes", nodes.react)
	for _, images := range []bool{false, true} {
		pods.calls, jobs.calls, nodes.calls = nil, nil, nil
		o := wlOpts()
		o.Images = images
		r := Collect(context.Background(), "c", cs, newDyn(), o)
		if !r.Complete || !r.WorkloadsListed {
			t.Fatalf("images=%v: complete=%v listed=%v problems=%q", images, r.Complete, r.WorkloadsListed, r.Problems)
		}
		var got []string
		for _, p := range r.Pods {
			got = append(got, "pod/"+p.Name)
		}
		for _, j := range r.Jobs {
			got = append(got, "job/"+j.Name)
		}
		for _, n := range r.Nodes {
			got = append(got, "node/"+n.Name)
		}
		if want := []string{"pod/b", "pod/c", "job/b", "job/c", "node/b", "node/c"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("images=%v: got %v, want %v", images, got, want)
		}
		for name, rr := range map[string]*relistReactor{"pods": pods, "jobs": jobs, "nodes": nodes} {
			if len(rr.calls) != 3 {
				t.Errorf("images=%v: %s: %d list calls, want page, 410, full re-list: %+v", images, name, len(rr.calls), rr.calls)
			}
		}
	}
}

// A Running pod whose main container exited while a sidecar runs is
// stuck (the zombie Job); a pod with a DisruptionTarget condition says why
// it was disrupted; a Running pod with its init containers done and every
// container running is neither.
func TestStuckAndDisruptedPods(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ran := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	exited := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(t0)}}
	zombie := pod("n", "zombie", corev1.PodRunning)
	zombie.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: exited}, {Name: "istio-proxy", State: ran}}
	fine := pod("n", "fine", corev1.PodRunning)
	fine.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", State: exited}}
	fine.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: ran}}
	preempted := pod("n", "preempted", corev1.PodFailed)
	preempted.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"}}
	r := Collect(context.Background(), "c", fake.NewSimpleClientset(zombie, fine, preempted), newDyn(), wlOpts())
	got := map[string][2]string{}
	for _, p := range r.Pods {
		got[p.Name] = [2]string{p.Stuck, p.Disruption}
	}
	want := map[string][2]string{
		"zombie":    {"main exited 0 at 2026-11-01T12:00:00Z; istio-proxy still running", ""},
		"fine":      {"", ""},
		"preempted": {"", "PreemptionByScheduler"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stuck and disruption\n got %q\nwant %q", got, want)
	}
}
