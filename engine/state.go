package engine

import "time"

// State is what reclaim remembers between runs: when each resource was first
// seen as a candidate (and as which object), and deletions started but not yet
// confirmed. It lives in reclaim's own store (package state), never as tags on
// the resource, so dry-run leaves the cloud untouched and Terraform sees no drift.
type State struct {
	Version   int                `json:"version"`
	Resources map[string]Entry   `json:"resources"`
	Pending   map[string]Pending `json:"pending,omitempty"`
	// LastSuccess is when a run last finished with every source complete and
	// every delete done; a CronJob's metrics read it from here.
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	// Usage is a short history of each quota's usage (by pool), from which
	// kinds project when it runs out.
	Usage map[string][]Sample `json:"usage,omitempty"`
}

// StateVersion is the version of the state this reclaim writes. Version 2
// added Entry.Identity; a version-1 clock has none, so it restarts once for
// kinds whose identity is not in the id (disks, PVCs): the safe direction.
const StateVersion = 2

// Sample is one observation of a quota's usage.
type Sample struct {
	T     time.Time `json:"t"`
	Usage float64   `json:"u"`
}

// Entry is one resource's grace clock. Identity is the object it was started
// for (a disk's numeric id, a PVC's UID): a new object under the same id is a
// new candidate and starts a new clock.
type Entry struct {
	FirstSeen time.Time `json:"firstSeen"`
	Identity  string    `json:"identity,omitempty"`
	// Announced is when a report that listed this candidate was first
	// delivered to a person (see RequireNotice); zero: never. A new object
	// under the id starts a new entry, so it must be announced again.
	Announced time.Time `json:"announced,omitzero"`
}

// Pending is a deletion that was started; the next run confirms it so that the
// audit log records every delete exactly once even if a run is killed half-way.
type Pending struct {
	Kind    string    `json:"kind"`
	Started time.Time `json:"started"`
	Reason  string    `json:"reason"`
	// Identity is the object the delete was for (see Entry.Identity).
	Identity string `json:"identity,omitempty"`
	SizeGB   int64  `json:"sizeGB"`
	Bytes    int64  `json:"bytes,omitempty"`
}

// NewState returns an empty state.
func NewState() State {
	return State{Version: StateVersion, Resources: map[string]Entry{}, Pending: map[string]Pending{}}
}

// Clone copies the state deeply.
func (s State) Clone() State {
	out := State{Version: StateVersion, Resources: make(map[string]Entry, len(s.Resources)), Pending: make(map[string]Pending, len(s.Pending)),
		LastSuccess: s.LastSuccess}
	for k, v := range s.Resources {
		out.Resources[k] = v
	}
	for k, v := range s.Pending {
		out.Pending[k] = v
	}
	if s.Usage != nil {
		out.Usage = make(map[string][]Sample, len(s.Usage))
		for k, v := range s.Usage {
			out.Usage[k] = append([]Sample(nil), v...)
		}
	}
	return out
}

// Seen records that id (as identity) has been a candidate since t (demo, tests).
func (s State) Seen(id, identity string, t time.Time) {
	s.Resources[id] = Entry{FirstSeen: t, Identity: identity}
}

// observe records that id, as identity, is a candidate now and returns since
// when. A different identity, or a clock in the future, starts a new clock.
func (s *State) observe(id, identity string, now time.Time) time.Time {
	e, ok := s.Resources[id]
	if !ok || e.Identity != identity || e.FirstSeen.After(now) {
		e = Entry{FirstSeen: now, Identity: identity}
		s.Resources[id] = e
	}
	return e.FirstSeen
}

// Announce records that a delivered report listed every candidate of the
// plan (marked or due): the notice RequireNotice waits for starts now for
// those not announced before. It returns how many it recorded.
func (s State) Announce(p *Plan, t time.Time) int {
	n := 0
	for i := range p.Decisions {
		d := &p.Decisions[i]
		if d.Action != Mark && d.Action != Delete {
			continue
		}
		e, ok := s.Resources[d.ID]
		if !ok || e.Identity != d.Identity || !e.Announced.IsZero() {
			continue
		}
		e.Announced = t
		s.Resources[d.ID] = e
		n++
	}
	return n
}

// since returns the clock of id if it belongs to identity.
func (s *State) since(id, identity string) *time.Time {
	if e, ok := s.Resources[id]; ok && e.Identity == identity {
		t := e.FirstSeen
		return &t
	}
	return nil
}
