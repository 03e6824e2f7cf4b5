package ebssnapshot

import (
	_ "embed"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
)

// Key is the kind's config section.
const Key = "ebsSnapshots"

// Section is the ebsSnapshots section: the retention of the snapshots
// ebs.snapshotBeforeDelete makes, and what becomes of the orphaned CSI
// snapshots. Absent, no snapshot is read or deleted.
// The accounts, regions, endpoint, rates and snapshot tag are the ebs
// section's: the snapshots are made where the volumes were.
type Section struct {
	// Retention is how long reclaim keeps a snapshot it made before it
	// deletes it (from the snapshot's start time).
	Retention config.Duration `json:"retention"`
	// Delete lets reclaim delete its snapshots past retention; false only
	// reports them.
	Delete bool `json:"delete"`
	// PricePerGBMonth prices a snapshot's volume size in the reports
	// (EBS standard snapshot storage).
	PricePerGBMonth float64 `json:"pricePerGBMonth"`
	// CSI: the snapshots the EBS CSI driver made for VolumeSnapshots.
	CSI csisnapshot.Policy `json:"csi"`
	// Safety: protectTag is a snapshot tag (with any value the snapshot is
	// never deleted), grace, minAge and the per-run caps.
	config.Safety
}

// SectionOf is the file's ebsSnapshots section, nil when it has none.
func SectionOf(cfg *config.Config) *Section { return config.SectionOf[Section](cfg, Key) }

// Defaults of the section.
const (
	// defaultRetention: a month of backups, long enough for a team to miss
	// a volume after a deploy, a holiday or a month-end close.
	defaultRetention  = config.Duration(30 * 24 * time.Hour)
	minRetention      = config.Duration(24 * time.Hour)
	defaultProtectTag = "reclaim.dev/protect"
	defaultGrace      = config.Duration(24 * time.Hour)
	defaultMinAge     = config.Duration(24 * time.Hour)
	defaultMaxDeletes = 20
	defaultMaxPercent = config.Percent(0.25)
	defaultBreaker    = 100
	// defaultPrice is EBS standard snapshot storage per GB-month
	// (aws.amazon.com/ebs/pricing, us-east-1, as listed in 2025).
	defaultPrice = 0.05
)

//go:embed reference.yaml
var reference string

func init() {
	config.Register(config.SectionSpec[Section]{
		Key: Key, Doc: "deletes the snapshots ebs.snapshotBeforeDelete made once they are older than their retention, and reports the EBS CSI driver's that no VolumeSnapshotContent names (ebs-snapshot)",
		Reference: reference,
		Defaults:  defaults, Validate: validate, Check: check,
		Safety: func(s *Section) *config.Safety { return &s.Safety },
		SafetyRules: config.SafetyRules{
			Defaults: config.Safety{ProtectTag: defaultProtectTag, Grace: defaultGrace, MinAge: defaultMinAge,
				Caps: config.Caps{MaxDeletesPerRun: defaultMaxDeletes, MaxDeletePercent: defaultMaxPercent, BreakerCandidates: defaultBreaker}},
			GraceWhy:  "a snapshot must be seen past its retention on more than one run before it is deleted",
			MinAgeWhy: "a snapshot just made is a backup being taken",
			TagKey:    config.AWSTagKeyProblem,
		},
	})
}

func defaults(s *Section, set func(string) bool) {
	config.Fill(set, "retention", &s.Retention, defaultRetention)
	config.Fill(set, "delete", &s.Delete, true)
	config.Fill(set, "pricePerGBMonth", &s.PricePerGBMonth, defaultPrice)
	csisnapshot.Fill(&s.CSI, set)
}

func validate(s *Section, report *config.Report) {
	if s.Retention < minRetention {
		report.Add("retention", "%s is less than a day — a backup reclaim deletes sooner than that is hardly one; the default is 720h (30 days)", s.Retention)
	}
	csisnapshot.Validate(&s.CSI, report)
	if s.PricePerGBMonth < 0 {
		report.Add("pricePerGBMonth", "must not be negative")
	}
}

// check: the snapshots are the ebs section's, in its regions.
func check(_ *Section, c *config.Config, report *config.Report) {
	if ebsbase.SectionOf(c) == nil {
		report.Add("", "needs the ebs section: its regions, endpoint and snapshotTag say where reclaim made its snapshots and how it tagged them")
	}
}
