package engine

import (
	"iter"
	"slices"
	"sort"
	"time"
)

// Remaker makes a compact proposal's decision again (Proposal.Remake): a
// kind with a million candidates keeps each as a row of its own table,
// and the plan keeps the engine's verdict on it in 64 bytes (a row),
// instead of a Decision with its strings and detail (~700 bytes). It must
// be comparable (a pointer): the plan keys its rows' sources by it. The
// items of one Remaker share their Group.
type Remaker interface {
	// Remake returns item's decision envelope as the proposal had it: ID,
	// Name, Reason, Class, Frees, Group, Identity and Detail.
	Remake(item uint32) Decision
}

// row is a decision kept compact: the engine's verdict, with the kind's
// envelope made again on demand (Plan.All).
type row struct {
	src, item      uint32
	since, after   int64 // OrphanSince, DeletableAfter: Unix ns, 0 for none
	n              int64 // Frees.Amounts[0].N, for the caps
	reason, class  uint32
	owner          uint32
	notes          [2]uint32
	seq            uint32
	action         uint8
	held, terminal bool
}

// rowSrc is one Remaker of one kind.
type rowSrc struct {
	kind   string
	remake Remaker
	unit   *Unit
}

// rowActions orders actions as the plan sorts them; a row keeps the index.
var rowActions = [...]Action{Delete, Mark, Report, Keep}

func actionIndex(a Action) uint8 {
	return uint8(slices.Index(rowActions[:], a))
}

// rowsOf is the compact part of a plan.
type rowsOf struct {
	rows  []row
	srcs  []rowSrc
	srcAt map[Remaker]uint32
	strs  []string // interned: reasons, classes, owners, notes; 0 is ""
	strAt map[string]uint32
	price map[string]Pricer
}

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

func nsOf(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.UnixNano()
}

// compact reports whether d, a proposal's decision, can be kept as a row:
// its kind remakes it, nothing waits for it or is waited for by it, and it
// frees at most one amount.
func compact(it *Proposal, d *Decision) bool {
	return it.Remake != nil && len(d.After) == 0 && d.Frees.Amounts[1].Unit == nil
}

// addRow keeps d as a row and returns its slot (rowSlot).
func (rs *rowsOf) addRow(kind string, it *Proposal, d *Decision) int {
	src, ok := rs.srcAt[it.Remake]
	if !ok {
		if rs.srcAt == nil {
			rs.srcAt = map[Remaker]uint32{}
		}
		src = uint32(len(rs.srcs))
		rs.srcs = append(rs.srcs, rowSrc{kind: kind, remake: it.Remake, unit: d.Frees.Amounts[0].Unit})
		rs.srcAt[it.Remake] = src
	}
	w := row{src: src, item: it.Item, seq: d.seq, since: nsOf(d.OrphanSince), after: nsOf(d.DeletableAfter), n: d.Frees.Amounts[0].N,
		class: rs.intern(d.Class), owner: rs.intern(d.Owner), action: actionIndex(d.Action), held: d.Held, terminal: d.terminal,
		notes: [2]uint32{rs.intern(d.notes[0]), rs.intern(d.notes[1])}}
	if it.Protected != "" {
		w.reason = rs.intern(d.Reason)
	}
	rs.rows = append(rs.rows, w)
	return -len(rs.rows)
}

// rowSlot: a slot below 0 is row -slot-1, else a Decisions index.
func rowOf(slot int) int { return -slot - 1 }

// materialize makes row w's decision into d.
func (rs *rowsOf) materialize(w *row, d *Decision) {
	s := &rs.srcs[w.src]
	*d = s.remake.Remake(w.item)
	d.Kind = s.kind
	if w.reason != 0 {
		d.Reason = rs.strs[w.reason]
	}
	d.Class, d.Owner = rs.strs[w.class], rs.strs[w.owner]
	d.Action, d.Held, d.terminal = rowActions[w.action], w.held, w.terminal
	d.notes = [2]string{rs.strs[w.notes[0]], rs.strs[w.notes[1]]}
	d.OrphanSince, d.DeletableAfter = timeAt(w.since), timeAt(w.after)
	if pr := rs.price[s.kind]; pr != nil {
		d.Frees.Cost = pr.MonthlyCost(d)
	}
}

func timeAt(ns int64) *time.Time {
	if ns == 0 {
		return nil
	}
	t := time.Unix(0, ns).UTC()
	return &t
}

// sortRows orders rows as the plan orders its decisions: by kind, then
// action, stable.
func (rs *rowsOf) sortRows() {
	sort.SliceStable(rs.rows, func(i, j int) bool {
		a, b := &rs.rows[i], &rs.rows[j]
		if ka, kb := rs.srcs[a.src].kind, rs.srcs[b.src].kind; ka != kb {
			return ka < kb
		}
		return a.action < b.action
	})
}

// All yields every decision of the plan in its order (by kind, then
// action: delete, mark, report, keep), compact ones made again one at a
// time, each its own. Read every decision through it: Decisions alone
// lacks the compact ones.
func (p *Plan) All() iter.Seq[*Decision] {
	return func(yield func(*Decision) bool) {
		rs := &p.compact
		row := func(j int) *Decision {
			d := new(Decision)
			rs.materialize(&rs.rows[j], d)
			return d
		}
		j := 0
		for i := range p.Decisions {
			d := &p.Decisions[i]
			for ; j < len(rs.rows) && rowBefore(rs, &rs.rows[j], d); j++ {
				if !yield(row(j)) {
					return
				}
			}
			if !yield(d) {
				return
			}
		}
		for ; j < len(rs.rows); j++ {
			if !yield(row(j)) {
				return
			}
		}
	}
}

// rowBefore: row w sorts before full decision d (a tie goes to d).
func rowBefore(rs *rowsOf, w *row, d *Decision) bool {
	if k := rs.srcs[w.src].kind; k != d.Kind {
		return k < d.Kind
	}
	if a := actionIndex(d.Action); w.action != a {
		return w.action < a
	}
	return w.seq < d.seq
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
func (p *Plan) Len() int { return len(p.Decisions) + len(p.compact.rows) }
