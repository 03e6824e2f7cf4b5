package reconcile

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/inventory"
)

// ErrNotFound is what deleters return (wrapped) when the resource is already
// gone. The applier counts it as success: idempotence is the contract.
var ErrNotFound = inventory.ErrNotFound

// ChangedError is what a deleter returns when the resource changed since it
// was planned (recreated, protected): the applier counts it as skipped, never
// as a failure.
type ChangedError struct{ Reason string }

func (e *ChangedError) Error() string { return e.Reason }

// DiskAPI is what the applier needs from a disk provider.
type DiskAPI interface {
	GetDisk(ctx context.Context, key inventory.DiskKey) (inventory.Disk, error)
	SnapshotDisk(ctx context.Context, key inventory.DiskKey, name string, labels map[string]string) error
	DeleteDisk(ctx context.Context, key inventory.DiskKey) error
}

// PVCAPI deletes PVCs of one cluster by name, only if the UID still matches.
type PVCAPI interface {
	DeletePVC(ctx context.Context, cluster, namespace, name, uid string) error
}

// Applier is the only code in reclaim that deletes anything.
type Applier struct {
	Disks  DiskAPI
	PVCs   PVCAPI
	Images ImageAPI
	Store  Store
	Audit  *AuditLog
	Log    *zap.Logger
	Policy Policy
	// SnapshotLabel is the label key put on snapshots, naming the disk.
	SnapshotLabel string
	Now           func() time.Time
	RunID         string
	// MaxConsecutiveFailures stops the run early when deletes keep failing.
	MaxConsecutiveFailures int
}

// Result is what happened to one decision.
type Result struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Result string `json:"result"` // deleted, already-gone, skipped, failed, not-attempted
	Reason string `json:"reason"`
	Error  string `json:"error,omitempty"`
	SizeGB int64  `json:"sizeGB"`
	Bytes  int64  `json:"bytes,omitempty"`
}

// Outcome is the applier's summary.
type Outcome struct {
	Results   []Result `json:"results"`
	Confirmed []string `json:"confirmed,omitempty"`
	Deleted   int      `json:"deleted"`
	Failed    int      `json:"failed"`
	Skipped   int      `json:"skipped"`
	FreedGB   int64    `json:"freedGB"`
	// FreedBytes is what the deleted images held.
	FreedBytes int64  `json:"freedBytes,omitempty"`
	Stopped    string `json:"stopped,omitempty"`
}

// add records one result and counts it.
func (o *Outcome) add(r Result) {
	o.Results = append(o.Results, r)
	switch r.Result {
	case "deleted", "already-gone":
		o.Deleted++
		o.FreedGB += r.SizeGB
		o.FreedBytes += r.Bytes
	case "failed":
		o.Failed++
	case "skipped":
		o.Skipped++
	}
}

// Finish records the plan's state. With apply false (dry-run) it deletes
// nothing and calls no deleter; it only saves the orphan clocks.
func (a *Applier) Finish(ctx context.Context, p *Plan, apply bool) (*Outcome, error) {
	out := &Outcome{}
	st := p.State
	for _, c := range p.confirmed {
		if err := a.audit(AuditRecord{Action: "delete", Kind: c.pending.Kind, ID: c.id, Reason: c.pending.Reason,
			Result: "confirmed-deleted", SizeGB: c.pending.SizeGB}); err != nil {
			return out, err
		}
		out.Confirmed = append(out.Confirmed, c.id)
	}
	if err := a.Store.Save(ctx, st); err != nil {
		return out, err
	}
	if !apply {
		return out, nil
	}
	fails := 0
	for _, d := range p.Decisions {
		if d.Action != Delete || d.Kind == KindImage {
			continue
		}
		if out.Stopped != "" || ctx.Err() != nil {
			out.Results = append(out.Results, Result{Kind: d.Kind, ID: d.ID, Result: "not-attempted", Reason: orDefault(out.Stopped, "run cancelled"), SizeGB: d.SizeGB})
			continue
		}
		r := a.one(ctx, &st, d)
		out.add(r)
		switch r.Result {
		case "deleted", "already-gone":
			fails = 0
		case "failed":
			fails++
		}
		if a.MaxConsecutiveFailures > 0 && fails >= a.MaxConsecutiveFailures {
			out.Stopped = fmt.Sprintf("stopped after %d deletes failed in a row", fails)
		}
	}
	if a.Images != nil {
		a.applyImages(ctx, &st, p, out, &fails)
	}
	// Skips reset clocks; save them even if nothing was deleted.
	if err := a.Store.Save(ctx, st); err != nil {
		return out, err
	}
	return out, nil
}

func (a *Applier) one(ctx context.Context, st *State, d Decision) Result {
	r := Result{Kind: d.Kind, ID: d.ID, Reason: d.Reason, SizeGB: d.SizeGB}
	log := a.Log.With(zap.String("kind", d.Kind), zap.String("id", d.ID), zap.Bool("dry_run", false))
	// Re-read right before deleting: the second look of the two-evidence rule.
	if d.Kind == KindDisk {
		if why, gone, err := a.recheckDisk(ctx, d); err != nil {
			return a.done(log, r, "failed", "re-read before delete: "+err.Error())
		} else if gone {
			st.forget(d.ID)
			return a.done(log, r, "already-gone", "")
		} else if why != "" {
			st.forget(d.ID)
			r.Reason = why
			return a.done(log, r, "skipped", "")
		}
	}
	st.Pending[d.ID] = Pending{Kind: d.Kind, Started: a.Now(), Reason: d.Reason, SizeGB: d.SizeGB}
	if err := a.Store.Save(ctx, *st); err != nil {
		delete(st.Pending, d.ID)
		return a.done(log, r, "failed", "save state before delete: "+err.Error())
	}
	var snap string
	var err error
	switch d.Kind {
	case KindDisk:
		key, perr := inventory.ParseDiskKey(d.ID)
		if perr != nil {
			return a.done(log, r, "failed", perr.Error())
		}
		if d.Snapshot {
			snap = SnapshotName(key.Name, a.Now())
			labels := map[string]string{a.SnapshotLabel: labelValue(key.Name), "reclaim-location": labelValue(key.Location())}
			if err := a.Disks.SnapshotDisk(ctx, key, snap, labels); err != nil {
				delete(st.Pending, d.ID)
				_ = a.Store.Save(ctx, *st)
				return a.done(log, r, "failed", "snapshot before delete: "+err.Error())
			}
			_ = a.audit(AuditRecord{Action: "snapshot", Kind: d.Kind, ID: d.ID, Reason: "snapshot before delete", Result: "created", Snapshot: snap, SizeGB: d.SizeGB})
		}
		err = a.Disks.DeleteDisk(ctx, key)
	case KindPVC:
		err = a.PVCs.DeletePVC(ctx, d.Cluster, d.Location, d.Name, d.UID)
	default:
		err = fmt.Errorf("no deleter for kind %s", d.Kind)
	}
	result := "deleted"
	var changed *ChangedError
	if errors.As(err, &changed) {
		// Changed since the plan (recreated, protected): a skip, as for a disk.
		delete(st.Pending, d.ID)
		st.forget(d.ID)
		_ = a.Store.Save(ctx, *st)
		r.Reason = "skipped: " + changed.Error()
		return a.done(log, r, "skipped", "")
	}
	if err != nil && a.notFound(err) {
		err, result = nil, "already-gone"
	}
	if err != nil {
		// Keep the pending mark: if the delete did happen after all, the next
		// run sees the resource gone and records it then.
		_ = a.Store.Save(ctx, *st)
		return a.done(log, r, "failed", err.Error())
	}
	delete(st.Pending, d.ID)
	st.forget(d.ID)
	r.Result = result
	if err := a.audit(AuditRecord{Action: "delete", Kind: d.Kind, ID: d.ID, Reason: d.Reason, Result: result, SizeGB: d.SizeGB, Snapshot: snap}); err != nil {
		r.Error = err.Error()
	}
	if err := a.Store.Save(ctx, *st); err != nil && r.Error == "" {
		r.Error = "saved delete, but not state: " + err.Error()
	}
	log.Info("deleted", zap.String("action", "delete"), zap.String("reason", d.Reason), zap.String("result", result))
	return r
}

// recheckDisk returns a reason to skip if the disk changed since it was planned.
func (a *Applier) recheckDisk(ctx context.Context, d Decision) (skip string, gone bool, err error) {
	key, err := inventory.ParseDiskKey(d.ID)
	if err != nil {
		return "", false, err
	}
	now, err := a.Disks.GetDisk(ctx, key)
	if err != nil {
		if a.notFound(err) {
			return "", true, nil
		}
		return "", false, err
	}
	switch {
	case len(now.Users) > 0:
		return "skipped: attached to " + strings.Join(shortUsers(now.Users), ", ") + " since it was planned", false, nil
	case now.LabelFingerprint != d.LabelFingerprint:
		return "skipped: its labels changed since it was planned", false, nil
	case now.Status != "" && now.Status != "READY":
		return "skipped: status is " + now.Status + " since it was planned", false, nil
	}
	if _, ok := now.Labels[a.Policy.ProtectLabel]; ok && a.Policy.ProtectLabel != "" {
		return "skipped: protected by label since it was planned", false, nil
	}
	return "", false, nil
}

func (a *Applier) done(log *zap.Logger, r Result, result, errText string) Result {
	r.Result, r.Error = result, errText
	rec := AuditRecord{Action: "delete", Kind: r.Kind, ID: r.ID, Reason: r.Reason, Result: result, Error: errText, SizeGB: r.SizeGB, Bytes: r.Bytes}
	if err := a.audit(rec); err != nil && r.Error == "" {
		r.Error = err.Error()
	}
	if result == "failed" {
		log.Warn("delete failed", zap.String("action", "delete"), zap.String("reason", r.Reason), zap.String("error", errText))
	} else {
		log.Info(result, zap.String("action", "delete"), zap.String("reason", r.Reason))
	}
	return r
}

func (a *Applier) audit(r AuditRecord) error {
	if a.Audit == nil {
		return nil
	}
	r.Time = a.Now().UTC()
	r.RunID = a.RunID
	return a.Audit.Write(r)
}

func (a *Applier) notFound(err error) bool {
	return errors.Is(err, ErrNotFound)
}

var nonLabel = regexp.MustCompile(`[^a-z0-9_-]`)

// labelValue makes s a valid GCE label value (lowercase letters, digits, _ and -, at most 63).
func labelValue(s string) string {
	s = nonLabel.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}

// SnapshotName names the snapshot taken before deleting disk: a valid GCE
// resource name (at most 63 characters) that sorts by time.
func SnapshotName(disk string, now time.Time) string {
	suffix := "-" + now.UTC().Format("20060102-150405")
	base := "reclaim-" + labelValue(disk)
	if len(base)+len(suffix) > 63 {
		base = strings.TrimRight(base[:63-len(suffix)], "-_")
	}
	return base + suffix
}
