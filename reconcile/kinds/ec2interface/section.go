package ec2interface

import (
	"fmt"
	"time"

	config "reclaim.dev/reclaim/configs"
)

// Key is the kind's config section: which subnets to watch for IP headroom
// and which network interfaces may be deleted as leaked.
const Key = "ec2Interfaces"

// Section is the ec2Interfaces section. Absent, no subnet or interface work is done.
type Section struct {
	// Networks are the accounts and regions, each with its subnets in scope.
	Networks []Network `json:"networks"`
	// Endpoint overrides the EC2 endpoint (a fake or a VPC endpoint).
	Endpoint string `json:"endpoint,omitempty"`
	// AWSRates: requestsPerSecond and burst are reclaim's own limit on
	// Describe calls per account and region (EC2's bucket, 100 burst and 20
	// a second, is shared with every node's CNI, so reclaim takes a
	// fraction of it); deletesPerSecond and deleteBurst limit
	// DeleteNetworkInterface (EC2: 100, 5 a second).
	config.AWSRates
	// HeadroomWarning warns when a subnet's used share reaches it.
	HeadroomWarning config.Percent `json:"headroomWarning"`
	// WarnBefore warns when a subnet is projected to run out within it.
	WarnBefore config.Duration `json:"warnBefore"`
	Interfaces Interfaces      `json:"interfaces"`
}

// Network is one account's subnets in one region, and how to reach them.
type Network struct {
	config.AWSTarget
	// Subnets are subnet ids; SubnetTags select subnets by tag instead
	// (every tag must match; an empty value matches any value).
	Subnets    []string    `json:"subnets,omitempty"`
	SubnetTags config.Tags `json:"subnetTags,omitempty"`
}

// Interfaces is the policy for leaked (detached) network interfaces.
type Interfaces struct {
	// Delete lets reclaim delete leaked interfaces; false only reports them.
	Delete bool `json:"delete"`
	// Ownership is the evidence an interface must carry to be deleted:
	// vpc-cni (tag node.k8s.amazonaws.com/instance_id and description
	// aws-K8S-) and vpc-resource-controller (tag eks:eni:owner, description
	// aws-k8s-branch-eni).
	Ownership []string `json:"ownership"`
	// Safety: protectTag is an interface tag (with any value the interface
	// is never deleted: the opt-out every kind honours, package optout),
	// grace and the per-run caps. An interface carries no creation time,
	// so it has no minAge.
	config.Safety
}

// SectionOf is the file's ec2Interfaces section, nil when it has none.
func SectionOf(cfg *config.Config) *Section { return config.SectionOf[Section](cfg, Key) }

// Defaults of the ec2Interfaces section.
const (
	defaultPageSize        = 1000
	defaultHeadroomWarning = config.Percent(0.80)
	defaultWarnBefore      = config.Duration(48 * time.Hour)
	defaultGrace           = config.Duration(6 * time.Hour)
	defaultProtectTag      = "reclaim.dev/protect"
	defaultMaxDeletes      = 100
	defaultMaxPercent      = config.Percent(0.20)
	defaultBreaker         = 2000
	maxPage, minPage       = 1000, 5
)

// rates are the defaults and limits of the section's AWSRates.
var rates = config.AWSRatesRules{
	Defaults: config.EC2Rates(defaultPageSize),
	MinPage:  minPage, MaxPage: maxPage,
	ReadsWhy: "(EC2's own refill rate, shared with every node's CNI)", BurstWhy: "(EC2's bucket)",
	DeletesWhy: "(EC2's DeleteNetworkInterface refill rate)", PageWhy: "(the API's MaxResults)",
}

func init() {
	config.Register(config.SectionSpec[Section]{
		Key: Key, Doc: "watches subnets' IP headroom and deletes leaked network interfaces (ec2-interface)",
		Was:      []string{"ec2"}, // its name before it said its kind's
		Defaults: defaults, Validate: validate,
		Safety: func(s *Section) *config.Safety { return &s.Interfaces.Safety },
		SafetyRules: config.SafetyRules{
			At: "interfaces",
			Defaults: config.Safety{ProtectTag: defaultProtectTag, Grace: defaultGrace,
				Caps: config.Caps{MaxDeletesPerRun: defaultMaxDeletes, MaxDeletePercent: defaultMaxPercent, BreakerCandidates: defaultBreaker}},
			Without:  []string{config.KeyMinAge, config.KeyMaxDeleteSizePerRun},
			GraceWhy: "an interface must be seen detached on more than one run before it is deleted",
			TagKey:   config.AWSTagKeyProblem,
		},
		AWS: func(s *Section) []config.EKSDiscovery {
			out := make([]config.EKSDiscovery, len(s.Networks))
			for i, n := range s.Networks {
				out[i] = n.Discovery()
			}
			return out
		},
	})
}

func defaults(e *Section, set func(string) bool) {
	config.FillAWSRates(set, &e.AWSRates, &rates)
	config.Fill(set, "headroomWarning", &e.HeadroomWarning, defaultHeadroomWarning)
	config.Fill(set, "warnBefore", &e.WarnBefore, defaultWarnBefore)
	i := &e.Interfaces
	config.Fill(set, "interfaces.delete", &i.Delete, true)
	config.Fill(set, "interfaces.ownership", &i.Ownership, []string{EvidenceVPCCNI, EvidenceBranch})
}

func validate(e *Section, report *config.Report) {
	if len(e.Networks) == 0 {
		report.Add("networks", "at least one network is required — e.g. {account: \"123456789012\", region: us-east-1, subnets: [subnet-0123456789abcdef0]}")
	}
	type reg struct{ account, region string }
	seen := map[reg]int{}
	for i, n := range e.Networks {
		p := config.Index("networks", i)
		config.CheckAWSTarget(report, p, n.AWSTarget)
		switch {
		case len(n.Subnets) == 0 && len(n.SubnetTags) == 0:
			report.Add(p, "give subnets (ids) or subnetTags — reclaim never scans every subnet of an account")
		case len(n.Subnets) > 0 && len(n.SubnetTags) > 0:
			report.Add(p, "set either subnets or subnetTags, not both")
		}
		config.CheckList(report, p+".subnets", n.Subnets, config.CheckSubnet)
		for k := range n.SubnetTags {
			if k == "" {
				report.Add(p+".subnetTags", "a tag key must not be empty")
			}
		}
		k := reg{n.Account, n.Region}
		if j, dup := seen[k]; dup {
			report.Add(p, "network %s in %s is listed twice (%s and %s) — put every subnet of an account and region in one entry", n.Account, n.Region, report.Path(config.Index("networks", j)), report.Path(p))
		}
		seen[k] = i
	}
	config.CheckEndpoint(report, "endpoint", e.Endpoint, "ec2")
	config.CheckAWSRates(report, &e.AWSRates, &rates)
	if e.HeadroomWarning <= 0 || e.HeadroomWarning > 1 {
		report.Add("headroomWarning", "%s is out of range — use a share above 0%% and at most 100%%", e.HeadroomWarning)
	}
	if e.WarnBefore < 0 {
		report.Add("warnBefore", "must not be negative")
	}
	i := &e.Interfaces
	config.CheckList(report, "interfaces.ownership", i.Ownership, func(o string) string {
		if o != EvidenceVPCCNI && o != EvidenceBranch {
			return fmt.Sprintf("%q is not an ownership evidence — use %s or %s", o, EvidenceVPCCNI, EvidenceBranch)
		}
		return ""
	})
	if i.Delete && len(i.Ownership) == 0 {
		report.Add("interfaces.ownership", "is empty, so no interface could ever be proven reclaim's to delete — remove the key for the defaults, or set delete: false")
	}
}
