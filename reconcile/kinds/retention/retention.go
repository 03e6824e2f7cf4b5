// Package retention is what the kinds of reclaim's own backups stand on
// (gce-snapshot; ebs-snapshot's section has the same keys and defaults):
// a backup's retention, whether it may be deleted past it and its price,
// their defaults, checks and safety floors, and how a backup's age is
// judged and said.
//
// It is no kind: it has no Module and deletes nothing. Kinds import it,
// never each other (arch_test.go).
package retention

import (
	"fmt"
	"time"

	config "reclaim.dev/reclaim/configs"
)

// Policy is the part of a backup kind's section every such kind has,
// embedded without a name (its keys are the section's own).
type Policy struct {
	// Retention is how long reclaim keeps a backup it made before it
	// deletes it.
	Retention config.Duration `json:"retention"`
	// Delete lets reclaim delete its backups past retention; false only
	// reports them.
	Delete bool `json:"delete"`
	// PricePerGBMonth prices a backup in the reports.
	PricePerGBMonth float64 `json:"pricePerGBMonth"`
}

const (
	// DefaultRetention: a month of backups, long enough for a team to miss
	// a disk after a deploy, a holiday or a month-end close.
	DefaultRetention = config.Duration(30 * 24 * time.Hour)
	minRetention     = config.Duration(24 * time.Hour)
)

// Fill defaults a policy: DefaultRetention, delete on, the kind's price.
func Fill(p *Policy, set func(string) bool, price float64) {
	config.Fill(set, "retention", &p.Retention, DefaultRetention)
	config.Fill(set, "delete", &p.Delete, true)
	config.Fill(set, "pricePerGBMonth", &p.PricePerGBMonth, price)
}

// Validate says what is wrong with a policy.
func Validate(p *Policy, report *config.Report) {
	if p.Retention < minRetention {
		report.Add("retention", "%s is less than a day — a backup reclaim deletes sooner than that is hardly one; the default is 720h (30 days)", p.Retention)
	}
	if p.PricePerGBMonth < 0 {
		report.Add("pricePerGBMonth", "must not be negative")
	}
}

// SafetyRules are a backup kind's safety defaults and floors: grace and
// minAge a day, 20 deletes and 25% a run, the breaker at 100; protectTag
// is the kind's opt-out key, tagKey what is wrong with one.
func SafetyRules(protectTag string, tagKey func(string) string) config.SafetyRules {
	return config.SafetyRules{
		Defaults: config.Safety{ProtectTag: protectTag, Grace: config.Duration(24 * time.Hour), MinAge: config.Duration(24 * time.Hour),
			Caps: config.Caps{MaxDeletesPerRun: 20, MaxDeletePercent: config.Percent(0.25), BreakerCandidates: 100}},
		GraceWhy:  "a snapshot must be seen past its retention on more than one run before it is deleted",
		MinAgeWhy: "a snapshot just made is a backup being taken",
		TagKey:    tagKey,
	}
}

// Judge says whether a backup of what (a volume, a disk) made at made is
// past the policy's retention at now, and why in words.
func (p *Policy) Judge(what string, made, now time.Time) (expired bool, why string) {
	age, keep := now.Sub(made), p.Retention.Std()
	if age < keep {
		return false, fmt.Sprintf("reclaim's backup of %s, %s old: kept until %s (retention %s)",
			what, Days(age), made.Add(keep).UTC().Format("2006-01-02"), Days(keep))
	}
	return true, fmt.Sprintf("reclaim's backup of %s, %s old, past its retention of %s", what, Days(age), Days(keep))
}

// Days says a duration in whole days, or hours under two days.
func Days(d time.Duration) string {
	if d < 48*time.Hour {
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}
