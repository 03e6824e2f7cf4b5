package ecrimage

import (
	"regexp"
	"slices"
	"time"

	config "reclaim.dev/reclaim/configs"
)

// Key is the kind's config section.
const Key = "ecr"

var (
	awsAccountID = regexp.MustCompile(`^[0-9]{12}$`)
	orgID        = regexp.MustCompile(`^o-[a-z0-9]{10,32}$`)
)

// Section is the ecr section: which ECR registries to trim and how. Absent,
// no image work is done and clusters are not asked for images.
type Section struct {
	Registries []Registry `json:"registries"`
	// Endpoint overrides the ECR endpoint of every registry (a fake or a VPC
	// endpoint). Empty: the AWS SDK's own configuration decides
	// (AWS_ENDPOINT_URL_ECR, AWS_ENDPOINT_URL, the shared config file).
	Endpoint string `json:"endpoint,omitempty"`
	// RequestsPerSecond is reclaim's own limit per account, region and ECR
	// API action (ECR's quotas are per action): the API's limits are shared
	// with everything else in the account.
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Burst             int     `json:"burst"`
	// Concurrency is how many repositories of one registry are listed at
	// once, and how many delete batches (each one repository's) run at once.
	Concurrency int `json:"concurrency"`
	MaxAttempts int `json:"maxAttempts"`
	PageSize    int `json:"pageSize"`
	// Safety: protectTag is a repository resource tag (with any value the
	// repository is never trimmed, package optout; empty skips reading
	// repository tags), minAge, grace and the per-run caps.
	config.Safety
	// Repositories are policies; the first whose match or regex fits a
	// repository's name applies. A repository no policy fits is only counted.
	Repositories []RepoPolicy `json:"repositories"`
	// Manifests are directories of Kubernetes manifests (a GitOps checkout):
	// images they name are kept as if running.
	Manifests Manifests `json:"manifests"`
	// Consumers are accounts and regions whose ECS task definitions,
	// services and tasks, and Lambda functions, run ECR images outside
	// Kubernetes: what they name is kept as if running. Left out, every
	// registry's account and region is read (ECS, Lambda and Batch on),
	// and with fleet discovery covering every region, each enabled region
	// of those accounts too (OpenUsers), so an image a task or a function
	// runs is never unprotected by default.
	Consumers []Consumer `json:"consumers"`
	// OutOfScopePullers declares principals a repository or registry
	// policy lets pull whose use reclaim need not see: an account id, an
	// organization id (o-…) or "*". Any other puller whose clusters and
	// consumers reclaim does not read holds the trims it could use.
	OutOfScopePullers []OutOfScopePuller `json:"outOfScopePullers"`
	// defaultConsumers: Consumers are the registries', checked there.
	defaultConsumers bool
	HeadroomWarning  config.Percent `json:"headroomWarning"`
}

// Registry is one account's registry in one region, and how to reach it.
type Registry struct {
	config.AWSTarget
}

// OutOfScopePuller is a principal allowed to pull whose use is declared
// out of reclaim's view, with a reason every report repeats.
type OutOfScopePuller struct {
	Principal string `json:"principal"`
	Reason    string `json:"reason"`
}

// Consumer is one account and region read for image users outside
// Kubernetes, and how to reach it.
type Consumer struct {
	config.AWSTarget
	// ECS reads ACTIVE task definitions, the revisions services run and
	// RUNNING tasks; Lambda reads functions of package type Image. Both
	// default to true.
	ECS    bool `json:"ecs"`
	Lambda bool `json:"lambda"`
	// Batch reads ACTIVE AWS Batch job definitions. Default true.
	Batch bool `json:"batch"`
	// ECSEndpoint, LambdaEndpoint and BatchEndpoint override the services' (fakes).
	ECSEndpoint    string `json:"ecsEndpoint,omitempty"`
	LambdaEndpoint string `json:"lambdaEndpoint,omitempty"`
	BatchEndpoint  string `json:"batchEndpoint,omitempty"`
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
	HighWater config.Percent `json:"highWater"`
	Target    config.Percent `json:"target"`
	// KeepNewest keeps the N most recently pushed images.
	KeepNewest int `json:"keepNewest"`
	// KeepTags are globs: an image with a matching tag is kept.
	KeepTags []string `json:"keepTags"`
	// KeepPulledWithin keeps images pulled within this window (0: off).
	KeepPulledWithin config.Duration `json:"keepPulledWithin"`
	// UntaggedOlderThan lets untagged, unreferenced images older than this go
	// even when the repository is below its high-water mark (0: off).
	UntaggedOlderThan config.Duration `json:"untaggedOlderThan"`
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
	defaultImageMinAge          = config.Duration(24 * time.Hour)
	defaultImageGrace           = config.Duration(2 * time.Hour)
	defaultImageMaxDeletes      = 5000
	defaultImageMaxPercent      = config.Percent(0.10)
	defaultImageBreaker         = 20000
	defaultImageHeadroomWarning = config.Percent(0.90)
	defaultRepoLimit            = 10000
	defaultRepoHighWater        = config.Percent(0.90)
	defaultRepoTarget           = config.Percent(0.80)
	defaultRepoKeepNewest       = 10
	defaultRepoKeepPulledWithin = config.Duration(30 * 24 * time.Hour)
)

var defaultRepoKeepTags = []string{"latest"}

const maxPage, maxWorkers = 1000, 64

func init() {
	config.Register(config.SectionSpec[Section]{
		Key: Key, Doc: "trims ECR repositories above their high-water mark, oldest unused images first (ecr-image)",
		Defaults: defaults, Normalize: normalize, Validate: validate,
		Safety: func(e *Section) *config.Safety { return &e.Safety },
		SafetyRules: config.SafetyRules{
			Defaults: config.Safety{ProtectTag: defaultECRProtectTag, Grace: defaultImageGrace, MinAge: defaultImageMinAge,
				Caps: config.Caps{MaxDeletesPerRun: defaultImageMaxDeletes, MaxDeletePercent: defaultImageMaxPercent, BreakerCandidates: defaultImageBreaker}},
			Without:   []string{config.KeyMaxDeleteSizePerRun},
			GraceWhy:  "an image must be a candidate on more than one run before it is deleted",
			MinAgeWhy: "an image CI just pushed is about to be deployed",
		},
		// Every trimmed account is covered by some cluster, as for GCE projects.
		Check: func(e *Section, c *config.Config, report *config.Report) {
			accounts := make([]string, len(e.Registries))
			for i, r := range e.Registries {
				accounts[i] = r.Account
			}
			config.AccountCoverage(c, report, "registries", accounts)
		},
		AWS: func(e *Section) []config.EKSDiscovery {
			out := make([]config.EKSDiscovery, len(e.Registries))
			for i, r := range e.Registries {
				out[i] = r.Discovery()
			}
			return out
		},
	})
}

// SectionOf is the file's ecr section, nil when it has none.
func SectionOf(cfg *config.Config) *Section { return config.SectionOf[Section](cfg, Key) }

func defaults(e *Section, set func(string) bool) {
	config.Fill(set, "requestsPerSecond", &e.RequestsPerSecond, defaultECRRequestsPerSecond)
	config.Fill(set, "burst", &e.Burst, int(e.RequestsPerSecond+0.999))
	config.Fill(set, "concurrency", &e.Concurrency, defaultECRConcurrency)
	config.Fill(set, "maxAttempts", &e.MaxAttempts, defaultECRMaxAttempts)
	config.Fill(set, "pageSize", &e.PageSize, defaultECRPageSize)
	config.Fill(set, "headroomWarning", &e.HeadroomWarning, defaultImageHeadroomWarning)
	if !set("repositories") {
		e.Repositories = []RepoPolicy{{Match: "**"}}
	}
	if !set("consumers") {
		e.defaultConsumers = true
		for _, r := range e.Registries {
			e.Consumers = append(e.Consumers, Consumer{AWSTarget: r.AWSTarget})
		}
	}
	for i := range e.Consumers {
		p := config.Index("consumers", i)
		config.Fill(set, p+".ecs", &e.Consumers[i].ECS, true)
		config.Fill(set, p+".lambda", &e.Consumers[i].Lambda, true)
		config.Fill(set, p+".batch", &e.Consumers[i].Batch, true)
	}
	for i := range e.Repositories {
		r, p := &e.Repositories[i], config.Index("repositories", i)
		config.Fill(set, p+".limit", &r.Limit, defaultRepoLimit)
		config.Fill(set, p+".highWater", &r.HighWater, defaultRepoHighWater)
		config.Fill(set, p+".target", &r.Target, defaultRepoTarget)
		config.Fill(set, p+".keepNewest", &r.KeepNewest, defaultRepoKeepNewest)
		config.Fill(set, p+".keepTags", &r.KeepTags, slices.Clone(defaultRepoKeepTags))
		config.Fill(set, p+".keepPulledWithin", &r.KeepPulledWithin, defaultRepoKeepPulledWithin)
	}
}

func normalize(e *Section, report *config.Report) {
	for i := range e.Manifests.Dirs {
		v, err := config.ExpandHome(e.Manifests.Dirs[i])
		if err != nil {
			report.Add(config.Index("manifests.dirs", i), "%v", err)
			continue
		}
		e.Manifests.Dirs[i] = v
	}
}

func validate(e *Section, report *config.Report) {
	if len(e.Registries) == 0 {
		report.Add("registries", "at least one registry is required — e.g. {account: \"123456789012\", region: us-east-1}")
	}
	type reg struct{ account, region string }
	seen := map[reg]int{}
	for i, r := range e.Registries {
		p := config.Index("registries", i)
		config.CheckAWSTarget(report, p, r.AWSTarget)
		k := reg{r.Account, r.Region}
		if j, dup := seen[k]; dup {
			report.Add(p, "registry %s in %s is listed twice (%s and %s)", r.Account, r.Region, report.Path(config.Index("registries", j)), report.Path(p))
		}
		seen[k] = i
	}
	config.CheckEndpoint(report, "endpoint", e.Endpoint, "ecr")
	seenC := map[reg]int{}
	for i, cs := range e.Consumers {
		if e.defaultConsumers {
			break
		}
		p := config.Index("consumers", i)
		config.CheckAWSTarget(report, p, cs.AWSTarget)
		config.CheckEndpoint(report, p+".ecsEndpoint", cs.ECSEndpoint, "ecs")
		config.CheckEndpoint(report, p+".lambdaEndpoint", cs.LambdaEndpoint, "lambda")
		config.CheckEndpoint(report, p+".batchEndpoint", cs.BatchEndpoint, "batch")
		if !cs.ECS && !cs.Lambda && !cs.Batch {
			report.Add(p, "reads nothing with ecs, lambda and batch false — remove the entry instead")
		}
		k := reg{cs.Account, cs.Region}
		if j, dup := seenC[k]; dup {
			report.Add(p, "account %s region %s is listed twice (%s and %s)", cs.Account, cs.Region, report.Path(config.Index("consumers", j)), report.Path(p))
		}
		seenC[k] = i
	}
	seenP := map[string]int{}
	for i, o := range e.OutOfScopePullers {
		p := config.Index("outOfScopePullers", i)
		if o.Principal != "*" && !awsAccountID.MatchString(o.Principal) && !orgID.MatchString(o.Principal) {
			report.Add(p+".principal", "%q is not a principal — write an account id (\"123456789012\"), an organization id (o-a1b2c3d4e5) or \"*\"", o.Principal)
		}
		if o.Reason == "" {
			report.Add(p+".reason", "is required — every report repeats why what this principal pulls may be deleted")
		}
		if j, dup := seenP[o.Principal]; dup {
			report.Add(p+".principal", "%q is declared twice (%s and %s)", o.Principal, report.Path(config.Index("outOfScopePullers", j)), report.Path(p))
		}
		seenP[o.Principal] = i
	}
	if e.RequestsPerSecond <= 0 {
		report.Add("requestsPerSecond", "must be more than 0")
	} else if float64(e.Burst) < 1 {
		report.Add("burst", "must be at least 1")
	}
	if e.Concurrency < 1 || e.Concurrency > maxWorkers {
		report.Add("concurrency", "%d is out of range — use 1 to %d", e.Concurrency, maxWorkers)
	}
	if e.MaxAttempts < 1 || e.MaxAttempts > 50 {
		report.Add("maxAttempts", "%d is out of range — use 1 to 50", e.MaxAttempts)
	}
	if e.PageSize < 1 || e.PageSize > maxPage {
		report.Add("pageSize", "%d is out of range — use 1 to %d (the API maximum)", e.PageSize, maxPage)
	}
	if len(e.Repositories) == 0 {
		report.Add("repositories", "is empty, so no repository would ever be trimmed — remove the key to use the defaults, or add {match: \"**\"}")
	}
	for i := range e.Repositories {
		e.Repositories[i].validate(report, config.Index("repositories", i))
	}
	for i, g := range e.Manifests.Exclude {
		if _, err := config.GlobRegexp(g); err != nil {
			report.Add(config.Index("manifests.exclude", i), "%v", err)
		}
	}
}

func (r *RepoPolicy) validate(report *config.Report, p string) {
	switch {
	case r.Match == "" && r.Regex == "":
		report.Add(p, "give match (a glob such as team-a/** ) or regex")
	case r.Match != "" && r.Regex != "":
		report.Add(p, "set either match or regex, not both")
	case r.Match != "":
		if _, err := config.GlobRegexp(r.Match); err != nil {
			report.Add(p+".match", "%v", err)
		}
	default:
		if _, err := regexp.Compile(r.Regex); err != nil {
			report.Add(p+".regex", "%q does not compile: %v", r.Regex, err)
		}
	}
	if r.Limit < 1 {
		report.Add(p+".limit", "must be at least 1 — ECR's default is 10000 images per repository")
	}
	if r.HighWater <= 0 || r.HighWater > 1 {
		report.Add(p+".highWater", "%s is out of range — use a share of limit above 0%% and at most 100%%", r.HighWater)
	}
	if r.Target <= 0 || r.Target > r.HighWater {
		report.Add(p+".target", "%s must be above 0%% and at most highWater (%s) — trimming stops at target", r.Target, r.HighWater)
	}
	if r.KeepNewest < 0 {
		report.Add(p+".keepNewest", "%d is negative", r.KeepNewest)
	}
	for i, t := range r.KeepTags {
		if _, err := config.GlobRegexp(t); err != nil || t == "" {
			report.Add(config.Index(p+".keepTags", i), "%q is not a tag glob — write e.g. latest, v*, release-*", t)
		}
	}
	if r.KeepPulledWithin < 0 {
		report.Add(p+".keepPulledWithin", "must not be negative; 0 turns the rule off")
	}
	if r.UntaggedOlderThan < 0 {
		report.Add(p+".untaggedOlderThan", "must not be negative; 0 turns the rule off")
	}
}
