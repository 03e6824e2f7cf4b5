package engine

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/amount"
)

// Remaker makes a compact proposal again (Proposal.Remake): a
// kind with a million candidates keeps each as a row of its own table,
// and the plan keeps the engine's verdict on it in 12 bytes (a row),
// instead of a Decision with its strings and detail (~700 bytes). It must
// be comparable (a pointer): the plan keys its rows' sources by it. The
// items of one Remaker share their Group.
type Remaker interface {
	// Remake returns item's proposal as the kind made it; the engine
	// reads what the decision takes of it: ID, Name, Reason, Class, Frees,
	// Group, Identity and Detail.
	Remake(item uint32) Proposal
}

// row is a decision kept compact: the engine's verdict in 12 bytes, with
// the kind's envelope made again on demand (Plan.All). What rules say of
// it (its look) is shared by the many rows they say it of.
type row struct {
	src, item uint32
	look      uint32 // an index in rowsOf.looks
}

const (
	rowAction   = 3
	rowHeld     = 4
	rowTerminal = 8
)

// look is what many rows share: the strings a rule or the kind set,
// interned, the times and the verdict.
type look struct {
	reason, class, owner uint32 // reason 0: the remade one
	notes                [2]uint32
	since, after         uint32 // OrphanSince, DeletableAfter: indexes in rowsOf.times (0: none)
	flags                uint8  // the action's index (rowActions) | rowHeld | rowTerminal
	view                 uint32 // Decision.view
}

func (l *look) action() Action { return rowActions[l.flags&rowAction] }

// lookAt is row w's look.
func (rs *rowsOf) lookAt(w *row) *look { return &rs.looks[w.look] }

// rowSrc is one Remaker of one kind.
type rowSrc struct {
	kind   string
	remake Remaker
	unit   *amount.Unit
	group  string // its rows' Group, unless mixed
	mixed  bool
}

// rowActions orders actions as the plan sorts them; a row keeps the index.
var rowActions = [...]Action{Delete, Mark, Report, Keep}

func actionIndex(a Action) uint8 {
	return uint8(slices.Index(rowActions[:], a))
}

// rowChunk rows are stored a chunk at a time: a million rows never need
// one array of 12 MB, nor its copy while it grows.
const rowChunk = 1 << 12

// rowsOf is the compact part of a plan.
type rowsOf struct {
	chunks [][]row
	n      int
	// order lists the rows in the plan's order (sortRows).
	order   []uint32
	srcs    []rowSrc
	srcAt   map[Remaker]uint32
	strs    []string // interned: reasons, classes, owners, notes; 0 is ""
	strAt   map[string]uint32
	looks   []look
	lookIdx map[look]uint32
	times   []int64 // Unix ns; 0 is none
	timeAt  map[int64]uint32
	ptrs    []*time.Time // times as shared pointers (timeOfIndex)
	price   map[string]Pricer
	heldAt  map[heldLook]uint32 // hold's: the look a look becomes when held with a note
}

type heldLook struct {
	look uint32
	note string
}

func (rs *rowsOf) at(j int) *row { return &rs.chunks[j/rowChunk][j%rowChunk] }

func (rs *rowsOf) intern(s string) uint32 {
	if s == "" {
		return 0
	}
	if i, ok := rs.strAt[s]; ok {
		return i
	}
	if rs.strAt == nil {
		rs.strAt = map[string]uint32{}
		rs.strs = []string{""}
	}
	i := uint32(len(rs.strs))
	rs.strs = append(rs.strs, s)
	rs.strAt[s] = i
	return i
}

func (rs *rowsOf) lookOf(l look) uint32 {
	if i, ok := rs.lookIdx[l]; ok {
		return i
	}
	if rs.lookIdx == nil {
		rs.lookIdx = map[look]uint32{}
	}
	i := uint32(len(rs.looks))
	rs.looks = append(rs.looks, l)
	rs.lookIdx[l] = i
	return i
}

func (rs *rowsOf) timeOf(t *time.Time) uint32 {
	if t == nil {
		return 0
	}
	ns := t.UnixNano()
	if i, ok := rs.timeAt[ns]; ok {
		return i
	}
	if rs.timeAt == nil {
		rs.timeAt = map[int64]uint32{}
		rs.times = []int64{0}
	}
	i := uint32(len(rs.times))
	rs.times = append(rs.times, ns)
	rs.timeAt[ns] = i
	return i
}

// compact reports whether d, a proposal's decision, can be kept as a row:
// its kind remakes it, nothing waits for it or is waited for by it, and it
// frees at most one amount.
func compact(it *Proposal, d *Decision) bool {
	return it.Remake != nil && len(d.After) == 0 && d.Frees.Amounts[1].Unit == nil
}

// addRow keeps d as a row and returns its slot (rowOf).
func (rs *rowsOf) addRow(kind string, it *Proposal, d *Decision) int {
	src, ok := rs.srcAt[it.Remake]
	if !ok {
		if rs.srcAt == nil {
			rs.srcAt = map[Remaker]uint32{}
		}
		src = uint32(len(rs.srcs))
		rs.srcs = append(rs.srcs, rowSrc{kind: kind, remake: it.Remake, unit: d.Frees.Amounts[0].Unit, group: d.Group})
		rs.srcAt[it.Remake] = src
	} else if s := &rs.srcs[src]; s.group != d.Group {
		s.mixed = true
	}
	l := look{class: rs.intern(d.Class), owner: rs.intern(d.Owner), notes: [2]uint32{rs.intern(d.notes[0]), rs.intern(d.notes[1])},
		since: rs.timeOf(d.OrphanSince), after: rs.timeOf(d.DeletableAfter), flags: actionIndex(d.Action), view: d.view}
	if it.Protected != "" {
		l.reason = rs.intern(d.Reason)
	}
	if d.Held {
		l.flags |= rowHeld
	}
	if d.terminal {
		l.flags |= rowTerminal
	}
	w := row{src: src, item: it.Item, look: rs.lookOf(l)}
	if rs.n%rowChunk == 0 {
		rs.chunks = append(rs.chunks, make([]row, 0, rowChunk))
	}
	c := &rs.chunks[len(rs.chunks)-1]
	*c = append(*c, w)
	rs.n++
	return -rs.n
}

// rowOf: a slot below 0 is row -slot-1, else a Decisions index.
func rowOf(slot int) int { return -slot - 1 }

// hold marks row j held with note: as rules.hold does a Decision.
func (rs *rowsOf) hold(j int, note string) {
	w := rs.at(j)
	if rs.lookAt(w).action() != Delete {
		return
	}
	k := heldLook{w.look, note}
	if at, ok := rs.heldAt[k]; ok {
		w.look = at
		return
	}
	l := rs.looks[w.look]
	l.flags = l.flags&^rowAction | actionIndex(Mark) | rowHeld
	notes := [2]string{rs.strs[l.notes[0]], rs.strs[l.notes[1]]}
	addNote(&notes, note)
	l.notes = [2]uint32{rs.intern(notes[0]), rs.intern(notes[1])}
	w.look = rs.lookOf(l)
	if rs.heldAt == nil {
		rs.heldAt = map[heldLook]uint32{}
	}
	rs.heldAt[k] = w.look
}

// materialize makes row j's decision into d.
func (rs *rowsOf) materialize(j int, d *Decision) {
	w := rs.at(j)
	s := &rs.srcs[w.src]
	l := &rs.looks[w.look]
	p := s.remake.Remake(w.item)
	*d = p.decision(s.kind)
	if l.reason != 0 {
		d.Reason = rs.strs[l.reason]
	}
	d.Class, d.Owner = rs.strs[l.class], rs.strs[l.owner]
	d.Action, d.Held, d.terminal = l.action(), l.flags&rowHeld != 0, l.flags&rowTerminal != 0
	d.notes = [2]string{rs.strs[l.notes[0]], rs.strs[l.notes[1]]}
	d.OrphanSince, d.DeletableAfter = rs.timeOfIndex(l.since), rs.timeOfIndex(l.after)
	d.view = l.view
	if pr := rs.price[s.kind]; pr != nil {
		d.Frees.Cost = pr.MonthlyCost(d)
	}
}

// brief makes what Plan.Brief yields of row j into d.
func (rs *rowsOf) brief(j int, d *Decision) {
	w := rs.at(j)
	s := &rs.srcs[w.src]
	b, ok := s.remake.(Briefer)
	if !ok || s.mixed {
		rs.materialize(j, d)
		return
	}
	l := &rs.looks[w.look]
	*d = Decision{Kind: s.kind, Class: rs.strs[l.class], Owner: rs.strs[l.owner], Group: s.group, Action: l.action(), Held: l.flags&rowHeld != 0,
		Frees: b.Frees(w.item)}
	if pr := rs.price[s.kind]; pr != nil {
		d.Frees.Cost = pr.MonthlyCost(d)
	}
}

// timeOfIndex is time i, one pointer per time shared by the decisions
// made again (never written through, as rules.at's).
func (rs *rowsOf) timeOfIndex(i uint32) *time.Time {
	if i == 0 {
		return nil
	}
	if int(i) < len(rs.ptrs) {
		return rs.ptrs[i]
	}
	t := time.Unix(0, rs.times[i]).UTC() // during Build
	return &t
}

// sortRows orders rows as the plan orders its decisions (by kind, then
// action; as proposed among equals) in order, a stable counting sort.
func (rs *rowsOf) sortRows() {
	type key struct {
		kind   string
		action uint8
	}
	count := map[key]int{}
	for j := range rs.n {
		w := rs.at(j)
		count[key{rs.srcs[w.src].kind, rs.lookAt(w).flags & rowAction}]++
	}
	keys := slices.SortedFunc(maps.Keys(count), func(a, b key) int {
		if c := strings.Compare(a.kind, b.kind); c != 0 {
			return c
		}
		return int(a.action) - int(b.action)
	})
	start, at := map[key]int{}, 0
	for _, k := range keys {
		start[k] = at
		at += count[k]
	}
	// Made once, before anything reads the plan (apply's batches at once).
	rs.ptrs = make([]*time.Time, len(rs.times))
	for k := 1; k < len(rs.times); k++ {
		t := time.Unix(0, rs.times[k]).UTC()
		rs.ptrs[k] = &t
	}
	rs.order = make([]uint32, rs.n)
	for j := range rs.n {
		w := rs.at(j)
		k := key{rs.srcs[w.src].kind, rs.lookAt(w).flags & rowAction}
		rs.order[start[k]] = uint32(j)
		start[k]++
	}
}

// All yields every decision of the plan in its order (by kind, then
// action: delete, mark, report, keep), compact ones made again one at a
// time, each its own. Read every decision through it: Decisions alone
// lacks the compact ones.
func (p *Plan) All() iter.Seq[*Decision] { return p.each(nil, false) }

// Briefer is a Remaker that says what an item frees without making its
// decision again (Plan.Brief). Its kind prices a decision from Frees alone.
type Briefer interface {
	Frees(item uint32) amount.Frees
}

// Brief yields every decision as All does, with what totals read: Kind,
// Action, Held, Class, Owner, Group and Frees, priced. A row whose Remaker
// is a Briefer is not made again, and the rows share one Decision: copy
// what you keep. The report's sums read a million rows this way.
func (p *Plan) Brief() iter.Seq[*Decision] { return p.each(nil, true) }

// each is All, making again only the rows want wants (nil: all); brief
// as Brief.
func (p *Plan) each(want func(*row) bool, brief bool) iter.Seq[*Decision] {
	rs := &p.compact
	return func(yield func(*Decision) bool) {
		var scratch *Decision // this range's: brief rows share it
		for d := range p.merge(func(j int) *Decision {
			if want != nil && !want(rs.at(j)) {
				return nil
			}
			if brief {
				if scratch == nil {
					scratch = new(Decision)
				}
				rs.brief(j, scratch)
				return scratch
			}
			d := new(Decision)
			rs.materialize(j, d)
			return d
		}) {
			if !yield(d) {
				return
			}
		}
	}
}

// merge yields the full decisions and the rows in the plan's order, each
// row j as made(j) makes it (nil: skipped); the second value says a row.
func (p *Plan) merge(made func(j int) *Decision) iter.Seq2[*Decision, bool] {
	return func(yield func(*Decision, bool) bool) {
		rs := &p.compact
		o := 0
		rows := func(before *Decision) bool {
			for ; o < len(rs.order) && (before == nil || rowBefore(rs, int(rs.order[o]), before)); o++ {
				if d := made(int(rs.order[o])); d != nil && !yield(d, true) {
					return false
				}
			}
			return true
		}
		for i := range p.Decisions {
			d := &p.Decisions[i]
			if !rows(d) || !yield(d, false) {
				return
			}
		}
		rows(nil)
	}
}

// Of yields kind's decisions as All does, without making the other
// kinds' rows again.
func (p *Plan) Of(kind string) iter.Seq[*Decision] {
	return func(yield func(*Decision) bool) {
		rs := &p.compact
		for d := range p.each(func(w *row) bool { return rs.srcs[w.src].kind == kind }, false) {
			if d.Kind == kind && !yield(d) {
				return
			}
		}
	}
}

// Sift yields kind's decisions as Of does, but only those pick takes, and
// makes a row again only when pick, shown the row as Brief shows it, takes
// it: a view tallies a million rows and lists a few thousand. pick's
// decision may be shared: copy what you keep.
func (p *Plan) Sift(kind string, pick func(*Decision) bool) iter.Seq[*Decision] {
	return func(yield func(*Decision) bool) {
		rs := &p.compact
		scratch := new(Decision)
		for d, row := range p.merge(func(j int) *Decision {
			if rs.srcs[rs.at(j).src].kind != kind {
				return nil
			}
			rs.brief(j, scratch)
			if !pick(scratch) {
				return nil
			}
			d := new(Decision)
			rs.materialize(j, d)
			return d
		}) {
			if !row && (d.Kind != kind || !pick(d)) {
				continue
			}
			if !yield(d) {
				return
			}
		}
	}
}

// rowBefore: row j sorts before full decision d: by kind, action, then
// as they were put (Decision.seq counts the rows put before d).
func rowBefore(rs *rowsOf, j int, d *Decision) bool {
	w := rs.at(j)
	if k := rs.srcs[w.src].kind; k != d.Kind {
		return k < d.Kind
	}
	if a, b := actionIndex(d.Action), rs.lookAt(w).flags&rowAction; b != a {
		return b < a
	}
	return uint32(j) < d.seq
}

// Cut returns a copy of the plan whose decisions are those keep keeps,
// each whole (a team's share of a fleet's plan).
func (p *Plan) Cut(keep func(*Decision) bool) *Plan {
	out := *p
	out.Decisions, out.compact = nil, rowsOf{}
	for d := range p.All() {
		if keep(d) {
			out.Decisions = append(out.Decisions, *d)
		}
	}
	return &out
}

// Len is how many decisions the plan has (All yields them).
func (p *Plan) Len() int { return len(p.Decisions) + p.compact.n }

func nsOf(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.UnixNano()
}
