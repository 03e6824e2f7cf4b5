package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"reclaim.dev/reclaim/base/amount"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/base/optout"
	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/snapshot"
)

// Store loads and saves State (package state has a file, a ConfigMap and a
// memory store).
type Store interface {
	Load(ctx context.Context) (State, error)
	Save(ctx context.Context, s State) error
	String() string
}

// Journaled is a store that can save what a delete batch changes without
// rewriting the whole state: Note applies a change to the pending deletes
// of the state last loaded or saved (as the Notes since left them) and
// drops the clocks named, until the next Save. A batch then costs what it
// changed, not the size of the state nor of the pending deletes.
type Journaled interface {
	Store
	Note(ctx context.Context, j Journal) error
}

// Locker is a store that one run at a time may hold, from its load to its
// last save: two runs at once would plan on each other's pending deletes,
// delete the same resources and audit them twice. Lock fails at once,
// naming the holder, when another run holds it.
type Locker interface {
	Lock(ctx context.Context, holder string) (unlock func(), err error)
}

// Journal is what the delete batches of a run changed since its last Note
// (or Save): the pending marks set or changed, those removed, and the
// clocks a skip reset. A deleted resource's clock needs no entry: the next
// plan drops it when the listing shows it gone. Applying a Journal twice
// is applying it once, so a Note that failed goes again with the next.
type Journal struct {
	Set     map[string]Pending
	Removed []string
	Dropped []string
}

// Applier is the only code in reclaim that deletes anything. For every kind,
// batch by batch: mark pending in the state store → re-read → snapshot gate
// → delete → settle, auditing each result.
// NotFound is success, a skip is never a failure, and one failure streak
// stops the whole run.
type Applier struct {
	Kinds []Kind
	Store Store
	Audit *audit.Log
	Log   *zap.Logger
	Now   func() time.Time
	RunID string
	// MaxConsecutiveFailures stops the run early when deletes keep failing.
	MaxConsecutiveFailures int
	// Stop, once done, starts no new batch (the rest is not-attempted),
	// while the batch in flight and the state saves still run under the
	// ctx given to Apply: a graceful shutdown. Nil never stops.
	Stop context.Context
	// SnapshotPoll is how often the snapshot step re-reads the snapshots
	// it waits on (Snapshotter); 0 is snapshot.DefaultPoll. The wait never
	// outlasts the kind's Limits.SnapshotTimeout.
	SnapshotPoll time.Duration

	// mu guards the state, the outcome and the journal's fields while
	// batches run in parallel (Limits.Parallel).
	mu      sync.Mutex
	dropped []string // clocks skips reset since the last Save
	// unnoted are the ids whose pending mark was set or removed since the
	// last Note, and dropped[noted:] the clocks: the next Note's Journal.
	unnoted map[string]bool
	noted   int
}

// run is what the batches of one Apply share, under Applier.mu.
type run struct {
	out   *Outcome
	done  map[string]bool // deleted or found gone in this run: what After waits for
	fails int             // batches failed in a row
	// streak is why a failure streak stopped the run, once one did.
	streak string
	// lost counts the audit lines of other results (skips, failures,
	// deferrals) that could not be written; Outcome counts the deletes'
	// and the snapshots'.
	lost int
}

// stop is the run's one stop, out.Stopped: once it is set no batch
// starts, and no batch makes its delete call (whatever it already did),
// in every kind. It is set after a failure streak, and as soon as an audit
// line could not be written (audit or stop: no delete goes on
// unrecorded), and said again each time, counting every line lost.
func (r *run) stop() {
	o := r.out
	var lost []string
	for _, c := range []struct {
		n    int
		noun string
	}{{o.Unaudited, "delete"}, {o.UnauditedSnapshots, "snapshot"}, {r.lost, "other result"}} {
		if c.n == 1 {
			lost = append(lost, "1 "+c.noun)
		} else if c.n > 1 {
			lost = append(lost, fmt.Sprintf("%d %ss", c.n, c.noun))
		}
	}
	unaudited := ""
	if k := len(lost); k > 0 {
		unaudited = lost[k-1]
		if k > 1 {
			unaudited = strings.Join(lost[:k-1], ", ") + " and " + unaudited
		}
		unaudited += " could not be written to the audit log"
	}
	switch {
	case r.streak != "" && unaudited != "":
		o.Stopped = r.streak + "; " + unaudited
	case r.streak != "":
		o.Stopped = r.streak
	case unaudited != "":
		o.Stopped = "stopped: " + unaudited
	}
}

// kind runs one kind's batches, Limits().Parallel at once, in order: a
// batch starts after the earlier batches holding what it waits for (After)
// are done, and none starts once the run is stopped.
func (a *Applier) kind(ctx context.Context, k Kind, st *State, p *Plan, batches [][]int, r *run) {
	waited, where := waits(p, batches)
	// Snapshots first: every due one started (or found) before any is
	// waited on, and all waited on together.
	var snaps map[string]*snapped
	if s, ok := k.(Snapshotter); ok && len(batches) > 0 && r.out.Stopped == "" && (a.Stop == nil || a.Stop.Err() == nil) {
		snaps = a.snapshotFirst(ctx, k, s, p, batches, r)
	}
	finished := make([]chan struct{}, len(batches))
	for i := range finished {
		finished[i] = make(chan struct{})
	}
	work := func(i int) {
		defer close(finished[i])
		batch := p.decisionsAt(batches[i]) // rows made again only now
		batches[i] = nil                   // a group's slots go with its last batch
		for _, d := range batch {
			for _, id := range d.After {
				if j, ok := where[id]; ok && j < i {
					<-finished[j]
				}
			}
		}
		if batch = a.start(ctx, batch, r); len(batch) == 0 {
			return
		}
		res, settled := a.batch(ctx, k, st, p, batch, r, snaps)
		a.ended(r, res, settled, waited)
	}
	inOrder(len(batches), k.Limits().Parallel, work)
}

// inOrder runs work(0..n-1), taken in order, par at once.
func inOrder(n, par int, work func(i int)) {
	par = min(max(par, 1), n)
	if par <= 1 {
		for i := range n {
			work(i)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for i := range next {
				work(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// waits finds what some decision of batches waits for (After), and the
// batch each such id is in. Only those need finding: a trim of 500,000
// images with no index would otherwise map every id twice. Rows neither
// wait nor are waited for.
func waits(p *Plan, batches [][]int) (waited map[string]bool, where map[string]int) {
	waited, where = map[string]bool{}, map[string]int{}
	for _, b := range batches {
		for _, slot := range b {
			if slot >= 0 {
				for _, id := range p.Decisions[slot].After {
					waited[id] = true
				}
			}
		}
	}
	for i, b := range batches {
		for _, slot := range b {
			if slot >= 0 && waited[p.Decisions[slot].ID] {
				where[p.Decisions[slot].ID] = i
			}
		}
	}
	return waited, where
}

// start returns what of a batch starts: nothing once the run is stopped
// (the rest is not attempted), and nothing that waits for a deletion that
// did not happen.
func (a *Applier) start(ctx context.Context, batch []*Decision, r *run) []*Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := r.out
	if out.Stopped != "" || ctx.Err() != nil || (a.Stop != nil && a.Stop.Err() != nil) {
		for _, d := range batch {
			out.Results = append(out.Results, d.result(audit.NotAttempted, orDefault(out.Stopped, "run cancelled")))
		}
		return nil
	}
	return waiting(batch, r.done, out)
}

// ended counts what a batch settled and its result, and stops the run
// after a failure streak.
func (a *Applier) ended(r *run, res batchResult, settled []string, waited map[string]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range settled {
		if waited[id] {
			r.done[id] = true
		}
	}
	switch res {
	case batchFailed:
		r.fails++
	case batchDone:
		r.fails = 0
	}
	if a.MaxConsecutiveFailures > 0 && r.fails >= a.MaxConsecutiveFailures && r.streak == "" {
		r.streak = fmt.Sprintf("stopped after %d delete calls failed in a row", r.fails)
		r.stop()
	}
}

// note saves what batches changed since the last note: a journal entry
// where the store keeps one, else the whole state.
func (a *Applier) note(ctx context.Context, st *State) error {
	if err := a.durable(); err != nil {
		return err
	}
	j, ok := a.Store.(Journaled)
	if !ok {
		if err := a.Store.Save(ctx, *st); err != nil {
			return err
		}
		clear(a.unnoted)
		return nil
	}
	c := Journal{Dropped: a.dropped[a.noted:]}
	for id := range a.unnoted {
		if p, ok := st.Pending[id]; ok {
			if c.Set == nil {
				c.Set = make(map[string]Pending, len(a.unnoted))
			}
			c.Set[id] = p
		} else {
			c.Removed = append(c.Removed, id)
		}
	}
	slices.Sort(c.Removed)
	if err := j.Note(ctx, c); err != nil {
		return err // kept or not, the change goes again with the next note
	}
	clear(a.unnoted)
	a.noted = len(a.dropped)
	return nil
}

// mark sets a pending mark, for the next note.
func (a *Applier) mark(st *State, id string, p Pending) {
	st.Pending[id] = p
	a.unnoted[id] = true
}

// unmark removes a pending mark, for the next note.
func (a *Applier) unmark(st *State, id string) {
	if _, ok := st.Pending[id]; ok {
		delete(st.Pending, id)
		a.unnoted[id] = true
	}
}

// Result is what happened to one decision.
type Result struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Result string `json:"result"` // deleted, already-gone, skipped, failed, deferred, not-attempted
	Reason string `json:"reason"`
	Error  string `json:"error,omitempty"`
	SizeGB int64  `json:"sizeGB"`
	Bytes  int64  `json:"bytes,omitempty"`
	// Frees is what it frees, in its kind's units (SizeGB and Bytes are
	// the amounts schema v1 records).
	Frees amount.Frees `json:"-"`
	// Owner is the decision's (a report cut to owners counts theirs).
	Owner string `json:"-"`
}

// result is what happened to d.
func (d *Decision) result(result, reason string) Result {
	return Result{Kind: d.Kind, ID: d.ID, Result: result, Reason: reason, Frees: d.Frees,
		SizeGB: d.Frees.Keyed(amount.KeySizeGB), Bytes: d.Frees.Keyed(amount.KeyBytes), Owner: d.Owner}
}

// Outcome is the applier's summary.
type Outcome struct {
	Results   []Result `json:"results"`
	Confirmed []string `json:"confirmed,omitempty"`
	Deleted   int      `json:"deleted"`
	Failed    int      `json:"failed"`
	// Unaudited are deletes done whose audit line could not be written:
	// their pending marks stay, the next run writes their lines, and this
	// run fails (audit or stop).
	Unaudited int `json:"unaudited,omitempty"`
	// UnauditedSnapshots are snapshots made or reused for a delete whose
	// audit line could not be written: they stop the run too.
	UnauditedSnapshots int `json:"unauditedSnapshots,omitempty"`
	Skipped            int `json:"skipped"`
	// Deferred are deletes held back for their snapshot, or for cluster
	// views gone stale by their delete call (audit.Deferred).
	Deferred int   `json:"deferred,omitempty"`
	FreedGB  int64 `json:"freedGB"`
	// FreedBytes is what the deleted images held.
	FreedBytes int64  `json:"freedBytes,omitempty"`
	Stopped    string `json:"stopped,omitempty"`
	// Freed is what the deletions freed, in their kinds' units.
	Freed amount.Total `json:"-"`
	// Unlisted count the deletions of a kind past the first MaxListed,
	// which Results leaves out (the audit log records each): a trim of
	// 500,000 images keeps no 500,000 results.
	Unlisted []Unlisted `json:"unlisted,omitempty"`
	// Saved is the state Apply saved last: the next run's, which a caller
	// updates and saves again without reading a million clocks back.
	Saved  State `json:"-"`
	listed map[string]int
	// reasons are the listed deletions' reasons, one copy of each: a
	// trim's 10,000 listed share a few (1.4 MB of copies otherwise).
	reasons map[string]string
}

// MaxListed is how many deletions of a kind Outcome.Results lists; a
// failure, a skip and a delete not attempted are always listed.
var MaxListed = 10000

// Unlisted are the deletions of one kind and owner with one result past
// MaxListed.
type Unlisted struct {
	Kind   string `json:"kind"`
	Owner  string `json:"owner,omitempty"`
	Result string `json:"result"`
	Count  int    `json:"count"`
	SizeGB int64  `json:"sizeGB"`
	Bytes  int64  `json:"bytes,omitempty"`
	// Freed is what they freed, in their kind's units.
	Freed amount.Total `json:"-"`
}

// AddUnlisted counts deletions another outcome did not list (a report cut
// to an owner takes its own).
func (o *Outcome) AddUnlisted(u Unlisted) {
	o.Unlisted = append(o.Unlisted, u)
	o.Deleted += u.Count
	o.FreedGB += u.SizeGB
	o.FreedBytes += u.Bytes
	for _, a := range u.Freed.Amounts {
		o.Freed.Add(amount.Frees{Amounts: [2]amount.Amount{a}})
	}
	o.Freed.Cost += u.Freed.Cost
}

// Add counts one result (a report cut to an owner recounts its own).
func (o *Outcome) Add(r Result) {
	if o.list(r) {
		if r.Result == audit.Deleted || r.Result == audit.AlreadyGone {
			r.Reason = o.shared(r.Reason)
		}
		o.Results = append(o.Results, r)
	}
	switch r.Result {
	case audit.Deleted, audit.AlreadyGone:
		o.Deleted++
		o.FreedGB += r.SizeGB
		o.FreedBytes += r.Bytes
		o.Freed.Add(r.Frees)
	case audit.Failed:
		o.Failed++
	case audit.Skipped:
		o.Skipped++
	case audit.Deferred:
		o.Deferred++
	}
}

// shared returns one copy of each reason.
func (o *Outcome) shared(reason string) string {
	if s, ok := o.reasons[reason]; ok {
		return s
	}
	if o.reasons == nil {
		o.reasons = map[string]string{}
	}
	o.reasons[reason] = reason
	return reason
}

// list says whether Results lists r, and counts it in Unlisted if not.
func (o *Outcome) list(r Result) bool {
	if r.Result != audit.Deleted && r.Result != audit.AlreadyGone {
		return true
	}
	if o.listed == nil {
		o.listed = map[string]int{}
	}
	if o.listed[r.Kind] < MaxListed {
		o.listed[r.Kind]++
		return true
	}
	for i := range o.Unlisted {
		if u := &o.Unlisted[i]; u.Kind == r.Kind && u.Owner == r.Owner && u.Result == r.Result {
			u.Count, u.SizeGB, u.Bytes = u.Count+1, u.SizeGB+r.SizeGB, u.Bytes+r.Bytes
			u.Freed.Add(r.Frees)
			return false
		}
	}
	u := Unlisted{Kind: r.Kind, Owner: r.Owner, Result: r.Result, Count: 1, SizeGB: r.SizeGB, Bytes: r.Bytes}
	u.Freed.Add(r.Frees)
	o.Unlisted = append(o.Unlisted, u)
	return false
}

// Apply records the plan's state and, only with apply, deletes what the plan
// marks for deletion. This is the one dry-run switch: without apply no
// kind's Recheck or Delete is ever called.
func (a *Applier) Apply(ctx context.Context, p *Plan, apply bool) (*Outcome, error) {
	out := &Outcome{}
	st := p.State
	recorded := a.recorded(p.confirmations)
	for _, c := range p.confirmations {
		out.Confirmed = append(out.Confirmed, c.id)
		if recorded[c.id] {
			// Audited by the run that deleted it, which was killed before
			// it saved the state: once is enough.
			continue
		}
		if err := a.audit(audit.Record{Action: "delete", Kind: c.pending.Kind, ID: c.id, Reason: c.pending.Reason,
			Result: audit.ConfirmedDeleted, SizeGB: c.pending.SizeGB, Bytes: c.pending.Bytes, Attempt: c.pending.Run}); err != nil {
			return out, err
		}
	}
	if err := a.durable(); err != nil {
		return out, err
	}
	if err := a.Store.Save(ctx, st); err != nil {
		return out, err
	}
	out.Saved = st
	if !apply {
		return out, nil
	}
	a.dropped, a.unnoted, a.noted = nil, map[string]bool{}, 0
	r := &run{out: out, done: map[string]bool{}}
	for _, k := range a.Kinds {
		a.kind(ctx, k, &st, p, planBatches(p, k), r)
	}
	// Skips reset clocks; save them even if nothing was deleted.
	if err := a.durable(); err != nil {
		return out, err
	}
	if err := a.Store.Save(ctx, st); err != nil {
		return out, err
	}
	out.Saved = st
	return out, nil
}

// recorded says which confirmations the audit log already records as done
// by the run that started them. A log that cannot be read back (stdout)
// records the confirmation with the same idempotency key (Attempt, ID), for
// whoever reads it to count once.
func (a *Applier) recorded(cs []confirmation) map[string]bool {
	deletes := map[string]string{}
	for _, c := range cs {
		if c.pending.Run != "" {
			deletes[c.id] = c.pending.Run
		}
	}
	if len(deletes) == 0 || a.Audit == nil {
		return nil
	}
	done, err := a.Audit.Done(deletes)
	if err != nil && !errors.Is(err, audit.ErrUnreadable) {
		a.Log.Warn("could not read the audit log back; confirmations are recorded with their idempotency key", zap.Error(err))
	}
	return done
}

// waiting leaves out of a batch what waits (After) for a deletion that did
// not happen in this run — failed, skipped or not attempted: deleting a
// child its index still lists would break the index.
func waiting(batch []*Decision, done map[string]bool, out *Outcome) []*Decision {
	var ready []*Decision
	for _, d := range batch {
		missing := ""
		for _, id := range d.After {
			if !done[id] {
				missing = id
				break
			}
		}
		if missing == "" {
			ready = append(ready, d)
			continue
		}
		out.Results = append(out.Results, d.result(audit.NotAttempted, "waits for "+missing+", which was not deleted this run"))
	}
	return ready
}

type batchResult int

const (
	batchDone    batchResult = iota // something was deleted or found gone
	batchFailed                     // the call failed, or every delete in it did
	batchNeutral                    // only skips
)

// batch handles one batch of one kind and returns what it settled (deleted
// or found gone), in five steps: mark pending, re-read, snapshot gate,
// delete (after the last look, lastLook) and settle. It holds a.mu except while the kind re-reads and
// deletes.
func (a *Applier) batch(ctx context.Context, k Kind, st *State, p *Plan, batch []*Decision, r *run, snaps map[string]*snapped) (batchResult, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.begin(k, st, r)
	if !b.markPending(ctx, batch) {
		return batchFailed, nil
	}
	goes, ok := b.reread(ctx, batch)
	if !ok {
		return batchFailed, nil
	}
	goes = b.snapshotGate(goes, snaps)
	if goes = b.lastLook(goes, p); len(goes) == 0 {
		return b.nothingSent(ctx)
	}
	results, err := b.delete(ctx, goes)
	return b.settle(ctx, goes, results, err)
}

// begin starts one batch of k.
func (a *Applier) begin(k Kind, st *State, r *run) *inFlight {
	return &inFlight{a: a, k: k, st: st, r: r, out: r.out, result: batchNeutral, snapshotOf: map[string]string{},
		log: a.Log.With(zap.String("kind", k.Name()), zap.Bool("dry_run", false))}
}

// inFlight is one batch of one kind while the applier runs it (batch): its
// steps run under Applier.mu.
type inFlight struct {
	a   *Applier
	k   Kind
	st  *State
	r   *run
	out *Outcome // r's
	log *zap.Logger
	// skipped: a skip reset a clock, which the journal must say at once.
	// After the deletes, only that must be saved at once: the pending
	// marks of what was deleted go with the next batch's entry (or the
	// last save), and a run killed before that confirms them from the
	// listing, audited once (Audit.Done).
	skipped bool
	// unmarked: pending marks were dropped for what will not be sent.
	unmarked   bool
	snapFailed int               // snapshots failed: refused deletes
	snapshotOf map[string]string // the snapshot each delete's audit line names
	result     batchResult       // what the re-read found (batchDone: something gone)
	gone       []string          // settled: deleted or found gone
	deleted    int               // of gone, deleted by this batch
}

// record reports and audits one result; false when its audit line could
// not be written.
func (b *inFlight) record(d *Decision, result, reason, errText, snapshot string) bool {
	r := d.result(result, orDefault(reason, d.Why()))
	r.Error = errText
	auditErr := b.a.audit(audit.Record{Action: "delete", Kind: d.Kind, ID: d.ID, Reason: r.Reason, Result: result, Error: errText,
		SizeGB: r.SizeGB, Bytes: r.Bytes, Snapshot: snapshot})
	if auditErr != nil {
		if r.Error == "" {
			r.Error = "not audited: " + auditErr.Error()
		}
		// Audit or stop, at once: a delete done (goneNow) keeps its
		// pending mark for the next run to write its line.
		if result == audit.Deleted || result == audit.AlreadyGone {
			b.out.Unaudited++
		} else {
			b.r.lost++
		}
		b.r.stop()
	}
	// The fields as With would put them, without With's copy of the
	// logger: a line a resource.
	f := [4]zap.Field{zap.String("id", d.ID), zap.String("action", "delete"), zap.String("reason", r.Reason)}
	switch {
	case result == audit.Failed:
		f[3] = zap.String("error", errText)
		b.log.Warn("delete failed", f[:]...)
	case result == audit.Deferred:
		f[3] = zap.String("snapshot", snapshot)
		b.log.Warn("delete deferred", f[:]...)
	case auditErr != nil:
		f[3] = zap.Error(auditErr)
		b.log.Error(result+", but the audit line could not be written; the next run writes it", f[:]...)
	case result == audit.Deleted || result == audit.AlreadyGone:
		// Its audit line says as much (as deployed, in the same pod
		// log); the batch's counts are logged (logGone).
		b.log.Debug(result, f[:3]...)
	default:
		b.log.Info(result, f[:3]...)
	}
	b.out.Add(r)
	return auditErr == nil
}

// goneNow settles a resource found gone or deleted once its audit line is
// written: no pending mark, no clock. Otherwise its pending mark stays,
// and the next run, which sees it gone from the listing, writes the line
// (audit or stop).
func (b *inFlight) goneNow(d *Decision, result, snapshot string) {
	if !b.record(d, result, "", "", snapshot) {
		return
	}
	b.a.unmark(b.st, d.ID)
	b.st.DropClock(d.ID)
	b.gone = append(b.gone, d.ID)
	if result == audit.Deleted {
		b.deleted++
	}
}

// logGone logs what the batch deleted or found gone, one line a batch:
// each one's line is the audit log's.
func (b *inFlight) logGone() {
	if len(b.gone) > 0 {
		b.log.Info("batch settled", zap.Int("deleted", b.deleted), zap.Int("already_gone", len(b.gone)-b.deleted))
	}
}

// changed is a skip: its clock starts over, and must not survive a kill.
func (b *inFlight) changed(d *Decision) {
	b.a.unmark(b.st, d.ID)
	b.st.DropClock(d.ID)
	b.a.dropped = append(b.a.dropped, d.ID)
	b.skipped = true
}

// unsent drops d's pending mark, nothing having been sent, and reports it.
func (b *inFlight) unsent(d *Decision, result, reason, errText, snapshot string) {
	b.a.unmark(b.st, d.ID)
	b.record(d, result, reason, errText, snapshot)
	b.unmarked = true
}

// noteSkips saves a skip's reset clock, if any.
func (b *inFlight) noteSkips(ctx context.Context) error {
	if !b.skipped {
		return nil
	}
	return b.a.note(ctx, b.st)
}

// unlocked runs a kind's call without holding the state.
func (b *inFlight) unlocked(f func()) {
	b.a.mu.Unlock()
	defer b.a.mu.Lock()
	f()
}

// markPending is step 1: pending marks first, saved. A run killed after
// the delete call leaves them, and the next run confirms (and audits) the
// delete from its listing; no delete goes without its mark.
func (b *inFlight) markPending(ctx context.Context, batch []*Decision) bool {
	for _, d := range batch {
		b.a.mark(b.st, d.ID, Pending{Kind: d.Kind, Started: b.a.Now(), Reason: d.Why(), Identity: d.Identity,
			SizeGB: d.Frees.Keyed(amount.KeySizeGB), Bytes: d.Frees.Keyed(amount.KeyBytes), Run: b.a.RunID})
	}
	err := b.a.note(ctx, b.st)
	if err == nil {
		return true
	}
	for _, d := range batch {
		b.a.unmark(b.st, d.ID)
		b.record(d, audit.Failed, "", "save state before delete: "+err.Error(), "")
	}
	return false
}

// reread is step 2, the second look: gone or changed since the plan (or
// opted out) means no delete. It returns what may still go; false when the
// re-read failed, and nothing goes.
func (b *inFlight) reread(ctx context.Context, batch []*Decision) ([]*Decision, bool) {
	var verdicts []Verdict
	var err error
	b.unlocked(func() { verdicts, err = b.k.Recheck(ctx, batch) })
	if err == nil && len(verdicts) != len(batch) {
		err = fmt.Errorf("%d verdicts for %d resources", len(verdicts), len(batch))
	}
	if err != nil {
		for _, d := range batch {
			b.a.unmark(b.st, d.ID)
			b.record(d, audit.Failed, "", "re-read before delete: "+err.Error(), "")
		}
		_ = b.a.note(ctx, b.st)
		return nil, false
	}
	var goes []*Decision
	optOut := b.k.Limits().OptOutKey
	for i, d := range batch {
		if verdicts[i].Result == Go && optOut != "" {
			verdicts[i] = optedOut(verdicts[i], optOut)
		}
		switch verdicts[i].Result {
		case GoneNow:
			b.goneNow(d, audit.AlreadyGone, "")
			b.result = batchDone
		case Skip:
			b.changed(d)
			b.record(d, audit.Skipped, verdicts[i].Reason, "", "")
		default:
			goes = append(goes, d)
		}
	}
	return goes, true
}

// snapshotGate is step 3, the snapshot step's verdict (kinds that snapshot
// nothing pass it): a resource snapshotted
// first goes only once its snapshot is done, and its snapshot id goes with
// the delete's audit line. Whatever the snapshot step did or did not reach
// is not deleted without its snapshot.
func (b *inFlight) snapshotGate(goes []*Decision, snaps map[string]*snapped) []*Decision {
	s, ok := b.k.(Snapshotter)
	if !ok {
		return goes
	}
	ready := goes[:0]
	for _, d := range goes {
		if !s.SnapshotFirst(d) {
			ready = append(ready, d)
			continue
		}
		sn := snaps[d.ID]
		switch {
		case sn == nil:
			// Not in the snapshot step (never expected): no delete.
			b.unsent(d, audit.Failed, "", "snapshot before delete: no snapshot was taken", "")
			b.snapFailed++
		case sn.state == snapshot.Done:
			b.snapshotOf[d.ID] = sn.id
			ready = append(ready, d)
		case sn.state == snapshot.Pending:
			// Held, not failed: nothing was sent, and its clock runs on.
			b.unsent(d, audit.Deferred, deferral(sn, b.k.Limits().SnapshotTimeout), "", sn.id)
		default:
			// Refused: the resource was not touched.
			b.unsent(d, audit.Failed, "", sn.problem, sn.id)
			b.snapFailed++
		}
	}
	return ready
}

// lastLook is what must hold right before the delete call, after the
// re-read and any snapshot wait. The run's stop (run.stop), which another
// batch may have set meanwhile: what this batch would send is not
// attempted. And what Build checked when the plan was made: a delete whose
// cluster views went stale meanwhile (FreshViews) is deferred, held as
// Build would hold it now, its clock kept.
func (b *inFlight) lastLook(goes []*Decision, p *Plan) []*Decision {
	if stopped := b.out.Stopped; stopped != "" {
		for _, d := range goes {
			b.a.unmark(b.st, d.ID) // nothing is sent
			b.out.Add(d.result(audit.NotAttempted, stopped))
		}
		if len(goes) > 0 {
			b.unmarked = true
		}
		return nil
	}
	now := b.a.Now()
	ready := goes[:0]
	for _, d := range goes {
		if why := p.staleAt(d, now); why != "" {
			b.unsent(d, audit.Deferred, staleDeferral(why), "", b.snapshotOf[d.ID])
			continue
		}
		ready = append(ready, d)
	}
	return ready
}

// nothingSent ends a batch that sends no delete.
func (b *inFlight) nothingSent(ctx context.Context) (batchResult, []string) {
	b.logGone()
	if b.unmarked {
		_ = b.a.note(ctx, b.st) // no pending mark stays for what was not sent
	} else {
		_ = b.noteSkips(ctx)
	}
	if b.snapFailed > 0 && b.result != batchDone {
		return batchFailed, b.gone
	}
	return b.result, b.gone
}

// delete is step 4, the delete call, made with what passed the last look
// (lastLook) and without holding the state.
func (b *inFlight) delete(ctx context.Context, goes []*Decision) ([]Deleted, error) {
	var results []Deleted
	var err error
	b.unlocked(func() { results, err = b.k.Delete(ctx, goes) })
	if err == nil && len(results) != len(goes) {
		err = fmt.Errorf("%d results for %d deletes", len(results), len(goes))
	}
	return results, err
}

// settle is step 5: it records what the delete call said of each resource
// (settleOne), saves what must be saved at once and says how the batch
// went.
func (b *inFlight) settle(ctx context.Context, goes []*Decision, results []Deleted, err error) (batchResult, []string) {
	if err != nil {
		// Keep the pending marks: if the call did delete, the next run sees
		// the resources gone and records them then.
		for _, d := range goes {
			b.record(d, audit.Failed, "", err.Error(), "")
		}
		b.logGone()
		_ = b.noteSkips(ctx)
		return batchFailed, b.gone
	}
	failed := b.snapFailed
	for i, d := range goes {
		if !b.settleOne(d, results[i].Err) {
			failed++
		}
	}
	b.logGone()
	if err := b.noteSkips(ctx); err != nil {
		b.log.Warn("deleted, but could not save the state", zap.Error(err))
	}
	switch {
	case failed == len(goes)+b.snapFailed && b.result != batchDone:
		return batchFailed, b.gone
	case failed < len(goes)+b.snapFailed:
		return batchDone, b.gone
	}
	return b.result, b.gone
}

// settleOne records what the provider said of d's delete (outcome.Of);
// false when it failed.
func (b *inFlight) settleOne(d *Decision, err error) bool {
	snap := b.snapshotOf[d.ID]
	switch outcome.Of(err) {
	case outcome.Deleted:
		b.goneNow(d, audit.Deleted, snap)
	case outcome.Gone:
		b.goneNow(d, audit.AlreadyGone, snap)
	case outcome.Changed:
		b.changed(d)
		b.record(d, audit.Skipped, skipReason(err), "", snap)
	case outcome.Refused:
		// Refused for this resource: it is still there, its clock runs
		// on, and the next run tries again.
		b.a.unmark(b.st, d.ID)
		b.record(d, audit.Failed, "", err.Error(), snap)
		return false
	default:
		// No answer for this resource: it may be gone. Its pending mark
		// stays, and the next run settles it from its listing.
		b.record(d, audit.Failed, "", "outcome unknown: "+err.Error(), snap)
		return false
	}
	return true
}

// optedOut applies the opt-out rule (package optout) to what the re-read
// saw: a resource that carries the key now, or whose labels the kind did
// not show, is skipped.
func optedOut(v Verdict, key string) Verdict {
	if v.Labels == nil {
		return Verdict{Result: Skip, Reason: "skipped: the re-read did not show its labels, so its opt-out " + key + " could not be checked"}
	}
	if val, ok := optout.Protects(key, v.Labels); ok {
		return Verdict{Result: Skip, Reason: fmt.Sprintf("skipped: protected by %s=%s since it was planned", key, val)}
	}
	return v
}

// durable syncs the audit lines written so far: before any save of a state
// that no longer holds their deletes' pending marks.
func (a *Applier) durable() error {
	if a.Audit == nil {
		return nil
	}
	return a.Audit.Sync()
}

func (a *Applier) audit(r audit.Record) error {
	if a.Audit == nil {
		return nil
	}
	r.Time = a.Now().UTC()
	r.RunID = a.RunID
	if r.Action == "delete" && r.Attempt == "" {
		r.Attempt = a.RunID
	}
	return a.Audit.Write(r)
}

// planBatches groups a kind's deletions by Group, in plan order, at most
// Limits().BatchSize a batch, and so that a decision comes in a later batch
// than everything in its After. A batch is slots (a Decisions index, or
// below 0 a row's, made again only when the batch runs); a row's group is
// its Remaker's (Remaker).
func planBatches(p *Plan, k Kind) [][]int {
	g := groupDeletes(p, k.Name())
	g.layerAfter(p)
	return g.cut(p, max(k.Limits().BatchSize, 1))
}

// deleteGroups are a kind's deletes by Group, in plan order, and the layer
// of each that waits or is waited for (After); every other one is in
// layer 0.
type deleteGroups struct {
	groups []string
	slots  [][]int // each group's, made to size: a trim's 500,000 are held once
	layer  map[string]int
}

// groupDeletes finds kind's deletes, decisions first, then rows. It counts
// each group's first and then fills lists of that size: lists grown by
// append held half as much again, and were copied by cut.
func groupDeletes(p *Plan, kind string) *deleteGroups {
	g := &deleteGroups{layer: map[string]int{}}
	waited := map[string]bool{}
	for i := range p.Decisions {
		if d := &p.Decisions[i]; d.Kind == kind && d.Action == Delete {
			for _, a := range d.After {
				waited[a] = true
			}
		}
	}
	for i := range p.Decisions {
		d := &p.Decisions[i]
		if d.Kind == kind && d.Action == Delete && (len(d.After) > 0 || waited[d.ID]) {
			g.layer[d.ID] = 0
		}
	}
	rs := &p.compact
	each := func(f func(group string, slot int)) {
		for i := range p.Decisions {
			if d := &p.Decisions[i]; d.Kind == kind && d.Action == Delete {
				f(d.Group, i)
			}
		}
		for _, j := range rs.order {
			w := rs.at(int(j))
			s := &rs.srcs[w.src]
			if s.kind != kind || rs.lookAt(w).action() != Delete {
				continue
			}
			group := s.group // recorded as its rows were put
			if s.mixed {
				group = s.remake.Remake(w.item).Group
			}
			f(group, -int(j)-1)
		}
	}
	at := map[string]int{}
	var counts []int
	each(func(group string, _ int) {
		i, ok := at[group]
		if !ok {
			i = len(g.groups)
			at[group] = i
			g.groups = append(g.groups, group)
			counts = append(counts, 0)
		}
		counts[i]++
	})
	g.slots = make([][]int, len(g.groups))
	for i, n := range counts {
		g.slots[i] = make([]int, 0, n)
	}
	each(func(group string, slot int) {
		i := at[group]
		g.slots[i] = append(g.slots[i], slot)
	})
	return g
}

// layerAfter makes a decision's layer one more than the deepest of what it
// waits for (bounded, so that a cycle cannot loop forever).
func (g *deleteGroups) layerAfter(p *Plan) {
	for changed, rounds := true, 0; changed && rounds <= len(g.layer); rounds++ {
		changed = false
		for _, slots := range g.slots {
			for _, slot := range slots {
				if slot < 0 {
					continue
				}
				d := &p.Decisions[slot]
				for _, a := range d.After {
					if l, ok := g.layer[a]; ok && g.layer[d.ID] <= l {
						g.layer[d.ID] = l + 1
						changed = true
					}
				}
			}
		}
	}
}

// cut makes the batches: group by group, layer by layer, size at most. A
// group all in layer 0 (every row's) is cut where it lies, not copied.
func (g *deleteGroups) cut(p *Plan, size int) [][]int {
	var out [][]int
	layerOf := func(slot int) int {
		if slot < 0 {
			return 0
		}
		return g.layer[p.Decisions[slot].ID]
	}
	for _, slots := range g.slots {
		layers := [][]int{slots}
		if slices.ContainsFunc(slots, func(slot int) bool { return layerOf(slot) > 0 }) {
			layers = nil
			for _, slot := range slots {
				l := layerOf(slot)
				for len(layers) <= l {
					layers = append(layers, nil)
				}
				layers[l] = append(layers[l], slot)
			}
		}
		for _, list := range layers {
			for len(list) > 0 {
				n := min(len(list), size)
				out = append(out, list[:n:n])
				list = list[n:]
			}
		}
	}
	return out
}

// decisionsAt returns the decisions of slots, rows made again (each its own).
func (p *Plan) decisionsAt(slots []int) []*Decision {
	out := make([]*Decision, len(slots))
	for i, slot := range slots {
		if slot >= 0 {
			out[i] = &p.Decisions[slot]
			continue
		}
		d := new(Decision)
		p.compact.materialize(rowOf(slot), d)
		out[i] = d
	}
	return out
}
