package engine

import (
	"encoding/json"
	"io"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	"reclaim.dev/reclaim/base/layout"
)

// State is what reclaim remembers between runs: when each resource was first
// seen as a candidate (and as which object), and deletions started but not yet
// confirmed. It lives in reclaim's own store (package state), never as tags on
// the resource, so dry-run leaves the cloud untouched and Terraform sees no drift.
type State struct {
	Version   int              `json:"version"`
	Resources map[string]Entry `json:"resources"`
	// Digests hold the clocks of content-addressed resources, packed
	// (Clock and the other methods read both).
	Digests digests            `json:"digests,omitempty"`
	Pending map[string]Pending `json:"pending,omitempty"`
	// LastSuccess is when a run last finished with every source complete and
	// every delete done; a CronJob's metrics read it from here.
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	// Usage is a short history of each quota's usage (by pool), from which
	// the kinds' views project when it runs out (layout.Measure); the
	// engine only keeps it.
	Usage map[string][]layout.Sample `json:"usage,omitempty"`
	// Reads are, per kind and listing ("k8s-job cluster:prod jobs policy:…"),
	// the recent complete reads of it, oldest first (see Proposal.Witnesses).
	Reads map[string][]Read `json:"reads,omitempty"`
	// Delivered are the delivered reports (Announce), oldest first: a
	// terminal candidate was announced by the first one whose run saw it as
	// a candidate and that listed every candidate, or every one of its
	// owner's. They are the engine's, not notify's: RequireNotice reads
	// them as evidence that notice was given, and only Announce writes them.
	Delivered []delivery `json:"delivered,omitempty"`
	// SaveID names one save of the state, so that a store's journal
	// (Journaled) is applied only to the state it followed.
	SaveID string `json:"saveID,omitempty"`
	// Records are what the deleter last accepted of each published cluster
	// record (fleet.records), kept for their owner, the record reader
	// (internal/app), which decodes and encodes them: the engine never
	// reads them. Nil when there are none.
	Records json.RawMessage `json:"records,omitempty"`
}

// WriteJSON writes s as json.Marshal does (its digests last), the packed
// clocks a group at a time: a store saving a million clocks holds no second
// copy of them as one document, nor leaves one in encoding/json's pool.
func (s State) WriteJSON(w io.Writer) error {
	rest := s
	rest.Digests = nil
	b, err := json.Marshal(rest)
	if err != nil {
		return err
	}
	if len(s.Digests) == 0 {
		_, err := w.Write(b)
		return err
	}
	b = append(b[:len(b)-1], `,"digests":`...)
	if _, err := w.Write(b); err != nil {
		return err
	}
	if err := s.Digests.writeJSON(w); err != nil {
		return err
	}
	_, err = io.WriteString(w, "}")
	return err
}

// Apply applies a journal to the state it followed.
func (s *State) Apply(j Journal) {
	if s.Pending == nil {
		s.Pending = make(map[string]Pending, len(j.Set))
	}
	for k, v := range j.Set {
		s.Pending[k] = v
	}
	for _, id := range j.Removed {
		delete(s.Pending, id)
	}
	for _, id := range j.Dropped {
		s.DropClock(id)
	}
}

// Read is one read of a listing: when, whether it was complete, and the
// listing's version (its resourceVersion: what it showed is at most that).
type Read struct {
	At       time.Time `json:"t"`
	Version  string    `json:"v,omitempty"`
	Complete bool      `json:"-"`
}

// delivery is one delivered report: the plan it showed, and when.
type delivery struct {
	Plan time.Time `json:"plan"`
	At   time.Time `json:"at"`
	// Owners, when set, say the report listed only these owners'
	// candidates (a routed target's); none: every candidate.
	Owners []string `json:"owners,omitempty"`
}

// maxDelivered bounds Delivered: a week of hourly runs with a few routed
// targets each. Dropping the oldest only ever makes a notice start later.
const maxDelivered = 24 * 7 * 4

// StateVersion is the version of the state this reclaim writes. Version 2
// added Entry.Identity; a version-1 clock has none, so it restarts once for
// kinds whose identity is not in the id (disks, PVCs): the safe direction.
const StateVersion = 2

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
	// Run started the delete: with the id, the delete's idempotency key in
	// the audit log (audit.Record.Attempt).
	Run    string `json:"run,omitempty"`
	SizeGB int64  `json:"sizeGB"`
	Bytes  int64  `json:"bytes,omitempty"`
}

// NewState returns an empty state.
func NewState() State {
	return State{Version: StateVersion, Resources: map[string]Entry{}, Pending: map[string]Pending{}}
}

// Clone copies the state deeply.
func (s State) Clone() State {
	out := State{Version: StateVersion, Resources: make(map[string]Entry, len(s.Resources)), Pending: make(map[string]Pending, len(s.Pending)),
		LastSuccess: s.LastSuccess, SaveID: s.SaveID}
	out.Digests = s.Digests.clone()
	for k, v := range s.Resources {
		out.setClock(k, v) // an older state's image clocks are packed here
	}
	for k, v := range s.Pending {
		out.Pending[k] = v
	}
	if s.Reads != nil {
		out.Reads = make(map[string][]Read, len(s.Reads))
		for k, v := range s.Reads {
			out.Reads[k] = append([]Read(nil), v...)
		}
	}
	out.Delivered = append([]delivery(nil), s.Delivered...)
	out.Records = slices.Clone(s.Records)
	if s.Usage != nil {
		out.Usage = make(map[string][]layout.Sample, len(s.Usage))
		for k, v := range s.Usage {
			out.Usage[k] = append([]layout.Sample(nil), v...)
		}
	}
	return out
}

// Seen records that id (as identity) has been a candidate since t (demo, tests).
func (s *State) Seen(id, identity string, t time.Time) {
	s.setClock(id, Entry{FirstSeen: t, Identity: identity})
}

// Clock returns id's grace clock.
func (s *State) Clock(id string) (Entry, bool) {
	if g, key, ok := splitDigest(id); ok && s.Digests[g] != nil {
		if c, ok := s.Digests[g].get(key); ok {
			return Entry{FirstSeen: fromNanos(c.first), Announced: fromNanos(c.announced)}, true
		}
	}
	e, ok := s.Resources[id]
	return e, ok
}

// setClock sets id's clock: packed (Digests) when the id is a digest's and
// the clock has no identity of its own. A packed clock keeps whether this
// run kept it.
func (s *State) setClock(id string, e Entry) {
	if g, key, ok := splitDigest(id); ok && e.Identity == "" && nanos(e.FirstSeen) != 0 {
		if s.Digests == nil {
			s.Digests = digests{}
		}
		cg := s.Digests[g]
		if cg == nil {
			cg = &clockGroup{}
			s.Digests[g] = cg
		}
		cg.set(key, clock{nanos(e.FirstSeen), nanos(e.Announced)})
		delete(s.Resources, id)
		return
	}
	if s.Resources == nil {
		s.Resources = map[string]Entry{}
	}
	s.Resources[id] = e
}

// DropClock forgets id's clock.
func (s *State) DropClock(id string) {
	if g, key, ok := splitDigest(id); ok && s.Digests[g] != nil {
		s.Digests[g].drop(key)
	}
	delete(s.Resources, id)
}

// Clocks counts the clocks.
func (s *State) Clocks() int { return len(s.Resources) + s.Digests.count() }

// keep records that this run keeps the packed clock of id, and reports
// whether id's clock is one that would be packed (Digests); the caller
// records the others' itself.
func (s *State) keep(id string) bool {
	g, key, ok := splitDigest(id)
	if !ok {
		return false
	}
	if cg := s.Digests[g]; cg != nil {
		cg.keep(key)
	}
	return true
}

// forgetUnkept drops the packed clocks of the groups present says were
// listed that this run did not keep: a group's listing speaks for each of
// its digests (a clock keeps only 64 bits of one).
func (s *State) forgetUnkept(listed func(group string) bool) {
	for g, cg := range s.Digests {
		if listed(g) {
			cg.dropUnkept()
		}
	}
}

// observe records that id, as identity, is a candidate now and returns since
// when. A different identity, or a clock in the future, starts a new clock.
// packed says whether the clock is kept packed (Digests), and so kept by
// this call; the caller records that it keeps any other.
func (s *State) observe(id, identity string, now time.Time) (since time.Time, packed bool) {
	g, key, digest := splitDigest(id)
	if digest && identity == "" {
		// The common case once a backlog is known: one look-up.
		if cg := s.Digests[g]; cg != nil {
			if i, ok := cg.find(key); ok && cg.times[cg.vals[i].first] <= nanos(now) {
				cg.markKept(i)
				return fromNanos(cg.times[cg.vals[i].first]), true
			}
		}
	}
	e, ok := s.Clock(id)
	if !ok || e.Identity != identity || e.FirstSeen.After(now) {
		e = Entry{FirstSeen: now, Identity: identity}
		s.setClock(id, e)
	}
	if digest && s.Digests[g] != nil {
		s.Digests[g].keep(key)
	}
	_, inResources := s.Resources[id]
	return e.FirstSeen, !inResources
}

// Announce is the one entry for notify's deliveries into the state: it
// records that a delivered report listed the candidates of p
// (marked or due): the notice RequireNotice waits for starts now for those
// not announced before. owners are the owners a routed report was cut to
// (report.ForOwners), and it announces theirs only; a report to the
// fleet's targets (no owners) announces every candidate but a routed
// owner's: their notice is their own route's to give. It returns how many
// it recorded.
func (s *State) Announce(p *Plan, t time.Time, owners ...string) int {
	n := 0
	s.Delivered = append(s.Delivered, delivery{Plan: p.GeneratedAt, At: t, Owners: owners})
	if len(s.Delivered) > maxDelivered {
		s.Delivered = s.Delivered[len(s.Delivered)-maxDelivered:]
	}
	for d := range p.All() {
		if d.Action != Mark && d.Action != Delete {
			continue
		}
		if len(owners) == 0 && p.routed[d.Owner] || len(owners) > 0 && !slices.Contains(owners, d.Owner) {
			continue
		}
		if d.terminal {
			n++ // announced by this delivery, if no earlier one did
			continue
		}
		e, ok := s.Clock(d.ID)
		if !ok || e.Identity != d.Identity || !e.Announced.IsZero() {
			continue
		}
		e.Announced = t
		s.setClock(d.ID, e)
		n++
	}
	return n
}

// announced is when the first delivered report that gave notice of
// owner's candidates (routed: a report cut to it; else the fleet's), of a
// run that saw a candidate since since, was sent; zero if none was.
func (s *State) announced(since time.Time, owner string, routed bool) time.Time {
	for _, d := range s.Delivered {
		if d.Plan.Before(since) {
			continue
		}
		if routed && slices.Contains(d.Owners, owner) || !routed && len(d.Owners) == 0 {
			return d.At
		}
	}
	return time.Time{}
}

// seen returns when a terminal candidate of kind was first seen: the first
// run at or after from whose complete read of every witness already showed
// the witnessed version. ok is false when no recorded run did (this run is
// the first).
func (s *State) seen(kind string, ws []Witness, from time.Time) (time.Time, bool) {
	if len(ws) == 0 {
		return time.Time{}, false
	}
	first := s.Reads[kind+" "+ws[0].Listing]
next:
	for _, r := range first {
		if r.At.Before(from) || !showed(r, ws[0].Version) {
			continue
		}
		for _, w := range ws[1:] {
			i := slices.IndexFunc(s.Reads[kind+" "+w.Listing], func(o Read) bool { return o.At.Equal(r.At) })
			if i < 0 || !showed(s.Reads[kind+" "+w.Listing][i], w.Version) {
				continue next
			}
		}
		return r.At, true
	}
	return time.Time{}, false
}

// showed reports whether a read of version listed an object at version v:
// resourceVersions of one resource compare as integers.
func showed(r Read, v string) bool {
	c, err := resourceversion.CompareResourceVersion(r.Version, v)
	return err == nil && c >= 0
}

// since returns the clock of id if it belongs to identity.
func (s *State) since(id, identity string) *time.Time {
	if e, ok := s.Clock(id); ok && e.Identity == identity {
		t := e.FirstSeen
		return &t
	}
	return nil
}
