package gcesnapshot

import (
	"fmt"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/retention"
)

// View shows every snapshot decision with its size, what it stores, its
// age and its monthly cost, and a summary of the decisions; reclaim's
// backups that stay are the view's Kept, which the report adds up with
// the other clouds'.
func (k *Kind) View(p *engine.Plan, _ *inventory.View) layout.View {
	b := layout.Block{Indent: 2, Header: []string{"ACTION", "SNAPSHOT", "DISK", "SIZE", "STORED", "AGE", "A MONTH", "WHY"}}
	n := 0
	kept := layout.Kept{Group: layout.Backups, Noun: "GCE snapshots"}
	for d := range p.All() {
		if d.Kind != Name {
			continue
		}
		det := detailOf(d)
		age := ""
		if !det.Created.IsZero() {
			age = retention.Days(p.GeneratedAt.Sub(det.Created))
		}
		b.Add(d, d.Name, det.Disk, fmt.Sprintf("%d GB", det.DiskSizeGB), layout.HumanBytes(det.StoredBytes), age,
			fmt.Sprintf("%.2f", d.Frees.Cost), d.Why())
		if d.Action != engine.Delete && (d.Class == ClassRetained || d.Class == ClassExpired || d.Class == ClassArchived || d.Class == ClassInUse) {
			kept.Count++
			kept.Bytes += det.StoredBytes
			kept.Cost += d.Frees.Cost
		}
		n++
	}
	sec := layout.Table(layout.Section{Title: "GCE SNAPSHOTS", Place: layout.Details}, n, b, func(*layout.Block) {})
	return layout.View{Sections: []layout.Section{sec}, Kept: []layout.Kept{kept},
		Summary: fmt.Sprintf("GCE snapshots delete %d, mark %d, report %d, keep %d",
			p.Count(Name, engine.Delete), p.Count(Name, engine.Mark), p.Count(Name, engine.Report), p.Count(Name, engine.Keep))}
}
