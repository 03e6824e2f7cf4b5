package k8sjob_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
)

// liveJob is the API's Job batch/name with uid, finished (Complete) or not.
func liveJob(name, uid string, done bool) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: name, UID: types.UID(uid)}}
	if done {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	}
	return j
}

func kindWith(cs kubernetes.Interface) *k8sjob.Kind {
	return k8sjob.New(policy(), func(string) (kubernetes.Interface, error) { return cs, nil })
}

func jobDecision(name, uid string) *engine.Decision {
	return &engine.Decision{Kind: k8sjob.Name, ID: k8sjob.ID("a", "batch", name), Name: name,
		Detail: &finished.Detail{Cluster: "a", Namespace: "batch", UID: uid, Status: "Complete"}}
}

func TestRecheck(t *testing.T) {
	failed := liveJob("failed", "u1", false)
	failed.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	notTrue := liveJob("suspended", "u1", false)
	notTrue.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionFalse},
		{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}
	protected := liveJob("protected", "u1", true)
	protected.Labels = map[string]string{"reclaim-protect": "false"} // any value protects
	kept := liveJob("kept", "u1", true)
	kept.Annotations = map[string]string{annotation: "never"}
	cs := k8sfake.NewClientset(liveJob("same", "u1", true), liveJob("recreated", "u2", true), liveJob("restarted", "u1", false),
		failed, notTrue, protected, kept)
	cases := []struct {
		name   string
		want   engine.Recheck
		reason string
	}{
		{"same", engine.Go, ""},
		{"failed", engine.Go, ""},
		{"gone", engine.GoneNow, ""},
		{"recreated", engine.Skip, "recreated"},
		{"restarted", engine.Skip, "no longer finished"},
		{"suspended", engine.Skip, "no longer finished"},
		{"protected", engine.Go, ""}, // the engine checks the opt-out label it shows
		{"kept", engine.Skip, "annotation " + annotation + " changed"},
	}
	var batch []*engine.Decision
	for _, tc := range cases {
		batch = append(batch, jobDecision(tc.name, "u1"))
	}
	vs, err := kindWith(cs).Recheck(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		if vs[i].Result != tc.want || !strings.Contains(vs[i].Reason, tc.reason) {
			t.Errorf("%s: %+v, want %v %q", tc.name, vs[i], tc.want, tc.reason)
		}
		if vs[i].Result == engine.Go && vs[i].Labels == nil {
			t.Errorf("%s: let go without its labels: the engine could not check the opt-out", tc.name)
		}
	}
	if _, ok := vs[6].Labels["reclaim-protect"]; !ok {
		t.Errorf("the protected Job's labels as re-read: %v", vs[6].Labels)
	}
}

func TestDelete(t *testing.T) {
	cs := k8sfake.NewClientset(liveJob("done", "u1", true))
	k := kindWith(cs)
	res, err := k.Delete(context.Background(), []*engine.Decision{jobDecision("done", "u1"), jobDecision("gone", "u7")})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if !errors.Is(res[1].Err, outcome.ErrNotFound) {
		t.Fatalf("gone: %v", res[1].Err)
	}
	var dels []k8stesting.DeleteActionImpl
	for _, a := range cs.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			dels = append(dels, d)
		}
	}
	if len(dels) != 2 {
		t.Fatalf("%d delete calls", len(dels))
	}
	uids := map[string]string{"done": "u1", "gone": "u7"} // deleted in parallel: any order
	for _, d := range dels {
		uid := uids[d.GetName()]
		o := d.GetDeleteOptions()
		if d.GetResource().Resource != "jobs" || d.GetNamespace() != "batch" {
			t.Fatalf("deleted %v %s", d.GetResource(), d.GetNamespace())
		}
		if o.PropagationPolicy == nil || *o.PropagationPolicy != metav1.DeletePropagationBackground {
			t.Fatalf("propagation %v: a Job deleted without Background orphans its pods", o.PropagationPolicy)
		}
		if o.Preconditions == nil || o.Preconditions.UID == nil || string(*o.Preconditions.UID) != uid {
			t.Fatalf("preconditions %+v", o.Preconditions)
		}
	}
	if _, err := cs.BatchV1().Jobs("batch").Get(context.Background(), "done", metav1.GetOptions{}); err == nil {
		t.Fatal("the Job is still there")
	}
}

// Through the applier: the Job planned is deleted; one recreated since the
// plan is skipped and left alone; one gone is already gone.
func TestApplyJob(t *testing.T) {
	cases := []struct {
		name    string
		liveUID string // "" : not there
		result  string
		left    bool
	}{
		{"same Job is deleted", "u1", audit.Deleted, false},
		{"recreated since the plan is skipped", "u2", audit.Skipped, true},
		{"gone is already gone", "", audit.AlreadyGone, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := k8sfake.NewClientset()
			if tc.liveUID != "" {
				cs = k8sfake.NewClientset(liveJob("done", tc.liveUID, true))
			}
			k := kindWith(cs)
			id := k8sjob.ID("a", "batch", "done")
			st := engine.NewState()
			st.Seen(id, "u1", t0.Add(-grace-time.Minute))
			p := enginetest.Build(snap(cluster("a", job("done", "u1", "Complete", 48*time.Hour))), []engine.Kind{k}, st, t0)
			if d := enginetest.DecisionFor(t, p, "done"); d.Action != engine.Delete {
				t.Fatalf("not planned: %+v", d)
			}
			a, buf, _ := enginetest.Applier(t0, 0, k)
			out, err := a.Apply(context.Background(), p, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != 1 || out.Results[0].Result != tc.result || out.Failed != 0 {
				t.Fatalf("%+v", out)
			}
			if got := enginetest.AuditResults(t, buf)[id]; got != tc.result {
				t.Fatalf("audit %q", got)
			}
			_, err = cs.BatchV1().Jobs("batch").Get(context.Background(), "done", metav1.GetOptions{})
			if left := err == nil; left != tc.left {
				t.Fatalf("left %v, want %v", left, tc.left)
			}
		})
	}
}

// A plan-only kind (no client) refuses to delete rather than pretend.
func TestNoClient(t *testing.T) {
	k := k8sjob.New(policy(), nil)
	if _, err := k.Recheck(context.Background(), []*engine.Decision{jobDecision("done", "u1")}); err == nil {
		t.Fatal("recheck without a client")
	}
	if !k.Owns(k8sjob.ID("a", "ns", "j")) || k.Owns("clusters/a/namespaces/ns/pods/j") || k.Owns("ec2:1/r/eni-1") {
		t.Fatal("Owns")
	}
}
