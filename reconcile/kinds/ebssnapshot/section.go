package ebssnapshot

import (
	_ "embed"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
	"reclaim.dev/reclaim/reconcile/kinds/retention"
)

// Key is the kind's config section.
const Key = "ebsSnapshots"

// Section is the ebsSnapshots section: the retention of the snapshots
// ebs.snapshotBeforeDelete makes. Absent, no snapshot is read or deleted.
// The accounts, regions, endpoint, rates and snapshot tag are the ebs
// section's: the snapshots are made where the volumes were.
type Section struct {
	// Policy: retention (from the snapshot's start time), delete, and
	// pricePerGBMonth, which prices a snapshot's volume size in the
	// reports (EBS standard snapshot storage).
	retention.Policy
	// Safety: protectTag is a snapshot tag (with any value the snapshot is
	// never deleted), grace, minAge and the per-run caps.
	config.Safety
}

// SectionOf is the file's ebsSnapshots section, nil when it has none.
func SectionOf(cfg *config.Config) *Section { return config.SectionOf[Section](cfg, Key) }

// Defaults of the section.
const (
	defaultProtectTag = "reclaim.dev/protect"
	// defaultPrice is EBS standard snapshot storage per GB-month
	// (aws.amazon.com/ebs/pricing, us-east-1, as listed in 2025).
	defaultPrice = 0.05
)

//go:embed reference.yaml
var reference string

func init() {
	config.Register(config.SectionSpec[Section]{
		Key: Key, Doc: "deletes the snapshots ebs.snapshotBeforeDelete made once they are older than their retention (ebs-snapshot)",
		Reference: reference,
		Defaults:  defaults, Validate: validate, Check: check,
		Safety:      func(s *Section) *config.Safety { return &s.Safety },
		SafetyRules: retention.SafetyRules(defaultProtectTag, config.AWSTagKeyProblem),
	})
}

func defaults(s *Section, set func(string) bool) { retention.Fill(&s.Policy, set, defaultPrice) }

func validate(s *Section, report *config.Report) { retention.Validate(&s.Policy, report) }

// check: the snapshots are the ebs section's, in its regions.
func check(_ *Section, c *config.Config, report *config.Report) {
	if ebsbase.SectionOf(c) == nil {
		report.Add("", "needs the ebs section: its regions, endpoint and snapshotTag say where reclaim made its snapshots and how it tagged them")
	}
}
