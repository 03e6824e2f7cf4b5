package config

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/labels"
)

// EC2 says which subnets to watch for IP headroom and which network
// interfaces may be deleted as leaked. Nil when the file has no ec2 section.
type EC2 struct {
	// Networks are the accounts and regions, each with its subnets in scope.
	Networks []Network `json:"networks"`
	// Endpoint overrides the EC2 endpoint (a fake or a VPC endpoint).
	Endpoint string `json:"endpoint,omitempty"`
	// RequestsPerSecond and Burst are reclaim's own limit on Describe calls
	// per account and region: EC2's bucket (100 burst, 20 a second) is
	// shared with every node's CNI, so reclaim takes a fraction of it.
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Burst             int     `json:"burst"`
	// DeletesPerSecond and DeleteBurst limit DeleteNetworkInterface (EC2: 100, 5 a second).
	DeletesPerSecond float64 `json:"deletesPerSecond"`
	DeleteBurst      int     `json:"deleteBurst"`
	MaxAttempts      int     `json:"maxAttempts"`
	PageSize         int     `json:"pageSize"`
	// HeadroomWarning warns when a subnet's used share reaches it.
	HeadroomWarning Percent `json:"headroomWarning"`
	// WarnBefore warns when a subnet is projected to run out within it.
	WarnBefore Duration   `json:"warnBefore"`
	Interfaces Interfaces `json:"interfaces"`
}

// Network is one account's subnets in one region, and how to reach them.
type Network struct {
	Account    string `json:"account"`
	Region     string `json:"region"`
	Profile    string `json:"profile,omitempty"`
	RoleARN    string `json:"roleARN,omitempty"`
	ExternalID string `json:"externalID,omitempty"`
	// Subnets are subnet ids; SubnetTags select subnets by tag instead
	// (every tag must match; an empty value matches any value).
	Subnets    []string `json:"subnets,omitempty"`
	SubnetTags Tags     `json:"subnetTags,omitempty"`
}

// Tags are AWS tags, key to value. The decoder handles no maps, so Tags
// decodes and prints itself.
type Tags map[string]string

// UnmarshalJSON accepts a mapping of tag keys to string values.
func (t *Tags) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("expected a mapping of tag keys to values, such as {kubernetes.io/role/internal-elb: \"1\"}")
	}
	m := make(Tags, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("tag %q: expected a string, got %s — quote it: %q", k, v, strings.Trim(string(v), `"`))
		}
		m[k] = s
	}
	*t = m
	return nil
}

// MarshalJSON prints the tags as a mapping.
func (t Tags) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]string(t)) }

// Interfaces is the policy for leaked (detached) network interfaces.
type Interfaces struct {
	// Delete lets reclaim delete leaked interfaces; false only reports them.
	Delete bool `json:"delete"`
	// Ownership is the evidence an interface must carry to be deleted:
	// vpc-cni (tag node.k8s.amazonaws.com/instance_id and description
	// aws-K8S-) and vpc-resource-controller (tag eks:eni:owner, description
	// aws-k8s-branch-eni).
	Ownership []string `json:"ownership"`
	// ProtectTag is an interface tag; with the value "true" the interface is
	// never deleted (the opt-out every kind honours).
	ProtectTag        string   `json:"protectTag"`
	Grace             Duration `json:"grace"`
	MaxDeletesPerRun  int      `json:"maxDeletesPerRun"`
	MaxDeletePercent  Percent  `json:"maxDeletePercent"`
	BreakerCandidates int      `json:"breakerCandidates"`
}

// Ownership evidence names.
const (
	OwnerVPCCNI                = "vpc-cni"
	OwnerVPCResourceController = "vpc-resource-controller"
)

// Retention is the policy of the jobs and pods sections: finished objects
// kept for a while, then deleted.
type Retention struct {
	// Succeeded and Failed are how long after finishing an object is kept
	// (failed ones longer: people debug them).
	Succeeded Duration `json:"succeeded"`
	Failed    Duration `json:"failed"`
	// Namespaces limit where reclaim looks (globs); exclude wins.
	Namespaces Namespaces `json:"namespaces"`
	// Selector is a label selector objects must match ("" matches all).
	Selector string `json:"selector"`
	// RetentionAnnotation on an object overrides its retention ("2h",
	// "7d", or "never").
	RetentionAnnotation string `json:"retentionAnnotation"`
	// Grace is how long an object must have been past its retention, seen
	// on more than one run, before it is deleted.
	Grace             Duration `json:"grace"`
	MaxDeletesPerRun  int      `json:"maxDeletesPerRun"`
	MaxDeletePercent  Percent  `json:"maxDeletePercent"`
	BreakerCandidates int      `json:"breakerCandidates"`
	// DeletesPerSecond paces deletes per cluster so the API server is never starved.
	DeletesPerSecond float64 `json:"deletesPerSecond"`

	// Jobs only. KeepCronJobHistory keeps the newest successfulJobsHistoryLimit
	// and failedJobsHistoryLimit Jobs of each CronJob whatever their age.
	KeepCronJobHistory *bool `json:"keepCronJobHistory,omitempty"`
	// TTLGrace: a Job with ttlSecondsAfterFinished is the TTL controller's;
	// reclaim deletes it only when it is this far past due.
	TTLGrace *Duration `json:"ttlGrace,omitempty"`

	// Pods only. OwnerKinds are owner kinds besides Job whose finished pods
	// no controller acts on (e.g. TaskRun): such pods may be deleted.
	OwnerKinds []string `json:"ownerKinds,omitempty"`
}

// Namespaces are include and exclude globs.
type Namespaces struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// Defaults of the ec2, jobs and pods sections.
const (
	defaultEC2RequestsPerSecond = 5.0
	defaultEC2Burst             = 10
	defaultEC2DeletesPerSecond  = 1.0
	defaultEC2DeleteBurst       = 5
	defaultEC2MaxAttempts       = 10
	defaultEC2PageSize          = 1000
	defaultSubnetWarning        = Percent(0.80)
	defaultSubnetWarnBefore     = Duration(48 * time.Hour)
	defaultENIGrace             = Duration(6 * time.Hour)
	defaultENIProtectTag        = "reclaim.dev/protect"
	defaultENIMaxDeletes        = 100
	defaultENIMaxPercent        = Percent(0.20)
	defaultENIBreaker           = 2000
	defaultJobsSucceeded        = Duration(24 * time.Hour)
	defaultJobsFailed           = Duration(7 * 24 * time.Hour)
	defaultPodsSucceeded        = Duration(time.Hour)
	defaultPodsFailed           = Duration(7 * 24 * time.Hour)
	defaultRetentionAnnotation  = "reclaim.dev/retention"
	defaultRetentionGrace       = Duration(time.Hour)
	defaultRetentionMaxDeletes  = 10000 // see reference.yaml: half the history at most, a 100,000 backlog in about ten runs
	defaultRetentionMaxPercent  = Percent(0.5)
	defaultRetentionBreaker     = 200000
	defaultRetentionRate        = 20.0
	defaultTTLGrace             = Duration(time.Hour)
)

var (
	defaultENIOwnership  = []string{OwnerVPCCNI, OwnerVPCResourceController}
	defaultExcludeNS     = []string{"kube-system"}
	subnetID             = regexp.MustCompile(`^subnet-[0-9a-f]{8}([0-9a-f]{9})?$`)
	maxEC2Page           = 1000
	minEC2Page           = 5
	ownerKindName        = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	maxRetentionPerSecnd = 1000.0
)

func (c *Config) eksDefaults() {
	if e := c.EC2; e != nil {
		def(c, "ec2.requestsPerSecond", &e.RequestsPerSecond, defaultEC2RequestsPerSecond)
		def(c, "ec2.burst", &e.Burst, defaultEC2Burst)
		def(c, "ec2.deletesPerSecond", &e.DeletesPerSecond, defaultEC2DeletesPerSecond)
		def(c, "ec2.deleteBurst", &e.DeleteBurst, defaultEC2DeleteBurst)
		def(c, "ec2.maxAttempts", &e.MaxAttempts, defaultEC2MaxAttempts)
		def(c, "ec2.pageSize", &e.PageSize, defaultEC2PageSize)
		def(c, "ec2.headroomWarning", &e.HeadroomWarning, defaultSubnetWarning)
		def(c, "ec2.warnBefore", &e.WarnBefore, defaultSubnetWarnBefore)
		i := &e.Interfaces
		def(c, "ec2.interfaces.delete", &i.Delete, true)
		def(c, "ec2.interfaces.ownership", &i.Ownership, append([]string(nil), defaultENIOwnership...))
		def(c, "ec2.interfaces.protectTag", &i.ProtectTag, defaultENIProtectTag)
		def(c, "ec2.interfaces.grace", &i.Grace, defaultENIGrace)
		def(c, "ec2.interfaces.maxDeletesPerRun", &i.MaxDeletesPerRun, defaultENIMaxDeletes)
		def(c, "ec2.interfaces.maxDeletePercent", &i.MaxDeletePercent, defaultENIMaxPercent)
		def(c, "ec2.interfaces.breakerCandidates", &i.BreakerCandidates, defaultENIBreaker)
	}
	if j := c.Jobs; j != nil {
		c.retentionDefaults("jobs", j, defaultJobsSucceeded, defaultJobsFailed)
		keep := true
		if j.KeepCronJobHistory == nil {
			j.KeepCronJobHistory = &keep
		}
		if j.TTLGrace == nil {
			d := defaultTTLGrace
			j.TTLGrace = &d
		}
	}
	if p := c.Pods; p != nil {
		c.retentionDefaults("pods", p, defaultPodsSucceeded, defaultPodsFailed)
	}
}

func (c *Config) retentionDefaults(path string, r *Retention, succeeded, failed Duration) {
	def(c, path+".succeeded", &r.Succeeded, succeeded)
	def(c, path+".failed", &r.Failed, failed)
	def(c, path+".namespaces.exclude", &r.Namespaces.Exclude, append([]string(nil), defaultExcludeNS...))
	def(c, path+".retentionAnnotation", &r.RetentionAnnotation, defaultRetentionAnnotation)
	def(c, path+".grace", &r.Grace, defaultRetentionGrace)
	def(c, path+".maxDeletesPerRun", &r.MaxDeletesPerRun, defaultRetentionMaxDeletes)
	def(c, path+".maxDeletePercent", &r.MaxDeletePercent, defaultRetentionMaxPercent)
	def(c, path+".breakerCandidates", &r.BreakerCandidates, defaultRetentionBreaker)
	def(c, path+".deletesPerSecond", &r.DeletesPerSecond, defaultRetentionRate)
}

func (e *EC2) validate(ps *problems, path string) {
	if len(e.Networks) == 0 {
		ps.add(path+".networks", "at least one network is required — e.g. {account: \"123456789012\", region: us-east-1, subnets: [subnet-0123456789abcdef0]}")
	}
	type reg struct{ account, region string }
	seen := map[reg]int{}
	for i, n := range e.Networks {
		p := index(path+".networks", i)
		validateAWSTarget(ps, p, n.Account, n.Region, n.RoleARN, n.ExternalID)
		switch {
		case len(n.Subnets) == 0 && len(n.SubnetTags) == 0:
			ps.add(p, "give subnets (ids) or subnetTags — reclaim never scans every subnet of an account")
		case len(n.Subnets) > 0 && len(n.SubnetTags) > 0:
			ps.add(p, "set either subnets or subnetTags, not both")
		}
		validateList(ps, p+".subnets", n.Subnets, checkSubnet)
		for k := range n.SubnetTags {
			if k == "" {
				ps.add(p+".subnetTags", "a tag key must not be empty")
			}
		}
		k := reg{n.Account, n.Region}
		if j, dup := seen[k]; dup {
			ps.add(p, "network %s in %s is listed twice (%s and %s) — put every subnet of an account and region in one entry", n.Account, n.Region, index(path+".networks", j), p)
		}
		seen[k] = i
	}
	validateEndpoint(ps, path+".endpoint", e.Endpoint, "ec2")
	if e.RequestsPerSecond <= 0 || e.RequestsPerSecond > 20 {
		ps.add(path+".requestsPerSecond", "%g is out of range — use more than 0 and at most 20 (EC2's own refill rate, shared with every node's CNI)", e.RequestsPerSecond)
	}
	if e.Burst < 1 || e.Burst > 100 {
		ps.add(path+".burst", "%d is out of range — use 1 to 100 (EC2's bucket)", e.Burst)
	}
	if e.DeletesPerSecond <= 0 || e.DeletesPerSecond > 5 {
		ps.add(path+".deletesPerSecond", "%g is out of range — use more than 0 and at most 5 (EC2's DeleteNetworkInterface refill rate)", e.DeletesPerSecond)
	}
	if e.DeleteBurst < 1 || e.DeleteBurst > 100 {
		ps.add(path+".deleteBurst", "%d is out of range — use 1 to 100", e.DeleteBurst)
	}
	if e.MaxAttempts < 1 || e.MaxAttempts > 50 {
		ps.add(path+".maxAttempts", "%d is out of range — use 1 to 50", e.MaxAttempts)
	}
	if e.PageSize < minEC2Page || e.PageSize > maxEC2Page {
		ps.add(path+".pageSize", "%d is out of range — use %d to %d (the API's MaxResults)", e.PageSize, minEC2Page, maxEC2Page)
	}
	if e.HeadroomWarning <= 0 || e.HeadroomWarning > 1 {
		ps.add(path+".headroomWarning", "%s is out of range — use a share above 0%% and at most 100%%", e.HeadroomWarning)
	}
	if e.WarnBefore < 0 {
		ps.add(path+".warnBefore", "must not be negative")
	}
	i, ip := &e.Interfaces, path+".interfaces"
	validateList(ps, ip+".ownership", i.Ownership, func(o string) string {
		if o != OwnerVPCCNI && o != OwnerVPCResourceController {
			return fmt.Sprintf("%q is not an ownership evidence — use %s or %s", o, OwnerVPCCNI, OwnerVPCResourceController)
		}
		return ""
	})
	if i.Delete && len(i.Ownership) == 0 {
		ps.add(ip+".ownership", "is empty, so no interface could ever be proven reclaim's to delete — remove the key for the defaults, or set delete: false")
	}
	if strings.TrimSpace(i.ProtectTag) == "" || len(i.ProtectTag) > 128 || strings.HasPrefix(strings.ToLower(i.ProtectTag), "aws:") {
		ps.add(ip+".protectTag", "%q is not a usable EC2 tag key — 1 to 128 characters, not starting with aws: (remove the key for reclaim.dev/protect)", i.ProtectTag)
	}
	if i.Grace <= 0 {
		ps.add(ip+".grace", "must be more than 0 — an interface must be seen detached on more than one run before it is deleted")
	}
	if i.MaxDeletesPerRun < 0 {
		ps.add(ip+".maxDeletesPerRun", "%d is negative — use 0 to delete nothing", i.MaxDeletesPerRun)
	}
	if i.MaxDeletePercent < 0 || i.MaxDeletePercent > 1 {
		ps.add(ip+".maxDeletePercent", "%s is out of range — use 0%% to 100%%", i.MaxDeletePercent)
	}
	if i.BreakerCandidates < 1 {
		ps.add(ip+".breakerCandidates", "must be at least 1 — to delete nothing set maxDeletesPerRun: 0")
	}
}

func checkSubnet(s string) string {
	if !subnetID.MatchString(s) {
		return fmt.Sprintf("%q is not a subnet id — they look like subnet-0123456789abcdef0", s)
	}
	return ""
}

func (r *Retention) validate(ps *problems, path string, jobs bool) {
	if r.Succeeded <= 0 {
		ps.add(path+".succeeded", "must be more than 0 — how long a succeeded object is kept after it finished")
	}
	if r.Failed <= 0 {
		ps.add(path+".failed", "must be more than 0 — how long a failed object is kept for people to debug it")
	}
	for _, l := range []struct {
		p  string
		gs []string
	}{{path + ".namespaces.include", r.Namespaces.Include}, {path + ".namespaces.exclude", r.Namespaces.Exclude}} {
		validateList(ps, l.p, l.gs, func(g string) string {
			if _, err := GlobRegexp(g); err != nil || g == "" {
				return fmt.Sprintf("%q is not a namespace glob — write e.g. batch-* or team-a", g)
			}
			return ""
		})
	}
	if r.Selector != "" {
		if _, err := labels.Parse(r.Selector); err != nil {
			ps.add(path+".selector", "%q is not a label selector: %v — write e.g. team=data,tier!=critical", r.Selector, err)
		}
	}
	if r.RetentionAnnotation == "" {
		ps.add(path+".retentionAnnotation", "must not be empty — remove the key for the default %s", defaultRetentionAnnotation)
	} else if errs := content.IsLabelKey(r.RetentionAnnotation); len(errs) > 0 {
		ps.add(path+".retentionAnnotation", "%q is not a valid annotation key — %s", r.RetentionAnnotation, strings.Join(errs, "; "))
	}
	if r.Grace <= 0 {
		ps.add(path+".grace", "must be more than 0 — an object must be past its retention on more than one run before it is deleted")
	}
	if r.MaxDeletesPerRun < 0 {
		ps.add(path+".maxDeletesPerRun", "%d is negative — use 0 to delete nothing", r.MaxDeletesPerRun)
	}
	if r.MaxDeletePercent < 0 || r.MaxDeletePercent > 1 {
		ps.add(path+".maxDeletePercent", "%s is out of range — use 0%% to 100%%", r.MaxDeletePercent)
	}
	if r.BreakerCandidates < 1 {
		ps.add(path+".breakerCandidates", "must be at least 1 — to delete nothing set maxDeletesPerRun: 0")
	}
	if r.DeletesPerSecond <= 0 || r.DeletesPerSecond > maxRetentionPerSecnd {
		ps.add(path+".deletesPerSecond", "%g is out of range — use more than 0 and at most %g", r.DeletesPerSecond, maxRetentionPerSecnd)
	}
	if jobs {
		if r.TTLGrace != nil && *r.TTLGrace < 0 {
			ps.add(path+".ttlGrace", "must not be negative")
		}
		if len(r.OwnerKinds) > 0 {
			ps.add(path+".ownerKinds", "only meaningful in the pods section")
		}
		return
	}
	if r.KeepCronJobHistory != nil {
		ps.add(path+".keepCronJobHistory", "only meaningful in the jobs section")
	}
	if r.TTLGrace != nil {
		ps.add(path+".ttlGrace", "only meaningful in the jobs section")
	}
	validateList(ps, path+".ownerKinds", r.OwnerKinds, func(k string) string {
		switch {
		case k == "Job":
			return "Job is always known — list only other owner kinds, such as TaskRun"
		case k == "ReplicaSet" || k == "StatefulSet" || k == "DaemonSet" || k == "ReplicationController":
			return fmt.Sprintf("%s's controller manages its pods — reclaim never deletes them", k)
		case !ownerKindName.MatchString(k):
			return fmt.Sprintf("%q is not a kind — kinds are CamelCase, such as TaskRun", k)
		}
		return ""
	})
}

// ParseRetention reads a retention annotation's value: a duration such as
// 90m, 36h or 7d, or "never". ok is false for anything else.
func ParseRetention(s string) (d time.Duration, never bool, ok bool) {
	s = strings.TrimSpace(s)
	if s == "never" {
		return 0, true, true
	}
	v, err := ParseDuration(s)
	if err != nil {
		return 0, false, false
	}
	return v.Std(), false, true
}

// crossValidateEC2 checks the clusters' awsSubnets, and that the jobs and
// pods sections read one retention annotation.
func (c *Config) crossValidateEC2(ps *problems) {
	if c.Jobs != nil && c.Pods != nil && c.Jobs.RetentionAnnotation != c.Pods.RetentionAnnotation {
		ps.add("pods.retentionAnnotation", "%q differs from jobs.retentionAnnotation %q — use one annotation for both", c.Pods.RetentionAnnotation, c.Jobs.RetentionAnnotation)
	}
	// Checked with or without an ec2 section: a bad id is never accepted silently.
	for i, cl := range c.Clusters {
		validateList(ps, index("clusters", i)+".awsSubnets", cl.AWSSubnets, checkSubnet)
	}
	if c.EC2 == nil {
		for i, cl := range c.Clusters {
			if len(cl.AWSSubnets) > 0 && c.Jobs == nil && c.Pods == nil {
				ps.add(index("clusters", i)+".awsSubnets", "only meaningful with an ec2 section")
			}
		}
	}
}
