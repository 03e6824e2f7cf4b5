package app

import (
	"context"
	"math"
	"regexp"

	"reclaim.dev/reclaim/config"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/manifests"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/reconcile"
)

// RegistryOptions turns the ecr section into one client option set per registry.
func RegistryOptions(cfg *config.Config) []ecr.Options {
	e := cfg.ECR
	out := make([]ecr.Options, 0, len(e.Registries))
	for _, r := range e.Registries {
		out = append(out, ecr.Options{Account: r.Account, Region: r.Region, Profile: r.Profile, RoleARN: r.RoleARN,
			ExternalID: r.ExternalID, Endpoint: e.Endpoint, PageSize: int32(e.PageSize), RequestsPerSecond: e.RequestsPerSecond,
			Burst: e.Burst, MaxAttempts: e.MaxAttempts, Concurrency: e.Concurrency, ProtectTag: e.ProtectTag,
			UserAgent: "reclaim/" + Version})
	}
	return out
}

// ImagePolicyFrom turns the validated ecr section into the planner's policy;
// nil without one.
func ImagePolicyFrom(cfg *config.Config) *reconcile.ImagePolicy {
	e := cfg.ECR
	if e == nil {
		return nil
	}
	p := &reconcile.ImagePolicy{MinAge: e.MinAge.Std(), Grace: e.Grace.Std(), MaxDeletes: e.MaxDeletesPerRun,
		MaxDeletePercent: e.MaxDeletePercent.Fraction(), BreakerCandidates: e.BreakerCandidates, HeadroomWarning: e.HeadroomWarning.Fraction()}
	for _, r := range e.Repositories {
		rule := reconcile.RepoRule{Name: r.Match, Limit: r.Limit, KeepNewest: r.KeepNewest,
			HighWater:        int(math.Floor(r.HighWater.Fraction() * float64(r.Limit))),
			Target:           int(math.Floor(r.Target.Fraction() * float64(r.Limit))),
			KeepPulledWithin: r.KeepPulledWithin.Std(), UntaggedOlderThan: r.UntaggedOlderThan.Std(), Protect: r.Protect}
		if r.Regex != "" {
			rule.Name, rule.Match = "regex "+r.Regex, regexp.MustCompile(r.Regex) // validated by config
		} else {
			rule.Match, _ = config.GlobRegexp(r.Match)
		}
		for _, t := range r.KeepTags {
			re, _ := config.GlobRegexp(t)
			rule.KeepTags = append(rule.KeepTags, re)
		}
		p.Repos = append(p.Repos, rule)
	}
	return p
}

// ManifestSources reads every configured manifest directory.
func ManifestSources(cfg *config.Config) func(ctx context.Context) []inventory.ImageSource {
	m := cfg.ECR.Manifests
	return func(ctx context.Context) []inventory.ImageSource {
		out := make([]inventory.ImageSource, 0, len(m.Dirs))
		for _, dir := range m.Dirs {
			out = append(out, manifests.Read(ctx, dir, manifests.Options{Exclude: m.Exclude}))
		}
		return out
	}
}
