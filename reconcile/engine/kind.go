package engine

import (
	"context"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
)

// Kind is one sort of thing reclaim may delete. It knows only what is specific
// to it; every safety rule is the engine's. Propose is pure; Recheck and
// Delete are the only calls that reach a cloud or cluster, and only the
// applier makes them. What a kind shows in reports is not part of it: a kind
// that shows the plan is also a report.Viewer (notify/report).
type Kind interface {
	// Name is the kind as reports, metrics and the audit log spell it.
	Name() string
	// Owns says whether a state id (a clock or a pending delete) is this kind's.
	Owns(id string) bool
	// Limits are the kind's rules' parameters, from its config section.
	Limits() Limits
	// Propose makes a proposal for every resource the kind cares about.
	Propose(snap *inventory.View, now time.Time) Proposals
	// Recheck re-reads a batch right before it is deleted: one verdict per
	// decision, or an error when the re-read failed (then nothing is deleted).
	Recheck(ctx context.Context, batch []*Decision) ([]Verdict, error)
	// Delete deletes a batch and returns one result per decision. An error
	// means the call's outcome is unknown: the pending marks stay, and the
	// next run settles them from its listing.
	Delete(ctx context.Context, batch []*Decision) ([]Deleted, error)
}

// Limits are a kind's rule parameters.
type Limits struct {
	Grace  time.Duration
	MinAge time.Duration
	// MaxDeletes and MaxDeletePercent (0..1 of the kind's inventory in scope)
	// cap deletions per run; MaxFrees caps what a run frees of its unit
	// (no unit: no cap).
	MaxDeletes       int
	MaxDeletePercent float64
	MaxFrees         amount.Amount
	// BreakerCandidates: more due than this and nothing of the kind is deleted.
	BreakerCandidates int
	// QuotaClasses are the classes of candidates due because a pool is over
	// a limit (a repository over its image quota, trimmed back to target)
	// rather than because they look unused. The breaker, which is there
	// for a sudden wave of orphans (a cluster missing from the view), does
	// not count them: a backlog is not a wave. Grace and the per-run caps
	// still pace them, and a tripped breaker holds them too.
	QuotaClasses []string
	// BatchSize is the most decisions one Delete call takes (at least 1).
	BatchSize int
	// Parallel is how many batches are in flight at once (0 or 1: one after
	// another). Each still marks its deletes pending before its re-read, and
	// a batch waiting (After) for another starts only when that one is done.
	Parallel int
	// OptOutKey is the label or tag key that opts a resource out, "" for
	// none. The engine applies the one rule (package optout) to what the
	// re-read saw (Verdict.Labels) right before a delete.
	OptOutKey string
	// SnapshotTimeout, for a Snapshotter, is how long a run waits for the
	// snapshots it needs before their deletes (all of them together); what
	// is still pending then is deferred to a later run.
	SnapshotTimeout time.Duration
	// Wording is how reports speak of the kind.
	Wording
}

// Wording is how the engine's notes and messages speak of a kind: words,
// no rules. (How a person keeps a resource, which only notify says, is a
// kind's report.OptOuter.)
type Wording struct {
	// Section is the config section the limits come from, for messages
	// ("disks", "ecr"); Noun names the resources ("disks", "images").
	Section string
	Noun    string
	// Guarded names, for the run's held-back notes, what an incomplete
	// cluster holds back: "disk it could reference". "" says nothing.
	Guarded string
}

// Young is the minimum-age rule, the one meaning every kind's selection
// and the engine share: a resource made (created, pushed) less than minAge
// before now is never deleted. An unknown creation time (zero) is not
// young: the rule needs a time to apply.
func Young(created, now time.Time, minAge time.Duration) bool {
	return !created.IsZero() && now.Sub(created) < minAge
}

// Proposal is what a kind says of one resource: what it is (ID, Name,
// Detail, what deleting it frees, its batch Group and After dependencies,
// its Identity), the kind's verdict and evidence (Candidate, ReportOnly,
// Protected, Hold, Sources, Witnesses), why (Reason, Class) and its times.
// It has no field of what the engine decides (Decision's Action, Held,
// Owner, OrphanSince, DeletableAfter and the rules' notes): the engine
// makes the decision from it, and only a Candidate may ever be deleted.
type Proposal struct {
	// ID names the resource in the state (its clock), the audit and
	// reports; Name is how a person knows it.
	ID   string
	Name string
	// Reason is why, in the kind's words (Decision.Reason); Class is the
	// kind of reason, for counting: in-use, trim, orphan, ...
	Reason string
	Class  string
	// Frees is what deleting it frees (its size, addresses; Pricer adds the cost).
	Frees amount.Frees
	// Detail is the kind's own, flattened into the decision's JSON object.
	Detail any
	// Group batches deletions (one API call may take several of a group);
	// After lists ids that must be deleted before this one, in this run.
	Group string
	After []string
	// Identity changes when the thing is recreated under the same id: a new
	// object starts a new clock.
	Identity string

	// Candidate: nobody uses it, and it may be deleted once the rules allow.
	// A non-candidate is kept (Action keep) and loses its clock.
	Candidate bool
	// Protected says why a person opted the resource out (a protect label or
	// tag it carries): the engine keeps it, candidate or not, with this as
	// its reason and Class ("protected" when none), and forgets its clock.
	// A kind says it; only the engine decides on it.
	Protected string
	// ReportOnly: a candidate whose clock runs but that is never deleted (no
	// proof of ownership, a policy switch off): Action report.
	ReportOnly bool
	// Sources are the keys (inventory.SourceKey) of the sources whose
	// completeness the decision relies on; one that is incomplete or
	// unknown holds it.
	Sources []string
	// Hold is a reason of the kind's own why its evidence is incomplete
	// (a reference that could not be resolved, a partial listing).
	Hold string
	// Created is when the resource was made, for the minimum age.
	Created time.Time
	// NotBefore and Wait: a kind's own reason to wait (detached too recently,
	// not READY); the clock runs meanwhile.
	NotBefore time.Time
	Wait      string
	// AfterWhy names what the ids in After are, for a person ("its index sha256:…").
	AfterWhy string
	// Witnesses, for a terminal candidate (a finished Job or Pod: nothing
	// makes it used again), name the listings that show it and the version
	// (resourceVersion) of what they showed; CandidateFrom is when its own
	// fields made it a candidate (finished plus retention). Its clock is then
	// not kept per object: it has been a candidate since the first run at or
	// after CandidateFrom whose complete reads of every witness already held
	// this version — unchanged since, it was the same candidate then. So a
	// backlog of 100,000 Jobs costs the state a few reads per cluster, not a
	// clock each, and a change (a protect label removed, a retention
	// annotation shortened) still starts the clock anew.
	Witnesses     []Witness
	CandidateFrom time.Time
	// Remake, if set, makes this proposal again from Item when a report or
	// the applier needs its decision, so that the plan keeps the engine's
	// verdict as a 64-byte row (Plan.All) instead of the whole Decision.
	// Only for a proposal with no After that no other one's After names
	// (a row is never waited for).
	Remake Remaker
	Item   uint32
}

// decision starts kind's decision on p with what p says; the rules
// decide the rest.
func (p *Proposal) decision(kind string) Decision {
	return Decision{Kind: kind, ID: p.ID, Name: p.Name, Reason: p.Reason, Class: p.Class, Frees: p.Frees, Detail: p.Detail,
		Group: p.Group, After: p.After, Identity: p.Identity}
}

// Witness is one listing that shows a terminal candidate (Proposals.Listings)
// and the version of the candidate it showed.
type Witness struct {
	Listing string
	Version string
}

// Proposals are a kind's proposals for one run.
type Proposals struct {
	Items []Proposal
	// Stream, if set, yields more proposals after Items, one at a time: a
	// kind with a million resources makes each proposal only when the
	// engine decides it, so they never all live at once. The pointer is
	// valid only during the call.
	Stream func(yield func(*Proposal) bool)
	// StreamSize is how many proposals Stream yields, when the kind knows
	// (it sizes the plan's decisions once); 0 when it does not.
	StreamSize int
	// Finish, if set, is called once Stream is drained, by a kind that reads
	// as it streams (a registry listed one repository at a time): what it
	// says then replaces Sources of the same key, adds Blocked notes, and
	// sets InScope before the caps are applied.
	Finish func() Finished
	// Sources are the sources this kind read, with their completeness.
	Sources []Source
	// Blocked are run-level notes on deletions held back.
	Blocked []string
	// InScope is the inventory the percent cap is a share of.
	InScope int
	// Presence says whether this run's listing shows a resource (for clocks
	// and pending deletes of resources with no proposal).
	Presence func(id string) Presence
	// Listings are this run's reads of what terminal candidates name as
	// witnesses. A listing absent from it (a cluster gone from the config)
	// drops its reads.
	Listings map[string]Read
	// Identity, if set, is the identity of what the listing shows under id
	// (a disk's numeric id, a PVC's UID): a pending delete whose object was
	// replaced by a new one under the same id did happen.
	Identity func(id string) string
}

// each calls f with every proposal: Items, then Stream's.
func (ps *Proposals) each(f func(*Proposal)) {
	for i := range ps.Items {
		f(&ps.Items[i])
	}
	if ps.Stream != nil {
		ps.Stream(func(p *Proposal) bool { f(p); return true })
	}
}

// Finished is what a streaming kind read, said once its stream is drained.
type Finished struct {
	Sources []Source
	Blocked []string
	// Notices are what every report repeats (a declaration the kind relied on).
	Notices []string
	InScope int
}

// Presence is what a listing says of a resource.
type Presence int

const (
	// Unknown: the listing that would show it was incomplete, or a delete is
	// still in progress. Clocks and pending marks are kept.
	Unknown Presence = iota
	Present
	Gone
)

// ListedBy is the presence rule every kind answers Presence with: an id
// whose scope (its cluster, account and region, repository, ...) was not
// listed completely is Unknown, since a failed listing proves nothing; one
// the listing shows is Present; any other is Gone. complete says whether
// id's scope was listed completely (false for an id it cannot parse, or a
// resource whose delete is still in flight); shows whether the listing
// shows id.
func ListedBy(complete, shows func(id string) bool) func(id string) Presence {
	return func(id string) Presence {
		switch {
		case !complete(id):
			return Unknown
		case shows(id):
			return Present
		}
		return Gone
	}
}

// Listed is ListedBy over maps: the scopes listed completely, by scope(id),
// and the ids the listing showed.
func Listed(scope func(id string) (string, bool), complete, present map[string]bool) func(id string) Presence {
	return ListedBy(func(id string) bool {
		s, ok := scope(id)
		return ok && complete[s]
	}, func(id string) bool { return present[id] })
}

// Pricer is a kind whose resources cost money while they exist: the
// engine asks it for each decision's monthly cost (Frees.Cost), so that
// reports price the waste and what the plan saves.
type Pricer interface {
	MonthlyCost(d *Decision) float64
}

// Verdict is the re-read's answer for one decision.
type Verdict struct {
	Result Recheck
	Reason string // why it is skipped
	// Labels are the labels or tags the re-read saw on a resource it lets
	// go: the engine checks the kind's OptOutKey in them. A kind with an
	// opt-out key that lets a resource go without them (nil) deletes
	// nothing, since the engine cannot check what it was not shown: use
	// Pass.
	Labels map[string]string
}

// Pass is the verdict for a resource the re-read found unchanged, with the
// labels or tags it saw (none is fine: they were read).
func Pass(labels map[string]string) Verdict {
	if labels == nil {
		labels = map[string]string{}
	}
	return Verdict{Result: Go, Labels: labels}
}

// Recheck results.
type Recheck int

const (
	Go Recheck = iota
	GoneNow
	Skip
)

// Deleted is the result of deleting one decision. Err is nil when it was
// deleted, or the provider's error, which says its outcome
// (outcome.Of): gone already, changed since the plan (a skip),
// refused (still there), or unknown (no answer, or an
// error nobody mapped: it may be gone, and the next run settles it).
type Deleted struct {
	Err error
}

// DeleteEach deletes a batch one call at a time and stops at the first whose
// outcome is unknown: the whole call then fails, so the pending marks stay
// and the next run settles them from its listing.
func DeleteEach(batch []*Decision, del func(i int, d *Decision) Deleted) ([]Deleted, error) {
	out := make([]Deleted, len(batch))
	for i, d := range batch {
		out[i] = del(i, d)
		if err := out[i].Err; outcome.Of(err) == outcome.Unknown {
			return nil, err
		}
	}
	return out, nil
}

// skipReason is why a delete the provider says was refused as changed is
// a skip, in the provider's words.
func skipReason(err error) string { return "skipped: " + err.Error() }
