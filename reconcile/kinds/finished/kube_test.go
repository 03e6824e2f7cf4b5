package finished_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

// podDeleter is a Deleter of pods (no propagation policy): Still says ""
// for a succeeded pod.
func podDeleter(cs kubernetes.Interface) *finished.Deleter[*corev1.Pod] {
	return &finished.Deleter[*corev1.Pod]{
		Client: func(string) (kubernetes.Interface, error) { return cs, nil },
		API: finished.API[*corev1.Pod]{Resource: "pod",
			In: func(cs kubernetes.Interface, ns string) finished.Objects[*corev1.Pod] { return cs.CoreV1().Pods(ns) },
			Still: func(p *corev1.Pod) string {
				if p.Status.Phase != corev1.PodSucceeded {
					return "no longer finished"
				}
				return ""
			},
		}}
}

func decision(name, uid string) *engine.Decision {
	return &engine.Decision{ID: "clusters/a/namespaces/ns/pods/" + name, Name: name,
		Detail: &finished.Detail{Cluster: "a", Namespace: "ns", UID: uid}}
}

func pod(name, uid string, mod func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid)},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	if mod != nil {
		mod(p)
	}
	return p
}

func TestDeleterRecheck(t *testing.T) {
	now := metav1.NewTime(t0)
	cs := k8sfake.NewClientset(
		pod("same", "u1", nil),
		pod("recreated", "u9", nil),
		pod("protected", "u1", func(p *corev1.Pod) { p.Labels = map[string]string{"reclaim-protect": "true"} }),
		pod("protect-false", "u1", func(p *corev1.Pod) { p.Labels = map[string]string{"reclaim-protect": "false"} }),
		pod("restarted", "u1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }),
		pod("terminating", "u1", func(p *corev1.Pod) { p.DeletionTimestamp = &now; p.Finalizers = []string{"x"} }),
	)
	d := podDeleter(cs)
	names := []string{"same", "gone", "recreated", "protected", "protect-false", "restarted", "terminating"}
	// The opt-out label is the engine's to check: the re-read shows it.
	want := []engine.Recheck{engine.Go, engine.GoneNow, engine.Skip, engine.Go, engine.Go, engine.Skip, engine.GoneNow}
	wantReason := []string{"", "", "recreated", "", "", "no longer finished", ""}
	var batch []*engine.Decision
	for _, n := range names {
		batch = append(batch, decision(n, "u1"))
	}
	vs, err := d.Recheck(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if v.Result != want[i] || !strings.Contains(v.Reason, wantReason[i]) {
			t.Errorf("%s: %+v, want %v (%q)", names[i], v, want[i], wantReason[i])
		}
		if v.Result == engine.Go && v.Labels == nil {
			t.Errorf("%s: let go without its labels: the engine could not check the opt-out", names[i])
		}
	}
	if vs[3].Labels["reclaim-protect"] != "true" || vs[4].Labels["reclaim-protect"] != "false" {
		t.Errorf("the labels as re-read: %v, %v", vs[3].Labels, vs[4].Labels)
	}

	// The retention annotation changed since the plan (someone asked to keep
	// it longer) is a skip; unchanged, it goes.
	cs2 := k8sfake.NewClientset(
		pod("kept", "u1", func(p *corev1.Pod) { p.Annotations = map[string]string{"reclaim.dev/retention": "never"} }),
		pod("longer", "u1", func(p *corev1.Pod) { p.Annotations = map[string]string{"reclaim.dev/retention": "30d"} }),
		pod("unchanged", "u1", func(p *corev1.Pod) { p.Annotations = map[string]string{"reclaim.dev/retention": "2h"} }),
		pod("removed", "u1", nil),
		pod("plain", "u1", nil),
	)
	d2 := podDeleter(cs2)
	d2.Annotation = "reclaim.dev/retention"
	withRetention := func(name, planned string) *engine.Decision {
		d := decision(name, "u1")
		finished.DetailOf(d).Retention = planned
		return d
	}
	vs, err = d2.Recheck(context.Background(), []*engine.Decision{withRetention("kept", ""), withRetention("longer", "2h"),
		withRetention("unchanged", "2h"), withRetention("removed", "1h"), withRetention("plain", "")})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []engine.Recheck{engine.Skip, engine.Skip, engine.Go, engine.Skip, engine.Go} {
		if vs[i].Result != want {
			t.Errorf("annotation case %d: %+v, want %v", i, vs[i], want)
		}
	}
	if !strings.Contains(vs[0].Reason, `changed since it was planned (now "never")`) {
		t.Errorf("%q", vs[0].Reason)
	}

	// A re-read that fails is an error for the batch: nothing is deleted.
	cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	if _, err := d.Recheck(context.Background(), batch[:1]); err == nil {
		t.Fatal("a failed re-read must fail the batch")
	}
}

func TestDeleterDelete(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	cases := []struct {
		name     string
		reaction error // returned by the fake's delete; nil: the tracker's
		exists   bool
		batchErr bool
		notFound bool
		skip     bool
		failed   bool
	}{
		{name: "deleted", exists: true},
		{name: "already gone", notFound: true},
		{name: "conflict (precondition) is a skip", reaction: apierrors.NewConflict(gr, "p", errors.New("uid mismatch")), exists: true, skip: true},
		{name: "forbidden is this object's failure", reaction: apierrors.NewForbidden(gr, "p", errors.New("rbac")), exists: true, failed: true},
		{name: "a timeout's outcome is unknown", reaction: apierrors.NewTimeoutError("slow", 1), exists: true, batchErr: true},
		{name: "no answer's outcome is unknown", reaction: errors.New("connection reset"), exists: true, batchErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := k8sfake.NewClientset()
			if tc.exists {
				cs = k8sfake.NewClientset(pod("p", "u1", nil))
			}
			if tc.reaction != nil {
				cs.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.reaction })
			}
			res, err := podDeleter(cs).Delete(context.Background(), []*engine.Decision{decision("p", "u1")})
			if tc.batchErr {
				if err == nil {
					t.Fatalf("want a batch error, got %+v", res)
				}
				return
			}
			if err != nil || len(res) != 1 {
				t.Fatalf("%v %+v", err, res)
			}
			e := res[0].Err
			switch o := outcome.Of(e); {
			case tc.notFound:
				if o != outcome.Gone {
					t.Fatalf("want gone, got %v", e)
				}
			case tc.skip:
				if o != outcome.Changed {
					t.Fatalf("want a skip, got %v", e)
				}
			case tc.failed:
				if o != outcome.Refused {
					t.Fatalf("want a refusal, got %v", e)
				}
			default:
				if e != nil {
					t.Fatal(e)
				}
			}
			var del []k8stesting.DeleteActionImpl
			for _, a := range cs.Actions() {
				if da, ok := a.(k8stesting.DeleteActionImpl); ok {
					del = append(del, da)
				}
			}
			if len(del) != 1 {
				t.Fatalf("delete calls: %d", len(del))
			}
			o := del[0].GetDeleteOptions()
			if o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != "u1" || o.PropagationPolicy != nil {
				t.Fatalf("delete options: %+v", o)
			}
		})
	}
}

// Without a client the deleter fails rather than pretend.
func TestDeleterNoClient(t *testing.T) {
	d := &finished.Deleter[*corev1.Pod]{}
	if _, err := d.Recheck(context.Background(), []*engine.Decision{decision("p", "u1")}); err == nil {
		t.Fatal("recheck without a client")
	}
	if _, err := d.Delete(context.Background(), []*engine.Decision{decision("p", "u1")}); err == nil {
		t.Fatal("delete without a client")
	}
}

// DeletesPerSecond paces the calls of one cluster.
func TestDeleterPaced(t *testing.T) {
	cs := k8sfake.NewClientset(pod("a", "u1", nil), pod("b", "u1", nil), pod("c", "u1", nil))
	d := podDeleter(cs)
	d.PerSecond = 20 // burst 20: the first 20 calls are free, then 50ms each
	var batch []*engine.Decision
	for range 26 {
		batch = append(batch, decision("a", "u1"))
	}
	start := time.Now()
	if _, err := d.Recheck(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Fatalf("26 calls at 20/s with burst 20 took %s, want ≥ 250ms", el)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Recheck(ctx, batch[:1]); err == nil {
		t.Fatal("a cancelled wait must fail")
	}
}

func TestCounts(t *testing.T) {
	c := finished.Counter{}
	c.Add("a", "ns1", true, true)
	c.Add("a", "ns1", false, false)
	c.Add("a", "ns2", true, true)
	c.Add("b", "ns1", false, true)
	c.Add("a", "ns1", true, false)
	p := &engine.Plan{Decisions: []engine.Decision{
		{Kind: "k", Action: engine.Delete, Detail: &finished.Detail{Cluster: "a", Namespace: "ns1"}},
		{Kind: "k", Action: engine.Mark, Detail: &finished.Detail{Cluster: "a", Namespace: "ns1"}},
		{Kind: "other", Action: engine.Delete, Detail: &finished.Detail{Cluster: "a", Namespace: "ns1"}},
		{Kind: "k", Action: engine.Delete, Detail: &finished.Detail{Cluster: "b", Namespace: "ns1"}},
	}}
	got := c.Sorted(p, "k")
	want := []finished.Count{
		{Cluster: "a", Namespace: "ns1", Finished: 3, Succeeded: 2, Failed: 1, PastRetention: 1, Delete: 1},
		{Cluster: "a", Namespace: "ns2", Finished: 1, Succeeded: 1, PastRetention: 1},
		{Cluster: "b", Namespace: "ns1", Finished: 1, Failed: 1, PastRetention: 1, Delete: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	s := finished.CountsSection("finishedX", "T", "things", got)
	if s.Key != "finishedX" || len(s.Blocks) != 1 || len(s.Blocks[0].Rows) != 3 ||
		!strings.Contains(s.Blocks[0].Lines[0], "5 finished things, 3 past retention, 2 deleted") {
		t.Fatalf("%+v", s)
	}
	if g := finished.CountGauges("x", got); len(g) != 6 || g[0].Name != "x_finished" || g[0].Value != 3 || g[1].Value != 1 {
		t.Fatalf("%+v", g)
	}
}
