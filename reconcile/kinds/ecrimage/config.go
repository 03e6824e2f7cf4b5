package ecrimage

import (
	"math"
	"regexp"

	config "reclaim.dev/reclaim/configs"
)

// FromConfig makes the kind from the ecr section; nil without one. client
// is the ecr read's (Open), nil: plan only.
func FromConfig(cfg *config.Config, client any) *Kind {
	e := SectionOf(cfg)
	if e == nil {
		return nil
	}
	p := &Policy{PerGBMonth: cfg.Prices.ECRPerGBMonth, Safety: e.Safety, HeadroomWarning: e.HeadroomWarning.Fraction(), Parallel: e.Concurrency}
	for _, o := range e.OutOfScopePullers {
		if p.OutOfScopePullers == nil {
			p.OutOfScopePullers = map[string]string{}
		}
		p.OutOfScopePullers[o.Principal] = o.Reason
	}
	for _, r := range e.Repositories {
		rule := RepoRule{Name: r.Match, Limit: r.Limit, KeepNewest: r.KeepNewest,
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
	api, _ := client.(API)
	return &Kind{Policy: p, API: api}
}
