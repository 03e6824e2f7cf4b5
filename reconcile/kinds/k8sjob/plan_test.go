package k8sjob_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

const (
	grace      = 6 * time.Hour
	annotation = "reclaim.dev/retention"
)

func policy() k8sjob.Policy {
	return k8sjob.Policy{Policy: finished.Policy{Succeeded: 24 * time.Hour, Failed: 72 * time.Hour, Annotation: annotation,
		ProtectLabel: "reclaim-protect",
		Safety:       config.Safety{Grace: config.Duration(grace), Caps: config.Caps{MaxDeletesPerRun: 1000, MaxDeletePercent: 1, BreakerCandidates: 1000}}},
		KeepCronJobHistory: true, TTLGrace: time.Hour}
}

// job is a Job of namespace batch that finished ago before t0 (status
// Complete or Failed; "" : running), created an hour before it finished.
func job(name, uid, status string, ago time.Duration) inventory.Job {
	j := inventory.Job{Namespace: "batch", Name: name, UID: uid, Version: "10", Status: status, Created: t0.Add(-ago - time.Hour)}
	if status != "" {
		j.Finished = t0.Add(-ago)
	} else {
		j.Active = 1
	}
	return j
}

func cluster(name string, jobs ...inventory.Job) inventory.ClusterRefs {
	return inventory.ClusterRefs{Name: name, Complete: true, WorkloadsListed: true, Jobs: jobs, JobsVersion: "100"}
}

func snap(cs ...inventory.ClusterRefs) *inventory.View {
	return &inventory.View{TakenAt: t0, Clusters: cs}
}

func build(s *inventory.View, pol k8sjob.Policy, st engine.State, now time.Time) *engine.Plan {
	return enginetest.Build(s, []engine.Kind{k8sjob.New(pol, nil)}, st, now)
}

// twice plans at t0 and again once the grace has passed.
func twice(s *inventory.View, pol k8sjob.Policy) (first, second *engine.Plan) {
	first = build(s, pol, engine.NewState(), t0)
	return first, build(s, pol, first.State, t0.Add(grace+time.Minute))
}

// find returns the decision for the Job id, nil when there is none.
func find(p *engine.Plan, id string) *engine.Decision {
	for i := range p.Decisions {
		if p.Decisions[i].ID == id {
			return &p.Decisions[i]
		}
	}
	return nil
}

func ttl(s int32) *int32 { return &s }

func TestRetention(t *testing.T) {
	cases := []struct {
		name          string
		job           inventory.Job
		first, second engine.Action // "" : no decision
		class         string
	}{
		{"succeeded past retention", job("done", "u1", "Complete", 48*time.Hour), engine.Mark, engine.Delete, k8sjob.ClassPast},
		{"succeeded exactly at retention", job("edge", "u1", "Complete", 24*time.Hour), engine.Mark, engine.Delete, k8sjob.ClassPast},
		{"succeeded inside retention", job("young", "u1", "Complete", 20*time.Hour), engine.Keep, engine.Mark, finished.ClassRetained},
		{"failed inside its longer retention", job("failed", "u1", "Failed", 48*time.Hour), engine.Keep, engine.Keep, finished.ClassRetained},
		{"failed past its retention", job("failed-old", "u1", "Failed", 100*time.Hour), engine.Mark, engine.Delete, k8sjob.ClassPast},
		{"ttl not past due", func() inventory.Job {
			j := job("ttl", "u1", "Complete", 10*24*time.Hour) // far past retention: the TTL wins anyway
			j.Finished, j.TTL = t0.Add(-2*time.Hour), ttl(86400)
			return j
		}(), engine.Keep, engine.Keep, k8sjob.ClassTTL},
		{"ttl past due but inside ttlGrace", func() inventory.Job {
			j := job("ttl-late", "u1", "Complete", 90*time.Minute)
			j.TTL = ttl(3600) // due 30m ago, TTLGrace 1h
			return j
		}(), engine.Keep, engine.Mark, k8sjob.ClassTTL},
		{"ttl past due + ttlGrace", func() inventory.Job {
			j := job("ttl-stuck", "u1", "Complete", 3*time.Hour)
			j.TTL = ttl(3600)
			return j
		}(), engine.Mark, engine.Delete, k8sjob.ClassPast},
		{"ttl past due + ttlGrace even inside retention", func() inventory.Job {
			j := job("ttl-stuck-young", "u1", "Failed", 3*time.Hour)
			j.TTL = ttl(60)
			return j
		}(), engine.Mark, engine.Delete, k8sjob.ClassPast},
		{"annotation never", func() inventory.Job {
			j := job("never", "u1", "Complete", 100*24*time.Hour)
			j.Retention = "never"
			return j
		}(), engine.Keep, engine.Keep, finished.ClassNever},
		{"annotation malformed", func() inventory.Job {
			j := job("typo", "u1", "Complete", 100*24*time.Hour)
			j.Retention = "30 days"
			return j
		}(), engine.Keep, engine.Keep, finished.ClassBadRetain},
		{"annotation longer", func() inventory.Job {
			j := job("longer", "u1", "Complete", 48*time.Hour)
			j.Retention = "7d"
			return j
		}(), engine.Keep, engine.Keep, finished.ClassRetained},
		{"annotation shorter", func() inventory.Job {
			j := job("shorter", "u1", "Failed", 3*time.Hour)
			j.Retention = "2h"
			return j
		}(), engine.Mark, engine.Delete, k8sjob.ClassPast},
		{"protected label", func() inventory.Job {
			j := job("protected", "u1", "Complete", 100*24*time.Hour)
			j.Protected = true
			return j
		}(), engine.Keep, engine.Keep, finished.ClassProtected},
		{"terminating", func() inventory.Job {
			j := job("going", "u1", "Complete", 100*24*time.Hour)
			j.Terminating = true
			return j
		}(), engine.Keep, engine.Keep, finished.ClassDeleting},
		{"no finish time", func() inventory.Job {
			j := job("notime", "u1", "Complete", 100*24*time.Hour)
			j.Finished = time.Time{}
			return j
		}(), engine.Keep, engine.Keep, finished.ClassNoFinished},
		{"running Job", job("running", "u1", "", 0), "", "", ""},
		{"running Job created long ago", func() inventory.Job {
			j := job("slow", "u1", "", 0)
			j.Created = t0.Add(-100 * 24 * time.Hour)
			return j
		}(), "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first, second := twice(snap(cluster("a", tc.job)), policy())
			id := k8sjob.ID("a", "batch", tc.job.Name)
			for i, c := range []struct {
				p    *engine.Plan
				want engine.Action
			}{{first, tc.first}, {second, tc.second}} {
				d := find(c.p, id)
				if tc.first == "" {
					if d != nil {
						t.Fatalf("run %d: want no decision, got %+v", i+1, d)
					}
					continue
				}
				if d == nil {
					t.Fatalf("run %d: no decision", i+1)
				}
				if d.Action != c.want || d.Held {
					t.Fatalf("run %d: %s %q (held %v), want %s", i+1, d.Action, d.Why(), d.Held, c.want)
				}
				if i == 0 && d.Class != tc.class {
					t.Fatalf("class %q, want %q (%s)", d.Class, tc.class, d.Why())
				}
				if det := finished.DetailOf(d); det.UID != "u1" || det.Cluster != "a" || det.Namespace != "batch" || det.Status != tc.job.Status || det.Retention != tc.job.Retention {
					t.Fatalf("detail %+v", det)
				}
			}
			if d := find(second, id); d != nil && d.Action == engine.Delete {
				// Terminal: its clock is the cluster's first complete read, not an entry of its own.
				if _, ok := second.State.Resources[id]; ok || len(second.State.Reads) != 2 {
					t.Fatalf("clock %+v, reads %v", second.State.Resources[id], second.State.Reads)
				}
			}
		})
	}
}

// Out-of-scope namespaces and labels get no decision at all.
func TestScope(t *testing.T) {
	pol := policy()
	re, err := config.GlobRegexp("kube-*")
	if err != nil {
		t.Fatal(err)
	}
	pol.Exclude = []*regexp.Regexp{re}
	pol.Selector = labels.SelectorFromSet(labels.Set{"app": "batch"})
	out := job("other", "u2", "Complete", 48*time.Hour)
	out.Namespace, out.Labels = "kube-system", map[string]string{"app": "batch"}
	unlabelled := job("plain", "u3", "Complete", 48*time.Hour)
	in := job("mine", "u1", "Complete", 48*time.Hour)
	in.Labels = map[string]string{"app": "batch"}
	p := build(snap(cluster("a", in, out, unlabelled)), pol, engine.NewState(), t0)
	if len(p.Decisions) != 1 {
		t.Fatalf("out of scope Jobs have decisions: %+v", p.Decisions)
	}
	if d := find(p, k8sjob.ID("a", "batch", "mine")); d == nil || d.Action != engine.Mark {
		t.Fatalf("%+v", d)
	}
}

func TestCronJobHistory(t *testing.T) {
	cron := &inventory.Owner{Kind: "CronJob", Name: "nightly", UID: "cj1"}
	var jobs []inventory.Job
	// five succeeded Jobs, nightly-1 the oldest, all past their retention
	for i := 1; i <= 5; i++ {
		j := job(fmt.Sprintf("nightly-%d", i), fmt.Sprintf("s%d", i), "Complete", time.Duration(10-i)*24*time.Hour)
		j.CronJob = cron
		jobs = append(jobs, j)
	}
	// three failed ones, past the failed retention
	for i := 1; i <= 3; i++ {
		j := job(fmt.Sprintf("nightly-f%d", i), fmt.Sprintf("f%d", i), "Failed", time.Duration(20-i)*24*time.Hour)
		j.CronJob = cron
		jobs = append(jobs, j)
	}
	// a running Job of the CronJob takes no slot
	r := job("nightly-6", "s6", "", 0)
	r.CronJob = cron
	jobs = append(jobs, r)
	// another CronJob not listed (deleted, or not served): defaults 3 and 1
	other := &inventory.Owner{Kind: "CronJob", Name: "hourly", UID: "cj2"}
	for i := 1; i <= 4; i++ {
		j := job(fmt.Sprintf("hourly-%d", i), fmt.Sprintf("h%d", i), "Complete", time.Duration(10-i)*24*time.Hour)
		j.CronJob = other
		jobs = append(jobs, j)
	}
	for i := 1; i <= 2; i++ {
		j := job(fmt.Sprintf("hourly-f%d", i), fmt.Sprintf("hf%d", i), "Failed", time.Duration(20-i)*24*time.Hour)
		j.CronJob = other
		jobs = append(jobs, j)
	}
	cases := []struct {
		name          string
		keepHistory   bool
		limits        *inventory.CronJob
		kept, deleted []string
	}{
		{"limits 3 and 1", true, &inventory.CronJob{Namespace: "batch", Name: "nightly", UID: "cj1", SuccessfulLimit: 3, FailedLimit: 1},
			[]string{"nightly-3", "nightly-4", "nightly-5", "nightly-f3", "hourly-2", "hourly-3", "hourly-4", "hourly-f2"},
			[]string{"nightly-1", "nightly-2", "nightly-f1", "nightly-f2", "hourly-1", "hourly-f1"}},
		{"limits 1 and 0", true, &inventory.CronJob{Namespace: "batch", Name: "nightly", UID: "cj1", SuccessfulLimit: 1, FailedLimit: 0},
			[]string{"nightly-5", "hourly-2", "hourly-3", "hourly-4", "hourly-f2"},
			[]string{"nightly-1", "nightly-2", "nightly-3", "nightly-4", "nightly-f1", "nightly-f2", "nightly-f3", "hourly-1", "hourly-f1"}},
		{"keepCronJobHistory false", false, &inventory.CronJob{Namespace: "batch", Name: "nightly", UID: "cj1", SuccessfulLimit: 3, FailedLimit: 1},
			nil,
			[]string{"nightly-1", "nightly-2", "nightly-3", "nightly-4", "nightly-5", "nightly-f1", "nightly-f2", "nightly-f3", "hourly-1", "hourly-2", "hourly-3", "hourly-4", "hourly-f1", "hourly-f2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster("a", jobs...)
			c.CronJobs = []inventory.CronJob{*tc.limits}
			pol := policy()
			pol.KeepCronJobHistory = tc.keepHistory
			_, p := twice(snap(c), pol)
			for _, n := range tc.kept {
				d := find(p, k8sjob.ID("a", "batch", n))
				if d == nil || d.Action != engine.Keep || d.Class != k8sjob.ClassHistory {
					t.Errorf("%s: want kept as history, got %+v", n, d)
				}
			}
			for _, n := range tc.deleted {
				d := find(p, k8sjob.ID("a", "batch", n))
				if d == nil || d.Action != engine.Delete {
					t.Errorf("%s: want deleted, got %+v", n, d)
					continue
				}
				if det := finished.DetailOf(d); !strings.HasPrefix(n, det.CronJob) {
					t.Errorf("%s: cronJob %q", n, det.CronJob)
				}
			}
			if n := len(tc.kept) + len(tc.deleted); len(p.Decisions) != n {
				t.Errorf("%d decisions, want %d", len(p.Decisions), n)
			}
		})
	}
}

// A Job recreated under the same name is a new Job: its clock starts over.
func TestRecreatedJobRestartsClock(t *testing.T) {
	pol := policy()
	id := k8sjob.ID("a", "batch", "migrate")
	p1 := build(snap(cluster("a", job("migrate", "u1", "Complete", 48*time.Hour))), pol, engine.NewState(), t0)
	if d := find(p1, id); d.Action != engine.Mark {
		t.Fatalf("%+v", d)
	}
	// Recreated by then (and already past its retention again, by its own
	// finish time): it was made after the first run, so that run did not see it.
	at := t0.Add(grace + time.Hour)
	u2 := job("migrate", "u2", "Complete", 30*time.Hour)
	u2.Created, u2.Version = t0.Add(time.Minute), "150"
	a := cluster("a", u2)
	a.JobsVersion = "300"
	s2 := snap(a)
	p2 := build(s2, pol, p1.State, at)
	d := find(p2, id)
	if d.Action != engine.Mark || d.OrphanSince == nil || !d.OrphanSince.Equal(at) {
		t.Fatalf("recreated Job on first sight: %s since %v (%s)", d.Action, d.OrphanSince, d.Why())
	}
	if e, ok := p2.State.Resources[id]; ok {
		t.Fatalf("a terminal Job has a clock of its own: %+v", e)
	}
	if d := find(build(s2, pol, p2.State, at.Add(grace)), id); d.Action != engine.Delete {
		t.Fatalf("after its own grace: %+v", d)
	}
}

// An incomplete cluster holds its Jobs, and its Jobs alone.
func TestIncompleteClusterHolds(t *testing.T) {
	a := cluster("a", job("done", "ua", "Complete", 48*time.Hour))
	a.Complete, a.Problems = false, []string{"jobs: page 2 failed"}
	b := cluster("b", job("done", "ub", "Complete", 48*time.Hour))
	// Listed completely, but not asked for workloads: its (empty) Jobs prove nothing.
	c := cluster("c", job("done", "uc", "Complete", 48*time.Hour))
	c.WorkloadsListed = false
	s := snap(a, b, c)
	st := engine.NewState()
	var p *engine.Plan
	for _, at := range []time.Time{t0, t0.Add(grace + time.Minute), t0.Add(10 * grace)} {
		p = build(s, policy(), st, at)
		st = p.State
		for _, cl := range []string{"a", "c"} {
			d := find(p, k8sjob.ID(cl, "batch", "done"))
			if d.Action != engine.Mark || !d.Held || !strings.Contains(d.Why(), "held") {
				t.Fatalf("%s at %s: %s held %v %q", cl, at, d.Action, d.Held, d.Why())
			}
		}
	}
	if d := find(p, k8sjob.ID("b", "batch", "done")); d.Action != engine.Delete {
		t.Fatalf("complete cluster's Job: %+v", d)
	}
	if d := find(p, k8sjob.ID("c", "batch", "done")); !strings.Contains(d.Why(), "not asked") {
		t.Fatalf("%q", d.Why())
	}
	if !p.Incomplete || len(p.Blocked) == 0 {
		t.Fatalf("incomplete %v, blocked %v", p.Incomplete, p.Blocked)
	}
}

// A pending delete is confirmed when the listing no longer shows the Job, or
// shows a new one under its name; an incomplete listing settles nothing.
func TestPendingSettles(t *testing.T) {
	id := k8sjob.ID("a", "batch", "done")
	cases := []struct {
		name               string
		c                  inventory.ClusterRefs
		confirmed, pending bool
	}{
		{"gone", cluster("a"), true, false},
		{"recreated", cluster("a", job("done", "u2", "", 0)), true, false},
		{"still there: planned again", cluster("a", job("done", "u1", "Complete", 48*time.Hour)), false, false},
		{"cluster incomplete", func() inventory.ClusterRefs { c := cluster("a"); c.Complete = false; return c }(), false, true},
		{"workloads not listed", func() inventory.ClusterRefs { c := cluster("a"); c.WorkloadsListed = false; return c }(), false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := engine.NewState()
			st.Seen(id, "u1", t0.Add(-10*time.Hour))
			st.Pending[id] = engine.Pending{Kind: k8sjob.Name, Identity: "u1", Reason: "r"}
			p := build(snap(tc.c), policy(), st, t0)
			if got := len(p.Confirmed) == 1; got != tc.confirmed {
				t.Fatalf("confirmed %v, want %v", p.Confirmed, tc.confirmed)
			}
			if _, pending := p.State.Pending[id]; pending != tc.pending {
				t.Fatalf("pending %v, want %v", p.State.Pending, tc.pending)
			}
		})
	}
}

// Frees counts the addresses its pods hold; the view adds them up.
func TestFreesIPs(t *testing.T) {
	j := job("done", "u1", "Complete", 48*time.Hour)
	c := cluster("a", j, job("other", "u2", "Complete", 48*time.Hour))
	owner := &inventory.Owner{Kind: "Job", Name: "done", UID: "u1"}
	c.Pods = []inventory.Pod{
		{Namespace: "batch", Name: "done-1", UID: "p1", Phase: "Succeeded", IPs: []string{"10.0.0.1"}, Owner: owner},
		{Namespace: "batch", Name: "done-2", UID: "p2", Phase: "Failed", IPs: []string{"10.0.0.2", "10.0.0.5"}, Owner: owner},
		{Namespace: "batch", Name: "done-3", UID: "p3", Phase: "Failed", IPs: []string{"10.0.0.3"}, Owner: owner, Terminating: true},
		{Namespace: "batch", Name: "rs-1", UID: "p4", Phase: "Running", IPs: []string{"10.0.0.4"},
			Owner: &inventory.Owner{Kind: "ReplicaSet", Name: "rs", UID: "u1"}},
	}
	first, second := twice(snap(c), policy())
	d := find(first, k8sjob.ID("a", "batch", "done"))
	if d.Frees.Of(finished.Addresses) != 3 || finished.DetailOf(d).IPs != 3 || !strings.Contains(d.Why(), "3 subnet address") {
		t.Fatalf("frees %+v, detail %+v, %q", d.Frees, finished.DetailOf(d), d.Why())
	}
	if d := find(first, k8sjob.ID("a", "batch", "other")); d.Frees.Of(finished.Addresses) != 0 {
		t.Fatalf("%+v", d.Frees)
	}
	found := false
	for _, s := range second.Summaries {
		found = found || s == "Jobs delete 2 (frees 3 subnet addresses), wait 0"
	}
	if !found {
		t.Fatalf("summaries %q", second.Summaries)
	}
	counts := k8sjob.CountsOf(second)
	if len(counts) != 1 || counts[0] != (finished.Count{Cluster: "a", Namespace: "batch", Finished: 2, Succeeded: 2, PastRetention: 2, Delete: 2}) {
		t.Fatalf("counts %+v", counts)
	}
}

// The caps and the breaker are the engine's, with the jobs section's limits.
func TestCapsAndBreaker(t *testing.T) {
	var jobs []inventory.Job
	for i := range 10 {
		jobs = append(jobs, job(fmt.Sprintf("j%d", i), fmt.Sprintf("u%d", i), "Complete", 48*time.Hour))
	}
	pol := policy()
	pol.MaxDeletesPerRun = 4
	_, p := twice(snap(cluster("a", jobs...)), pol)
	if n := p.Count(k8sjob.Name, engine.Delete); n != 4 {
		t.Fatalf("cap: %d deletes", n)
	}
	pol = policy()
	pol.BreakerCandidates = 9
	if _, p = twice(snap(cluster("a", jobs...)), pol); p.Count(k8sjob.Name, engine.Delete) != 0 || !p.BreakerTripped {
		t.Fatalf("breaker: %d deletes", p.Count(k8sjob.Name, engine.Delete))
	}
	if d := enginetest.DecisionFor(t, p, "j0"); !d.Held || !strings.Contains(d.Why(), "breaker tripped") || !strings.Contains(strings.Join(p.Blocked, "\n"), "jobs.breakerCandidates") {
		t.Fatalf("%+v", d)
	}
}

// A CronJob's Job out of its history keeps no clock either: it has been a
// candidate since the newer Jobs that pushed it out finished, under the
// CronJob's limits. Changing the limits starts the clocks of that CronJob's
// Jobs anew (the limits are in the listing's name): the two pushed out now
// are not deleted on the strength of the earlier reads.
func TestCronJobHistoryClocks(t *testing.T) {
	pol := policy()
	owner := &inventory.Owner{Kind: "CronJob", Name: "nightly", UID: "cj"}
	var jobs []inventory.Job
	for i := range 5 { // nightly-0 the oldest; all finished days ago
		j := job(fmt.Sprintf("nightly-%d", i), fmt.Sprintf("u%d", i), "Complete", time.Duration(10-i)*24*time.Hour)
		j.CronJob = owner
		jobs = append(jobs, j)
	}
	c := cluster("a", jobs...)
	c.CronJobs = []inventory.CronJob{{Namespace: "batch", Name: "nightly", UID: "cj", SuccessfulLimit: 3, FailedLimit: 1}}
	p := build(snap(c), pol, engine.NewState(), t0)
	for i, want := range []engine.Action{engine.Mark, engine.Mark, engine.Keep, engine.Keep, engine.Keep} {
		if d := find(p, k8sjob.ID("a", "batch", fmt.Sprintf("nightly-%d", i))); d == nil || d.Action != want {
			t.Fatalf("nightly-%d: %+v, want %s", i, d, want)
		}
	}
	if len(p.State.Resources) != 0 {
		t.Fatalf("clocks %v", p.State.Resources)
	}
	// The limit lowered to 1: nightly-2 and -3 leave the history now.
	c.CronJobs[0].SuccessfulLimit = 1
	at := t0.Add(time.Hour)
	p = build(snap(c), pol, p.State, at)
	for _, tc := range []struct {
		at   time.Time
		want engine.Action
	}{{at.Add(grace - time.Minute), engine.Mark}, {at.Add(grace), engine.Delete}} {
		p := build(snap(c), pol, p.State, tc.at)
		for i := range 4 {
			if d := find(p, k8sjob.ID("a", "batch", fmt.Sprintf("nightly-%d", i))); d == nil || d.Action != tc.want || !d.OrphanSince.Equal(at) {
				t.Fatalf("after lowering the limit, at %v nightly-%d: %+v, want %s since %v", tc.at, i, d, tc.want, at)
			}
		}
	}
}
