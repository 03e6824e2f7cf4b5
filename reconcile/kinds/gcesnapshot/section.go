package gcesnapshot

import (
	_ "embed"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/retention"
)

// Key is the kind's config section.
const Key = "gceSnapshots"

// Section is the gceSnapshots section: the retention of the snapshots
// disks.snapshotBeforeDelete makes. Absent, no snapshot is read or
// deleted. The projects, endpoint and credentials are the gce section's,
// the snapshot label the disks section's: the snapshots are made where the
// disks were, labelled as gce-disk labels them.
type Section struct {
	// Policy: retention (from the snapshot's creationTimestamp), delete,
	// and pricePerGBMonth, which prices what a snapshot stores in the
	// reports (GCE standard snapshot storage).
	retention.Policy
	// Safety: protectTag is a snapshot label (with any value the snapshot
	// is never deleted), grace, minAge and the per-run caps.
	config.Safety
}

// SectionOf is the file's gceSnapshots section, nil when it has none.
func SectionOf(cfg *config.Config) *Section { return config.SectionOf[Section](cfg, Key) }

// Defaults of the section.
const (
	defaultProtectTag = "reclaim-protect"
	// defaultPrice is standard snapshot storage per GB-month in a
	// multi-region, where GCE keeps a snapshot made without a storage
	// location, as gce-disk's are (cloud.google.com/compute/disks-image-pricing,
	// US multi-region, since April 2023; regional storage is 0.05).
	defaultPrice = 0.065
)

//go:embed reference.yaml
var reference string

func init() {
	config.Register(config.SectionSpec[Section]{
		Key: Key, Doc: "deletes the snapshots disks.snapshotBeforeDelete made once they are older than their retention (gce-snapshot)",
		Reference: reference,
		Defaults:  defaults, Validate: validate, Check: check,
		Safety:      func(s *Section) *config.Safety { return &s.Safety },
		SafetyRules: retention.SafetyRules(defaultProtectTag, config.GCELabelKeyProblem),
	})
}

func defaults(s *Section, set func(string) bool) { retention.Fill(&s.Policy, set, defaultPrice) }

func validate(s *Section, report *config.Report) { retention.Validate(&s.Policy, report) }

// check: the snapshots are the gce section's projects'.
func check(_ *Section, c *config.Config, report *config.Report) {
	if gcepd.GCEOf(c) == nil {
		report.Add("", "needs the gce section: its projects, endpoint and credentials say where reclaim made its snapshots")
	}
}
