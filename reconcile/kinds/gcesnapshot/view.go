package gcesnapshot

import (
	"fmt"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/retention"
)

// View shows every snapshot decision with its size, what it stores and its
// age, and a summary with what reclaim's backups that stay cost a month.
func (k *Kind) View(p *engine.Plan, _ *inventory.View) layout.View {
	b := layout.Block{Indent: 2, Header: []string{"ACTION", "SNAPSHOT", "DISK", "SIZE", "STORED", "AGE", "WHY"}}
	n := 0
	var kept int64
	for d := range p.All() {
		if d.Kind != Name {
			continue
		}
		det := detailOf(d)
		age := ""
		if !det.Created.IsZero() {
			age = retention.Days(p.GeneratedAt.Sub(det.Created))
		}
		b.Add(d, d.Name, det.Disk, fmt.Sprintf("%d GB", det.DiskSizeGB), layout.HumanBytes(det.StoredBytes), age, d.Why())
		if d.Action != engine.Delete && (d.Class == ClassRetained || d.Class == ClassExpired || d.Class == ClassArchived || d.Class == ClassInUse) {
			kept += det.StoredBytes
		}
		n++
	}
	sec := layout.Table(layout.Section{Title: "GCE SNAPSHOTS", Place: layout.Details}, n, b, func(*layout.Block) {})
	return layout.View{Sections: []layout.Section{sec},
		Summary: fmt.Sprintf("GCE snapshots delete %d, mark %d, report %d, keep %d; reclaim's backups that stay store %s, about %.2f a month",
			p.Count(Name, engine.Delete), p.Count(Name, engine.Mark), p.Count(Name, engine.Report), p.Count(Name, engine.Keep),
			layout.HumanBytes(kept), float64(kept)/float64(amount.GiB)*k.s.PricePerGBMonth)}
}
