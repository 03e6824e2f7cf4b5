package engine_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// lockstepStore checks after each Note that the journal holds the run's
// pending marks exactly, so that what the applier notes is all that
// changed. It reads them from the plan's state, whose Pending map the
// applier works on (and holds its lock around Note). One Note fails.
type lockstepStore struct {
	*state.MemoryStore
	t            *testing.T
	live         map[string]engine.Pending
	notes, fail  int
	checked      int
	failedBefore bool
}

func (s *lockstepStore) Note(ctx context.Context, j engine.Journal) error {
	s.notes++
	if s.notes == s.fail {
		s.failedBefore = true
		return errors.New("etcdserver: request timed out")
	}
	if err := s.MemoryStore.Note(ctx, j); err != nil {
		return err
	}
	got, _ := s.MemoryStore.Load(ctx)
	if !maps.Equal(got.Pending, s.live) {
		s.t.Errorf("note %d: the journal holds %v; the run %v", s.notes, got.Pending, s.live)
	}
	if s.failedBefore {
		s.checked++
	}
	return nil
}

// serialKind is a fakeKind whose calls may come from batches in parallel.
type serialKind struct {
	*fakeKind
	mu sync.Mutex
}

func (k *serialKind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.fakeKind.Recheck(ctx, batch)
}

func (k *serialKind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.fakeKind.Delete(ctx, batch)
}

// Whatever a batch does to its marks (deleted, gone, skipped, refused,
// unknown, a failed Note), the journal holds the run's marks after every
// Note: the change sent is the whole change, sent again after a failure.
func TestJournalHoldsTheRunsMarksAfterEveryNote(t *testing.T) {
	var names []string
	for i := range 24 {
		names = append(names, fmt.Sprintf("r%02d", i))
	}
	k, _, a, _, store := applyFixture(names...)
	k.lim.BatchSize, k.lim.Parallel, k.lim.MaxDeletes = 3, 2, 100
	p := build(k, seenSince(t0.Add(-7*time.Hour), k.items...), t0, complete("a"))
	k.verdicts = map[string]engine.Verdict{"r01": {Result: engine.Skip, Reason: "changed"}, "r04": {Result: engine.GoneNow}}
	k.results["r05"] = outcome.MarkRefused(errors.New("AccessDenied"))
	k.results["r07"] = errors.New("connection reset")
	k.results["r10"] = outcome.MarkChanged(errors.New("in use again"))
	k.results["r13"] = fmt.Errorf("x: %w", outcome.ErrNotFound)
	a.MaxConsecutiveFailures = 0
	a.Kinds = []engine.Kind{&serialKind{fakeKind: k}}
	ls := &lockstepStore{MemoryStore: store, t: t, live: p.State.Pending, fail: 4}
	a.Store = ls
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Deleted < 15 || ls.checked < 3 {
		t.Fatalf("%d deleted, %d notes checked after the failed one: %+v", out.Deleted, ls.checked, out)
	}
}

// markCheckingKind fails the test when a delete is sent whose pending mark
// a process started now would not load from the file store: what a run
// killed at that moment leaves.
type markCheckingKind struct {
	serialKind
	t    *testing.T
	path string
	sent int
}

func (k *markCheckingKind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	st, err := (&state.FileStore{Path: k.path}).Load(ctx)
	if err != nil {
		k.t.Error(err)
	}
	for _, d := range batch {
		if _, ok := st.Pending[d.ID]; !ok {
			k.t.Errorf("%s deleted without its pending mark on disk: %v", d.ID, st.Pending)
		}
	}
	k.mu.Lock()
	k.sent += len(batch)
	k.mu.Unlock()
	return k.serialKind.Delete(ctx, batch)
}

// A run killed between a mark and its delete leaves the mark in the file
// store's journal, through appends and compactions.
func TestFileJournalHoldsEveryMarkBeforeItsDelete(t *testing.T) {
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("r%02d", i))
	}
	fk, _, a, _, _ := applyFixture(names...)
	fk.lim.BatchSize, fk.lim.Parallel, fk.lim.MaxDeletes = 2, 3, 100
	fk.verdicts = map[string]engine.Verdict{"r03": {Result: engine.Skip, Reason: "changed"}}
	p := build(fk, seenSince(t0.Add(-7*time.Hour), fk.items...), t0, complete("a"))
	path := filepath.Join(t.TempDir(), "state.json")
	k := &markCheckingKind{serialKind: serialKind{fakeKind: fk}, t: t, path: path}
	a.Kinds = []engine.Kind{k}
	a.Store = &state.FileStore{Path: path}
	out, err := a.Apply(context.Background(), p, true)
	if err != nil || out.Deleted != 39 || k.sent != 39 {
		t.Fatalf("%d deleted, %d sent: %v", out.Deleted, k.sent, err)
	}
}
