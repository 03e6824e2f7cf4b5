package report

import (
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Viewer is a kind that shows the plan in reports: its report sections
// (headroom, repositories, ...), a phrase for the summary line, its metric
// samples and its warnings. It is optional, and not part of engine.Kind:
// the engine decides, and what a person is shown of it is read here. View
// is pure but for the usage history it records in the plan's state
// (layout.Measure), which is saved with the plan's clocks.
type Viewer interface {
	View(p *engine.Plan, snap *inventory.View) layout.View
}

// OptOuter is a kind that says how a person keeps one of its resources
// from being deleted (optout.Rule: "set the label reclaim-protect on the
// disk"), for the reports that tell people so. It is optional, and not
// part of engine.Kind: the engine applies the opt-out key
// (Limits.OptOutKey), and never needs the words.
type OptOuter interface {
	OptOut() string
}

// Show adds to a plan what each kind that is a Viewer shows of it, in the
// kinds' order, then one summary phrase per group of what the kinds keep
// on purpose, added up across them (keptLines), with the warnings most urgent first
// (layout.SortWarnings). The runner calls it once, right after
// engine.Build and before the plan is applied or its state saved. The
// usage history the views recorded is then thinned, and the pools no view
// measured for a month are forgotten (layout.Forget), so the state does
// not grow with time.
func Show(p *engine.Plan, kinds []engine.Kind, snap *inventory.View) {
	var kept []layout.Kept
	for _, k := range kinds {
		vk, ok := k.(Viewer)
		if !ok {
			continue
		}
		v := vk.View(p, snap)
		p.Sections = append(p.Sections, v.Sections...)
		if v.Summary != "" {
			p.Summaries = append(p.Summaries, v.Summary)
		}
		p.Gauges = append(p.Gauges, v.Gauges...)
		kept = append(kept, v.Kept...)
		for _, w := range v.Warnings {
			w.Kind = k.Name()
			p.Warnings = append(p.Warnings, w)
		}
	}
	p.Summaries = append(p.Summaries, keptLines(kept, p.Currency)...)
	layout.SortWarnings(p.Warnings)
	layout.Forget(p.State.Usage, p.GeneratedAt)
}
