package ebssnapshot

import (
	"fmt"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// View shows every snapshot decision with its size, age and monthly cost,
// and a summary with, when there are CSI snapshots, how many a content
// names and what the orphans cost; reclaim's backups that stay are the
// view's Kept, which the report adds up with the other clouds'.
func (k *Kind) View(p *engine.Plan, _ *inventory.View) layout.View {
	b := layout.Block{Indent: 2, Header: []string{"ACTION", "SNAPSHOT", "VOLUME", "ACCOUNT/REGION", "SIZE", "AGE", "A MONTH", "WHY"}}
	n := 0
	kept := layout.Kept{Group: layout.Backups, Noun: "EBS snapshots"}
	var orphanGiB int64
	csiUsed, csiOrphans := 0, 0
	for d := range p.All() {
		if d.Kind != Name {
			continue
		}
		det := detailOf(d)
		age := ""
		if !det.Started.IsZero() {
			age = days(p.GeneratedAt.Sub(det.Started))
		}
		b.Add(d, d.Name, det.VolumeID, det.Account+"/"+det.Region, fmt.Sprintf("%d GiB", det.SizeGiB), age,
			fmt.Sprintf("%.2f", d.Frees.Cost), d.Why())
		switch d.Class {
		case ClassCSIInUse:
			csiUsed++
		case ClassCSIOrphan:
			csiOrphans++
			orphanGiB += det.SizeGiB
		}
		if d.Action != engine.Delete && det.CSIName == "" && (d.Class == ClassRetained || d.Class == ClassExpired || d.Class == ClassArchived || d.Class == ClassInUse) {
			kept.Count++
			kept.Bytes += det.SizeGiB * amount.GiB
			kept.Cost += d.Frees.Cost
		}
		n++
	}
	sec := layout.Table(layout.Section{Title: "EBS SNAPSHOTS", Place: layout.Details}, n, b, func(*layout.Block) {})
	summary := fmt.Sprintf("EBS snapshots delete %d, mark %d, report %d, keep %d",
		p.Count(Name, engine.Delete), p.Count(Name, engine.Mark), p.Count(Name, engine.Report), p.Count(Name, engine.Keep))
	if csiUsed+csiOrphans > 0 {
		summary += fmt.Sprintf("; CSI snapshots: %d named by a VolumeSnapshotContent, %d orphaned holding %d GiB, about %.2f a month",
			csiUsed, csiOrphans, orphanGiB, float64(orphanGiB)*k.s.PricePerGBMonth)
	}
	return layout.View{Sections: []layout.Section{sec}, Summary: summary, Kept: []layout.Kept{kept}}
}
