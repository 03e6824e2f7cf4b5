package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// parKind is fakeKind for batches in flight at once: its calls are safe
// from several goroutines, and it checks at each re-read that the batch is
// already marked pending in the store.
type parKind struct {
	*fakeKind
	store *state.MemoryStore

	mu        sync.Mutex
	inFlight  int
	most      int             // the most batches between re-read and delete's end
	deleted   map[string]bool // by name, when its Delete returned
	wait      chan struct{}   // closed when two batches are in flight at once
	waited    bool
	slow      map[string]struct{} // names whose Delete sleeps
	unmarked  []string            // re-read before its pending mark was saved
	early     []string            // re-read before what it waits for was deleted
	deleteErr error
}

func newParKind(parallel int, names ...string) *parKind {
	k := &fakeKind{lim: testLimits(), items: orphans(names...), verdicts: map[string]engine.Verdict{}, results: map[string]error{}}
	k.lim.Parallel = parallel
	return &parKind{fakeKind: k, deleted: map[string]bool{}, wait: make(chan struct{}), slow: map[string]struct{}{}}
}

func (k *parKind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	st, _ := k.store.Load(ctx)
	k.mu.Lock()
	for _, d := range batch {
		if _, ok := st.Pending[d.ID]; !ok {
			k.unmarked = append(k.unmarked, d.Name)
		}
		for _, id := range d.After {
			if !k.deleted[id[len("fake/"):]] {
				k.early = append(k.early, d.Name)
			}
		}
	}
	k.inFlight++
	if k.inFlight == 2 && k.most < 2 {
		close(k.wait)
	}
	k.most = max(k.most, k.inFlight)
	k.mu.Unlock()
	return make([]engine.Verdict, len(batch)), nil
}

func (k *parKind) Delete(_ context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	// The first batch waits (a while at most) for a second to be in flight.
	k.mu.Lock()
	first := !k.waited
	k.waited = true
	k.mu.Unlock()
	if first {
		select {
		case <-k.wait:
		case <-time.After(time.Second):
		}
	}
	for _, d := range batch {
		if _, ok := k.slow[d.Name]; ok {
			time.Sleep(50 * time.Millisecond)
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inFlight--
	out := make([]engine.Deleted, len(batch))
	if k.deleteErr != nil {
		return nil, k.deleteErr
	}
	for _, d := range batch {
		k.deleted[d.Name] = true
	}
	return out, nil
}

func parApply(t *testing.T, k *parKind, failures int) *engine.Outcome {
	t.Helper()
	p := build(k.fakeKind, seenSince(t0.Add(-7*time.Hour), k.items...), t0, complete("a"))
	// build proposes through fakeKind; apply through parKind.
	a, _, store := enginetest.Applier(t0, failures, k)
	k.store = store
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func names(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("r%02d", i))
	}
	return out
}

// Limits.Parallel puts batches in flight at once, each marked pending in the
// store before its re-read.
func TestApplyRunsBatchesInParallel(t *testing.T) {
	k := newParKind(4, names(20)...)
	out := parApply(t, k, 3)
	if out.Deleted != 20 || out.Failed != 0 {
		t.Fatalf("%+v", out)
	}
	if k.most < 2 || k.most > 4 {
		t.Fatalf("at most %d batches were in flight at once, want 2 to 4", k.most)
	}
	if len(k.unmarked) > 0 {
		t.Fatalf("re-read (and so could delete) before the pending mark was saved: %v", k.unmarked)
	}
}

// One batch at a time without Parallel.
func TestApplyRunsBatchesOneByOneByDefault(t *testing.T) {
	k := newParKind(0, names(4)...)
	if out := parApply(t, k, 3); out.Deleted != 4 || k.most != 1 {
		t.Fatalf("%+v: %d in flight at once", out, k.most)
	}
}

// A batch that waits (After) for a slower batch starts only when that one
// is done: the child is deleted, and never re-read before its index went.
func TestApplyParallelBatchWaitsForWhatItIsAfter(t *testing.T) {
	k := newParKind(4, "index", "a", "b", "child")
	k.items[3].After = []string{fakeID("index")}
	k.items[3].AfterWhy = "its index"
	k.slow["index"] = struct{}{}
	out := parApply(t, k, 3)
	if out.Deleted != 4 {
		t.Fatalf("want all 4 deleted, the child after its index: %+v", out.Results)
	}
	if len(k.early) > 0 {
		t.Fatalf("re-read before what it waits for was deleted: %v", k.early)
	}
}

// The failure streak stops the run with batches in flight: none starts
// after it, and the rest is not-attempted.
func TestApplyParallelStopsAfterFailureStreak(t *testing.T) {
	k := newParKind(4, names(20)...)
	k.deleteErr = errors.New("permission denied")
	out := parApply(t, k, 3)
	if out.Stopped == "" {
		t.Fatalf("not stopped: %+v", out)
	}
	counts := map[string]int{}
	for _, r := range out.Results {
		counts[r.Result]++
	}
	// 3 failures stop it; at most 3 more were already in flight.
	if counts[audit.Failed] < 3 || counts[audit.Failed] > 6 || counts[audit.NotAttempted] != 20-counts[audit.Failed] {
		t.Fatalf("results %v", counts)
	}
}
