// Package engine holds the rules every kind obeys, applied once and the same
// way to every kind: fail closed, the grace clock by identity, minimum age,
// dependencies, caps and the breaker; then the one batched applier. Planning
// is pure (no I/O, no client libraries): kinds propose, the engine decides.
package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/inventory"
)

// SchemaVersion is the version of the JSON plan/report. Bump it on any
// incompatible change to the JSON shape.
const SchemaVersion = "reclaim.dev/v1"

// Action is what the plan does with a resource.
type Action string

const (
	// Keep: in use, protected, or out of scope. Nothing will happen.
	Keep Action = "keep"
	// Report: nobody uses it, but reclaim will never delete it (no proof of
	// ownership, or a policy switch is off). A person should look.
	Report Action = "report"
	// Mark: an orphan whose clock is running, or a deletion held back this run
	// (incomplete evidence, caps, breaker). It may be deleted in a later run.
	Mark Action = "mark"
	// Delete: apply deletes it (only with --apply).
	Delete Action = "delete"
)

// Decision is the plan for one resource: the one envelope every report,
// metric and audit line reads. ID, Name, Reason, Class, Frees, Detail,
// Group, After and Identity are what its kind proposed (Proposal); Kind,
// Action, Held, Owner, OrphanSince, DeletableAfter and the rules' notes are
// the engine's alone. Detail is the kind's own, flattened into the JSON
// object next to the envelope's fields.
type Decision struct {
	Kind   string
	ID     string
	Name   string
	Action Action
	// Reason is why, in the kind's words; the engine's rules add notes to
	// it (the clock, a hold). Why is the whole explanation.
	Reason string
	// notes are what the rules added. Most are shared between decisions
	// (one hold text per cap, one clock text per read time): a fleet's
	// 200,000 decisions do not each carry a joined copy.
	notes [2]string
	// Held is set when a deletion was due but held back this run (caps, breaker,
	// incomplete evidence); Reason then says why.
	Held bool
	// view is the oldest cluster view a due delete relies on, for the
	// applier to check again (Plan.staleAt; 0: none). Beside Held, it
	// takes no room a decision did not have.
	view uint32
	// Owner is who owns the resource (Settings.Routes): its owner label's value,
	// else the owner the first matching notify route names; "" for none.
	Owner string
	// Class is the kind of reason, for counting: in-use, trim, orphan, ...
	Class          string
	OrphanSince    *time.Time
	DeletableAfter *time.Time
	Frees          amount.Frees
	Detail         any

	// Group batches deletions (one API call may take several of a group);
	// After lists ids that must be deleted before this one, in this run.
	Group string
	After []string
	// Identity changes when the thing is recreated under the same id: a new
	// object starts a new clock (not in the JSON: the kind's detail says it).
	Identity string
	// terminal: its clock is derived, not kept (Proposal.Witnesses).
	terminal bool
	// seq counts the compact decisions put before it, which orders it
	// against them (Plan.All).
	seq uint32
}

// Why is the decision's whole explanation: the kind's reason, then what
// the engine's rules added, joined by " — ".
func (d Decision) Why() string {
	out := d.Reason
	for _, n := range d.notes {
		if n != "" {
			out = join(out, n)
		}
	}
	return out
}

// note adds what a rule says to the explanation.
func (d *Decision) note(s string) { addNote(&d.notes, s) }

func addNote(notes *[2]string, s string) {
	switch {
	case s == "":
	case notes[0] == "":
		notes[0] = s
	case notes[1] == "":
		notes[1] = s
	default:
		notes[1] = join(notes[1], s)
	}
}

// envelope is the JSON shape of a decision's own fields (schema v1).
type envelope struct {
	Kind           string     `json:"kind"`
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	SizeGB         int64      `json:"sizeGB"`
	Bytes          int64      `json:"bytes,omitempty"`
	MonthlyCost    float64    `json:"monthlyCost,omitempty"`
	Action         Action     `json:"action"`
	Reason         string     `json:"reason"`
	Held           bool       `json:"held,omitempty"`
	Owner          string     `json:"owner,omitempty"`
	Class          string     `json:"class,omitempty"`
	OrphanSince    *time.Time `json:"orphanSince,omitempty"`
	DeletableAfter *time.Time `json:"deletableAfter,omitempty"`
}

// MarshalJSON writes the envelope and the kind's detail as one object.
func (d Decision) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(envelope{Kind: d.Kind, ID: d.ID, Name: d.Name, SizeGB: d.Frees.Keyed(amount.KeySizeGB), Bytes: d.Frees.Keyed(amount.KeyBytes), MonthlyCost: roundCents(d.Frees.Cost),
		Action: d.Action, Reason: d.Why(), Held: d.Held, Owner: d.Owner, Class: d.Class, OrphanSince: d.OrphanSince, DeletableAfter: d.DeletableAfter})
	if err != nil || d.Detail == nil {
		return b, err
	}
	det, err := json.Marshal(d.Detail)
	if err != nil {
		return nil, err
	}
	det = bytes.TrimSpace(det)
	if len(det) < 2 || det[0] != '{' || string(det) == "{}" {
		return b, nil
	}
	out := make([]byte, 0, len(b)+len(det))
	out = append(out, b[:len(b)-1]...)
	out = append(out, ',')
	return append(out, det[1:]...), nil
}

// Source is the completeness of one input of the plan.
type Source struct {
	Kind     string        `json:"kind"` // cluster, gce-project, ecr-registry, manifests
	Name     string        `json:"name"`
	Complete bool          `json:"complete"`
	Problems []string      `json:"problems,omitempty"`
	Items    int           `json:"items"`
	Duration time.Duration `json:"durationNs,omitempty"`
	// Unit names what Items counts, for people ("disks", "repositories").
	Unit string `json:"-"`
	// NotRead: a cluster of the fleet reclaim did not read at all
	// (excluded, not configured); Problems say why and how to resolve it.
	NotRead bool `json:"notRead,omitempty"`
	// ReadAt is when a cluster's view began (inventory.ClusterRefs.ReadAt):
	// with FreshViews, a delete relying on it is held once it is stale.
	ReadAt time.Time `json:"-"`
	// Settles is when a cluster's view is believed whole (its records have
	// stood for their settle period): before it, the view keeps what it
	// shows in use, but a delete relying on it is held.
	Settles time.Time `json:"-"`
}

// Key is how proposals name a source they rely on: kind:name.
func (s Source) Key() string { return inventory.SourceKey(s.Kind, s.Name) }

func roundCents(x float64) float64 { return math.Round(x*100) / 100 }
