package ebssnapshot

import (
	"fmt"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// View shows every snapshot decision with its size and age, and a summary
// with what reclaim's backups that stay cost a month.
func (k *Kind) View(p *engine.Plan, _ *inventory.View) layout.View {
	b := layout.Block{Indent: 2, Header: []string{"ACTION", "SNAPSHOT", "VOLUME", "ACCOUNT/REGION", "SIZE", "AGE", "WHY"}}
	n := 0
	var keptGiB int64
	for d := range p.All() {
		if d.Kind != Name {
			continue
		}
		det := detailOf(d)
		age := ""
		if !det.Started.IsZero() {
			age = days(p.GeneratedAt.Sub(det.Started))
		}
		b.Add(d, d.Name, det.VolumeID, det.Account+"/"+det.Region, fmt.Sprintf("%d GiB", det.SizeGiB), age, d.Why())
		if d.Action != engine.Delete && (d.Class == ClassRetained || d.Class == ClassExpired || d.Class == ClassArchived || d.Class == ClassInUse) {
			keptGiB += det.SizeGiB
		}
		n++
	}
	sec := layout.Table(layout.Section{Title: "EBS SNAPSHOTS", Place: layout.Details}, n, b, func(*layout.Block) {})
	return layout.View{Sections: []layout.Section{sec},
		Summary: fmt.Sprintf("snapshots delete %d, mark %d, report %d, keep %d; reclaim's backups that stay hold %d GiB, about %.2f a month",
			p.Count(Name, engine.Delete), p.Count(Name, engine.Mark), p.Count(Name, engine.Report), p.Count(Name, engine.Keep),
			keptGiB, float64(keptGiB)*k.s.PricePerGBMonth)}
}
