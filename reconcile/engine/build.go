package engine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/amount"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
)

// Build makes the plan: every kind proposes, then every rule is applied once,
// in this order, to every kind:
//
//  1. settle deletes an interrupted run left pending; keep what a person
//     protected (Proposal.Protected), whatever the kind proposed;
//  2. fail closed: a candidate whose evidence is incomplete is held, its clock kept;
//  3. the grace clock, keyed by identity (a new object starts a new clock);
//  4. the kind's own wait, then minimum age, then the grace period; with
//     FreshViews, a due delete whose clusters' views are stale (older than
//     the bound, or begun before its grace did) is held; so is one relying
//     on a view still settling (Source.Settles), which keeps what it shows;
//  5. dependencies: a candidate goes only in the run what it waits for goes;
//  6. with RequireNotice, the notice a delivered report must have given;
//     then the breaker (on everything due), then the run's Filter (run
//     --kind, --cluster), then the per-run caps (count, percent, amount);
//  7. dependencies again, for what the caps held;
//  8. forget the clocks of resources no longer candidates, or certainly gone;
//
// then each decision is priced (Pricer). What the kinds show of the plan
// (their report sections, warnings and gauges) is not the engine's:
// notify/report's Show adds it.
//
// It is pure: no I/O, no clock but now. Build decides by the rules and the
// kinds' Limits alone; Settings.Build adds the run's settings.
func Build(snap *inventory.View, kinds []Kind, prev State, now time.Time) *Plan {
	return Settings{}.Build(snap, kinds, prev, now)
}

// Build makes the plan as the package's Build does, with the run's settings.
func (s Settings) Build(snap *inventory.View, kinds []Kind, prev State, now time.Time) *Plan {
	p := &Plan{Version: SchemaVersion, GeneratedAt: now}
	o := s.options()
	next := prev.Clone()
	book := &sourceBook{p: p, at: map[string]int{}}
	book.clusters(snap.Clusters, guardedWhat(kinds))
	p.addFleet(snap.Fleet, snap.Clusters, func(s Source) { book.register(s) })
	for _, n := range s.Notices {
		p.addNotice(n)
	}
	props := make([]Proposals, len(kinds))
	for i, k := range kinds {
		props[i] = k.Propose(snap, now)
		for _, s := range props[i].Sources {
			book.add(s)
		}
		p.Blocked = append(p.Blocked, props[i].Blocked...)
	}
	p.sourceAt = book.at
	// One decision per proposal: sized once when every kind says how many,
	// since growing a slice of 200,000 decisions holds the old and the new
	// array at once. Not from InScope: a registry of a million images
	// proposes only its notable few (a million decisions' room was 264 MiB).
	n := 0
	for i := range props {
		n += len(props[i].Items) + props[i].StreamSize
	}
	p.Decisions = make([]Decision, 0, n)
	r := rules{p: p, st: &next, now: now, holds: map[*string]string{}, times: map[time.Time]*time.Time{}, notes: map[string]string{}, opt: o}
	for i, k := range kinds {
		r.settle(k, &props[i])
	}
	for i, k := range kinds {
		r.decide(k, &props[i])
		props[i].Items, props[i].Stream = nil, nil // the decisions are the plan now
	}
	p.addUnseen()
	p.Currency, p.routed = o.currency, o.routed
	price(p, kinds)
	p.compact.sortRows()
	p.sortDecisions()
	p.State = next
	return p
}

// sortDecisions orders the decisions by kind, deletes first.
func (p *Plan) sortDecisions() {
	order := map[Action]int{Delete: 0, Mark: 1, Report: 2, Keep: 3}
	sort.SliceStable(p.Decisions, func(i, j int) bool {
		a, b := &p.Decisions[i], &p.Decisions[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return order[a.Action] < order[b.Action]
	})
}

// sourceBook is the plan's sources as Build gathers them: each once, by
// its key (at: its index in Plan.Sources).
type sourceBook struct {
	p  *Plan
	at map[string]int
}

// register adds s unless a source of its key is in; false when one was.
func (b *sourceBook) register(s Source) bool {
	if _, dup := b.at[s.Key()]; dup {
		return false
	}
	b.at[s.Key()] = len(b.p.Sources)
	b.p.Sources = append(b.p.Sources, s)
	return true
}

// add registers s, and an incomplete one makes the plan incomplete.
func (b *sourceBook) add(s Source) {
	if b.register(s) && !s.Complete {
		b.p.Incomplete = true
	}
}

// guardedWhat says what no incomplete cluster's kinds delete: "no disk it
// could reference and no ... is".
func guardedWhat(kinds []Kind) string {
	var guarded []string
	for _, k := range kinds {
		if g := k.Limits().Guarded; g != "" {
			guarded = append(guarded, g)
		}
	}
	if len(guarded) == 0 {
		return "nothing it could reference is"
	}
	return "no " + strings.Join(guarded, " and no ") + " is"
}

// clusters adds each cluster read, and its taps, as sources; an
// incomplete one blocks what is guarded (what).
func (b *sourceBook) clusters(clusters []inventory.ClusterRefs, what string) {
	p := b.p
	named := make(map[string]int, len(clusters))
	for _, c := range clusters {
		named[c.Name]++
	}
	for _, c := range clusters {
		if named[c.Name] > 1 {
			// A name is a cluster's source key: two reads under one name
			// cannot be told apart, so neither stands for its cluster.
			c.Complete = false
			c.Problems = append(slices.Clip(c.Problems), fmt.Sprintf("%d clusters read this run are named %s, and reclaim cannot tell their reads apart", named[c.Name], c.Name))
		}
		b.add(Source{Kind: "cluster", Name: c.Name, Complete: c.Complete, Problems: c.Problems, Items: len(c.PVs),
			Duration: c.Duration, Unit: "PV references", ReadAt: c.ReadAt, Settles: c.Settles})
		if !c.Complete {
			p.Blocked = append(p.Blocked, fmt.Sprintf("cluster %s is incomplete (%s): %s deleted this run",
				c.Name, strings.Join(c.Problems, "; "), what))
		}
		p.addTaps(c, b.add)
	}
}

type rules struct {
	p   *Plan
	st  *State
	now time.Time
	// holds caches the fail-closed verdict of a Sources list: kinds share
	// one list between the proposals that rely on the same sources.
	holds map[*string]string
	// times shares the clocks' times between decisions: derived clocks
	// take a few values (the reads' times) across a whole fleet.
	times map[time.Time]*time.Time
	notes map[string]string // shared
	grace map[graceKey]string
	held  map[string]string // heldNote's
	views map[*string]view  // stale's, by Sources list as holds
	// staleSaid and settleSaid are the clusters whose stale or settling
	// view the plan's held-back notes name already.
	staleSaid, settleSaid map[string]bool
	opt                   options
}

// shared returns one copy of each distinct note: the same text made for
// many decisions is kept once.
// graceKey is what a grace note says.
type graceKey struct {
	since, after time.Time
	grace        time.Duration
	due          bool
}

// graceNote is the note of a candidate in (or past) its grace, made once
// for each distinct one: a backlog's million share a few.
func (r *rules) graceNote(k graceKey) string {
	if n, ok := r.grace[k]; ok {
		return n
	}
	since, after := fmtTimes(k.since, k.after)
	n := fmt.Sprintf("orphan since %s, deletable after %s (grace %s)", since, after, span(k.grace))
	if k.due {
		n = fmt.Sprintf("orphan since %s (grace %s elapsed)", fmtTime(k.since), span(k.grace))
	}
	if r.grace == nil {
		r.grace = map[graceKey]string{}
	}
	r.grace[k] = n
	return n
}

func (r *rules) shared(s string) string {
	if c, ok := r.notes[s]; ok {
		return c
	}
	r.notes[s] = s
	return s
}

// at returns a shared pointer to t (never written through).
func (r *rules) at(t time.Time) *time.Time {
	if p, ok := r.times[t]; ok {
		return p
	}
	p := &t
	r.times[t] = p
	return p
}

// price sets each decision's monthly cost from its kind, if a Pricer.
func price(p *Plan, kinds []Kind) {
	pricers := map[string]Pricer{}
	for _, k := range kinds {
		if pr, ok := k.(Pricer); ok {
			pricers[k.Name()] = pr
		}
	}
	p.compact.price = pricers // rows are priced when made again
	if len(pricers) == 0 {
		return
	}
	for i := range p.Decisions {
		d := &p.Decisions[i]
		if pr := pricers[d.Kind]; pr != nil {
			d.Frees.Cost = pr.MonthlyCost(d)
		}
	}
}

// Settings are the run's own settings of the rules, beside each kind's
// Limits. The zero value decides by the rules alone.
type Settings struct {
	// Currency names the currency of the kinds' prices (Pricer).
	Currency string
	// Only narrows the deletions this run carries out (run --kind,
	// --cluster); the zero Filter passes every one.
	Only Filter
	// RequireNotice holds every deletion until a report listing the
	// candidate was delivered to a person at least the kind's grace period
	// earlier (State.Announce records deliveries): nobody is surprised by a
	// delete.
	RequireNotice bool
	// FreshViews holds a delete unless every cluster view it relies on is
	// fresh: begun (inventory.ClusterRefs.ReadAt) no more than FreshWithin
	// before now (0: no bound), and not before the candidate's grace began
	// (what a view older than the clock saw cannot confirm the orphan
	// within its grace). A stale view still keeps what it shows in use:
	// the rule holds deletes only, each with the reason (FreshWithinName,
	// the bound's name, and FreshHint: what to check). A cluster view
	// without a read time is stale.
	//
	// A clock started by this very pass (grace 0, or a new candidate) is
	// not held for a view begun a moment before it: the pass read it for
	// that clock, and the bound still applies.
	//
	// The applier checks the rule again right before each delete call,
	// after the re-read and any snapshot wait, with its own clock: a
	// delete whose views went stale meanwhile is deferred (the plan keeps
	// each due delete's oldest view for it).
	FreshViews      bool
	FreshWithin     time.Duration
	FreshWithinName string
	FreshHint       string
	// SettleHint says, in a hold for a settling view (Source.Settles),
	// what sets its settle period.
	SettleHint string
	// OwnerLabel and Routes name each candidate's owner (Decision.Owner):
	// the value of its OwnerLabel (a label or tag the resource carries,
	// else its namespace's; "" for none), else the owner of the first
	// route that matches it, in order; else none. The owners the routes
	// name are routed: only a report cut to such an owner (State.Announce)
	// gives notice of its candidates.
	OwnerLabel string
	Routes     []Route
	// Notices are the run's own, for every report to repeat (what the
	// config file should change).
	Notices []string
}

// options are Settings as the rules read them.
type options struct {
	requireNotice bool
	fresh         *freshness
	only          Filter
	currency      string
	routes        []Route
	ownerLabel    string
	routed        map[string]bool // owners with a route
	settleHint    string
}

func (s Settings) options() options {
	o := options{requireNotice: s.RequireNotice, only: s.Only, currency: s.Currency,
		ownerLabel: s.OwnerLabel, routes: s.Routes, routed: map[string]bool{}, settleHint: s.SettleHint}
	for _, r := range s.Routes {
		o.routed[r.Owner] = true
	}
	if s.FreshViews {
		o.fresh = &freshness{bound: s.FreshWithin, name: s.FreshWithinName, hint: s.FreshHint}
	}
	return o
}

type freshness struct {
	bound      time.Duration
	name, hint string
}

// stale says why a due candidate's evidence is too old to delete on, or
// "": its sources' cluster views are older than the FreshViews bound, or
// began before since (its grace).
func (r *rules) stale(it *Proposal, since time.Time) string {
	v := r.oldest(it)
	if v.name == "" {
		return ""
	}
	why := r.shared(r.opt.fresh.why(v, since, r.now, r.now))
	if why != "" && !r.staleSaid[v.name] {
		if r.staleSaid == nil {
			r.staleSaid = map[string]bool{}
		}
		r.staleSaid[v.name] = true
		r.p.Blocked = append(r.p.Blocked, "no delete that cluster "+v.name+" could object to is made this run: "+why)
	}
	return why
}

// holdOnViews holds a due delete whose cluster views are stale, or still
// settling: each keeps what it shows in use, but may not yet delete.
func (r *rules) holdOnViews(d *Decision, it *Proposal, since time.Time) {
	if why := r.stale(it, since); why != "" {
		// Held back as an incomplete source holds (exit 3): the view is
		// there, but not fresh enough to delete on.
		d.Action, d.Held = Mark, true
		d.note(r.heldNote(why))
		r.p.Incomplete = true
	} else if why := r.unsettled(it); why != "" {
		// Held, but nothing is missing: the view is whole and only waits
		// for its settle period.
		d.Action, d.Held = Mark, true
		d.note(r.heldNote(why))
	}
}

// oldest is the oldest cluster view a candidate relies on, with
// FreshViews; none (no name) without, or when it relies on no cluster's.
func (r *rules) oldest(it *Proposal) view {
	if r.opt.fresh == nil || len(it.Sources) == 0 {
		return view{}
	}
	return r.reliedOn(it)
}

// reliedOn is the views a candidate's sources rely on, found once per
// Sources list.
func (r *rules) reliedOn(it *Proposal) view {
	v, ok := r.views[&it.Sources[0]]
	if !ok {
		v = r.oldestView(it.Sources)
		if r.views == nil {
			r.views = map[*string]view{}
		}
		r.views[&it.Sources[0]] = v
	}
	return v
}

// unsettled says why a due candidate waits for a cluster view that is
// still settling (Source.Settles: a cluster's first records, believed
// for what they show in use, not yet for what they leave out), or "".
func (r *rules) unsettled(it *Proposal) string {
	if len(it.Sources) == 0 {
		return ""
	}
	v := r.reliedOn(it)
	if v.settling == "" || !r.now.Before(v.settles) {
		return ""
	}
	why := r.shared(fmt.Sprintf("cluster %s's view settles at %s: until then it keeps what it shows in use but releases nothing it could use (%s)",
		v.settling, fmtTime(v.settles), orDefault(r.opt.settleHint, "its first views are not yet believed whole")))
	if !r.settleSaid[v.settling] {
		if r.settleSaid == nil {
			r.settleSaid = map[string]bool{}
		}
		r.settleSaid[v.settling] = true
		r.p.Blocked = append(r.p.Blocked, "no delete that cluster "+v.settling+" could object to is made before "+fmtTime(v.settles)+": "+why)
	}
	return why
}

// why says why view v is too old to delete on at now, for a candidate
// whose grace began at since, in a plan made at planned: it has no read
// time, is older than the bound, or began before since. A clock the plan
// started (since is planned) is bounded by the age only. "" when fresh.
func (f *freshness) why(v view, since, planned, now time.Time) string {
	switch {
	case v.at.IsZero():
		return fmt.Sprintf("cluster %s's view has no read time, so reclaim cannot tell it is fresh enough to delete on (%s)", v.name, f.hint)
	case f.bound > 0 && now.Sub(v.at) > f.bound:
		return fmt.Sprintf("cluster %s was read %s ago (at %s), more than %s %s: its view still keeps what it shows in use, but a use made since is not in it (%s)",
			v.name, span(now.Sub(v.at)), fmtTime(v.at), f.name, span(f.bound), f.hint)
	case v.at.Before(since) && since.Before(planned):
		at, began := fmtTimes(v.at, since)
		return fmt.Sprintf("cluster %s was read at %s, before this candidate's grace began (%s): no view of it since confirms it unused (%s)",
			v.name, at, began, f.hint)
	}
	return ""
}

// view is the oldest cluster view a list of sources relies on, and the
// one of them that settles last (Source.Settles), if any still does.
type view struct {
	name     string
	at       time.Time
	settling string
	settles  time.Time
}

// oldestView is the oldest cluster view among keys: a cluster's source,
// or its taps' (the same read). A cluster not read at all is failClosed's.
func (r *rules) oldestView(keys []string) view {
	var v view
	for _, key := range keys {
		i, ok := r.p.sourceIndex(key)
		if !ok {
			continue
		}
		s := &r.p.Sources[i]
		if strings.HasPrefix(s.Kind, inventory.SourceTap+" ") {
			// A tap's pass is its cluster's read: the cluster's view.
			if i, ok = r.p.sourceIndex(inventory.ClusterKey(s.Name)); !ok {
				continue // a cluster not read: failClosed's
			}
			s = &r.p.Sources[i]
		}
		if s.Kind != inventory.SourceCluster || s.NotRead || s.Unit == unitOutOfScope {
			continue // not read: failClosed's, or declared out of scope
		}
		if v.name == "" || s.ReadAt.Before(v.at) {
			v.name, v.at = s.Name, s.ReadAt
		}
		if s.Settles.After(v.settles) {
			v.settling, v.settles = s.Name, s.Settles
		}
	}
	return v
}

// Filter narrows the deletions one run carries out (run --kind, --cluster),
// so that a team can apply one kind or one cluster first. What it leaves
// out is held with the reason and stays due for the next run without it.
// It never makes anything deletable: every other rule still applies.
type Filter struct {
	// Kinds are kind names; empty means every kind.
	Kinds []string
	// Clusters are cluster names; empty means every cluster. A deletion is
	// in a cluster when its id is that cluster's (clusters/NAME/…): a cloud
	// resource (a disk, an image, an interface) is in none, since the
	// evidence for it spans the fleet, and is held under a cluster filter.
	Clusters []string
}

// why says why f holds d; "" when d passes.
func (f Filter) why(d *Decision) string {
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, d.Kind) {
		return "this run deletes only --kind " + strings.Join(f.Kinds, ",")
	}
	if len(f.Clusters) == 0 {
		return ""
	}
	for _, c := range f.Clusters {
		if strings.HasPrefix(d.ID, "clusters/"+c+"/") {
			return ""
		}
	}
	return "this run deletes only in --cluster " + strings.Join(f.Clusters, ",")
}

// settle resolves deletes an interrupted run started: a resource the listing
// no longer shows was deleted (recorded once, now); one it still shows was
// not, and is planned like any other; an unknown one waits for a later run.
func (r *rules) settle(k Kind, pr *Proposals) {
	for _, id := range slices.Sorted(maps.Keys(r.st.Pending)) {
		pend := r.st.Pending[id]
		if pend.Kind != k.Name() && !(pend.Kind == "" && k.Owns(id)) {
			continue
		}
		present := presenceOf(pr.Presence, id)
		if present == Present && pend.Identity != "" && pr.Identity != nil && pr.Identity(id) != pend.Identity {
			present = Gone // deleted, and a new object was made under the same id
		}
		switch present {
		case Present:
			delete(r.st.Pending, id)
		case Gone:
			delete(r.st.Pending, id)
			r.st.DropClock(id)
			r.p.Confirmed = append(r.p.Confirmed, id)
			r.p.confirmations = append(r.p.confirmations, confirmation{id, pend})
		}
	}
}

func presenceOf(f func(string) Presence, id string) Presence {
	if f == nil {
		return Unknown
	}
	return f(id)
}

// decide gives each of a kind's proposals its decision by the rules, then
// narrows what is due to delete (dependencies, notice, breaker, caps) and
// forgets the clocks of what is gone.
func (r *rules) decide(k Kind, pr *Proposals) {
	dk := &deciding{k: k, lim: k.Limits(), kept: map[string]bool{}, afterWhy: map[string]string{}}
	pr.each(func(it *Proposal) { r.decideOne(dk, it) })
	r.finish(pr)
	r.narrow(dk, pr.InScope)
	r.forget(k, pr, dk.kept)
	r.cover(k, pr)
}

// deciding is what decide gathers over one kind's proposals.
type deciding struct {
	k        Kind
	lim      Limits
	kept     map[string]bool   // clocks this run decided to keep
	afterWhy map[string]string // what a decision with After waits for
	due      []int             // slots of the deletes due
}

// decideOne decides one proposal: kept, held (fail closed), reported, or
// on its clock towards a delete.
func (r *rules) decideOne(dk *deciding, it *Proposal) {
	d := it.decision(dk.k.Name())
	if it.Protected != "" {
		// Opted out: kept whatever else the kind said (invariant 5).
		d.Reason, d.Class = it.Protected, orDefault(d.Class, "protected")
	}
	if it.Protected != "" || !it.Candidate {
		// A non-candidate is kept: only a candidate passes
		// fail-closed, grace, caps and breaker.
		d.Action = Keep
		r.st.DropClock(d.ID)
		r.put(&d, it)
		return
	}
	d.Owner = r.opt.owner(&d)
	// A terminal candidate's clock is derived (Proposal.Witnesses) unless
	// it already has one (kept from before: it drains with the backlog).
	d.terminal = derivable(it) && r.st.since(d.ID, it.Identity) == nil
	if why := r.failClosed(it); why != "" {
		r.heldClosed(dk, &d, it, why)
		return
	}
	since := r.orphanSince(dk, &d, it)
	d.OrphanSince = r.at(since)
	if it.ReportOnly {
		d.Action = Report
		r.put(&d, it)
		return
	}
	r.onClock(dk.lim, &d, it, since)
	if len(d.After) > 0 {
		dk.afterWhy[d.ID] = orDefault(it.AfterWhy, "what it depends on")
	}
	if slot := r.put(&d, it); d.Action == Delete {
		dk.due = append(dk.due, slot)
	}
}

// heldClosed marks a candidate held by fail closed (why), its clock kept.
func (r *rules) heldClosed(dk *deciding, d *Decision, it *Proposal, why string) {
	if !d.terminal && !r.st.keep(d.ID) {
		dk.kept[d.ID] = true
	}
	r.p.Incomplete = true
	d.Action, d.Held = Mark, true
	d.note(r.shared("held: " + why))
	if d.terminal {
		if t, ok := r.st.seen(dk.k.Name(), it.Witnesses, latest(it.CandidateFrom, it.Created)); ok {
			d.OrphanSince = r.at(t)
		}
	} else {
		d.OrphanSince = r.st.since(d.ID, it.Identity)
	}
	r.put(d, it)
}

// orphanSince is when a candidate became one: a terminal one's derived
// from its witnesses, another's from its clock (started now if new).
func (r *rules) orphanSince(dk *deciding, d *Decision, it *Proposal) time.Time {
	if d.terminal {
		// Seen as this candidate by the first complete reads after it
		// became one that showed its version; this run when none did.
		if since, ok := r.st.seen(dk.k.Name(), it.Witnesses, latest(it.CandidateFrom, it.Created)); ok {
			return since
		}
		return r.now
	}
	since, packed := r.st.observe(d.ID, it.Identity, r.now)
	if !packed {
		dk.kept[d.ID] = true
	}
	return since
}

// onClock marks a candidate, or makes it a delete once its grace, min age
// and wait are past.
func (r *rules) onClock(lim Limits, d *Decision, it *Proposal, since time.Time) {
	graceEnds := since.Add(lim.Grace)
	after := latest(graceEnds, it.NotBefore)
	if !it.Created.IsZero() {
		after = latest(after, it.Created.Add(lim.MinAge))
	}
	d.DeletableAfter = r.at(after)
	d.Action = Mark
	switch {
	case it.Wait != "":
		d.note(it.Wait)
	case Young(it.Created, r.now, lim.MinAge):
		d.note(fmt.Sprintf("younger than min age %s (created %s)", layout.HumanDuration(lim.MinAge), fmtTime(it.Created)))
	case r.now.Before(graceEnds):
		d.note(r.graceNote(graceKey{since: since, after: after, grace: lim.Grace}))
	default:
		d.Action = Delete
		d.note(r.graceNote(graceKey{since: since, grace: lim.Grace, due: true}))
		r.holdOnViews(d, it, since)
	}
}

// finish adds what a streaming kind says once its stream is read.
func (r *rules) finish(pr *Proposals) {
	if pr.Finish == nil {
		return
	}
	f := pr.Finish()
	for _, s := range f.Sources {
		r.p.setSource(s)
	}
	r.p.Blocked = append(r.p.Blocked, f.Blocked...)
	for _, n := range f.Notices {
		r.p.addNotice(n)
	}
	pr.InScope = f.InScope
}

// narrow holds, of the deletes due, what waits for what is not deleted,
// and what notice, the breaker, the filter and the caps hold.
func (r *rules) narrow(dk *deciding, inScope int) {
	due := r.dependencies(dk.due, func(d *Decision) {
		d.Action = Mark
		d.note(r.shared("waits for " + dk.afterWhy[d.ID]))
	})
	due = r.notice(due, dk.lim)
	due = r.breaker(due, dk.lim)
	due = r.filter(due)
	due = r.caps(due, dk.lim, inScope)
	r.dependencies(due, func(d *Decision) { r.hold(d, dk.afterWhy[d.ID]+" is held; next run") })
}

// forget drops the clocks of k's resources not kept this run whose
// absence is known.
func (r *rules) forget(k Kind, pr *Proposals, kept map[string]bool) {
	for id := range r.st.Resources {
		if !kept[id] && k.Owns(id) && presenceOf(pr.Presence, id) != Unknown {
			delete(r.st.Resources, id)
		}
	}
	// A packed clock's presence is its group's: Presence("GROUP@").
	r.st.forgetUnkept(func(g string) bool {
		return k.Owns(g+"@") && presenceOf(pr.Presence, g+"@") != Unknown
	})
}

// maxReads bounds the reads kept per listing.
const maxReads = 500

// derivable reports whether a candidate's clock can be derived: it names its
// witnesses, each with a well-formed version, and when it was made.
func derivable(it *Proposal) bool {
	if len(it.Witnesses) == 0 || it.Created.IsZero() {
		return false
	}
	for _, w := range it.Witnesses {
		if _, err := resourceversion.CompareResourceVersion(w.Version, w.Version); err != nil {
			return false
		}
	}
	return true
}

// cover records this run's complete reads of the kind's listings, keeping
// those of the last two grace periods and the newest one before them (what
// is older counts from it: later is safe). An incomplete read records
// nothing and keeps the others (a terminal candidate stays one; what was
// unread is held meanwhile); a listing the kind no longer names (a cluster
// gone, a policy changed) is dropped.
func (r *rules) cover(k Kind, pr *Proposals) {
	prefix := k.Name() + " "
	for key := range r.st.Reads {
		if rest, ok := strings.CutPrefix(key, prefix); ok {
			if _, named := pr.Listings[rest]; !named {
				delete(r.st.Reads, key)
			}
		}
	}
	horizon := r.now.Add(-2 * k.Limits().Grace)
	for key, read := range pr.Listings {
		if !read.Complete {
			continue
		}
		reads := r.st.Reads[prefix+key]
		if n := len(reads); n == 0 || reads[n-1].At.Before(r.now) {
			reads = append(reads, Read{At: r.now, Version: read.Version})
		}
		drop := 0
		for drop+1 < len(reads) && reads[drop+1].At.Before(horizon) {
			drop++
		}
		drop = max(drop, len(reads)-maxReads)
		if r.st.Reads == nil {
			r.st.Reads = map[string][]Read{}
		}
		r.st.Reads[prefix+key] = append([]Read(nil), reads[drop:]...)
	}
}

// failClosed says why a candidate's evidence is incomplete, or "".
func (r *rules) failClosed(it *Proposal) string {
	var why []string
	if it.Hold != "" {
		why = append(why, it.Hold)
	}
	if len(it.Sources) > 0 {
		key := &it.Sources[0]
		s, ok := r.holds[key]
		if !ok {
			s = r.p.Unready(it.Sources)
			r.holds[key] = s
		}
		if s != "" {
			why = append(why, s)
		}
	}
	return strings.Join(why, "; ")
}

// dependencies holds (with f) every due decision whose After ids are not all
// due, until none is left; it returns what is still due.
func (r *rules) dependencies(due []int, f func(*Decision)) []int {
	for changed := true; changed; {
		changed = false
		deleting := map[string]bool{}
		for _, i := range due {
			if i >= 0 { // a row is never waited for (compact)
				deleting[r.p.Decisions[i].ID] = true
			}
		}
		out := due[:0]
		for _, i := range due {
			if i < 0 { // nor does it wait
				out = append(out, i)
				continue
			}
			d := &r.p.Decisions[i]
			ok := true
			for _, a := range d.After {
				ok = ok && deleting[a]
			}
			if !ok {
				f(d)
				changed = true
				continue
			}
			out = append(out, i)
		}
		due = out
	}
	return due
}

// notice holds, with RequireNotice, a due deletion whose candidate was not
// announced in a delivered report at least the grace period ago.
func (r *rules) notice(due []int, lim Limits) []int {
	if !r.opt.requireNotice {
		return due
	}
	out := due[:0]
	var scratch Decision
	for _, i := range due {
		d := r.look(i, &scratch)
		e, _ := r.st.Clock(d.ID)
		if d.terminal && d.OrphanSince != nil {
			e.Announced = r.st.announced(*d.OrphanSince, d.Owner, r.opt.routed[d.Owner])
		}
		switch {
		case e.Announced.IsZero():
			r.holdSlot(i, "not yet announced in a delivered report (notify.requireNotice); the next delivered report starts the notice")
		case r.now.Before(e.Announced.Add(lim.Grace)):
			announced, after := fmtTimes(e.Announced, e.Announced.Add(lim.Grace))
			r.holdSlot(i, fmt.Sprintf("announced %s, deletable after %s (notify.requireNotice: grace %s after the first delivered report)",
				announced, after, span(lim.Grace)))
		default:
			out = append(out, i)
			continue
		}
	}
	return out
}

// breaker holds every due deletion of the kind when more are due than its
// limit (0: no breaker): so many at once means the view is wrong, not the fleet.
// It counts before the caps, which would otherwise hide the surge.
func (r *rules) breaker(due []int, lim Limits) []int {
	if lim.BreakerCandidates <= 0 || len(due) <= lim.BreakerCandidates {
		return due
	}
	orphans := len(due)
	if len(lim.QuotaClasses) > 0 {
		orphans = 0
		for _, i := range due {
			if !slices.Contains(lim.QuotaClasses, r.classOf(i)) {
				orphans++
			}
		}
		if orphans <= lim.BreakerCandidates {
			return due // a quota trim's backlog: the caps pace it
		}
	}
	r.p.BreakerTripped = true
	what := fmt.Sprintf("%d %s are due for deletion", orphans, lim.Noun)
	if orphans < len(due) {
		what = fmt.Sprintf("%d %s are due for deletion besides the %d a quota trim needs", orphans, lim.Noun, len(due)-orphans)
	}
	r.p.Blocked = append(r.p.Blocked, fmt.Sprintf("breaker: %s, more than %s.breakerCandidates %d; none is deleted this run — check that every cluster and source is in the config before raising it",
		what, lim.Section, lim.BreakerCandidates))
	for _, i := range due {
		r.holdSlot(i, fmt.Sprintf("breaker tripped (%d due > %d)", orphans, lim.BreakerCandidates))
	}
	return nil
}

// filter holds what the run's Filter leaves out. It comes after the
// breaker, which judges the view by everything due, and before the caps,
// which then spend the run's allowance on what it may delete.
func (r *rules) filter(due []int) []int {
	if len(r.opt.only.Kinds) == 0 && len(r.opt.only.Clusters) == 0 {
		return due
	}
	out := due[:0]
	var scratch Decision
	for _, i := range due {
		if why := r.opt.only.why(r.look(i, &scratch)); why != "" {
			r.holdSlot(i, why)
			continue
		}
		out = append(out, i)
	}
	return out
}

// caps holds what exceeds the per-run caps, oldest orphans first, and
// returns what is still due.
func (r *rules) caps(due []int, lim Limits, inScope int) []int {
	sort.SliceStable(due, func(a, b int) bool { return r.sinceOf(due[a]) < r.sinceOf(due[b]) })
	maxCount := perRunMax(lim.MaxDeletes, lim.MaxDeletePercent, inScope)
	n, freed := 0, int64(0)
	out := due[:0] // in place: a backlog's half a million slots are not copied
	// Said once: a backlog holds a million at the cap.
	var countCap, sizeCap string
	for _, i := range due {
		var frees int64
		if lim.MaxFrees.Unit != nil {
			frees = r.freesOf(i, lim.MaxFrees.Unit)
		}
		switch {
		case n >= maxCount:
			if countCap == "" {
				countCap = fmt.Sprintf("per-run cap of %d %s reached (%s.maxDeletesPerRun %d, maxDeletePercent %.0f%% of %d); next run",
					maxCount, lim.Noun, lim.Section, lim.MaxDeletes, lim.MaxDeletePercent*100, inScope)
			}
			r.holdSlot(i, countCap)
		case lim.MaxFrees.Unit != nil && freed+frees > lim.MaxFrees.N:
			if sizeCap == "" {
				sizeCap = fmt.Sprintf("per-run size cap of %s reached; next run", lim.MaxFrees)
			}
			r.holdSlot(i, sizeCap)
		default:
			n++
			freed += frees
			out = append(out, i)
		}
	}
	return out
}

// perRunMax is the per-run cap: maxDeletes, and a share of the inventory —
// at least one, since a cap that can never delete anything would hide the
// leak forever.
func perRunMax(maxDeletes int, share float64, inventory int) int {
	if share <= 0 {
		return maxDeletes
	}
	return min(maxDeletes, max(int(math.Floor(share*float64(inventory))), 1))
}

func (r *rules) hold(d *Decision, why string) {
	if d.Action != Delete {
		return
	}
	d.Action, d.Held = Mark, true
	d.note(r.heldNote(why))
}

// heldNote is the note of a decision held for why, made once for each why.
func (r *rules) heldNote(why string) string {
	if n, ok := r.held[why]; ok {
		return n
	}
	if r.held == nil {
		r.held = map[string]string{}
	}
	n := r.shared("due for deletion but held: " + why)
	r.held[why] = n
	return n
}

// put adds a decision to the plan, as a row when its kind remakes it, and
// returns its slot (a Decisions index, or below 0 a row's).
func (r *rules) put(d *Decision, it *Proposal) int {
	if d.Action == Delete {
		d.view = r.viewOf(it) // for the applier to check again
	}
	if compact(it, d) {
		return r.p.compact.addRow(d.Kind, it, d)
	}
	d.seq = uint32(r.p.compact.n)
	r.p.Decisions = append(r.p.Decisions, *d)
	return len(r.p.Decisions) - 1
}

// holdSlot is hold for a slot.
func (r *rules) holdSlot(slot int, why string) {
	if slot >= 0 {
		r.hold(&r.p.Decisions[slot], why)
		return
	}
	r.p.compact.hold(rowOf(slot), r.heldNote(why))
}

// look returns the decision of a slot: a row's made again into scratch.
func (r *rules) look(slot int, scratch *Decision) *Decision {
	if slot >= 0 {
		return &r.p.Decisions[slot]
	}
	r.p.compact.materialize(rowOf(slot), scratch)
	return scratch
}

func (r *rules) classOf(slot int) string {
	if slot >= 0 {
		return r.p.Decisions[slot].Class
	}
	rs := &r.p.compact
	return rs.strs[rs.looks[rs.at(rowOf(slot)).look].class]
}

// sinceOf is a due slot's OrphanSince in Unix ns (every due one has one).
func (r *rules) sinceOf(slot int) int64 {
	if slot >= 0 {
		return nsOf(r.p.Decisions[slot].OrphanSince)
	}
	rs := &r.p.compact
	if i := rs.lookAt(rs.at(rowOf(slot))).since; i != 0 {
		return rs.times[i]
	}
	return 0
}

// freesOf is what a slot frees of u; a row is made again to say.
func (r *rules) freesOf(slot int, u *amount.Unit) int64 {
	if slot >= 0 {
		return r.p.Decisions[slot].Frees.Of(u)
	}
	var d Decision
	return r.look(slot, &d).Frees.Of(u)
}

func join(reason, more string) string {
	if reason == "" {
		return more
	}
	return reason + " — " + more
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// finer are the layouts fmtTimes tries after RFC 3339's seconds.
var finer = [...]string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000000Z07:00", "2006-01-02T15:04:05.000000000Z07:00"}

// fmtTimes says two times a reason compares ("read at A, before B"): as
// fmtTime does, unless they would read equal though they differ; then as
// precisely as tells them apart (milli-, micro-, nanoseconds).
func fmtTimes(a, b time.Time) (string, string) {
	x, y := fmtTime(a), fmtTime(b)
	for _, l := range finer {
		if x != y || a.Equal(b) {
			break
		}
		x, y = a.UTC().Format(l), b.UTC().Format(l)
	}
	return x, y
}

// span says a duration in a reason: under a minute in seconds (a grace of
// 30s is not "1m", nor 0 "0m"), else as layout.HumanDuration does.
func span(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	}
	return layout.HumanDuration(d)
}
