// Package snapshot is the snapshot-before-delete protocol's own words: what
// a snapshot reclaim made of a resource is, where it is (State), and which
// one a delete may rely on (Reusable). The kinds that save a resource before
// deleting it (a disk, a volume) report their snapshots in these words
// through engine.Snapshotter; the engine's applier runs the protocol, the
// same for every such kind:
//
//   - a snapshot is reused only when it was started within the current
//     orphan period (Reusable): a resource re-bound and written since an
//     older one was taken would be deleted with a backup that lacks what
//     was written;
//   - every due snapshot of a kind is started (or found) first, then all
//     are waited on together, up to one deadline, re-read at most every
//     poll (DefaultPoll) and never past the deadline;
//   - a resource is deleted only once its snapshot is Done. One still
//     Pending at the deadline is a deferral (held: its clock runs on, and a
//     later run of the same orphan period waits on the same snapshot); one
//     that Failed, or could not be started or read, is a refused delete;
//   - the audit log says whether the snapshot was Created or Reused.
package snapshot

import "time"

// State is where a snapshot is.
type State int

const (
	// Pending: still being made.
	Pending State = iota
	// Done: complete; the resource may be deleted.
	Done
	// Failed: it will never complete.
	Failed
)

func (s State) String() string {
	switch s {
	case Done:
		return "done"
	case Failed:
		return "failed"
	}
	return "pending"
}

// Snapshot is one snapshot reclaim made of a resource.
type Snapshot struct {
	ID      string
	Started time.Time
	State   State
}

// DefaultPoll is how often pending snapshots are re-read when the applier
// sets no poll of its own (engine.Applier.SnapshotPoll is 0).
const DefaultPoll = 10 * time.Second

// Audit results of a snapshot line.
const (
	Created = "created"
	Reused  = "reused"
)

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
		if s.State == Failed || s.Started.Before(*since) {
			continue
		}
		if !found || s.Started.After(best.Started) {
			best, found = s, true
		}
	}
	return best, found
}
