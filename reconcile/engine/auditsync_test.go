package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// syncedFile is an audit log's file: it counts the lines written since its
// last Sync.
type syncedFile struct {
	mu              sync.Mutex
	buf             bytes.Buffer
	unsynced, syncs int
}

func (f *syncedFile) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unsynced++
	return f.buf.Write(b)
}

func (f *syncedFile) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unsynced, f.syncs = 0, f.syncs+1
	return nil
}

// syncCheckingStore fails the test when a state or a journal entry is saved
// while audit lines are not synced.
type syncCheckingStore struct {
	*state.MemoryStore
	t     *testing.T
	f     *syncedFile
	saves int
}

func (s *syncCheckingStore) check(what string) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.saves++
	if s.f.unsynced > 0 {
		s.t.Errorf("%s saved with %d audit lines not synced", what, s.f.unsynced)
	}
}

func (s *syncCheckingStore) Save(ctx context.Context, st engine.State) error {
	s.check("the state")
	return s.MemoryStore.Save(ctx, st)
}

func (s *syncCheckingStore) Note(ctx context.Context, j engine.Journal) error {
	s.check("a journal entry")
	return s.MemoryStore.Note(ctx, j)
}

// The audit lines of a batch are synced before any state or journal entry
// is saved (a saved state that no longer holds a delete's pending mark must
// not outlive the delete's line), and once a batch, not once a line.
func TestAuditIsSyncedBeforeEveryStateSave(t *testing.T) {
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("o%02d", i))
	}
	items := orphans(names...)
	k := &fakeKind{lim: testLimits(), items: items, verdicts: map[string]engine.Verdict{"o03": {Result: engine.Skip, Reason: "changed"}}}
	k.lim.BatchSize = 4
	p := build(k, seenSince(t0.Add(-7*time.Hour), items...), t0, complete("a"))
	a, _, _ := enginetest.Applier(t0, 3, k)
	f := &syncedFile{}
	store := &syncCheckingStore{MemoryStore: state.NewMemoryStore(engine.NewState()), t: t, f: f}
	a.Audit, a.Store = audit.New(f), store
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(f.buf.String(), "\n")
	if out.Deleted != 11 || lines != 12 || store.saves < 4 {
		t.Fatalf("%d deleted, %d audit lines, %d saves: the test does not test batches", out.Deleted, lines, store.saves)
	}
	if f.syncs == 0 || f.syncs >= lines {
		t.Fatalf("%d syncs for %d lines: want one a batch", f.syncs, lines)
	}
}

// failingAudit is an audit log's file that refuses delete lines.
type failingAudit struct{ bytes.Buffer }

func (f *failingAudit) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte(`"action":"delete"`)) {
		return 0, errors.New("no space left on device")
	}
	return f.Buffer.Write(b)
}

// Audit or stop: a delete whose audit line cannot be written keeps its
// pending mark, stops the run's further deletes and fails the run; the
// next run, which finds the resource gone, writes its line once.
func TestAuditFailureKeepsThePendingMarkAndStops(t *testing.T) {
	k, p, a, _, store := applyFixture("a", "b", "c", "d", "e", "f", "g")
	a.Audit = audit.New(&failingAudit{})
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Unaudited == 0 || out.Stopped == "" {
		t.Fatalf("unaudited %d, stopped %q", out.Unaudited, out.Stopped)
	}
	deleted := 0
	for _, c := range k.calls {
		if ids, ok := strings.CutPrefix(c, "delete "); ok {
			deleted += strings.Count(ids, ",") + 1
		}
	}
	notAttempted := 0
	for _, r := range out.Results {
		if r.Result == audit.NotAttempted {
			notAttempted++
		}
	}
	if notAttempted != len(k.items)-deleted {
		t.Fatalf("%d deletes, %d not attempted of %d: the run went on deleting after an unaudited delete", deleted, notAttempted, len(k.items))
	}
	st, _ := store.Load(context.Background())
	if len(st.Pending) != out.Unaudited || deleted != out.Unaudited {
		t.Fatalf("%d deletes, %d unaudited, %d pending marks: every unaudited delete keeps its mark, and none follows it (calls %v)",
			deleted, out.Unaudited, len(st.Pending), k.calls)
	}

	// The next run: the resources deleted are gone from the listing.
	var log bytes.Buffer
	next := &fakeKind{lim: testLimits()}
	for _, it := range k.items {
		if _, pending := st.Pending[it.ID]; !pending {
			next.items = append(next.items, it)
		}
	}
	p2 := build(next, st, t0.Add(time.Hour), complete("a"))
	a2, _, _ := enginetest.Applier(t0.Add(time.Hour), 3, next)
	a2.Audit = audit.NewReadable(&log, func() io.Reader { return bytes.NewReader(log.Bytes()) })
	a2.Store = store
	out2, err := a2.Apply(context.Background(), p2, false)
	if err != nil || len(out2.Confirmed) != out.Unaudited || strings.Count(log.String(), "confirmed-deleted") != out.Unaudited {
		t.Fatalf("next run: %+v %v\n%s", out2, err, log.String())
	}
	if st2, _ := store.Load(context.Background()); len(st2.Pending) != 0 {
		t.Fatalf("pending marks left after the confirmations: %v", st2.Pending)
	}
}

// losingAudit is an audit log's file that refuses the lines lose picks,
// and closes lost at the first it refuses.
type losingAudit struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	lose func(line []byte) bool
	lost chan struct{}
	once sync.Once
}

func newLosingAudit(lose func([]byte) bool) *losingAudit {
	return &losingAudit{lose: lose, lost: make(chan struct{})}
}

func (f *losingAudit) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lose(b) {
		f.once.Do(func() { close(f.lost) })
		return 0, errors.New("no space left on device")
	}
	return f.buf.Write(b)
}

// stopRaceKind is the fake kind with batches in flight when another
// batch's audit line is refused: its calls are safe from several
// goroutines; every Delete waits until rounds re-reads have begun, a
// re-read in holdRecheck returns only once a line was lost, and a delete
// in holdDelete a while after.
type stopRaceKind struct {
	*fakeKind
	lost                    chan struct{}
	rounds                  int
	holdRecheck, holdDelete map[string]bool

	mu        sync.Mutex
	rechecked int
	deleted   []string
}

func (k *stopRaceKind) Recheck(_ context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	k.mu.Lock()
	k.rechecked++
	k.mu.Unlock()
	for _, d := range batch {
		if k.holdRecheck[d.Name] {
			select {
			case <-k.lost:
			case <-time.After(5 * time.Second):
			}
		}
	}
	return make([]engine.Verdict, len(batch)), nil
}

func (k *stopRaceKind) Delete(_ context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(time.Millisecond) {
		k.mu.Lock()
		n := k.rechecked
		k.mu.Unlock()
		if n >= k.rounds {
			break
		}
	}
	for _, d := range batch {
		if k.holdDelete[d.Name] {
			select {
			case <-k.lost:
				time.Sleep(100 * time.Millisecond) // the other batch has settled
			case <-time.After(5 * time.Second):
			}
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, d := range batch {
		k.deleted = append(k.deleted, d.Name)
	}
	return make([]engine.Deleted, len(batch)), nil
}

// Audit or stop stops everything: once a delete's audit line is refused, a
// batch already past its start (here c, in its re-read) makes no delete
// call either, and the message counts every unaudited delete, those of
// batches whose delete call was already under way (b) included.
func TestAuditFailureStopsBatchesInFlight(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f"}
	f := newLosingAudit(func(b []byte) bool { return bytes.Contains(b, []byte(`"action":"delete"`)) })
	k := &stopRaceKind{fakeKind: &fakeKind{lim: testLimits(), items: orphans(names...)}, lost: f.lost, rounds: 3,
		holdRecheck: map[string]bool{"c": true}, holdDelete: map[string]bool{"b": true}}
	k.lim.Parallel = 3
	p := build(k.fakeKind, seenSince(t0.Add(-7*time.Hour), k.items...), t0, complete("a"))
	a, _, store := enginetest.Applier(t0, 3, k)
	a.Audit = audit.New(f)
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(k.deleted)
	if strings.Join(k.deleted, ",") != "a,b" {
		t.Fatalf("deleted %v: want a and b, whose delete calls were under way when a's line was refused, and nothing after", k.deleted)
	}
	notAttempted := 0
	for _, r := range out.Results {
		if r.Result == audit.NotAttempted {
			notAttempted++
		}
	}
	if out.Unaudited != 2 || notAttempted != 4 || !strings.Contains(out.Stopped, "2 deletes could not be written to the audit log") {
		t.Fatalf("unaudited %d, not attempted %d, stopped %q: want 2, 4 and a stop counting both deletes", out.Unaudited, notAttempted, out.Stopped)
	}
	st, _ := store.Load(context.Background())
	if len(st.Pending) != 2 {
		t.Fatalf("pending marks %v: want the two unaudited deletes', for the next run to write their lines", st.Pending)
	}
}

// A snapshot's audit line counts: refused, it stops the run before any
// delete (and before any further snapshot is started), the message says
// it, and the run fails.
func TestAuditFailureOfASnapshotLineStops(t *testing.T) {
	k := newSnapKind("a", "b")
	p, a, _ := snapApplier(k)
	a.Audit = audit.New(newLosingAudit(func(b []byte) bool { return bytes.Contains(b, []byte(`"action":"snapshot"`)) }))
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(k.calls) != 0 || slices.Contains(k.log, "start b") {
		t.Fatalf("calls %v, snapshot calls %v: want no re-read, no delete, and no snapshot after the refused line", k.calls, k.log)
	}
	if out.UnauditedSnapshots != 1 || !strings.Contains(out.Stopped, "1 snapshot could not be written to the audit log") || out.Deleted != 0 {
		t.Fatalf("%+v: want a stop counting the snapshot's line", out)
	}
	if code := report.ExitCode(p, out); code != report.ExitFailed {
		t.Fatalf("exit %d, want %d", code, report.ExitFailed)
	}
}
