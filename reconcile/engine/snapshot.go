package engine

import (
	"context"
	"fmt"
	"time"

	"reclaim.dev/reclaim/reconcile/audit"
)

// Snapshotter is a kind that can save a resource before deleting it (a
// disk, a volume). The kind only starts snapshots and reads them; the rule
// is the engine's, the same for every such kind:
//
//   - a snapshot is reused only when it was started within the current
//     orphan period (at or after the decision's OrphanSince): a resource
//     re-bound and written since an older one was taken would be deleted
//     with a backup that lacks what was written;
//   - every due snapshot of the kind is started (or found) first, then all
//     are waited on together, up to one deadline (Limits.SnapshotTimeout),
//     re-read at most every Applier.SnapshotPoll and never past the deadline;
//   - a resource is deleted only once its snapshot is done. One still
//     pending at the deadline is a deferral (ResultDeferred: held, its clock
//     runs on, and a later run of the same orphan period waits on the same
//     snapshot); one that failed, or could not be started or read, is a
//     refused delete (ResultFailed);
//   - the audit log says whether the snapshot was created or reused.
type Snapshotter interface {
	// SnapshotFirst says whether d's resource is snapshotted before its
	// delete.
	SnapshotFirst(d *Decision) bool
	// Snapshots lists the snapshots reclaim made of d's resource, of any
	// age: the engine picks which, if any, it reuses.
	Snapshots(ctx context.Context, d *Decision) ([]Snapshot, error)
	// StartSnapshot starts a snapshot of d's resource and returns its id,
	// without waiting for it to complete.
	StartSnapshot(ctx context.Context, d *Decision) (string, error)
	// SnapshotState re-reads one snapshot of d's resource. One not found
	// yet (an eventually consistent listing) is pending.
	SnapshotState(ctx context.Context, d *Decision, id string) (SnapshotState, error)
}

// SnapshotState is where a snapshot is.
type SnapshotState int

const (
	// SnapshotPending: still being made.
	SnapshotPending SnapshotState = iota
	// SnapshotDone: complete; the resource may be deleted.
	SnapshotDone
	// SnapshotFailed: it will never complete.
	SnapshotFailed
)

func (s SnapshotState) String() string {
	switch s {
	case SnapshotDone:
		return "done"
	case SnapshotFailed:
		return "failed"
	}
	return "pending"
}

// Snapshot is one snapshot reclaim made of a resource.
type Snapshot struct {
	ID      string
	Started time.Time
	State   SnapshotState
}

// DefaultSnapshotPoll is how often pending snapshots are re-read when
// Applier.SnapshotPoll is 0.
const DefaultSnapshotPoll = 10 * time.Second

// Audit results of a snapshot line.
const (
	SnapshotCreated = "created"
	SnapshotReused  = "reused"
)

// snapped is what the snapshot step settled for one decision.
type snapped struct {
	id      string
	reused  bool
	state   SnapshotState
	problem string // why there is no usable snapshot (SnapshotFailed)
}

// Reusable picks the snapshot a delete may rely on among what reclaim made
// of a resource orphaned since since: the newest one not failed that was
// started within the orphan period. None when since is unknown.
func Reusable(snaps []Snapshot, since *time.Time) (Snapshot, bool) {
	var best Snapshot
	found := false
	if since == nil {
		return best, false
	}
	for _, s := range snaps {
		if s.State == SnapshotFailed || s.Started.Before(*since) {
			continue
		}
		if !found || s.Started.After(best.Started) {
			best, found = s, true
		}
	}
	return best, found
}

// snapshotFirst is the snapshot step of one kind's deletes, before any of
// them is marked pending: it finds or starts every due snapshot, then waits
// on all of them together until each is done or failed, or the deadline
// passes. It returns what it settled by decision id.
func (a *Applier) snapshotFirst(ctx context.Context, k Kind, s Snapshotter, p *Plan, batches [][]int) map[string]*snapped {
	type due struct {
		d *Decision
		s *snapped
	}
	var all []due
	for _, b := range batches {
		for _, d := range p.decisionsAt(b) {
			if s.SnapshotFirst(d) {
				all = append(all, due{d: d, s: &snapped{}})
			}
		}
	}
	out := make(map[string]*snapped, len(all))
	if len(all) == 0 {
		return out
	}
	audit1 := func(d *Decision, sn *snapped) {
		result := SnapshotCreated
		if sn.reused {
			result = SnapshotReused
		}
		_ = a.audit(audit.Record{Action: "snapshot", Kind: d.Kind, ID: d.ID, Reason: "snapshot before delete", Result: result,
			Snapshot: sn.id, SizeGB: d.Frees.Keyed(KeySizeGB)})
	}
	// 1. Find or start every one before waiting on any.
	var waiting []due
	for _, x := range all {
		d, sn := x.d, x.s
		out[d.ID] = sn
		if ctx.Err() != nil {
			sn.state, sn.problem = SnapshotFailed, "snapshot before delete: "+ctx.Err().Error()
			continue
		}
		snaps, err := s.Snapshots(ctx, d)
		if err != nil {
			sn.state, sn.problem = SnapshotFailed, "snapshot before delete: list its snapshots: "+err.Error()
			continue
		}
		if old, ok := Reusable(snaps, d.OrphanSince); ok {
			sn.id, sn.reused, sn.state = old.ID, true, old.State
		} else {
			id, err := s.StartSnapshot(ctx, d)
			if err != nil {
				sn.state, sn.problem = SnapshotFailed, "snapshot before delete: "+err.Error()
				continue
			}
			sn.id, sn.state = id, SnapshotPending
		}
		audit1(d, sn)
		if sn.state == SnapshotPending {
			waiting = append(waiting, x)
		}
	}
	// 2. Wait on them together, up to one deadline.
	timeout := k.Limits().SnapshotTimeout
	deadline := time.Now().Add(timeout)
	poll := a.SnapshotPoll
	if poll <= 0 {
		poll = DefaultSnapshotPoll
	}
	var stopped <-chan struct{} // nil never fires
	if a.Stop != nil {
		stopped = a.Stop.Done()
	}
	for len(waiting) > 0 && ctx.Err() == nil {
		still := waiting[:0]
		for _, x := range waiting {
			state, err := s.SnapshotState(ctx, x.d, x.s.id)
			switch {
			case err != nil:
				x.s.state, x.s.problem = SnapshotFailed, fmt.Sprintf("snapshot before delete: re-read snapshot %s: %v", x.s.id, err)
			case state == SnapshotFailed:
				x.s.state, x.s.problem = SnapshotFailed, fmt.Sprintf("snapshot before delete: snapshot %s failed: the resource is kept", x.s.id)
			default:
				x.s.state = state
			}
			if x.s.state == SnapshotPending {
				still = append(still, x)
			}
		}
		waiting = still
		left := time.Until(deadline)
		if len(waiting) == 0 || left <= 0 {
			break
		}
		t := time.NewTimer(min(poll, left))
		select {
		case <-ctx.Done():
		case <-stopped:
		case <-t.C:
		}
		t.Stop()
		if a.Stop != nil && a.Stop.Err() != nil {
			break // a graceful stop: what still waits is not attempted
		}
	}
	for _, x := range all {
		if x.s.state == SnapshotFailed && x.s.problem == "" {
			x.s.problem = fmt.Sprintf("snapshot before delete: snapshot %s failed: the resource is kept", x.s.id)
		}
	}
	return out
}

// deferral is why a delete waits for its snapshot.
func deferral(sn *snapped, timeout time.Duration) string {
	return fmt.Sprintf("deferred: snapshot %s still pending after %s; the resource is kept, and a later run deletes it once the snapshot is done", sn.id, timeout)
}
