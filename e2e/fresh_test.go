package e2e

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/daemon"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

// Uses made in a cluster after its agent's last publish never lose their
// resource to a record older than fleet.records.deleteMaxAge: the agents
// publish 30 minutes before the deleter runs (past grace, --apply); in
// between, a rollback makes a Deployment in prod-a run an older image
// again, a new CronJob there names another, and a static PV in prod-b
// re-binds a retained disk. The stale records still report, but hold
// every delete, each saying why; once the agents republish, the three are
// kept as in use and the deleter deletes what nothing uses.
func TestUsesMadeSinceTheLastPublishAreKept(t *testing.T) {
	w := newAgentWorld(t)
	t.Setenv("KUBECONFIG", "")
	ctx := context.Background()
	img := w.images
	retained := w.gkeDisk(zoneA, "retained")
	name := w.prefix + "-web"
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	tmpl := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel.MatchLabels}, Spec: podSpec(image)}
	}
	deployments := prodA.Client.AppsV1().Deployments(w.ns)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl(img.ref("@" + img.digest[4]))}}
	create(t, prodA, dep, deployments.Create, deployments.Delete, name)
	rolledBack, scheduled := img.digest[2], img.digest[3]
	imageID := func(d string) string { return ecrimage.ID(repoKey(img.repo), d) }

	// The clocks start 7 hours ago, on records of then; the agents last
	// publish 30 minutes ago.
	start := w.now
	w.now = start.Add(-7 * time.Hour)
	w.agents()
	want(t, w.deleter(false), retained, engine.Mark, "")
	w.now = start.Add(-30 * time.Minute)
	w.agents()

	// Since: (a) a rollback, (b) a new CronJob, (c) a static PV.
	d, err := deployments.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template = tmpl(img.ref("@" + rolledBack))
	if _, err := deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cjTmpl := tmpl(img.ref("@" + scheduled))
	cjTmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	cronJobs := prodA.Client.BatchV1().CronJobs(w.ns)
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: cjTmpl}}}}
	create(t, prodA, cj, cronJobs.Create, cronJobs.Delete, name)
	(&world{t: t, prefix: w.prefix}).pv(prodB, retained)

	w.now = start
	rep := w.deleter(true)
	out := text(rep)
	if !w.gce.HasDisk(retained) || !img.ecr.Has(account, img.repo, rolledBack) || !img.ecr.Has(account, img.repo, scheduled) {
		t.Fatalf("on records 30m old: re-bound disk left %v, rolled-back image left %v, scheduled image left %v; want all kept\n%s",
			w.gce.HasDisk(retained), img.ecr.Has(account, img.repo, rolledBack), img.ecr.Has(account, img.repo, scheduled), out)
	}
	if rep.ExitCode != report.ExitIncomplete {
		t.Errorf("on records 30m old: exit %d, want %d (deletes held back)", rep.ExitCode, report.ExitIncomplete)
	}
	if got := w.gce.MutatingCalls() + img.ecr.MutatingCalls(); got != 0 {
		t.Fatalf("on records 30m old the deleter made %d mutating calls, want none\n%s", got, out)
	}
	if dd := want(t, rep, retained, engine.Mark, ""); !dd.Held || !strings.Contains(dd.Why(), "more than fleet.records.deleteMaxAge 12m") {
		t.Fatalf("the re-bound disk: %+v, want held by deleteMaxAge", dd)
	}
	for _, say := range []string{"was read 30m ago", "more than fleet.records.deleteMaxAge 12m", "is its agent running in watch mode", "no delete that cluster prod-a could object to"} {
		if !strings.Contains(out, say) {
			t.Errorf("the report does not say %q:\n%s", say, out)
		}
	}
	for _, s := range rep.Plan.Sources {
		if s.Kind == "cluster" && !s.Complete {
			t.Errorf("cluster %s incomplete: a record within maxAge still reports (%v)", s.Name, s.Problems)
		}
	}

	// The agents republish: the three are in use, and what nothing uses goes.
	w.agents()
	rep = w.deleter(true)
	out = text(rep)
	if rep.ExitCode != report.ExitOK {
		t.Errorf("on fresh records: exit %d, want 0\n%s", rep.ExitCode, out)
	}
	if dd := want(t, rep, retained, engine.Keep, ""); !strings.Contains(dd.Why(), "prod-b") {
		t.Errorf("the re-bound disk: %s, want kept naming prod-b's PV", dd.Why())
	}
	for what, d := range map[string]string{"Deployment/" + name: rolledBack, "CronJob/" + name: scheduled} {
		if dd := decision(t, rep, imageID(d)); dd.Action != engine.Keep || !strings.Contains(out, "prod-a/"+w.ns+"/"+what) {
			t.Errorf("the image of %s: %s (%s), or the report does not name it\n%s", what, dd.Action, dd.Why(), out)
		}
	}
	if !w.gce.HasDisk(retained) || !img.ecr.Has(account, img.repo, rolledBack) || !img.ecr.Has(account, img.repo, scheduled) {
		t.Fatalf("on fresh records: re-bound disk left %v, rolled-back image left %v, scheduled image left %v; want all kept",
			w.gce.HasDisk(retained), img.ecr.Has(account, img.repo, rolledBack), img.ecr.Has(account, img.repo, scheduled))
	}
	if img.ecr.Has(account, img.repo, img.digest[1]) {
		t.Fatalf("on fresh records, an image nothing uses was not trimmed\n%s", out)
	}
}

// A watching agent (reclaim daemon --agent, in process as the daemon runs
// it): a rollback in prod-a reaches its record within a minute, with no
// heartbeat due, and the deleter keeps the image the rollback runs.
func TestAWatchingAgentPublishesARollbackWithinAMinute(t *testing.T) {
	w := newAgentWorld(t)
	t.Setenv("KUBECONFIG", "")
	ctx := context.Background()
	img := w.images
	name := w.prefix + "-web"
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	tmpl := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel.MatchLabels}, Spec: podSpec(image)}
	}
	deployments := prodA.Client.AppsV1().Deployments(w.ns)
	create(t, prodA, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl(img.ref("@" + img.digest[4]))}}, deployments.Create, deployments.Delete, name)
	w.agent(prodB, "prod-b", placeB, "agent-b", false)

	cfg, err := config.Load(w.agentConfig(prodA, "prod-a", placeA, "agent-a"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := app.New(ctx, cfg, app.Deps{Agent: true, OutsideCluster: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// watching runs the agent as reclaim daemon --agent does, until stop.
	watching := func(heartbeat, debounce time.Duration) (stop func()) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		d, err := daemon.New(r, config.DefaultDaemon(), daemon.Options{Kinds: app.KindNames(), Gauges: app.Gauges(), Listener: ln,
			Watch: r.Watch, Heartbeat: heartbeat, Debounce: debounce})
		if err != nil {
			t.Fatal(err)
		}
		dctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- d.Run(dctx) }()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("daemon: %v", err)
			}
		}
	}
	stop := watching(time.Hour, daemon.DefaultDebounce)
	keyA := keyOf(placeA, "prod-a")
	record := func() (time.Time, string) {
		body, err := w.admin.Get(ctx, keyA)
		if err != nil {
			return time.Time{}, ""
		}
		rec, err := published.Decode(bytes.NewReader(body), nil)
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, u := range rec.Refs.Images {
			refs = append(refs, u.Ref.Digest)
		}
		return rec.TakenAt, strings.Join(refs, " ")
	}
	deadline := time.Now().Add(2 * time.Minute)
	first, _ := record()
	for ; first.IsZero(); first, _ = record() {
		if time.Now().After(deadline) {
			t.Fatal("the watching agent published no first record within 2 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}

	dep, err := deployments.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template = tmpl(img.ref("@" + img.digest[2]))
	if _, err := deployments.Update(ctx, dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rolledBack := time.Now()
	for {
		if at, refs := record(); at.After(first) && strings.Contains(refs, img.digest[2]) {
			t.Logf("the rollback reached the record %s after it was made", time.Since(rolledBack).Round(time.Millisecond))
			break
		}
		if time.Since(rolledBack) > time.Minute {
			t.Fatal("the rollback did not reach the record within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	rep := runConfig(t, w.deleterConfig(), time.Now().UTC(), true)
	if dd := decision(t, rep, ecrimage.ID(repoKey(img.repo), img.digest[2])); dd.Action != engine.Keep || !img.ecr.Has(account, img.repo, img.digest[2]) {
		t.Fatalf("the image the rollback runs: %s (%s)\n%s", dd.Action, dd.Why(), text(rep))
	}

	// A quiet cluster heartbeats: with no change (and a debounce of an
	// hour), the record is taken at the term's start and again every
	// heartbeat.
	stop = watching(2*time.Second, time.Hour)
	defer stop()
	last, _ := record()
	for beats := 0; beats < 3; {
		if at, _ := record(); at.After(last) {
			beats, last = beats+1, at
		}
		if time.Since(rolledBack) > 2*time.Minute {
			t.Fatal("a quiet cluster's watching agent did not publish at its start and heartbeat twice")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
