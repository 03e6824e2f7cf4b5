package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/state"
)

// Grace: --apply deletes exactly the eligible disks, and only once the orphan
// has been seen for the whole grace period.
func TestApplyDeletesEligibleAfterGraceOnly(t *testing.T) {
	w := newWorld(t)
	orphan := w.orphan(zoneA, "orphan")
	onlyB := w.orphan(zoneA, "only-in-prod-b")
	w.pv(prodB, onlyB)
	inTree := w.orphan(zoneB, "in-tree-unspecified")
	w.pv(prodA, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/"+w.name("in-tree-unspecified"))
	attached := w.gce.AddDisk(project, gcefake.Disk{Zone: zoneA, Name: w.name("attached"), SizeGB: 20, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": ""}, Created: w.now.Add(-90 * 24 * time.Hour),
		Users: []string{"https://www.googleapis.com/compute/v1/projects/e2e-project/zones/asia-northeast1-a/instances/node-1"}})
	protected := w.gce.AddDisk(project, gcefake.Disk{Zone: zoneA, Name: w.name("protected"), SizeGB: 20, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": "", "reclaim-protect": "true"}, Created: w.now.Add(-90 * 24 * time.Hour)})
	handMade := w.gce.AddDisk(project, gcefake.Disk{Zone: zoneA, Name: w.name("hand-made"), SizeGB: 20, Type: "pd-standard",
		Created: w.now.Add(-90 * 24 * time.Hour)})

	start := w.now
	for _, step := range []time.Duration{0, 3 * time.Hour, 5*time.Hour + 59*time.Minute} {
		w.now = start.Add(step)
		rep := w.run(true)
		if rep.ExitCode != report.ExitOK {
			t.Fatalf("at +%s: exit %d\n%s", step, rep.ExitCode, text(rep))
		}
		if n := w.gce.MutatingCalls(); n != 0 {
			t.Fatalf("at +%s (before grace): %d mutating calls", step, n)
		}
		if d := decision(t, rep, orphan); d.Action != engine.Mark || !d.OrphanSince.Equal(start) {
			t.Fatalf("at +%s: %+v", step, d)
		}
	}
	w.now = start.Add(6 * time.Hour)
	rep := w.run(true)
	if rep.ExitCode != report.ExitOK || rep.Outcome.Deleted != 1 {
		t.Fatalf("after grace: exit %d, outcome %+v\n%s", rep.ExitCode, rep.Outcome, text(rep))
	}
	if w.gce.HasDisk(orphan) {
		t.Fatal("eligible orphan still exists after grace")
	}
	for _, k := range []string{onlyB, inTree, attached, protected, handMade} {
		if !w.gce.HasDisk(k) {
			t.Fatalf("%s was deleted", k)
		}
	}
	if got := decision(t, rep, onlyB).Why(); !strings.Contains(got, "in cluster prod-b") {
		t.Fatalf("reason for a disk only prod-b references: %q", got)
	}
	if n := w.gce.Calls(gcefake.MethodDisksDelete); n != 1 {
		t.Fatalf("%d delete calls, want 1", n)
	}
	recs := w.audit()
	if len(recs) != 1 || recs[0].ID != orphan || recs[0].Result != "deleted" {
		t.Fatalf("audit: %+v", recs)
	}
	// Run again: nothing more to do, nothing written twice.
	w.now = w.now.Add(time.Hour)
	w.run(true)
	if len(w.audit()) != 1 || w.gce.Calls(gcefake.MethodDisksDelete) != 1 {
		t.Fatal("a second run deleted or audited again")
	}
}

// Fail closed: prod-b cannot be reached, so nothing it could reference is
// deleted, and the report says why.
func TestUnreachableClusterDeletesNothing(t *testing.T) {
	w := newWorld(t)
	kc, err := testenv.UnreachableKubeconfig(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.prodBKubeconfig, w.prodBContext = kc, "unreachable"
	orphan := w.orphan(zoneA, "orphan")
	w.seen(w.now.Add(-48*time.Hour), orphan)

	rep := w.run(true)
	if rep.ExitCode != report.ExitIncomplete {
		t.Fatalf("exit %d, want %d", rep.ExitCode, report.ExitIncomplete)
	}
	if w.gce.MutatingCalls() != 0 || !w.gce.HasDisk(orphan) {
		t.Fatal("deleted while a cluster was unreachable")
	}
	d := decision(t, rep, orphan)
	if d.Action != engine.Mark || !strings.Contains(d.Why(), "cluster prod-b could not be read completely") {
		t.Fatalf("decision: %+v", d)
	}
	out := text(rep)
	for _, want := range []string{"cluster prod-b", "INCOMPLETE", "connection refused", "no disk it could reference is deleted this run"} {
		if !strings.Contains(out, want) {
			t.Fatalf("report lacks %q:\n%s", want, out)
		}
	}
}

// Fail closed: RBAC forbids listing PVs in prod-b.
func TestForbiddenPVsDeleteNothing(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	// Everything but PersistentVolumes.
	err := prodB.Grant(ctx, testenv.RestrictedUser, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "persistentvolumeclaims"}, Verbs: []string{"list"}},
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"list"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.prodBContext = "restricted"
	orphan := w.orphan(zoneA, "orphan")
	w.seen(w.now.Add(-48*time.Hour), orphan)

	rep := w.run(true)
	if rep.ExitCode != report.ExitIncomplete || w.gce.MutatingCalls() != 0 || !w.gce.HasDisk(orphan) {
		t.Fatalf("exit %d, mutating calls %d\n%s", rep.ExitCode, w.gce.MutatingCalls(), text(rep))
	}
	if out := text(rep); !strings.Contains(out, "list persistentvolumes: forbidden — the service account needs list on persistentvolumes") {
		t.Fatalf("report does not say what to fix:\n%s", out)
	}
}

// A zone that answers with a warning is unknown, not empty: its disks keep
// their clocks and the run says it was incomplete.
func TestZoneWarningMeansUnknown(t *testing.T) {
	w := newWorld(t)
	hidden := w.orphan(zoneB, "in-unreachable-zone")
	visible := w.orphan(zoneA, "visible")
	w.seen(w.now.Add(-2*time.Hour), hidden)
	w.gce.SetScopeWarning(project, "zones/"+zoneB, "UNREACHABLE", "The resource 'projects/e2e-project/zones/asia-northeast1-b' is not ready")

	rep := w.run(false)
	if rep.ExitCode != report.ExitIncomplete {
		t.Fatalf("exit %d", rep.ExitCode)
	}
	for _, d := range rep.Plan.Decisions {
		if d.ID == hidden {
			t.Fatal("a disk of an unreachable zone was listed")
		}
	}
	decision(t, rep, visible)
	st, err := (&state.FileStore{Path: w.statePath()}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := st.Resources[hidden]; !ok || !e.FirstSeen.Equal(w.now.Add(-2*time.Hour)) {
		t.Fatalf("the unreachable zone's disk lost its clock: %+v", st.Resources)
	}
	if out := text(rep); !strings.Contains(out, "zones/asia-northeast1-b: UNREACHABLE") {
		t.Fatalf("report does not name the unknown zone:\n%s", out)
	}
}

// Rate limiting: 429s from the API are retried and the run completes.
func TestRateLimitIsRetried(t *testing.T) {
	w := newWorld(t)
	for i := 0; i < 5; i++ {
		w.orphan(zoneA, "d"+string(rune('a'+i)))
	}
	w.gce.FailNext(gcefake.MethodDisksAggregatedList, 2, 429, "rateLimitExceeded")
	w.gce.FailNext(gcefake.MethodRegionsGet, 1, 429, "rateLimitExceeded")
	rep := w.run(false)
	if rep.ExitCode != report.ExitOK {
		t.Fatalf("exit %d\n%s", rep.ExitCode, text(rep))
	}
	if got := rep.Plan.Count(gcedisk.Name, engine.Mark); got != 5 {
		t.Fatalf("%d disks planned, want 5", got)
	}
	if n := w.gce.Calls(gcefake.MethodDisksAggregatedList); n != 3 {
		t.Fatalf("%d aggregatedList calls, want 3 (2 throttled + 1)", n)
	}
	for _, h := range gcedisk.HeadroomOf(rep.Plan) {
		if h.Metric == "SSD_TOTAL_GB" && (!h.Known || h.Usage != 1400) {
			t.Fatalf("quota after a throttled regions.get: %+v", h)
		}
	}
}

// Two kinds of evidence: a disk attached between plan and delete is kept.
func TestAttachedBetweenPlanAndDeleteIsKept(t *testing.T) {
	var attachOnce sync.Once
	var srv *gcefake.Server
	var key string
	w := newWorld(t, gcefake.Options{OnRequest: func(method string) *gcefake.Fault {
		if method == gcefake.MethodDisksGet { // the re-read right before the delete
			attachOnce.Do(func() {
				_ = srv.Attach(project, key, "https://www.googleapis.com/compute/v1/projects/e2e-project/zones/asia-northeast1-a/instances/node-7")
			})
		}
		return nil
	}})
	srv = w.gce
	key = w.orphan(zoneA, "orphan")
	w.seen(w.now.Add(-48*time.Hour), key)

	rep := w.run(true)
	if !w.gce.HasDisk(key) || w.gce.Calls(gcefake.MethodDisksDelete) != 0 {
		t.Fatal("deleted a disk that was attached after it was planned")
	}
	if rep.Outcome.Skipped != 1 || !strings.Contains(rep.Outcome.Results[0].Reason, "attached to node-7 since it was planned") {
		t.Fatalf("outcome: %+v", rep.Outcome)
	}
	if recs := w.audit(); len(recs) != 1 || recs[0].Result != "skipped" {
		t.Fatalf("audit: %+v", recs)
	}
	// And the clock restarts: the next run does not delete it on sight.
	st, _ := (&state.FileStore{Path: w.statePath()}).Load(context.Background())
	if _, ok := st.Resources[key]; ok {
		t.Fatal("orphan clock kept for a disk that was attached")
	}
}

// Dry-run is the default and has no side effect on any cloud or cluster.
func TestDryRunMakesNoMutatingCalls(t *testing.T) {
	w := newWorld(t)
	var keys []string
	for i := 0; i < 4; i++ {
		keys = append(keys, w.orphan(zoneA, "d"+string(rune('a'+i))))
	}
	w.seen(w.now.Add(-48*time.Hour), keys...)
	w.disksYAML = "  maxDeletePercent: 100%\n  snapshotBeforeDelete: true\n"
	rep := w.run(false)
	if rep.Mode != "dry-run" || rep.Plan.Count(gcedisk.Name, engine.Delete) != 4 {
		t.Fatalf("plan: %s", text(rep))
	}
	if n := w.gce.MutatingCalls(); n != 0 {
		t.Fatalf("dry-run made %d mutating calls: %v", n, w.gce.CallCounts())
	}
	if len(w.audit()) != 0 || rep.Outcome != nil {
		t.Fatal("dry-run audited or applied")
	}
}

// Idempotence: a run killed during apply, run again, converges, and the audit
// log has each delete exactly once.
func TestKilledDuringApplyConverges(t *testing.T) {
	var proc atomic.Pointer[os.Process]
	var deletes atomic.Int32
	w := newWorld(t, gcefake.Options{OnDelete: func(string) {
		if deletes.Add(1) == 2 { // the second disk is gone; its result is not yet recorded
			if p := proc.Load(); p != nil {
				_ = p.Signal(syscall.SIGKILL)
			}
		}
	}, OpPolls: 1})
	var keys []string
	for i := 0; i < 6; i++ {
		keys = append(keys, w.orphan(zoneA, "d"+string(rune('a'+i))))
	}
	w.seen(w.now.Add(-48*time.Hour), keys...)

	c := reclaimCmd(context.Background(), t, testenv.CronJob, nil, "run", "--apply", "--config", w.configPath())
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	proc.Store(c.Process)
	err := c.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("first run was not killed: %v\n%s", err, out.String())
	}
	if left := len(w.gce.Disks(project)); left == 0 || left == 6 {
		t.Fatalf("kill did not land mid-apply: %d disks left", left)
	}
	c = reclaimCmd(context.Background(), t, testenv.CronJob, nil, "run", "--apply", "--config", w.configPath())
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	if left := w.gce.Disks(project); len(left) != 0 {
		t.Fatalf("did not converge: %d disks left", len(left))
	}
	count := map[string]int{}
	for _, r := range w.audit() {
		if r.Action == "delete" && (r.Result == "deleted" || r.Result == "confirmed-deleted" || r.Result == "already-gone") {
			count[r.ID]++
		}
	}
	for _, k := range keys {
		if count[k] != 1 {
			t.Fatalf("audit has %d deletes of %s: %+v", count[k], k, w.audit())
		}
	}
}

// Snapshot before delete, from the config through the real client: the
// snapshot exists, is labelled with the disk it came from, and the disk is gone.
func TestSnapshotBeforeDelete(t *testing.T) {
	w := newWorld(t)
	key := w.orphan(zoneA, "snap-me")
	w.seen(w.now.Add(-48*time.Hour), key)
	w.disksYAML = "  maxDeletePercent: 100%\n  snapshotBeforeDelete: true\n  snapshotLabel: made-from\n"
	rep := w.run(true)
	if rep.ExitCode != report.ExitOK || rep.Outcome.Deleted != 1 || w.gce.HasDisk(key) {
		t.Fatalf("exit %d outcome %+v\n%s", rep.ExitCode, rep.Outcome, text(rep))
	}
	snaps := w.gce.Snapshots()
	if len(snaps) != 1 || snaps[0].Labels["made-from"] != w.name("snap-me") || snaps[0].Labels["reclaim-location"] != zoneA ||
		!strings.HasPrefix(snaps[0].Name, "reclaim-"+w.name("snap-me")) {
		t.Fatalf("snapshots: %+v", snaps)
	}
	var snapLine, deleteLine bool
	for _, r := range w.audit() {
		snapLine = snapLine || (r.Action == "snapshot" && r.Snapshot == snaps[0].Name)
		deleteLine = deleteLine || (r.Action == "delete" && r.Result == "deleted" && r.Snapshot == snaps[0].Name)
	}
	if !snapLine || !deleteLine {
		t.Fatalf("audit does not name the snapshot: %+v", w.audit())
	}
}
