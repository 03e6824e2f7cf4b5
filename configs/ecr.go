package config

import (
	"net/url"
	"regexp"
	"slices"
	"time"

	"reclaim.dev/reclaim/internal/glob"
)

// ECR says which ECR registries to trim and how. Nil when the file has no
// ecr section: no image work is done and clusters are not asked for images.
type ECR struct {
	Registries []Registry `json:"registries"`
	// Endpoint overrides the ECR endpoint of every registry (a fake or a VPC
	// endpoint). Empty: the AWS SDK's own configuration decides
	// (AWS_ENDPOINT_URL_ECR, AWS_ENDPOINT_URL, the shared config file).
	Endpoint string `json:"endpoint,omitempty"`
	// RequestsPerSecond is reclaim's own limit per account and region, across
	// every ECR call: the API's limits are shared with everything else in the account.
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Burst             int     `json:"burst"`
	// Concurrency is how many repositories of one registry are listed at
	// once, and how many delete batches (each one repository's) run at once.
	Concurrency int `json:"concurrency"`
	MaxAttempts int `json:"maxAttempts"`
	PageSize    int `json:"pageSize"`
	// ProtectTag is a repository resource tag; with the value "true" the
	// repository is never trimmed. Empty skips reading repository tags.
	ProtectTag string `json:"protectTag"`
	// Repositories are policies; the first whose match or regex fits a
	// repository's name applies. A repository no policy fits is only counted.
	Repositories []RepoPolicy `json:"repositories"`
	// Manifests are directories of Kubernetes manifests (a GitOps checkout):
	// images they name are kept as if running.
	Manifests Manifests `json:"manifests"`
	// Consumers are accounts and regions whose ECS task definitions and
	// tasks, and Lambda functions, run ECR images outside Kubernetes: what
	// they name is kept as if running.
	Consumers         []Consumer `json:"consumers"`
	MinAge            Duration   `json:"minAge"`
	Grace             Duration   `json:"grace"`
	MaxDeletesPerRun  int        `json:"maxDeletesPerRun"`
	MaxDeletePercent  Percent    `json:"maxDeletePercent"`
	BreakerCandidates int        `json:"breakerCandidates"`
	HeadroomWarning   Percent    `json:"headroomWarning"`
}

// Registry is one account's registry in one region, and how to reach it.
type Registry struct {
	Account string `json:"account"`
	Region  string `json:"region"`
	// Profile is a shared-config profile; empty means the default credential chain.
	Profile string `json:"profile,omitempty"`
	// RoleARN is assumed on top of the base credentials (cross-account access).
	RoleARN    string `json:"roleARN,omitempty"`
	ExternalID string `json:"externalID,omitempty"`
}

// Consumer is one account and region read for image users outside
// Kubernetes, and how to reach it.
type Consumer struct {
	Account    string `json:"account"`
	Region     string `json:"region"`
	Profile    string `json:"profile,omitempty"`
	RoleARN    string `json:"roleARN,omitempty"`
	ExternalID string `json:"externalID,omitempty"`
	// ECS reads ACTIVE task definitions and RUNNING tasks; Lambda reads
	// functions of package type Image. Both default to true.
	ECS    bool `json:"ecs"`
	Lambda bool `json:"lambda"`
	// ECSEndpoint and LambdaEndpoint override the services' (fakes).
	ECSEndpoint    string `json:"ecsEndpoint,omitempty"`
	LambdaEndpoint string `json:"lambdaEndpoint,omitempty"`
}

// RepoPolicy is how far one set of repositories is trimmed, and what is always kept.
type RepoPolicy struct {
	// Match is a glob on the repository name: * within a path segment, ** across
	// segments, ? one character. Regex is a Go regular expression instead.
	Match string `json:"match,omitempty"`
	Regex string `json:"regex,omitempty"`
	// Limit is the repository's image quota (10,000 unless AWS raised it).
	Limit int `json:"limit"`
	// HighWater: trim only when the count is above this share of Limit, and
	// then down to Target, oldest first.
	HighWater Percent `json:"highWater"`
	Target    Percent `json:"target"`
	// KeepNewest keeps the N most recently pushed images.
	KeepNewest int `json:"keepNewest"`
	// KeepTags are globs: an image with a matching tag is kept.
	KeepTags []string `json:"keepTags"`
	// KeepPulledWithin keeps images pulled within this window (0: off).
	KeepPulledWithin Duration `json:"keepPulledWithin"`
	// UntaggedOlderThan lets untagged, unreferenced images older than this go
	// even when the repository is below its high-water mark (0: off).
	UntaggedOlderThan Duration `json:"untaggedOlderThan"`
	// Protect opts the matching repositories out entirely.
	Protect bool `json:"protect"`
}

// Manifests are directories of manifests whose images count as in use.
type Manifests struct {
	Dirs    []string `json:"dirs"`
	Exclude []string `json:"exclude"`
}

// Defaults of the ecr section.
const (
	defaultECRRequestsPerSecond = 20.0
	defaultECRConcurrency       = 8
	defaultECRMaxAttempts       = 10
	defaultECRPageSize          = 1000
	defaultECRProtectTag        = "reclaim.dev/protect"
	defaultImageMinAge          = Duration(24 * time.Hour)
	defaultImageGrace           = Duration(2 * time.Hour)
	defaultImageMaxDeletes      = 5000
	defaultImageMaxPercent      = Percent(0.10)
	defaultImageBreaker         = 20000
	defaultImageHeadroomWarning = Percent(0.90)
	defaultRepoLimit            = 10000
	defaultRepoHighWater        = Percent(0.90)
	defaultRepoTarget           = Percent(0.80)
	defaultRepoKeepNewest       = 10
	defaultRepoKeepPulledWithin = Duration(30 * 24 * time.Hour)
)

var defaultRepoKeepTags = []string{"latest"}

var (
	awsAccount   = regexp.MustCompile(`^[0-9]{12}$`)
	awsRegion    = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]$`)
	roleARN      = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$`)
	accountHint  = "an AWS account id is 12 digits, quoted so YAML keeps leading zeros: \"123456789012\""
	maxECRPage   = 1000
	maxECRWorker = 64
)

func (c *Config) ecrDefaults() {
	e := c.ECR
	if e == nil {
		return
	}
	def(c, "ecr.requestsPerSecond", &e.RequestsPerSecond, defaultECRRequestsPerSecond)
	def(c, "ecr.burst", &e.Burst, int(e.RequestsPerSecond+0.999))
	def(c, "ecr.concurrency", &e.Concurrency, defaultECRConcurrency)
	def(c, "ecr.maxAttempts", &e.MaxAttempts, defaultECRMaxAttempts)
	def(c, "ecr.pageSize", &e.PageSize, defaultECRPageSize)
	def(c, "ecr.protectTag", &e.ProtectTag, defaultECRProtectTag)
	def(c, "ecr.minAge", &e.MinAge, defaultImageMinAge)
	def(c, "ecr.grace", &e.Grace, defaultImageGrace)
	def(c, "ecr.maxDeletesPerRun", &e.MaxDeletesPerRun, defaultImageMaxDeletes)
	def(c, "ecr.maxDeletePercent", &e.MaxDeletePercent, defaultImageMaxPercent)
	def(c, "ecr.breakerCandidates", &e.BreakerCandidates, defaultImageBreaker)
	def(c, "ecr.headroomWarning", &e.HeadroomWarning, defaultImageHeadroomWarning)
	if !c.present["ecr.repositories"] {
		e.Repositories = []RepoPolicy{{Match: "**"}}
	}
	for i := range e.Consumers {
		p := index("ecr.consumers", i)
		def(c, p+".ecs", &e.Consumers[i].ECS, true)
		def(c, p+".lambda", &e.Consumers[i].Lambda, true)
	}
	for i := range e.Repositories {
		r, p := &e.Repositories[i], index("ecr.repositories", i)
		def(c, p+".limit", &r.Limit, defaultRepoLimit)
		def(c, p+".highWater", &r.HighWater, defaultRepoHighWater)
		def(c, p+".target", &r.Target, defaultRepoTarget)
		def(c, p+".keepNewest", &r.KeepNewest, defaultRepoKeepNewest)
		def(c, p+".keepTags", &r.KeepTags, slices.Clone(defaultRepoKeepTags))
		def(c, p+".keepPulledWithin", &r.KeepPulledWithin, defaultRepoKeepPulledWithin)
	}
}

func (e *ECR) normalize(ps *problems) {
	for i := range e.Manifests.Dirs {
		v, err := expandHome(e.Manifests.Dirs[i])
		if err != nil {
			ps.add(index("ecr.manifests.dirs", i), "%v", err)
			continue
		}
		e.Manifests.Dirs[i] = v
	}
}

func (e *ECR) validate(ps *problems, path string) {
	if len(e.Registries) == 0 {
		ps.add(path+".registries", "at least one registry is required — e.g. {account: \"123456789012\", region: us-east-1}")
	}
	type reg struct{ account, region string }
	seen := map[reg]int{}
	for i, r := range e.Registries {
		p := index(path+".registries", i)
		validateAWSTarget(ps, p, r.Account, r.Region, r.RoleARN, r.ExternalID)
		k := reg{r.Account, r.Region}
		if j, dup := seen[k]; dup {
			ps.add(p, "registry %s in %s is listed twice (%s and %s)", r.Account, r.Region, index(path+".registries", j), p)
		}
		seen[k] = i
	}
	validateEndpoint(ps, path+".endpoint", e.Endpoint, "ecr")
	seenC := map[reg]int{}
	for i, cs := range e.Consumers {
		p := index(path+".consumers", i)
		validateAWSTarget(ps, p, cs.Account, cs.Region, cs.RoleARN, cs.ExternalID)
		validateEndpoint(ps, p+".ecsEndpoint", cs.ECSEndpoint, "ecs")
		validateEndpoint(ps, p+".lambdaEndpoint", cs.LambdaEndpoint, "lambda")
		if !cs.ECS && !cs.Lambda {
			ps.add(p, "reads nothing with both ecs and lambda false — remove the entry instead")
		}
		k := reg{cs.Account, cs.Region}
		if j, dup := seenC[k]; dup {
			ps.add(p, "account %s region %s is listed twice (%s and %s)", cs.Account, cs.Region, index(path+".consumers", j), p)
		}
		seenC[k] = i
	}
	if e.RequestsPerSecond <= 0 {
		ps.add(path+".requestsPerSecond", "must be more than 0")
	} else if float64(e.Burst) < 1 {
		ps.add(path+".burst", "must be at least 1")
	}
	if e.Concurrency < 1 || e.Concurrency > maxECRWorker {
		ps.add(path+".concurrency", "%d is out of range — use 1 to %d", e.Concurrency, maxECRWorker)
	}
	if e.MaxAttempts < 1 || e.MaxAttempts > 50 {
		ps.add(path+".maxAttempts", "%d is out of range — use 1 to 50", e.MaxAttempts)
	}
	if e.PageSize < 1 || e.PageSize > maxECRPage {
		ps.add(path+".pageSize", "%d is out of range — use 1 to %d (the API maximum)", e.PageSize, maxECRPage)
	}
	if len(e.Repositories) == 0 {
		ps.add(path+".repositories", "is empty, so no repository would ever be trimmed — remove the key to use the defaults, or add {match: \"**\"}")
	}
	for i := range e.Repositories {
		e.Repositories[i].validate(ps, index(path+".repositories", i))
	}
	for i, g := range e.Manifests.Exclude {
		if _, err := GlobRegexp(g); err != nil {
			ps.add(index(path+".manifests.exclude", i), "%v", err)
		}
	}
	if e.MinAge <= 0 {
		ps.add(path+".minAge", "must be more than 0 — an image CI just pushed is about to be deployed")
	}
	if e.Grace <= 0 {
		ps.add(path+".grace", "must be more than 0 — an image must be a candidate on more than one run before it is deleted")
	}
	if e.MaxDeletesPerRun < 0 {
		ps.add(path+".maxDeletesPerRun", "%d is negative — use 0 to delete nothing", e.MaxDeletesPerRun)
	}
	if e.BreakerCandidates < 1 {
		ps.add(path+".breakerCandidates", "must be at least 1 — to delete nothing set maxDeletesPerRun: 0")
	}
}

func (r *RepoPolicy) validate(ps *problems, p string) {
	switch {
	case r.Match == "" && r.Regex == "":
		ps.add(p, "give match (a glob such as team-a/** ) or regex")
	case r.Match != "" && r.Regex != "":
		ps.add(p, "set either match or regex, not both")
	case r.Match != "":
		if _, err := GlobRegexp(r.Match); err != nil {
			ps.add(p+".match", "%v", err)
		}
	default:
		if _, err := regexp.Compile(r.Regex); err != nil {
			ps.add(p+".regex", "%q does not compile: %v", r.Regex, err)
		}
	}
	if r.Limit < 1 {
		ps.add(p+".limit", "must be at least 1 — ECR's default is 10000 images per repository")
	}
	if r.HighWater <= 0 || r.HighWater > 1 {
		ps.add(p+".highWater", "%s is out of range — use a share of limit above 0%% and at most 100%%", r.HighWater)
	}
	if r.Target <= 0 || r.Target > r.HighWater {
		ps.add(p+".target", "%s must be above 0%% and at most highWater (%s) — trimming stops at target", r.Target, r.HighWater)
	}
	if r.KeepNewest < 0 {
		ps.add(p+".keepNewest", "%d is negative", r.KeepNewest)
	}
	for i, t := range r.KeepTags {
		if _, err := GlobRegexp(t); err != nil || t == "" {
			ps.add(index(p+".keepTags", i), "%q is not a tag glob — write e.g. latest, v*, release-*", t)
		}
	}
	if r.KeepPulledWithin < 0 {
		ps.add(p+".keepPulledWithin", "must not be negative; 0 turns the rule off")
	}
	if r.UntaggedOlderThan < 0 {
		ps.add(p+".untaggedOlderThan", "must not be negative; 0 turns the rule off")
	}
}

// validateAWSTarget checks an account and region to reach, and the role
// assumed there (ecr.registries[], ec2.networks[]).
func validateAWSTarget(ps *problems, p, account, region, role, externalID string) {
	if !awsAccount.MatchString(account) {
		ps.add(p+".account", "%q is not an AWS account id — %s", account, accountHint)
	}
	if !awsRegion.MatchString(region) {
		ps.add(p+".region", "%q is not an AWS region — regions look like us-east-1 or eu-central-1", region)
	}
	if role != "" && !roleARN.MatchString(role) {
		ps.add(p+".roleARN", "%q is not an IAM role ARN — write arn:aws:iam::123456789012:role/NAME", role)
	}
	if externalID != "" && role == "" {
		ps.add(p+".externalID", "only meaningful with roleARN")
	}
}

// validateEndpoint checks an endpoint override of an AWS service.
func validateEndpoint(ps *problems, p, endpoint, service string) {
	if endpoint == "" {
		return
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		ps.add(p, "%q is not an absolute http(s) URL — write e.g. https://%s.example.internal or http://localhost:8080", endpoint, service)
	}
}

// crossValidateECR: every scanned account is covered by some cluster, as for GCE projects.
func (c *Config) crossValidateECR(ps *problems) {
	if c.ECR == nil {
		return
	}
	covered, any := map[string]bool{}, false
	for _, cl := range c.Clusters {
		if len(cl.AWSAccounts) == 0 {
			any = true
		}
		// A cluster may also pull from accounts reclaim does not trim (a
		// vendor's registry): those need not be listed in ecr.registries.
		for _, a := range cl.AWSAccounts {
			covered[a] = true
		}
	}
	if !any {
		for i, r := range c.ECR.Registries {
			if !covered[r.Account] {
				ps.add(index("ecr.registries", i)+".account", "no cluster lists %q in awsAccounts, so every image there would look unused — add it to the awsAccounts of the clusters that pull from it", r.Account)
			}
		}
	}
}

// GlobRegexp compiles a repository, tag or path glob (see internal/glob).
func GlobRegexp(g string) (*regexp.Regexp, error) { return glob.Compile(g) }
