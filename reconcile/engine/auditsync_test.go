package engine_test

import (
	"bytes"
	"context"
	"fmt"
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
