package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// applyFixture plans every named resource for deletion (orphans past grace)
// and returns an applier for the plan.
func applyFixture(names ...string) (*fakeKind, *engine.Plan, *engine.Applier, *bytes.Buffer, *state.MemoryStore) {
	k := &fakeKind{lim: testLimits(), items: orphans(names...), verdicts: map[string]engine.Verdict{}, results: map[string]error{}}
	p := build(k, seenSince(t0.Add(-7*time.Hour), k.items...), t0, complete("a"))
	a, buf, store := enginetest.Applier(t0, 3, k)
	return k, p, a, buf, store
}

func TestApplyDryRunCallsNothing(t *testing.T) {
	k, p, a, buf, store := applyFixture("a", "b")
	out, err := a.Apply(context.Background(), p, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(k.calls) != 0 || buf.Len() != 0 || len(out.Results) != 0 {
		t.Fatalf("dry-run called %v, audited %q", k.calls, buf.String())
	}
	if store.Saves != 1 {
		t.Fatalf("dry-run must save the orphan clocks once, saved %d times", store.Saves)
	}
}

func TestApplyNotFoundIsSuccess(t *testing.T) {
	k, p, a, buf, _ := applyFixture("a")
	k.verdicts["a"] = engine.Verdict{Result: engine.GoneNow} // gone before the re-read
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Deleted != 1 || out.Failed != 0 || out.Results[0].Result != "already-gone" {
		t.Fatalf("%+v", out)
	}
	// What it freed is counted in the kind's unit and in the v1 record.
	if out.Freed.String() != "100 GB" || out.FreedGB != 100 || out.Results[0].SizeGB != 100 {
		t.Fatalf("freed %q (%d GB)", out.Freed.String(), out.FreedGB)
	}
	if got := enginetest.AuditResults(t, buf)[fakeID("a")]; got != "already-gone" {
		t.Fatalf("audit: %q", got)
	}
}

func TestApplyDeleteNotFoundAfterReread(t *testing.T) {
	k, p, a, _, store := applyFixture("a")
	k.results["a"] = fmt.Errorf("delete: %w", outcome.ErrNotFound) // raced with someone else's delete
	out, _ := a.Apply(context.Background(), p, true)
	if out.Deleted != 1 || out.Results[0].Result != "already-gone" {
		t.Fatalf("%+v", out)
	}
	st, _ := store.Load(context.Background())
	if len(st.Pending) != 0 {
		t.Fatalf("pending left: %v", st.Pending)
	}
}

func TestApplyFailedDeleteStaysPending(t *testing.T) {
	k, p, a, buf, store := applyFixture("a")
	k.deleteErr = errors.New("googleapi: Error 503: backend unavailable")
	out, _ := a.Apply(context.Background(), p, true)
	if out.Failed != 1 {
		t.Fatalf("%+v", out)
	}
	st, _ := store.Load(context.Background())
	if _, ok := st.Pending[fakeID("a")]; !ok {
		t.Fatal("a failed delete must stay pending: it may have happened after all")
	}
	if got := enginetest.AuditResults(t, buf)[fakeID("a")]; got != "failed" {
		t.Fatalf("audit: %q", got)
	}
}

func TestApplyStopsAfterFailureStreak(t *testing.T) {
	k, p, a, _, _ := applyFixture("a", "b", "c", "d", "e")
	k.deleteErr = errors.New("permission denied")
	out, _ := a.Apply(context.Background(), p, true)
	if out.Failed != 3 || out.Stopped == "" {
		t.Fatalf("%+v", out)
	}
	if n := strings.Count(strings.Join(k.calls, ","), "delete"); n != 3 {
		t.Fatalf("%d delete calls after the breaker: %v", n, k.calls)
	}
}

func TestApplyRereadErrorIsNotADelete(t *testing.T) {
	k, p, a, _, _ := applyFixture("a")
	k.recheckErr = errors.New("googleapi: Error 500")
	out, _ := a.Apply(context.Background(), p, true)
	if out.Failed != 1 || strings.Contains(strings.Join(k.calls, ","), "delete") {
		t.Fatalf("%+v %v", out, k.calls)
	}
}

// The opt-out is the engine's to check at the re-read, for every kind: a
// resource whose re-read labels carry the kind's key, whatever its value, is
// skipped; one the kind lets go without showing its labels is skipped too
// (the engine cannot check what it was not shown). A kind with no key is
// not asked for labels.
func TestApplyChecksTheOptOutAtTheReread(t *testing.T) {
	k, p, a, _, _ := applyFixture("protected", "protected-false", "unshown", "unlabelled", "other")
	k.lim.OptOutKey = "keep-me"
	k.verdicts["protected"] = engine.Pass(map[string]string{"keep-me": "true"})
	k.verdicts["protected-false"] = engine.Pass(map[string]string{"keep-me": "false"})
	k.verdicts["unshown"] = engine.Verdict{Result: engine.Go}
	k.verdicts["unlabelled"] = engine.Pass(nil)
	k.verdicts["other"] = engine.Pass(map[string]string{"team": "a"})
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range out.Results {
		got[strings.TrimPrefix(r.ID, "fake/")] = r.Result + " " + r.Reason
	}
	for name, want := range map[string]string{"protected": "skipped skipped: protected by keep-me=true", "protected-false": "skipped skipped: protected by keep-me=false",
		"unshown": "skipped skipped: the re-read did not show its labels", "unlabelled": "deleted", "other": "deleted"} {
		if !strings.HasPrefix(got[name], want) {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if calls := strings.Join(k.calls, ","); strings.Contains(calls, "delete protected") || strings.Contains(calls, "delete unshown") {
		t.Fatalf("deleted an opted-out resource: %v", k.calls)
	}

	k, p, a, _, _ = applyFixture("a")
	k.verdicts["a"] = engine.Verdict{Result: engine.Go}
	if out, _ := a.Apply(context.Background(), p, true); out.Deleted != 1 {
		t.Fatalf("no opt-out key, no labels asked for: %+v", out.Results)
	}
}

// A provider's error says each delete's outcome, and the engine alone
// decides what it means: a refusal is a failure whose resource is still
// there (no pending mark: the next run tries again); a changed resource is
// a skip; an error nobody mapped is an unknown outcome, whose pending mark
// stays for the next run to settle from its listing.
func TestApplyDecidesEachDeleteOutcome(t *testing.T) {
	k, p, a, _, store := applyFixture("ok", "gone", "changed", "refused", "unmapped")
	k.lim.BatchSize = 5
	p = build(k, seenSince(t0.Add(-7*time.Hour), k.items...), t0, complete("a"))
	k.results["gone"] = fmt.Errorf("x: %w", outcome.ErrNotFound)
	k.results["changed"] = outcome.MarkChanged(errors.New("in use again"))
	k.results["refused"] = outcome.MarkRefused(errors.New("AccessDenied"))
	k.results["unmapped"] = errors.New("connection reset")
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range out.Results {
		got[strings.TrimPrefix(r.ID, "fake/")] = r.Result + " " + r.Error
		if r.Result == audit.Skipped {
			got[strings.TrimPrefix(r.ID, "fake/")] += r.Reason
		}
	}
	for name, want := range map[string]string{"ok": "deleted", "gone": "already-gone", "changed": "skipped skipped: in use again",
		"refused": "failed AccessDenied", "unmapped": "failed outcome unknown: connection reset"} {
		if strings.TrimSpace(got[name]) != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	st, _ := store.Load(context.Background())
	if _, ok := st.Pending[fakeID("unmapped")]; !ok || len(st.Pending) != 1 {
		t.Fatalf("pending after the pass: %v; want only the unknown outcome's", st.Pending)
	}
}

// DeleteEach stops at the first unknown outcome: the call fails, and what
// came after it is never sent.
func TestDeleteEachStopsAtAnUnknownOutcome(t *testing.T) {
	batch := []*engine.Decision{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	errs := map[string]error{"a": outcome.MarkRefused(errors.New("no")), "b": outcome.MarkChanged(errors.New("used")), "c": errors.New("timeout")}
	var sent []string
	out, err := engine.DeleteEach(batch, func(_ int, d *engine.Decision) engine.Deleted {
		sent = append(sent, d.Name)
		return engine.Deleted{Err: errs[d.Name]}
	})
	if err == nil || out != nil || strings.Join(sent, ",") != "a,b,c" {
		t.Fatalf("out %v, err %v, sent %v", out, err, sent)
	}
	delete(errs, "c")
	sent = nil
	if out, err := engine.DeleteEach(batch, func(_ int, d *engine.Decision) engine.Deleted {
		sent = append(sent, d.Name)
		return engine.Deleted{Err: errs[d.Name]}
	}); err != nil || len(out) != 4 || len(sent) != 4 {
		t.Fatalf("out %v, err %v, sent %v", out, err, sent)
	}
}

// Stop ends a pass gracefully: the batch in flight finishes, no new batch
// starts, and what was not started is not-attempted, never failed.
func TestApplyStopStartsNoNewBatch(t *testing.T) {
	k, p, a, _, store := applyFixture("a", "b", "c")
	stop, cancel := context.WithCancel(context.Background())
	a.Stop = stop
	k.onDelete = func() { cancel() } // shutdown arrives during the first delete
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, r := range out.Results {
		counts[r.Result]++
	}
	if counts[audit.Deleted] != 1 || counts[audit.NotAttempted] != 2 || out.Failed != 0 {
		t.Fatalf("want 1 deleted, 2 not-attempted: %+v", out.Results)
	}
	if st, _ := store.Load(context.Background()); len(st.Pending) != 0 {
		t.Fatalf("pending marks left: %v", st.Pending)
	}
}

// A delete whose outcome was unknown (pending) is settled by the next run:
// the object gone, or replaced by a new one under the same id, means the
// delete happened (recorded once); the same object still there means it
// did not, and the pending mark goes.
func TestPendingSettledByIdentity(t *testing.T) {
	for _, c := range []struct {
		name      string
		listed    []engine.Proposal
		confirmed bool
	}{
		{"gone", nil, true},
		{"recreated under the same id", []engine.Proposal{recreated("a")}, true},
		{"still the same object", []engine.Proposal{orphan("a")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := engine.NewState()
			st.Pending[fakeID("a")] = engine.Pending{Kind: fakeName, Started: t0.Add(-time.Hour), Identity: "v1", Reason: "nobody uses it"}
			k := &fakeKind{lim: testLimits(), items: c.listed}
			p := build(k, st, t0, complete("a"))
			if got := len(p.Confirmed) == 1; got != c.confirmed {
				t.Fatalf("confirmed %v, want %v", p.Confirmed, c.confirmed)
			}
			if _, ok := p.State.Pending[fakeID("a")]; ok {
				t.Fatal("the pending mark must be settled")
			}
		})
	}
}

// recreated is orphan(name) as a new object (another identity).
func recreated(name string) engine.Proposal {
	p := orphan(name)
	p.Identity = "v2"
	return p
}

// A decision that waits for another (an index before its children) is not
// attempted when what it waits for was not deleted in this run.
func TestApplyDependentWaitsForItsFailedParent(t *testing.T) {
	k := &fakeKind{lim: testLimits(), items: orphans("index", "child"), verdicts: map[string]engine.Verdict{}, results: map[string]error{}}
	k.items[1].After = []string{fakeID("index")}
	k.items[1].AfterWhy = "its index"
	p := build(k, seenSince(t0.Add(-7*time.Hour), k.items...), t0, complete("a"))
	if enginetest.DecisionFor(t, p, "child").Action != engine.Delete {
		t.Fatalf("setup: %+v", p.Decisions)
	}
	k.results["index"] = errors.New("refused")
	a, _, _ := enginetest.Applier(t0, 3, k)
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range out.Results {
		got[r.ID] = r.Result
	}
	if got[fakeID("index")] != audit.Failed || got[fakeID("child")] != audit.NotAttempted {
		t.Fatalf("results %v", got)
	}
	for _, c := range k.calls {
		if c == "delete child" {
			t.Fatal("deleted a child whose index is still there")
		}
	}
}

// killedStore is a store whose run is killed before its last save: whole
// saves after the first fail, journal entries go through.
type killedStore struct{ *state.MemoryStore }

func (s killedStore) Save(ctx context.Context, st engine.State) error {
	if s.Saves >= 1 {
		return errors.New("killed")
	}
	return s.MemoryStore.Save(ctx, st)
}

// A delete batch costs a journal entry, not a save of the whole state; what
// a skip changed (its clock reset) survives a run killed before its last
// save; and a pending mark left by the kill is only for a delete that
// happened (the next run confirms it from the listing).
func TestApplyJournalsBatches(t *testing.T) {
	k, p, a, _, store := applyFixture("a", "b", "c", "d", "e", "f", "g")
	k.verdicts = map[string]engine.Verdict{"b": {Result: engine.Skip, Reason: "changed since the plan"}}
	a.Store = killedStore{store}
	out, err := a.Apply(context.Background(), p, true)
	if err == nil || out.Deleted != 6 || out.Skipped != 1 {
		t.Fatalf("%+v %v", out, err)
	}
	if store.Saves != 1 || store.Notes < 3 {
		t.Fatalf("%d whole saves and %d journal entries for 3 batches: want 1 save (before the first delete) and a journal entry per batch", store.Saves, store.Notes)
	}
	st, _ := store.Load(context.Background())
	deleted := map[string]bool{}
	for _, r := range out.Results {
		deleted[r.ID] = r.Result == audit.Deleted
	}
	for id := range st.Pending {
		if !deleted[id] {
			t.Fatalf("pending mark left for %s, which was not deleted: %v", id, out.Results)
		}
	}
	if _, ok := st.Resources[fakeID("b")]; ok {
		t.Fatal("a skipped resource kept its clock through the kill: the next run could delete it without a new grace period")
	}
}

// A delete audited by a run killed before it saved its state is confirmed by
// the next run without a second record; one the killed run did not audit is
// recorded once, under the killed run's idempotency key.
func TestConfirmationAuditedOnce(t *testing.T) {
	var log bytes.Buffer
	killed := audit.New(&log)
	_ = killed.Write(audit.Record{Time: t0, Action: "delete", Kind: fakeName, ID: fakeID("a"), Result: "deleted", RunID: "r1", Attempt: "r1"})
	st := engine.NewState()
	for _, n := range []string{"a", "b"} {
		st.Pending[fakeID(n)] = engine.Pending{Kind: fakeName, Started: t0.Add(-time.Hour), Identity: "v1", Reason: "nobody uses it", Run: "r1"}
	}
	p := build(&fakeKind{lim: testLimits()}, st, t0, complete("a"))
	a, _, _ := enginetest.Applier(t0, 3, &fakeKind{lim: testLimits()})
	a.Audit = audit.NewReadable(&log, func() io.Reader { return bytes.NewReader(log.Bytes()) })
	out, err := a.Apply(context.Background(), p, false)
	if err != nil || len(out.Confirmed) != 2 {
		t.Fatalf("%+v %v", out, err)
	}
	done := map[string]int{}
	attempt := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Done() {
			done[r.ID]++
			attempt[r.ID] = r.Attempt
		}
	}
	if done[fakeID("a")] != 1 || done[fakeID("b")] != 1 || attempt[fakeID("b")] != "r1" {
		t.Fatalf("done %v, attempts %v:\n%s", done, attempt, log.String())
	}
}

// unnotedStore saves the state whole but cannot write a pending mark (its
// journal fails): the mark is what makes a delete that a killed run made
// confirmed and audited exactly once, so no delete may go ahead without it.
type unnotedStore struct{ *state.MemoryStore }

func (s unnotedStore) Note(context.Context, engine.Journal) error {
	return errors.New("etcdserver: request timed out")
}

func TestApplyDeletesNothingWhosePendingMarkWasNotSaved(t *testing.T) {
	k, p, a, buf, store := applyFixture("a", "b")
	a.Store = unnotedStore{store}
	out, _ := a.Apply(context.Background(), p, true)
	if strings.Contains(strings.Join(k.calls, ","), "delete") {
		t.Fatalf("deleted although the pending mark was not saved: %v", k.calls)
	}
	if out.Deleted != 0 || out.Failed != 2 || !strings.Contains(out.Results[0].Error, "save state before delete") {
		t.Fatalf("%+v", out)
	}
	if got := enginetest.AuditResults(t, buf)[fakeID("a")]; got != "failed" {
		t.Fatalf("audit: %q", got)
	}
}

// Past MaxListed deletions of a kind, an outcome counts them (and what
// they freed) without listing each: the audit log does.
func TestOutcomeListsAtMostMaxListedDeletions(t *testing.T) {
	defer func(n int) { engine.MaxListed = n }(engine.MaxListed)
	engine.MaxListed = 2
	k, p, a, buf, _ := applyFixture("a", "b", "c", "d", "e")
	k.results["c"] = errors.New("denied")
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Deleted != 4 || out.Failed != 1 || out.FreedGB != 400 || len(out.Results) != 3 {
		t.Fatalf("deleted %d, failed %d, freed %d GB, %d listed; want 4, 1, 400, 3 (2 deleted and the failure)", out.Deleted, out.Failed, out.FreedGB, len(out.Results))
	}
	if u := out.Unlisted; len(u) != 1 || u[0].Kind != fakeName || u[0].Result != audit.Deleted || u[0].Count != 2 || u[0].SizeGB != 200 ||
		u[0].Freed.Of(testGB) != 200 {
		t.Fatalf("unlisted %+v, want 2 deleted of 200 GB", out.Unlisted)
	}
	if n := len(enginetest.AuditResults(t, buf)); n != 5 {
		t.Fatalf("the audit log records %d deletes, want 5", n)
	}
}

// A delete's log line is its audit line (as deployed, in the same pod
// log): the log has a line a batch with its counts, and each deletion at
// debug level only.
func TestApplyLogsABatchLineNotADeletionLine(t *testing.T) {
	k, p, a, _, _ := applyFixture("a", "b", "c")
	k.lim.BatchSize = 2
	p = build(k, seenSince(t0.Add(-7*time.Hour), k.items...), t0, complete("a"))
	k.results["b"] = fmt.Errorf("x: %w", outcome.ErrNotFound)
	core, logs := observer.New(zap.DebugLevel)
	a.Log = zap.New(core)
	if _, err := a.Apply(context.Background(), p, true); err != nil {
		t.Fatal(err)
	}
	var info []string
	for _, e := range logs.All() {
		if e.Level == zap.InfoLevel {
			c := e.ContextMap()
			info = append(info, fmt.Sprintf("%s %v/%v", e.Message, c["deleted"], c["already_gone"]))
		}
	}
	if got := strings.Join(info, ", "); got != "batch settled 1/1, batch settled 1/0" {
		t.Fatalf("info lines: %s", got)
	}
	if n := logs.FilterMessage("deleted").FilterField(zap.String("id", fakeID("a"))).Len(); n != 1 {
		t.Fatalf("%d debug lines for a", n)
	}
}
