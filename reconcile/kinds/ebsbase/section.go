package ebsbase

import (
	_ "embed"
	"fmt"
	"time"

	config "reclaim.dev/reclaim/configs"
)

// Key is the kind's config section.
const Key = "ebs"

// Section is the ebs section. Absent, no EBS volume is read or deleted.
type Section struct {
	// Regions are the accounts and regions whose volumes reclaim reads, and
	// how to reach them.
	Regions []Region `json:"regions"`
	// Endpoint overrides the EC2 endpoint, QuotasEndpoint Service Quotas'
	// (a fake, or a VPC endpoint).
	Endpoint       string `json:"endpoint,omitempty"`
	QuotasEndpoint string `json:"quotasEndpoint,omitempty"`
	// AWSRates: requestsPerSecond and burst are reclaim's own limit on its
	// reads per account and region; deletesPerSecond and deleteBurst on
	// DeleteVolume and CreateSnapshot.
	config.AWSRates
	// Delete lets reclaim delete orphaned volumes; false only reports them.
	Delete bool `json:"delete"`
	// Ownership is the evidence a volume must carry to be deleted: csi (the
	// EBS CSI driver's tag ebs.csi.aws.com/cluster=true) and in-tree (the
	// in-tree provisioner's kubernetes.io/created-for/pv/name with a
	// KubernetesCluster or kubernetes.io/cluster/NAME tag).
	Ownership []string `json:"ownership"`
	// Safety: protectTag is a volume tag (with any value the volume is
	// never deleted), grace, minAge and the per-run caps. Earlier versions
	// nested the caps under caps:, which is still read (Unnested).
	config.Safety
	// SnapshotBeforeDelete snapshots each volume (CreateSnapshot) before it
	// is deleted, tagged with SnapshotTag naming the volume.
	SnapshotBeforeDelete bool   `json:"snapshotBeforeDelete"`
	SnapshotTag          string `json:"snapshotTag"`
	// SnapshotTimeout is how long a delete waits for its snapshot to
	// complete; past it the volume is kept until a later run.
	SnapshotTimeout config.Duration `json:"snapshotTimeout"`
	// HeadroomWarning warns when a volume type's storage quota (Service
	// Quotas, "Storage for ... volumes") is used to this share.
	HeadroomWarning config.Percent `json:"headroomWarning"`
}

// Region is one account's volumes in one region.
type Region struct {
	config.AWSTarget
}

// SectionOf is the file's ebs section, nil when it has none.
func SectionOf(cfg *config.Config) *Section { return config.SectionOf[Section](cfg, Key) }

// The ownership evidence a volume can carry.
const (
	EvidenceCSI    = "csi"
	EvidenceInTree = "in-tree"
)

// Defaults of the ebs section.
const (
	defaultPageSize        = 500
	defaultProtectTag      = "reclaim.dev/protect"
	defaultSnapshotTag     = "reclaim.dev/snapshot-of"
	defaultGrace           = config.Duration(24 * time.Hour)
	defaultMinAge          = config.Duration(24 * time.Hour)
	defaultHeadroomWarning = config.Percent(0.85)
	defaultMaxDeletes      = 10
	defaultMaxPercent      = config.Percent(0.10)
	defaultBreaker         = 50
	minPage, maxPage       = 5, 500
)

// rates are the defaults and limits of the section's AWSRates.
var rates = config.AWSRatesRules{
	Defaults: config.EC2Rates(defaultPageSize),
	MinPage:  minPage, MaxPage: maxPage,
	ReadsWhy: "(EC2's refill rate, shared with the account's other callers)", PageWhy: "(DescribeVolumes' MaxResults)",
}

// reference is the section as the configuration reference shows it.
//
//go:embed reference.yaml
var reference string

func init() {
	config.Register(config.SectionSpec[Section]{
		Key: Key, Doc: "deletes EBS volumes Kubernetes made that no PV or pod uses, and watches EBS storage quotas (ebs-volume)",
		Reference: reference,
		Defaults:  defaults, Validate: validate,
		Safety: func(s *Section) *config.Safety { return &s.Safety },
		SafetyRules: config.SafetyRules{
			Defaults: config.Safety{ProtectTag: defaultProtectTag, Grace: defaultGrace, MinAge: defaultMinAge,
				Caps: config.Caps{MaxDeletesPerRun: defaultMaxDeletes, MaxDeletePercent: defaultMaxPercent, BreakerCandidates: defaultBreaker}},
			GraceWhy:  "a volume must be seen orphaned on more than one run before it is deleted",
			MinAgeWhy: "a volume just made may not have its PV yet",
			TagKey:    config.AWSTagKeyProblem,
		},
		Unnested: []string{"caps"},
		// The accounts and regions whose EKS clusters could attach the
		// volumes: fleet discovery searches them.
		AWS: func(s *Section) []config.EKSDiscovery {
			out := make([]config.EKSDiscovery, len(s.Regions))
			for i, r := range s.Regions {
				out[i] = r.Discovery()
			}
			return out
		},
	})
}

func defaults(s *Section, set func(string) bool) {
	config.FillAWSRates(set, &s.AWSRates, &rates)
	config.Fill(set, "delete", &s.Delete, true)
	config.Fill(set, "ownership", &s.Ownership, []string{EvidenceCSI, EvidenceInTree})
	config.Fill(set, "snapshotTag", &s.SnapshotTag, defaultSnapshotTag)
	config.Fill(set, "snapshotTimeout", &s.SnapshotTimeout, config.Duration(30*time.Minute))
	config.Fill(set, "headroomWarning", &s.HeadroomWarning, defaultHeadroomWarning)
}

func validate(s *Section, report *config.Report) {
	if len(s.Regions) == 0 {
		report.Add("regions", "at least one is required — e.g. {account: \"123456789012\", region: us-east-1}")
	}
	seen := map[string]int{}
	for i, r := range s.Regions {
		p := config.Index("regions", i)
		config.CheckAWSTarget(report, p, r.AWSTarget)
		k := r.Account + "/" + r.Region
		if j, dup := seen[k]; dup {
			report.Add(p, "%s in %s is listed twice (%s and %s) — list each account and region once", r.Account, r.Region, report.Path(config.Index("regions", j)), report.Path(p))
		}
		seen[k] = i
	}
	config.CheckEndpoint(report, "endpoint", s.Endpoint, "ec2")
	config.CheckEndpoint(report, "quotasEndpoint", s.QuotasEndpoint, "servicequotas")
	config.CheckAWSRates(report, &s.AWSRates, &rates)
	config.CheckList(report, "ownership", s.Ownership, func(o string) string {
		if o != EvidenceCSI && o != EvidenceInTree {
			return fmt.Sprintf("%q is not an ownership evidence — use %s or %s", o, EvidenceCSI, EvidenceInTree)
		}
		return ""
	})
	if s.Delete && len(s.Ownership) == 0 {
		report.Add("ownership", "is empty, so no volume could ever be proven Kubernetes' to delete — remove the key for the defaults, or set delete: false")
	}
	if msg := config.AWSTagKeyProblem(s.SnapshotTag); msg != "" {
		report.Add("snapshotTag", "%s", msg)
	}
	if s.SnapshotTimeout <= 0 {
		report.Add("snapshotTimeout", "must be more than 0 — how long a delete waits for its snapshot to complete")
	}
	if s.HeadroomWarning <= 0 || s.HeadroomWarning > 1 {
		report.Add("headroomWarning", "%s is out of range — use a share above 0%% and at most 100%%", s.HeadroomWarning)
	}
}
