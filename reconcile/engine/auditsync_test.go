package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
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
