package report_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
)

// warnKind is a kind that proposes nothing and whose view warns.
type warnKind struct {
	name string
	ws   []layout.Warning
}

func (k *warnKind) Name() string          { return k.name }
func (k *warnKind) Owns(string) bool      { return false }
func (k *warnKind) Limits() engine.Limits { return engine.Limits{Grace: time.Hour, BatchSize: 1} }
func (k *warnKind) Propose(*inventory.View, time.Time) engine.Proposals {
	return engine.Proposals{}
}
func (k *warnKind) Recheck(context.Context, []*engine.Decision) ([]engine.Verdict, error) {
	return nil, nil
}
func (k *warnKind) Delete(context.Context, []*engine.Decision) ([]engine.Deleted, error) {
	return nil, nil
}
func (k *warnKind) View(*engine.Plan, *inventory.View) layout.View {
	return layout.View{Warnings: k.ws, Summary: k.name + " things"}
}

// quietKind shows nothing: a kind need not be a Viewer.
type quietKind struct{ warnKind }

func (quietKind) View() {}

// The plan's warnings are ordered across kinds by when each runs out,
// soonest first, those without a projection last; each names its kind.
func TestShowOrdersWarningsMostUrgentFirst(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	soon, later := t0.Add(90*time.Minute), t0.Add(27*time.Hour)
	a := &warnKind{name: "a", ws: []layout.Warning{{Text: "a no projection"}, {Text: "a in 27h", RunsOutAt: &later}}}
	b := &warnKind{name: "b", ws: []layout.Warning{{Text: "b in 90m", RunsOutAt: &soon}}}
	q := &quietKind{warnKind{name: "q"}}
	kinds := []engine.Kind{a, q, b}
	snap := &inventory.View{TakenAt: t0}
	p := engine.Build(snap, kinds, engine.NewState(), t0)
	if len(p.Warnings)+len(p.Summaries) != 0 {
		t.Fatalf("the engine's plan shows %v %v", p.Warnings, p.Summaries)
	}
	report.Show(p, kinds, snap)
	var got []string
	for _, w := range p.Warnings {
		got = append(got, w.Kind+": "+w.Text)
	}
	if want := []string{"b: b in 90m", "a: a in 27h", "a: a no projection"}; !slices.Equal(got, want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
	if want := []string{"a things", "b things"}; !slices.Equal(p.Summaries, want) {
		t.Fatalf("summaries %q, want %q", p.Summaries, want)
	}
}
