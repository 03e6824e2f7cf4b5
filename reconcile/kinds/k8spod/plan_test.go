package k8spod_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

const grace = 2 * time.Hour

func policy(ownerKinds ...string) k8spod.Policy {
	return k8spod.Policy{Policy: finished.Policy{Succeeded: time.Hour, Failed: 24 * time.Hour, Annotation: "reclaim.dev/retention",
		ProtectLabel: "reclaim-protect",
		Safety:       config.Safety{Grace: config.Duration(grace), Caps: config.Caps{MaxDeletesPerRun: 1000, MaxDeletePercent: 1, BreakerCandidates: 1000}}},
		OwnerKinds: ownerKinds}
}

// pod is a pod of namespace ci that finished ago before t0 (phase Succeeded
// or Failed), created an hour before, with one address.
func pod(name, phase string, ago time.Duration, owner *inventory.Owner) inventory.Pod {
	p := inventory.Pod{Namespace: "ci", Name: name, UID: "uid-" + name, Phase: phase, IPs: []string{"10.0.0.1"},
		Created: t0.Add(-ago - time.Hour), Owner: owner}
	if phase == "Succeeded" || phase == "Failed" {
		p.Finished = t0.Add(-ago)
	}
	return p
}

var (
	doneJob    = inventory.Job{Namespace: "ci", Name: "build-1", UID: "j1", Status: "Complete", Finished: t0.Add(-time.Hour), CronJob: &inventory.Owner{Kind: "CronJob", Name: "build", UID: "cj"}}
	runningJob = inventory.Job{Namespace: "ci", Name: "build-2", UID: "j2", Active: 1}
	jobOwner   = func(j inventory.Job) *inventory.Owner { return &inventory.Owner{Kind: "Job", Name: j.Name, UID: j.UID} }
)

func cluster(pods ...inventory.Pod) inventory.ClusterRefs {
	return inventory.ClusterRefs{Name: "a", Complete: true, WorkloadsListed: true, Jobs: []inventory.Job{doneJob, runningJob}, Pods: pods}
}

func build(c inventory.ClusterRefs, pol k8spod.Policy, st engine.State, now time.Time) *engine.Plan {
	return enginetest.Build(&inventory.View{TakenAt: t0, Clusters: []inventory.ClusterRefs{c}}, []engine.Kind{k8spod.New(pol, nil)}, st, now)
}

func find(p *engine.Plan, name string) *engine.Decision {
	for i := range p.Decisions {
		if p.Decisions[i].ID == k8spod.ID("a", "ci", name) {
			return &p.Decisions[i]
		}
	}
	return nil
}

func TestOwners(t *testing.T) {
	old := 10 * 24 * time.Hour
	cases := []struct {
		name          string
		pod           inventory.Pod
		ownerKinds    []string
		first, second engine.Action // "" : no decision
		class         string
		reason        string
	}{
		{"no owner", pod("bare", "Succeeded", 2*time.Hour, nil), nil, engine.Mark, engine.Delete, k8spod.ClassPast, "no owner"},
		{"owner Job finished", pod("of-done", "Succeeded", 2*time.Hour, jobOwner(doneJob)), nil, engine.Mark, engine.Delete, k8spod.ClassPast, "its Job build-1 is Complete"},
		{"owner Job running, far past retention", pod("of-running", "Failed", old, jobOwner(runningJob)), nil, engine.Keep, engine.Keep, k8spod.ClassOwnerRunning, "still running"},
		{"owner Job gone", pod("orphan", "Failed", 2*24*time.Hour, &inventory.Owner{Kind: "Job", Name: "build-0", UID: "j0"}), nil, engine.Mark, engine.Delete, k8spod.ClassPast, "is gone"},
		{"owner Job gone under its name (new UID)", pod("renamed", "Failed", 2*24*time.Hour, &inventory.Owner{Kind: "Job", Name: "build-2", UID: "j-old"}), nil, engine.Mark, engine.Delete, k8spod.ClassPast, "is gone"},
		{"owner ReplicaSet", pod("rs", "Failed", old, &inventory.Owner{Kind: "ReplicaSet", Name: "web-1", UID: "rs"}), nil, engine.Keep, engine.Keep, k8spod.ClassController, "ReplicaSet web-1"},
		{"owner StatefulSet listed for another kind", pod("sts", "Failed", old, &inventory.Owner{Kind: "StatefulSet", Name: "db", UID: "s"}), []string{"TaskRun"}, engine.Keep, engine.Keep, k8spod.ClassController, ""},
		{"owner TaskRun in ownerKinds", pod("tr", "Succeeded", 2*time.Hour, &inventory.Owner{Kind: "TaskRun", Name: "t1", UID: "t"}), []string{"TaskRun"}, engine.Mark, engine.Delete, k8spod.ClassPast, "pods.ownerKinds"},
		{"owner TaskRun without ownerKinds", pod("tr2", "Succeeded", 2*time.Hour, &inventory.Owner{Kind: "TaskRun", Name: "t1", UID: "t"}), nil, engine.Keep, engine.Keep, k8spod.ClassController, ""},
		{"failed inside its longer retention", pod("failed", "Failed", 2*time.Hour, nil), nil, engine.Keep, engine.Keep, finished.ClassRetained, ""},
		{"succeeded inside retention", pod("fresh", "Succeeded", 30*time.Minute, nil), nil, engine.Keep, engine.Mark, finished.ClassRetained, ""},
		{"no finish time: past, counted from creation", func() inventory.Pod {
			p := pod("evicted", "Failed", 0, nil)
			p.Finished, p.Created = time.Time{}, t0.Add(-25*time.Hour)
			return p
		}(), nil, engine.Mark, engine.Delete, k8spod.ClassPast, "counted from its creation"},
		{"no finish time: created recently", func() inventory.Pod {
			p := pod("evicted-new", "Failed", 0, nil)
			p.Finished, p.Created = time.Time{}, t0.Add(-23*time.Hour)
			return p
		}(), nil, engine.Keep, engine.Mark, finished.ClassRetained, ""},
		{"protected", func() inventory.Pod { p := pod("prot", "Succeeded", old, nil); p.Protected = true; return p }(), nil, engine.Keep, engine.Keep, finished.ClassProtected, ""},
		{"terminating", func() inventory.Pod { p := pod("term", "Succeeded", old, nil); p.Terminating = true; return p }(), nil, engine.Keep, engine.Keep, finished.ClassDeleting, ""},
		{"annotation never", func() inventory.Pod { p := pod("never", "Succeeded", old, nil); p.Retention = "never"; return p }(), nil, engine.Keep, engine.Keep, finished.ClassNever, ""},
		{"annotation malformed", func() inventory.Pod { p := pod("typo", "Succeeded", old, nil); p.Retention = "1 week"; return p }(), nil, engine.Keep, engine.Keep, finished.ClassBadRetain, ""},
		{"running pod", pod("run", "Running", old, nil), nil, "", "", "", ""},
		{"pending pod", pod("pend", "Pending", old, nil), nil, "", "", "", ""},
		{"unknown phase", pod("lost", "Unknown", old, nil), nil, "", "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol := policy(tc.ownerKinds...)
			c := cluster(tc.pod)
			p1 := build(c, pol, engine.NewState(), t0)
			p2 := build(c, pol, p1.State, t0.Add(grace+time.Minute))
			for i, r := range []struct {
				p    *engine.Plan
				want engine.Action
			}{{p1, tc.first}, {p2, tc.second}} {
				d := find(r.p, tc.pod.Name)
				if tc.first == "" {
					if d != nil {
						t.Fatalf("run %d: want no decision, got %+v", i+1, d)
					}
					continue
				}
				if d == nil || d.Action != r.want || d.Held {
					t.Fatalf("run %d: %+v, want %s", i+1, d, r.want)
				}
				if i == 0 && (d.Class != tc.class || !strings.Contains(d.Why(), tc.reason)) {
					t.Fatalf("class %q reason %q, want %q %q", d.Class, d.Why(), tc.class, tc.reason)
				}
			}
		})
	}
}

// A pod of a running Job is never a candidate, however long it waits.
func TestOwnerRunningNeverDeleted(t *testing.T) {
	c := cluster(pod("of-running", "Failed", 100*24*time.Hour, jobOwner(runningJob)))
	st := engine.NewState()
	for i := range 5 {
		p := build(c, policy(), st, t0.Add(time.Duration(i)*24*time.Hour))
		if d := find(p, "of-running"); d.Action != engine.Keep || d.Class != k8spod.ClassOwnerRunning {
			t.Fatalf("run %d: %+v", i, d)
		}
		if _, ok := p.State.Resources[k8spod.ID("a", "ci", "of-running")]; ok {
			t.Fatal("a kept pod has a clock")
		}
		st = p.State
	}
}

func TestDetail(t *testing.T) {
	p := pod("of-done", "Succeeded", 2*time.Hour, jobOwner(doneJob))
	p.IPs = []string{"10.0.0.1", "10.0.0.2"}
	d := find(build(cluster(p), policy(), engine.NewState(), t0), "of-done")
	det := finished.DetailOf(d)
	if det.Job != "build-1" || det.CronJob != "build" || det.UID != "uid-of-done" || det.IPs != 2 || d.Frees.Of(finished.Addresses) != 2 || det.Status != "Succeeded" {
		t.Fatalf("%+v %+v", det, d.Frees)
	}
	if !strings.Contains(d.Why(), "holds 2 subnet address") {
		t.Fatalf("%q", d.Why())
	}
}

// An incomplete cluster holds its pods; one not asked for workloads too.
func TestIncompleteHolds(t *testing.T) {
	for _, mod := range []func(*inventory.ClusterRefs){
		func(c *inventory.ClusterRefs) { c.Complete = false },
		func(c *inventory.ClusterRefs) { c.WorkloadsListed = false },
	} {
		c := cluster(pod("bare", "Succeeded", 2*time.Hour, nil))
		mod(&c)
		p := build(c, policy(), engine.NewState(), t0)
		p = build(c, policy(), p.State, t0.Add(10*grace))
		if d := find(p, "bare"); d.Action != engine.Mark || !d.Held {
			t.Fatalf("%+v", d)
		}
	}
}

func livePod(name, uid string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: name, UID: types.UID(uid)}, Status: corev1.PodStatus{Phase: phase}}
}

func podDecision(name, uid string) *engine.Decision {
	return &engine.Decision{Kind: k8spod.Name, ID: k8spod.ID("a", "ci", name), Name: name,
		Detail: &finished.Detail{Cluster: "a", Namespace: "ci", UID: uid}}
}

func TestRecheckDelete(t *testing.T) {
	cs := k8sfake.NewClientset(livePod("done", "u1", corev1.PodSucceeded), livePod("failed", "u1", corev1.PodFailed),
		livePod("recreated", "u2", corev1.PodSucceeded), livePod("running", "u1", corev1.PodRunning))
	k := k8spod.New(policy(), func(string) (kubernetes.Interface, error) { return cs, nil })
	names := []string{"done", "failed", "recreated", "running", "gone"}
	want := []engine.Recheck{engine.Go, engine.Go, engine.Skip, engine.Skip, engine.GoneNow}
	var batch []*engine.Decision
	for _, n := range names {
		batch = append(batch, podDecision(n, "u1"))
	}
	vs, err := k.Recheck(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		if vs[i].Result != want[i] {
			t.Errorf("%s: %+v, want %v", names[i], vs[i], want[i])
		}
	}
	if !strings.Contains(vs[3].Reason, "no longer finished") {
		t.Errorf("%q", vs[3].Reason)
	}

	res, err := k.Delete(context.Background(), []*engine.Decision{podDecision("done", "u1"), podDecision("gone", "u1")})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || !errors.Is(res[1].Err, outcome.ErrNotFound) {
		t.Fatalf("%+v", res)
	}
	n := 0
	for _, a := range cs.Actions() {
		d, ok := a.(k8stesting.DeleteActionImpl)
		if !ok {
			continue
		}
		n++
		o := d.GetDeleteOptions()
		if d.GetResource().Resource != "pods" || o.PropagationPolicy != nil {
			t.Fatalf("%v propagation %v: a pod delete needs none", d.GetResource(), o.PropagationPolicy)
		}
		if o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != "u1" {
			t.Fatalf("preconditions %+v", o.Preconditions)
		}
	}
	if n != 2 {
		t.Fatalf("%d delete calls", n)
	}
	if _, err := cs.CoreV1().Pods("ci").Get(context.Background(), "done", metav1.GetOptions{}); err == nil {
		t.Fatal("pod still there")
	}
}

func TestViewCounts(t *testing.T) {
	c := cluster(pod("bare", "Succeeded", 2*time.Hour, nil), pod("fresh", "Succeeded", 10*time.Minute, nil),
		pod("failed", "Failed", 2*time.Hour, nil), pod("run", "Running", 0, nil))
	p1 := build(c, policy(), engine.NewState(), t0)
	p := build(c, policy(), p1.State, t0.Add(grace+time.Minute))
	counts := k8spod.CountsOf(p)
	// At t0+2h01m: fresh (2h11m) is past too; failed (4h01m of 24h) is not.
	want := finished.Count{Cluster: "a", Namespace: "ci", Finished: 3, Succeeded: 2, Failed: 1, PastRetention: 2, Delete: 1}
	if len(counts) != 1 || counts[0] != want {
		t.Fatalf("%+v", counts)
	}
	if len(p.Summaries) != 1 || p.Summaries[0] != "Pods delete 1 (frees 1 subnet addresses), wait 1" {
		t.Fatalf("%q", p.Summaries)
	}
}

// Whoever keeps a Job (the protect label, retention never) keeps its pods and
// their logs.
func TestPodsOfKeptJobsKept(t *testing.T) {
	for _, mod := range []func(*inventory.Job){
		func(j *inventory.Job) { j.Protected = true },
		func(j *inventory.Job) { j.Retention = "never" },
	} {
		j := doneJob
		mod(&j)
		c := inventory.ClusterRefs{Name: "a", Complete: true, WorkloadsListed: true, Jobs: []inventory.Job{j},
			Pods: []inventory.Pod{pod("of-kept", "Succeeded", 10*24*time.Hour, jobOwner(j))}}
		p := build(c, policy(), engine.NewState(), t0)
		p = build(c, policy(), p.State, t0.Add(grace+time.Minute))
		if d := find(p, "of-kept"); d == nil || d.Action != engine.Keep || d.Class != finished.ClassProtected {
			t.Fatalf("%+v", d)
		}
	}
}

// A finished pod's clock is derived from the listings that showed it and its
// Job unchanged (no clock of its own); when its Job stops being kept (a
// protect label removed: a newer Job version), the pod's clock starts then,
// not at the first read that showed the pod.
func TestPodClockFollowsItsJobsVersion(t *testing.T) {
	j := doneJob
	j.CronJob, j.Protected, j.Version = nil, true, "50"
	p0 := pod("of-job", "Succeeded", 10*24*time.Hour, jobOwner(j))
	p0.Version = "40"
	c := inventory.ClusterRefs{Name: "a", Complete: true, WorkloadsListed: true, Jobs: []inventory.Job{j},
		Pods: []inventory.Pod{p0}, JobsVersion: "100", PodsVersion: "100"}
	p := build(c, policy(), engine.NewState(), t0)
	if d := find(p, "of-job"); d == nil || d.Action != engine.Keep {
		t.Fatalf("%+v", d)
	}
	c.Jobs[0].Protected, c.Jobs[0].Version, c.JobsVersion, c.PodsVersion = false, "150", "200", "200"
	at := t0.Add(time.Hour)
	p = build(c, policy(), p.State, at)
	if d := find(p, "of-job"); d.Action != engine.Mark || !d.OrphanSince.Equal(at) {
		t.Fatalf("%s since %v, want since %v", d.Action, d.OrphanSince, at)
	}
	if len(p.State.Resources) != 0 {
		t.Fatalf("clocks %v: a finished pod needs none", p.State.Resources)
	}
	if d := find(build(c, policy(), p.State, at.Add(grace-time.Minute)), "of-job"); d.Action != engine.Mark {
		t.Fatalf("before its grace: %s (%s)", d.Action, d.Why())
	}
	if d := find(build(c, policy(), p.State, at.Add(grace)), "of-job"); d.Action != engine.Delete {
		t.Fatalf("after its grace: %s (%s)", d.Action, d.Why())
	}
}
