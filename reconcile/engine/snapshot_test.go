package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/snapshot"
)

// snapKind is the fake kind with snapshots before its deletes
// (engine.Snapshotter).
type snapKind struct {
	*fakeKind
	// have are the snapshots that exist before the run, by name.
	have map[string][]snapshot.Snapshot
	// reads is how many state reads a new snapshot stays pending (below
	// 0: forever); done, if set, says instead whether one started at a time
	// is done now (the benchmark's clock).
	reads   int
	done    func(started time.Time) bool
	started map[string]time.Time
	left    map[string]int
	log     []string // list NAME, start NAME, state NAME, in order
	onState func()   // called at each state read
}

func newSnapKind(names ...string) *snapKind {
	lim := testLimits()
	lim.SnapshotTimeout = time.Minute
	return &snapKind{fakeKind: &fakeKind{lim: lim, items: orphans(names...), verdicts: map[string]engine.Verdict{}, results: map[string]error{}},
		have: map[string][]snapshot.Snapshot{}, started: map[string]time.Time{}, left: map[string]int{}}
}

func (k *snapKind) SnapshotFirst(*engine.Decision) bool { return true }

func (k *snapKind) Snapshots(_ context.Context, d *engine.Decision) ([]snapshot.Snapshot, error) {
	k.log = append(k.log, "list "+d.Name)
	return k.have[d.Name], nil
}

func (k *snapKind) StartSnapshot(_ context.Context, d *engine.Decision) (string, error) {
	k.log = append(k.log, "start "+d.Name)
	id := "snap-" + d.Name
	k.started[id], k.left[id] = time.Now(), k.reads
	return id, nil
}

func (k *snapKind) SnapshotState(_ context.Context, d *engine.Decision, id string) (snapshot.State, error) {
	k.log = append(k.log, "state "+d.Name)
	if k.onState != nil {
		k.onState()
	}
	if k.done != nil {
		if k.done(k.started[id]) {
			return snapshot.Done, nil
		}
		return snapshot.Pending, nil
	}
	if k.left[id] == 0 {
		return snapshot.Done, nil
	}
	if k.left[id] > 0 {
		k.left[id]--
	}
	return snapshot.Pending, nil
}

// snapApplier plans k's orphans, seen since seven hours before t0 (grace
// 6h), and returns the plan and an applier that polls every millisecond.
func snapApplier(k *snapKind) (*engine.Plan, *engine.Applier, func() map[string]string) {
	p := engine.Build(snap(complete("a")), []engine.Kind{k}, seenSince(t0.Add(-7*time.Hour), k.items...), t0)
	a, buf, _ := enginetest.Applier(t0, 3, k)
	a.SnapshotPoll = time.Millisecond
	return p, a, func() map[string]string {
		out := map[string]string{}
		for _, r := range auditRecords(buf.String()) {
			out[r.ID] += r.Action + ":" + r.Result + ":" + r.Snapshot + " "
		}
		return out
	}
}

// Every due snapshot is started before any is waited on, and each
// resource is re-read and deleted only once they were all waited on.
func TestSnapshotsStartTogether(t *testing.T) {
	k := newSnapKind("a", "b", "c")
	k.reads = 2
	p, a, _ := snapApplier(k)
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Deleted != 3 {
		t.Fatalf("%+v", out.Results)
	}
	lastStart, firstState := -1, -1
	for i, l := range k.log {
		if strings.HasPrefix(l, "start ") {
			lastStart = i
		}
		if strings.HasPrefix(l, "state ") && firstState < 0 {
			firstState = i
		}
	}
	if lastStart < 0 || firstState < lastStart {
		t.Fatalf("a snapshot was waited on before every one was started: %v", k.log)
	}
	if k.calls[0] != "get a" {
		t.Fatalf("re-read before the snapshots were done: %v", k.calls)
	}
}

// Only a snapshot started within the current orphan period is reused; an
// older one (the resource was used, and written, since) is not, and a new
// one is made. The audit says which.
func TestSnapshotReuseWindow(t *testing.T) {
	k := newSnapKind("stale", "current")
	k.have["stale"] = []snapshot.Snapshot{{ID: "old", Started: t0.Add(-21 * 24 * time.Hour), State: snapshot.Done}}
	k.have["current"] = []snapshot.Snapshot{
		{ID: "older", Started: t0.Add(-30 * 24 * time.Hour), State: snapshot.Done},
		{ID: "cur", Started: t0.Add(-time.Hour), State: snapshot.Done},
	}
	p, a, audited := snapApplier(k)
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Deleted != 2 {
		t.Fatalf("%+v", out.Results)
	}
	if slices.Contains(k.log, "start current") || !slices.Contains(k.log, "start stale") {
		t.Fatalf("calls %v", k.log)
	}
	got := audited()
	if want := "snapshot:created:snap-stale delete:deleted:snap-stale "; got[fakeID("stale")] != want {
		t.Fatalf("stale: audit %q, want %q", got[fakeID("stale")], want)
	}
	if want := "snapshot:reused:cur delete:deleted:cur "; got[fakeID("current")] != want {
		t.Fatalf("current: audit %q, want %q", got[fakeID("current")], want)
	}
}

// A snapshot still pending at the deadline defers its delete: held (exit
// as for a hold), audited as deferred, no delete sent, no pending mark,
// and the clock runs on, so the next run deletes it once it is done.
func TestSnapshotPendingIsDeferral(t *testing.T) {
	k := newSnapKind("a")
	k.lim.SnapshotTimeout = time.Millisecond
	k.reads = -1
	p, a, audited := snapApplier(k)
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed != 0 || out.Deferred != 1 || out.Results[0].Result != audit.Deferred || slices.Contains(k.calls, "delete a") {
		t.Fatalf("%+v calls %v", out, k.calls)
	}
	if !strings.Contains(out.Results[0].Reason, "snapshot snap-a still pending after 1ms") {
		t.Fatalf("reason %q", out.Results[0].Reason)
	}
	if got := audited()[fakeID("a")]; got != "snapshot:created:snap-a delete:deferred:snap-a " {
		t.Fatalf("audit %q", got)
	}
	if len(out.Saved.Pending) != 0 {
		t.Fatalf("pending marks: %v", out.Saved.Pending)
	}
	if p2 := engine.Build(snap(complete("a")), []engine.Kind{k}, out.Saved, t0); enginetest.DecisionFor(t, p2, "a").Action != engine.Delete {
		t.Fatalf("the clock did not run on: %+v", enginetest.DecisionFor(t, p2, "a"))
	}
}

// A graceful stop (Applier.Stop) while snapshots are waited on ends the
// wait, however long snapshotTimeout is: nothing is deleted, and what
// waited is not attempted.
func TestSnapshotWaitEndsAtStop(t *testing.T) {
	k := newSnapKind("a")
	k.lim.SnapshotTimeout = time.Hour
	k.reads = -1
	stop, cancel := context.WithCancel(context.Background())
	k.onState = cancel
	p, a, _ := snapApplier(k)
	a.SnapshotPoll = time.Hour
	a.Stop = stop
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 || out.Results[0].Result != audit.NotAttempted || len(k.calls) != 0 {
		t.Fatalf("%+v calls %v", out.Results, k.calls)
	}
}

// A thousand snapshot-first deletes whose snapshots each take the same
// time wait about one snapshot's time, not a thousand: wall/snapshot is
// the run's wall time over one snapshot's, calls/delete the kind's calls
// per delete.
func BenchmarkSnapshotFirstDeletes(b *testing.B) {
	const n, delay = 1000, 20 * time.Millisecond
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("r%04d", i)
	}
	var wall time.Duration
	calls := 0
	for b.Loop() {
		k := newSnapKind(names...)
		k.lim.MaxDeletes, k.lim.BreakerCandidates = n, 2*n
		k.done = func(started time.Time) bool { return time.Since(started) >= delay }
		p, a, _ := snapApplier(k)
		a.Audit = nil
		start := time.Now()
		out, err := a.Apply(context.Background(), p, true)
		wall += time.Since(start)
		if err != nil || out.Deleted != n {
			b.Fatalf("%v: deleted %d of %d", err, out.Deleted, n)
		}
		calls += len(k.log) + len(k.calls)
	}
	b.ReportMetric(float64(wall)/float64(b.N)/float64(delay), "wall/snapshot")
	b.ReportMetric(float64(calls)/float64(b.N)/n, "calls/delete")
}

// auditRecords parses an audit log's lines.
func auditRecords(log string) []audit.Record {
	var out []audit.Record
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		var r audit.Record
		if l != "" && json.Unmarshal([]byte(l), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}
