package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/reconcile/engine"
)

// table is a kind's own table of compact proposals (engine.Remaker).
type table []engine.Proposal

func (t *table) Remake(i uint32) engine.Proposal { return (*t)[i] }

// compacted returns items with every one that may be a row (no After, not
// named in one) made compact, and how many.
func compacted(items []engine.Proposal) ([]engine.Proposal, int) {
	waited := map[string]bool{}
	for _, it := range items {
		for _, a := range it.After {
			waited[a] = true
		}
	}
	t := make(table, len(items))
	out := slices.Clone(items)
	n := 0
	for i := range out {
		if len(out[i].After) > 0 || waited[out[i].ID] {
			continue
		}
		t[i] = out[i]
		out[i].Remake, out[i].Item = &t, uint32(i)
		n++
	}
	return out, n
}

// A plan whose kind proposes compact rows is the plan it would be with
// whole proposals: the same decisions in the same order with the same
// verdicts (grace, minimum age, protection, report-only, caps, the
// breaker, the run's filter, notice, dependencies), the same counts, the
// same state; and applying it makes the same calls with the same results.
func TestCompactRowsPlanAndApplyAsWholeProposals(t *testing.T) {
	type scenario struct {
		name  string
		lim   func(*engine.Limits)
		set   engine.Settings
		apply bool
	}
	mixed := func() []engine.Proposal {
		var items []engine.Proposal
		for i := range 30 {
			items = append(items, orphan(fmt.Sprintf("o%02d", i)))
		}
		for i := range 4 {
			items = append(items, inUse(fmt.Sprintf("u%d", i)))
		}
		for i := range 3 {
			it := orphan(fmt.Sprintf("p%d", i))
			it.Protected = "protected by the label keep"
			items = append(items, it)
		}
		for i := range 3 {
			it := orphan(fmt.Sprintf("r%d", i))
			it.ReportOnly = true
			items = append(items, it)
		}
		young := orphan("young")
		young.Created = t0.Add(-time.Hour)
		held := orphan("held")
		held.Hold = "a reference could not be resolved"
		parent, child := orphan("parent"), orphan("child")
		child.After = []string{parent.ID}
		return append(items, young, held, parent, child)
	}
	for _, sc := range []scenario{
		{name: "caps", lim: func(l *engine.Limits) { l.MaxDeletes = 10; l.BatchSize = 4 }, apply: true},
		{name: "breaker", lim: func(l *engine.Limits) { l.BreakerCandidates = 5 }},
		{name: "quota classes pass the breaker", lim: func(l *engine.Limits) { l.BreakerCandidates = 12; l.QuotaClasses = []string{"trim"} }, apply: true},
		{name: "filter", set: engine.Settings{Only: engine.Filter{Kinds: []string{"other"}}}},
		{name: "notice", set: engine.Settings{RequireNotice: true}},
		{name: "size cap", lim: func(l *engine.Limits) { l.MaxFrees = amount.Amount{N: 700, Unit: testGB} }, apply: true},
	} {
		t.Run(sc.name, func(t *testing.T) {
			run := func(compact bool) (plan, state string, counts [4]int, results, calls []string) {
				items := mixed()
				for i := range items {
					if i%3 != 0 {
						items[i].Class = "trim"
					}
				}
				st := seenSince(t0.Add(-7*time.Hour), items...)
				if compact {
					var n int
					if items, n = compacted(items); n < 40 {
						t.Fatalf("only %d of %d proposals compact", n, len(items))
					}
				}
				k := &fakeKind{lim: testLimits(), items: items, verdicts: map[string]engine.Verdict{"o03": {Result: engine.Skip, Reason: "changed"}},
					results: map[string]error{"o05": errors.New("denied")}}
				k.lim.MaxDeletes = 100
				if sc.lim != nil {
					sc.lim(&k.lim)
				}
				p := sc.set.Build(snap(complete("a")), []engine.Kind{k}, st, t0)
				var b bytes.Buffer
				if err := p.WriteJSON(&b, "", "  "); err != nil {
					t.Fatal(err)
				}
				sj, _ := json.Marshal(p.State)
				for i, a := range []engine.Action{engine.Delete, engine.Mark, engine.Report, engine.Keep} {
					counts[i] = p.Count(fakeName, a)
				}
				if sc.apply {
					a, _, _ := enginetest.Applier(t0, 3, k)
					out, err := a.Apply(context.Background(), p, true)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range out.Results {
						results = append(results, r.ID+" "+r.Result+" "+r.Reason+" "+r.Error)
					}
					slices.Sort(results)
					calls = slices.Sorted(slices.Values(k.calls))
				}
				return b.String(), string(sj), counts, results, calls
			}
			wp, ws, wc, wr, wk := run(false)
			cp, cs, cc, cr, ck := run(true)
			if cp != wp {
				t.Errorf("the compact plan differs:\n%s\nwhole:\n%s", cp, wp)
			}
			if cs != ws {
				t.Errorf("the compact plan's state differs:\n%s\nwhole:\n%s", cs, ws)
			}
			if cc != wc {
				t.Errorf("counts %v, whole %v", cc, wc)
			}
			if !slices.Equal(cr, wr) || !slices.Equal(ck, wk) {
				t.Errorf("apply differs:\n%q\n%q\nwhole:\n%q\n%q", cr, ck, wr, wk)
			}
			if wc[0]+wc[1] == 0 || sc.apply && len(wr) == 0 {
				t.Fatalf("the scenario decides nothing: %v, %d results", wc, len(wr))
			}
		})
	}
}

// Cut keeps the chosen decisions whole, compact ones included, and only them.
func TestCutKeepsCompactDecisions(t *testing.T) {
	items, _ := compacted(orphans("a", "b", "c"))
	k := &fakeKind{lim: testLimits(), items: items}
	p := build(k, seenSince(t0.Add(-7*time.Hour), items...), t0, complete("a"))
	cut := p.Cut(func(d *engine.Decision) bool { return d.Name != "b" })
	var names []string
	for d := range cut.All() {
		names = append(names, d.Name+" "+string(d.Action))
	}
	if want := []string{"a delete", "c delete"}; !slices.Equal(names, want) || cut.Len() != 2 || len(cut.Decisions) != 2 {
		t.Fatalf("cut: %v (%d, %d whole), want %v", names, cut.Len(), len(cut.Decisions), want)
	}
	if p.Len() != 3 || len(p.Decisions) != 0 {
		t.Fatalf("the plan: %d decisions, %d whole; want 3 compact", p.Len(), len(p.Decisions))
	}
}

// briefTable is a table that says what an item frees (engine.Briefer).
type briefTable struct {
	table
	made int // rows made again
}

func (t *briefTable) Frees(i uint32) amount.Frees { return t.table[i].Frees }

func (t *briefTable) Remake(i uint32) engine.Proposal {
	t.made++
	return t.table[i]
}

// Brief gives, decision by decision, what All gives of Kind, Action, Held,
// Class, Owner and Frees, for rows of a Briefer (not made again) and of a
// plain Remaker (made again) alike.
func TestBriefGivesWhatTotalsRead(t *testing.T) {
	for _, c := range []struct{ briefer, mixed bool }{{true, false}, {true, true}, {false, false}} {
		orph := orphans("a", "b", "c", "d", "e", "f")
		for i := range orph {
			orph[i].Group = "g"
		}
		if c.mixed {
			orph[4].Group = "h" // a table of two groups: its rows are made again
		}
		items, _ := compacted(orph)
		if c.briefer {
			bt := &briefTable{table: *items[0].Remake.(*table)}
			for i := range items {
				items[i].Remake = bt
			}
		}
		items[1].Class = "trim"
		k := &fakeKind{lim: testLimits(), items: items}
		k.lim.MaxDeletes = 3 // three held at the cap
		p := build(k, seenSince(t0.Add(-7*time.Hour), items...), t0, complete("a"))
		type brief struct {
			kind, class, owner, group string
			action                    engine.Action
			held                      bool
			frees                     amount.Frees
		}
		var all, short []brief
		for d := range p.All() {
			all = append(all, brief{d.Kind, d.Class, d.Owner, d.Group, d.Action, d.Held, d.Frees})
		}
		for d := range p.Brief() {
			short = append(short, brief{d.Kind, d.Class, d.Owner, d.Group, d.Action, d.Held, d.Frees})
		}
		if !slices.Equal(all, short) || len(all) != 6 {
			t.Fatalf("%+v: Brief\n%+v\nAll\n%+v", c, short, all)
		}
		if p.Count(fakeName, engine.Delete) != 3 || all[0].frees.Amounts[0].N == 0 {
			t.Fatalf("%+v: the plan does not test held rows or frees: %+v", c, all)
		}
	}
}

// Sift yields what Of yields that pick takes, pick seeing each decision
// as Brief shows it, and makes again only the rows it takes.
func TestSiftMakesOnlyWhatItPicks(t *testing.T) {
	items, n := compacted(orphans("a", "b", "c", "d", "e", "f"))
	bt := &briefTable{table: *items[0].Remake.(*table)}
	for i := range items {
		items[i].Remake = bt
	}
	items = append(items, orphan("z")) // a whole one
	k := &fakeKind{lim: testLimits(), items: items}
	k.lim.MaxDeletes = 3
	p := build(k, seenSince(t0.Add(-7*time.Hour), items...), t0, complete("a"))
	var want []string
	for d := range p.Of(fakeName) {
		if d.Action == engine.Delete {
			want = append(want, d.ID)
		}
	}
	bt.made = 0
	picks := 0
	var got []string
	for d := range p.Sift(fakeName, func(b *engine.Decision) bool { picks++; return b.Action == engine.Delete }) {
		got = append(got, d.ID)
	}
	if !slices.Equal(got, want) || len(want) != 3 {
		t.Fatalf("Sift yielded %v, Of's deletes are %v", got, want)
	}
	if picks != n+1 {
		t.Errorf("pick saw %d decisions, want %d", picks, n+1)
	}
	rows := len(want)
	if slices.Contains(want, fakeID("z")) {
		rows--
	}
	if bt.made != rows {
		t.Errorf("%d rows made again for %d picked", bt.made, rows)
	}
	if len(slices.Collect(p.Sift("other", func(*engine.Decision) bool { return true }))) != 0 {
		t.Error("Sift yielded another kind's decisions")
	}
}
