package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
)

const day = 24 * time.Hour

// Finished Jobs and Pods, given their status through the status subresource
// as the Job controller and kubelet do, are deleted exactly per retention:
// never on first sight, then after the grace; what retention, the
// annotation, the opt-out label, a running Job or a CronJob's history keeps
// stays.
func TestFinishedJobsAndPodsPerRetention(t *testing.T) {
	w := newEKSWorld(t)
	w.ec2YAML = "-"
	w.job(prodA, "done", "Complete", 3*day, nil)
	w.job(prodA, "failed", "Failed", 3*day, nil)
	w.job(prodA, "keep-never", "Complete", 3*day, func(j *batchv1.Job) { j.Annotations = map[string]string{retentionKey: "never"} })
	w.job(prodA, "short", "Complete", 3*time.Hour, func(j *batchv1.Job) { j.Annotations = map[string]string{retentionKey: "2h"} })
	w.job(prodA, "protected", "Complete", 3*day, func(j *batchv1.Job) { j.Labels = map[string]string{protectKey: "true"} })
	// A Job with two completions, one pod done long ago, one to come.
	two := int32(2)
	running := w.job(prodA, "running", "", 0, func(j *batchv1.Job) { j.Spec.Completions = &two })
	w.pod(prodA, "running-1", running, corev1.PodSucceeded, 3*time.Hour, "")
	w.pod(prodA, "bare", nil, corev1.PodSucceeded, 3*time.Hour, "")
	w.pod(prodA, "bare-failed", nil, corev1.PodFailed, day, "")

	ctx := context.Background()
	one := int32(1)
	cj, err := prodA.Client.BatchV1().CronJobs(w.ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", SuccessfulJobsHistoryLimit: &one,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: jobPodSpec()}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ownedByCronJob := func(j *batchv1.Job) {
		yes := true
		j.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: &yes}}
	}
	// Created in this order (names break a tie of creation seconds the same way).
	w.job(prodA, "nightly-1", "Complete", 4*day, ownedByCronJob)
	w.job(prodA, "nightly-2", "Complete", 3*day, ownedByCronJob)

	due := []string{w.jobID(prodA, "done"), w.jobID(prodA, "short"), w.jobID(prodA, "nightly-1"), w.podID(prodA, "bare")}
	start := time.Now()
	rep := w.run(true)
	for _, id := range due {
		want(t, rep, id, engine.Mark, "")
	}
	if rep.Outcome == nil || rep.Outcome.Deleted != 0 {
		t.Fatalf("first sight deleted: %+v", rep.Outcome)
	}
	for _, n := range []string{"done", "short", "nightly-1"} {
		if w.jobGone(prodA, n) {
			t.Fatalf("job %s deleted on first sight", n)
		}
	}

	w.now = w.now.Add(time.Hour + time.Minute)
	rep = w.run(true)
	if rep.ExitCode != report.ExitOK || rep.Outcome == nil || rep.Outcome.Deleted != len(due) {
		t.Fatalf("past grace: exit %d, outcome %+v\n%s", rep.ExitCode, rep.Outcome, text(rep))
	}
	for _, id := range due {
		want(t, rep, id, engine.Delete, finished.ClassPast)
	}
	want(t, rep, w.jobID(prodA, "failed"), engine.Keep, finished.ClassRetained)
	want(t, rep, w.jobID(prodA, "keep-never"), engine.Keep, finished.ClassNever)
	want(t, rep, w.jobID(prodA, "protected"), engine.Keep, finished.ClassProtected)
	want(t, rep, w.jobID(prodA, "nightly-2"), engine.Keep, k8sjob.ClassHistory)
	want(t, rep, w.podID(prodA, "running-1"), engine.Keep, k8spod.ClassOwnerRunning)
	want(t, rep, w.podID(prodA, "bare-failed"), engine.Keep, finished.ClassRetained)
	for _, d := range rep.Plan.Decisions {
		if d.ID == w.jobID(prodA, "running") {
			t.Fatalf("a running Job has a decision: %+v", d)
		}
	}

	// What the apiserver holds now.
	for _, n := range []string{"done", "short", "nightly-1"} {
		if j := w.getJob(prodA, n); j != nil {
			t.Fatalf("job %s still there: deletionTimestamp %v, finalizers %v", n, j.DeletionTimestamp, j.Finalizers)
		}
	}
	if w.getPod(prodA, "bare") != nil {
		t.Fatal("bare finished pod past retention still there")
	}
	for _, n := range []string{"failed", "keep-never", "protected", "nightly-2", "running"} {
		if w.jobGone(prodA, n) {
			t.Fatalf("job %s was deleted", n)
		}
	}
	for _, n := range []string{"running-1", "bare-failed"} {
		if w.podGone(prodA, n) {
			t.Fatalf("pod %s was deleted", n)
		}
	}

	// Idempotent: a third run deletes nothing more, and the audit log has
	// every delete once.
	w.now = w.now.Add(time.Hour)
	rep = w.run(true)
	if rep.Outcome == nil || rep.Outcome.Deleted != 0 {
		t.Fatalf("third run: %+v", rep.Outcome)
	}
	for _, id := range due {
		if n := w.deletes(id); n != 1 {
			t.Fatalf("audit has %d deletes of %s", n, id)
		}
	}
	// Counted per namespace on every run, even when nothing is deleted.
	out := text(rep)
	if !strings.Contains(out, w.ns) {
		t.Fatalf("report lacks the namespace's counts:\n%s", out)
	}
	t.Logf("three runs against the apiservers in %s", time.Since(start).Round(time.Millisecond))
}

// The Job is deleted with propagationPolicy Background: a real garbage
// collector (kube-controller-manager with only that controller) then takes
// its pods. A Job deleted without a policy (batch/v1 defaults to orphan)
// keeps its pod, which the collector orphans instead.
func TestJobDeletedInBackgroundTakesItsPods(t *testing.T) {
	w := newEKSWorld(t)
	w.ec2YAML, w.podsYAML = "-", "-" // only the Job kind acts: the pod must go with its Job
	ctx := context.Background()
	start := time.Now()
	gc, err := prodA.StartGarbageCollector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gc.Stop)
	t.Logf("garbage collector synced in %s (log %s)", time.Since(start).Round(time.Millisecond), gc.Log())

	done := w.job(prodA, "done", "Complete", 3*day, nil)
	w.pod(prodA, "done-pod", done, corev1.PodSucceeded, 3*day, "")
	control := w.job(prodA, "control", "Complete", 3*day, func(j *batchv1.Job) { j.Annotations = map[string]string{retentionKey: "never"} })
	w.pod(prodA, "control-pod", control, corev1.PodSucceeded, 3*day, "")
	writeSeen(t, w.statePath(), w.now.Add(-2*time.Hour), func(string) string { return string(done.UID) }, w.jobID(prodA, "done"))

	rep := w.run(true)
	if rep.Outcome == nil || rep.Outcome.Deleted != 1 {
		t.Fatalf("outcome %+v\n%s", rep.Outcome, text(rep))
	}
	// Right after the delete the Job is gone: with the orphan default it
	// would linger with a deletionTimestamp and the orphan finalizer.
	if j := w.getJob(prodA, "done"); j != nil {
		t.Fatalf("the Job lingers: deletionTimestamp %v, finalizers %v", j.DeletionTimestamp, j.Finalizers)
	}
	// The control, deleted by hand without a policy.
	if err := prodA.Client.BatchV1().Jobs(w.ns).Delete(ctx, "control", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	waited := time.Now()
	deadline := waited.Add(30 * time.Second)
	for !w.podGone(prodA, "done-pod") {
		if time.Now().After(deadline) {
			p := w.getPod(prodA, "done-pod")
			t.Fatalf("the deleted Job's pod is still there after 30s (ownerReferences %+v); garbage collector log %s", p.OwnerReferences, gc.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the garbage collector took the Job's pod %s after the delete", time.Since(waited).Round(time.Millisecond))
	// The control's pod stays, orphaned: the collector removes its owner
	// reference and then the Job.
	deadline = time.Now().Add(30 * time.Second)
	for w.getJob(prodA, "control") != nil {
		if time.Now().After(deadline) {
			t.Fatal("the control Job was never released by the garbage collector")
		}
		time.Sleep(100 * time.Millisecond)
	}
	p := w.getPod(prodA, "control-pod")
	if p == nil || p.DeletionTimestamp != nil || len(p.OwnerReferences) != 0 {
		t.Fatalf("control pod: %+v", p)
	}
}

// A Job recreated under the same name between two runs is a new Job: its
// clock restarts, so it is not deleted on first sight.
func TestRecreatedJobRestartsItsClock(t *testing.T) {
	w := newEKSWorld(t)
	w.ec2YAML, w.podsYAML = "-", "-"
	first := w.job(prodA, "migrate", "Complete", 3*day, nil)
	id := w.jobID(prodA, "migrate")
	start := w.now
	want(t, w.run(true), id, engine.Mark, finished.ClassPast)

	bg := metav1.DeletePropagationBackground
	if err := prodA.Client.BatchV1().Jobs(w.ns).Delete(context.Background(), "migrate", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	second := w.job(prodA, "migrate", "Complete", 3*day, nil)
	if second.UID == first.UID {
		t.Fatal("same UID after a re-create")
	}

	w.now = start.Add(2 * time.Hour) // past the first Job's grace
	rep := w.run(true)
	d := want(t, rep, id, engine.Mark, finished.ClassPast)
	if d.OrphanSince == nil || !d.OrphanSince.Equal(w.now) {
		t.Fatalf("the new Job's clock: since %v, want %v", d.OrphanSince, w.now)
	}
	if j := w.getJob(prodA, "migrate"); j == nil || j.UID != second.UID || j.DeletionTimestamp != nil {
		t.Fatal("the recreated Job was deleted on first sight")
	}

	w.now = w.now.Add(time.Hour + time.Minute)
	rep = w.run(true)
	want(t, rep, id, engine.Delete, finished.ClassPast)
	if w.getJob(prodA, "migrate") != nil || w.deletes(id) != 1 {
		t.Fatalf("after its own grace: deletes %d\n%s", w.deletes(id), text(rep))
	}
}

// A cluster that cannot be listed holds its own Jobs and Pods and every
// interface deletion in the subnets it could use; the other cluster's Jobs
// and an interface in a subnet only it could use still go. Once the cluster
// is back, what was held goes at once: the clocks survived.
func TestUnreachableClusterHoldsItsJobsAndInterfaces(t *testing.T) {
	w := newEKSWorld(t)
	w.job(prodA, "a-done", "Complete", 3*day, nil)
	w.job(prodB, "b-done", "Complete", 3*day, nil)
	w.pod(prodB, "b-bare", nil, corev1.PodSucceeded, 3*time.Hour, "")
	eA, eAB, eB := w.cniInterface(w.subA), w.cniInterface(w.subAB), w.cniInterface(w.subB)

	start := w.now
	rep := w.run(true)
	for _, id := range []string{w.jobID(prodA, "a-done"), w.jobID(prodB, "b-done"), w.podID(prodB, "b-bare"), eniID(eA), eniID(eAB), eniID(eB)} {
		want(t, rep, id, engine.Mark, "")
	}

	kc, err := testenv.UnreachableKubeconfig(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.prodBKubeconfig, w.prodBContext = kc, "unreachable"
	w.now = start.Add(7 * time.Hour) // past every grace
	rep = w.run(true)
	if rep.ExitCode != report.ExitIncomplete {
		t.Fatalf("exit %d, want %d\n%s", rep.ExitCode, report.ExitIncomplete, text(rep))
	}
	want(t, rep, w.jobID(prodA, "a-done"), engine.Delete, "")
	want(t, rep, eniID(eA), engine.Delete, ec2interface.ClassLeaked)
	for _, e := range []string{eAB, eB} {
		d := want(t, rep, eniID(e), engine.Mark, ec2interface.ClassLeaked)
		if !d.Held || !strings.Contains(d.Why(), "prod-b") {
			t.Fatalf("%s not held for prod-b: %+v", e, d)
		}
	}
	if w.ec2.Has(eA) || !w.ec2.Has(eAB) || !w.ec2.Has(eB) {
		t.Fatalf("interfaces left: subA %v, subAB %v, subB %v (want false, true, true)", w.ec2.Has(eA), w.ec2.Has(eAB), w.ec2.Has(eB))
	}
	// One delete; the SDK may repeat it once after a dropped idle connection
	// (aws/aws-sdk-go-v2#2737), which then finds it gone.
	if n := w.ec2.Calls(ec2fake.ActionDeleteNetworkInterface); n < 1 || n > 2 {
		t.Fatalf("%d DeleteNetworkInterface calls, want 1", n)
	}
	if !w.jobGone(prodA, "a-done") {
		t.Fatal("prod-a's Job was held by prod-b's failure")
	}
	if w.jobGone(prodB, "b-done") || w.podGone(prodB, "b-bare") {
		t.Fatal("prod-b's Job or Pod was deleted while prod-b could not be listed")
	}
	for _, r := range w.audit() {
		if strings.Contains(r.ID, "/prod-b/") || r.ID == eniID(eAB) || r.ID == eniID(eB) {
			t.Fatalf("audit has %+v", r)
		}
	}
	out := text(rep)
	for _, s := range []string{"cluster prod-b", "connection refused"} {
		if !strings.Contains(out, s) {
			t.Fatalf("report lacks %q:\n%s", s, out)
		}
	}

	// prod-b is back: what it held goes in this run, its clocks intact.
	w.prodBKubeconfig, w.prodBContext = prodB.Kubeconfig, "admin"
	w.now = w.now.Add(time.Hour)
	rep = w.run(true)
	if rep.ExitCode != report.ExitOK {
		t.Fatalf("exit %d\n%s", rep.ExitCode, text(rep))
	}
	for _, id := range []string{w.jobID(prodB, "b-done"), w.podID(prodB, "b-bare"), eniID(eAB), eniID(eB)} {
		want(t, rep, id, engine.Delete, "")
	}
	if w.ec2.Has(eAB) || w.ec2.Has(eB) || w.getJob(prodB, "b-done") != nil || w.getPod(prodB, "b-bare") != nil {
		t.Fatal("what prod-b held was not deleted once it was back")
	}
}

// A requester-managed interface (made by an AWS service for itself) is
// never deleted, even detached and with the CNI's tag and description, over
// several applying runs past the grace. A plain CNI leftover beside it goes.
func TestRequesterManagedInterfaceNeverDeleted(t *testing.T) {
	w := newEKSWorld(t)
	w.jobsYAML, w.podsYAML = "-", "-"
	managed := w.ec2.AddInterface(ec2fake.Interface{Subnet: w.subA, Status: "available", RequesterManaged: true, RequesterID: "amazon-elb",
		Description: "aws-K8S-i-0123456789abcdef0", Tags: map[string]string{"node.k8s.amazonaws.com/instance_id": "i-0123456789abcdef0"}})
	leaked := w.cniInterface(w.subA)
	start := w.now
	for i := range 4 {
		w.now = start.Add(time.Duration(i) * 7 * time.Hour)
		rep := w.run(true)
		if rep.ExitCode != report.ExitOK {
			t.Fatalf("run %d: exit %d\n%s", i, rep.ExitCode, text(rep))
		}
		want(t, rep, eniID(managed), engine.Keep, ec2interface.ClassRequesterManaged)
		if !w.ec2.Has(managed) {
			t.Fatalf("run %d deleted the requester-managed interface", i)
		}
	}
	if w.ec2.Has(leaked) {
		t.Fatal("the plain CNI leftover was not deleted: the runs proved nothing")
	}
	if n := w.ec2.Calls(ec2fake.ActionDeleteNetworkInterface); n < 1 || n > 2 { // see above: one transport retry
		t.Fatalf("%d DeleteNetworkInterface calls, want 1 (the leftover)", n)
	}
	if w.deletes(eniID(managed)) != 0 {
		t.Fatal("the audit log has a delete of the requester-managed interface")
	}
}

// Dry-run, the default, changes nothing: with a Job, a Pod and an interface
// due for deletion, the real binary without --apply, and a dry run through
// the app, make no mutating EC2 call and delete nothing in the apiserver.
func TestDryRunTouchesNoJobPodOrInterface(t *testing.T) {
	w := newEKSWorld(t)
	job := w.job(prodA, "done", "Complete", 3*day, nil)
	pod := w.pod(prodA, "bare", nil, corev1.PodSucceeded, 3*time.Hour, "")
	eni := w.cniInterface(w.subA)
	ids := map[string]string{w.jobID(prodA, "done"): string(job.UID), w.podID(prodA, "bare"): string(pod.UID), eniID(eni): ""}
	keys := make([]string, 0, len(ids))
	for id := range ids {
		keys = append(keys, id)
	}
	writeSeen(t, w.statePath(), w.now.Add(-7*time.Hour), func(id string) string { return ids[id] }, keys...)
	cfg := w.configPath()

	c := reclaimCmd(context.Background(), t, testenv.CronJob, nil, "run", "--config", cfg, "-o", "json")
	out, err := c.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run: %v", err)
	}
	var got struct {
		Plan struct {
			Decisions []struct {
				ID     string        `json:"id"`
				Action engine.Action `json:"action"`
				Reason string        `json:"reason"`
			} `json:"decisions"`
		} `json:"plan"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("json: %v (%v)\n%s", err, err, out)
	}
	due := 0
	for _, d := range got.Plan.Decisions {
		if _, ok := ids[d.ID]; ok {
			if d.Action != engine.Delete {
				t.Fatalf("%s: %s (%s), want delete", d.ID, d.Action, d.Reason)
			}
			due++
		}
	}
	if due != len(ids) {
		t.Fatalf("%d of %d decisions due\n%s", due, len(ids), out)
	}

	rep := w.run(false)
	for id := range ids {
		want(t, rep, id, engine.Delete, "")
	}
	if rep.Outcome != nil && rep.Outcome.Deleted != 0 {
		t.Fatalf("dry run outcome %+v", rep.Outcome)
	}
	if n := w.ec2.MutatingCalls(); n != 0 || w.ec2.TotalCalls() == 0 {
		t.Fatalf("EC2 calls %v: %d mutating", w.ec2.CallCounts(), n)
	}
	if !w.ec2.Has(eni) {
		t.Fatal("the interface was deleted by a dry run")
	}
	j, p := w.getJob(prodA, "done"), w.getPod(prodA, "bare")
	if j == nil || j.UID != job.UID || j.DeletionTimestamp != nil || p == nil || p.UID != pod.UID || p.DeletionTimestamp != nil {
		t.Fatal("a dry run deleted the Job or the Pod")
	}
	if len(w.audit()) != 0 {
		t.Fatalf("a dry run wrote the audit log: %+v", w.audit())
	}
}
