package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"reclaim.dev/reclaim/inventory"
)

// manyKind proposes n old orphans, all due, for the caps to hold.
type manyKind struct{ n int }

func (k manyKind) Name() string        { return "many" }
func (k manyKind) Owns(id string) bool { return strings.HasPrefix(id, "many/") }
func (k manyKind) Limits() Limits {
	return Limits{Grace: time.Hour, MaxDeletes: 10, MaxDeletePercent: 1, BatchSize: 1, Wording: Wording{Section: "many", Noun: "things"}}
}
func (k manyKind) Recheck(context.Context, []*Decision) ([]Verdict, error) {
	return nil, nil
}
func (k manyKind) Delete(context.Context, []*Decision) ([]Deleted, error) { return nil, nil }
func (k manyKind) Propose(_ *inventory.View, now time.Time) Proposals {
	var ps Proposals
	for i := range k.n {
		ps.Items = append(ps.Items, Proposal{ID: fmt.Sprintf("many/%d", i), Name: fmt.Sprint(i), Reason: "nobody uses it",
			Candidate: true, Created: now.Add(-48 * time.Hour)})
	}
	ps.InScope = k.n
	return ps
}

// The rules' notes are shared between decisions that say the same: the
// clock's text per read time, the cap's text per kind. A fleet's 200,000
// held decisions must not each carry a joined copy of their reason.
func TestRuleNotesAreShared(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	prev := NewState()
	for i := range 100 {
		prev.Seen(fmt.Sprintf("many/%d", i), "", now.Add(-2*time.Hour))
	}
	p := Build(&inventory.View{TakenAt: now}, []Kind{manyKind{100}}, prev, now)
	var held []*Decision
	for i := range p.Decisions {
		if d := &p.Decisions[i]; d.Held {
			held = append(held, d)
		}
	}
	if len(held) != 90 {
		t.Fatalf("%d held, want 90 (cap 10)", len(held))
	}
	first := held[0]
	if w := first.Why(); !strings.HasPrefix(w, "nobody uses it — orphan since ") || !strings.Contains(w, "— due for deletion but held: per-run cap of 10 things") {
		t.Fatalf("explanation %q", w)
	}
	for _, d := range held[1:] {
		for i := range d.notes {
			if unsafe.StringData(d.notes[i]) != unsafe.StringData(first.notes[i]) {
				t.Fatalf("note %d of %s is a copy of its own: %q", i, d.ID, d.notes[i])
			}
		}
		if d.OrphanSince != first.OrphanSince || d.DeletableAfter != first.DeletableAfter {
			t.Fatalf("%s has its own clock times", d.ID)
		}
	}
}
