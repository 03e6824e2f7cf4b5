package csisnapshot

import (
	"fmt"
	"slices"
	"strings"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/retention"
)

// Policy is what becomes of an orphaned CSI snapshot: one a CSI driver
// made that no VolumeSnapshotContent of any cluster names. A snapshot
// kind's section has it under the key csi.
type Policy struct {
	// Delete lets reclaim delete an orphaned CSI snapshot; false (the
	// default) only reports it: a backup tool (Velero's CSI backups) may
	// keep such snapshots on purpose, with their contents deleted.
	Delete bool `json:"delete"`
	// MinAge: a CSI snapshot made less than this long ago is never
	// deleted (a VolumeSnapshot being made, restored or moved).
	MinAge config.Duration `json:"minAge"`
}

const (
	// DefaultMinAge: a week, so a content deleted by mistake or a cluster
	// being rebuilt can still claim its snapshots.
	DefaultMinAge = config.Duration(7 * 24 * time.Hour)
	minMinAge     = config.Duration(24 * time.Hour)
)

// Fill defaults the csi keys of a section: delete off, minAge a week.
func Fill(p *Policy, set func(string) bool) {
	config.Fill(set, "csi.delete", &p.Delete, false)
	config.Fill(set, "csi.minAge", &p.MinAge, DefaultMinAge)
}

// Validate says what is wrong with the csi keys.
func Validate(p *Policy, report *config.Report) {
	if p.MinAge < minMinAge {
		report.Add("csi.minAge", "%s is less than a day — a VolumeSnapshot just made or being restored has no content naming it yet; the default is 168h (7 days)", p.MinAge)
	}
}

// Names are the clusters of u by name, members and clusters read alike.
func Names(u engine.Users) []string {
	out := slices.Clone(u.Clusters)
	for _, m := range u.Members {
		out = append(out, m.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Orphan makes p the candidate of a CSI snapshot a no content names
// (made says whose it is, in words): it relies on keys and on every
// owner's read, a held owner holds it, one made less than MinAge before
// now waits, and it is reported, not deleted, with reportOnly's reason or
// while Delete is off. section is the kind's config key, for the words.
func (pol Policy) Orphan(p *engine.Proposal, a Answer, owners engine.Users, fleet *inventory.Fleet, keys []string, made, section string, started, now time.Time, reportOnly string) {
	p.Candidate = true
	p.Sources = append(slices.Clone(keys), owners.Keys(fleet)...)
	p.Hold = strings.Join(a.Held, "; ")
	p.Reason = fmt.Sprintf("orphaned CSI snapshot: %s, and no VolumeSnapshotContent in any read cluster names it (could own it: %s)",
		made, strings.Join(Names(owners), ", "))
	if minAge := pol.MinAge.Std(); now.Sub(started) < minAge {
		p.NotBefore = started.Add(minAge)
		p.Wait = fmt.Sprintf("younger than %s.csi.minAge %s", section, retention.Days(minAge))
	}
	switch {
	case reportOnly != "":
		p.ReportOnly = true
		p.Reason += "; " + reportOnly
	case !pol.Delete:
		p.ReportOnly = true
		p.Reason += "; " + section + ".csi.delete is off: reported, not deleted"
	}
}
