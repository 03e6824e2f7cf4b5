package engine

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/base/amount"

	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/snapshot"
)

// Snapshotter is a kind that can save a resource before deleting it (a
// disk, a volume). The kind only starts snapshots and reads them; the
// protocol is the engine's, the same for every such kind (package
// snapshot says it): the applier reuses a snapshot only from the current
// orphan period (from the decision's OrphanSince), waits on every due one
// of the kind together up to Limits.SnapshotTimeout, re-reading at most
// every Applier.SnapshotPoll, and deletes a resource only once its snapshot
// is done. One still pending at the deadline is a deferral
// (audit.Deferred); one that failed, or could not be started or read, is a
// refused delete (audit.Failed).
type Snapshotter interface {
	// SnapshotFirst says whether d's resource is snapshotted before its
	// delete.
	SnapshotFirst(d *Decision) bool
	// Snapshots lists the snapshots reclaim made of d's resource, of any
	// age: the engine picks which, if any, it reuses.
	Snapshots(ctx context.Context, d *Decision) ([]snapshot.Snapshot, error)
	// StartSnapshot starts a snapshot of d's resource and returns its id,
	// without waiting for it to complete.
	StartSnapshot(ctx context.Context, d *Decision) (string, error)
	// SnapshotState re-reads one snapshot of d's resource. One not found
	// yet (an eventually consistent listing) is pending.
	SnapshotState(ctx context.Context, d *Decision, id string) (snapshot.State, error)
}

// snapped is what the snapshot step settled for one decision.
type snapped struct {
	id      string
	reused  bool
	state   snapshot.State
	problem string // why there is no usable snapshot (snapshot.Failed)
}

// snapshotFirst is the snapshot step of one kind's deletes, before any of
// them is marked pending: it finds or starts every due snapshot, then waits
// on all of them together until each is done or failed, or the deadline
// passes. It returns what it settled by decision id.
func (a *Applier) snapshotFirst(ctx context.Context, k Kind, s Snapshotter, p *Plan, batches [][]int, r *run) map[string]*snapped {
	var all []due
	for _, b := range batches {
		for _, d := range p.decisionsAt(b) {
			if s.SnapshotFirst(d) {
				all = append(all, due{d: d, s: &snapped{}})
			}
		}
	}
	out := make(map[string]*snapped, len(all))
	for _, x := range all {
		out[x.d.ID] = x.s
	}
	if len(all) == 0 {
		return out
	}
	waiting := a.findOrStart(ctx, s, all, r)
	a.waitOn(ctx, k, s, waiting)
	for _, x := range all {
		if x.s.state == snapshot.Failed && x.s.problem == "" {
			x.s.problem = fmt.Sprintf("snapshot before delete: snapshot %s failed: the resource is kept", x.s.id)
		}
	}
	return out
}

// due is a decision whose resource is snapshotted before its delete, and
// what the snapshot step settled for it.
type due struct {
	d *Decision
	s *snapped
}

// findOrStart finds or starts every due snapshot before any is waited on,
// and audits each; it returns those still pending. A snapshot line the
// audit log refuses stops the run (audit or stop): no further snapshot is
// started, and nothing is waited on.
func (a *Applier) findOrStart(ctx context.Context, s Snapshotter, all []due, r *run) []due {
	var waiting []due
	for i, x := range all {
		d, sn := x.d, x.s
		if err := ctx.Err(); err != nil {
			sn.state, sn.problem = snapshot.Failed, "snapshot before delete: "+err.Error()
			continue
		}
		snaps, err := s.Snapshots(ctx, d)
		if err != nil {
			sn.state, sn.problem = snapshot.Failed, "snapshot before delete: list its snapshots: "+err.Error()
			continue
		}
		result := snapshot.Created
		if old, ok := snapshot.Reusable(snaps, d.OrphanSince); ok {
			sn.id, sn.reused, sn.state, result = old.ID, true, old.State, snapshot.Reused
		} else {
			id, err := s.StartSnapshot(ctx, d)
			if err != nil {
				sn.state, sn.problem = snapshot.Failed, "snapshot before delete: "+err.Error()
				continue
			}
			sn.id, sn.state = id, snapshot.Pending
		}
		if err := a.audit(audit.Record{Action: "snapshot", Kind: d.Kind, ID: d.ID, Reason: "snapshot before delete", Result: result,
			Snapshot: sn.id, SizeGB: d.Frees.Keyed(amount.KeySizeGB)}); err != nil {
			a.mu.Lock()
			r.out.UnauditedSnapshots++
			r.stop()
			why := r.out.Stopped
			a.mu.Unlock()
			a.Log.Error("snapshot "+result+", but its audit line could not be written: the run stops", zap.String("kind", d.Kind),
				zap.String("id", d.ID), zap.String("snapshot", sn.id), zap.Error(err))
			for _, y := range all[i:] {
				y.s.state, y.s.problem = snapshot.Failed, "snapshot before delete: not waited on: "+why
			}
			return nil
		}
		if sn.state == snapshot.Pending {
			waiting = append(waiting, x)
		}
	}
	return waiting
}

// waitOn waits on the pending snapshots together, up to one deadline
// (Limits.SnapshotTimeout), re-reading them every SnapshotPoll; a graceful
// stop ends the wait.
func (a *Applier) waitOn(ctx context.Context, k Kind, s Snapshotter, waiting []due) {
	timeout := k.Limits().SnapshotTimeout
	deadline := time.Now().Add(timeout)
	poll := a.SnapshotPoll
	if poll <= 0 {
		poll = snapshot.DefaultPoll
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
				x.s.state, x.s.problem = snapshot.Failed, fmt.Sprintf("snapshot before delete: re-read snapshot %s: %v", x.s.id, err)
			case state == snapshot.Failed:
				x.s.state, x.s.problem = snapshot.Failed, fmt.Sprintf("snapshot before delete: snapshot %s failed: the resource is kept", x.s.id)
			default:
				x.s.state = state
			}
			if x.s.state == snapshot.Pending {
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
}

// deferral is why a delete waits for its snapshot.
func deferral(sn *snapped, timeout time.Duration) string {
	return fmt.Sprintf("deferred: snapshot %s still pending after %s; the resource is kept, and a later run deletes it once the snapshot is done", sn.id, timeout)
}
