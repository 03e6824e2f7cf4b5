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
//   - nor when it was started before the resource's last use (Covers): a
//     resource attached, written and detached between two runs stays in
//     its orphan period, and only the cloud's time of its last use (a GCE
//     disk's lastDetachTimestamp) says so. Where the cloud keeps no such
//     time (an EBS volume), the last use reclaim cannot rule out is the
//     read its plan relies on, so only a snapshot started since is relied
//     on;
//   - every due snapshot of a kind is started (or found) first, then all
//     are waited on together, up to one deadline, re-read at most every
//     poll (DefaultPoll) and never past the deadline;
//   - a resource is deleted only once its snapshot is Done. One still
//     Pending at the deadline is a deferral (held: its clock runs on, and a
//     later run of the same orphan period waits on the same snapshot while
//     it covers the last use, else makes another); one that Failed, or
//     could not be started or read, is a refused delete;
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

// Covers says whether s was started after the resource's last use,
// lastUse (zero: none known), so that it holds what was last written. A
// snapshot is a copy of what the resource held when it was started.
func Covers(s Snapshot, lastUse time.Time) bool {
	return lastUse.IsZero() || s.Started.After(lastUse)
}
