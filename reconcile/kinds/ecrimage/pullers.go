package ecrimage

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Principals a policy may name besides accounts (as the ECR provider
// reads them).
const (
	anyone    = "*"
	orgPrefix = "org:"
)

// pullerCheck says whether reclaim reads who a repository's or registry's
// policy lets pull: an account's pulls are seen when discovery lists its
// EKS clusters (or a configured cluster says it lives there) and an image
// consumer of it is read; an organization or anyone never are. A puller
// reclaim does not read holds the trims of what it may pull, unless it is
// declared in ecr.outOfScopePullers.
type pullerCheck struct {
	clusters  map[string]bool
	consumers map[string]bool
	declared  map[string]string
	// relied are the declarations a trim relied on, for the notices.
	relied map[string]bool
}

func newPullerCheck(snap *inventory.Snapshot, declared map[string]string) *pullerCheck {
	pc := &pullerCheck{clusters: map[string]bool{}, consumers: map[string]bool{}, declared: declared, relied: map[string]bool{}}
	if f := snap.Fleet; f != nil {
		for _, l := range f.Listings {
			if l.Platform == inventory.EKS {
				account, _, _ := strings.Cut(l.Scope, "/")
				pc.clusters[account] = true
			}
		}
		for _, m := range f.Members {
			if m.Configured && m.Where.Account != "" {
				pc.clusters[m.Where.Account] = true
			}
		}
	}
	for _, s := range ImageSourcesOf(snap) {
		switch s.SourceKind() {
		case "ecs", "lambda", "batch":
			scope := strings.TrimPrefix(s.Name, s.SourceKind()+":")
			account, _, _ := strings.Cut(scope, "/")
			pc.consumers[account] = true
		}
	}
	return pc
}

// unread says which pullers (by is what named them: "its repository
// policy") reclaim does not read, and how to resolve it; "" when it reads
// them all. The registry's own account is the registry's business.
func (pc *pullerCheck) unread(own string, pullers []string, by string) string {
	var why []string
	for _, p := range pullers {
		if p == own {
			continue
		}
		if _, ok := pc.declared[strings.TrimPrefix(p, orgPrefix)]; ok {
			pc.relied[strings.TrimPrefix(p, orgPrefix)] = true
			continue
		}
		switch {
		case p == anyone:
			why = append(why, by+" lets anyone pull, and reclaim cannot read everyone's use: declare \"*\" in ecr.outOfScopePullers with a reason, or narrow the policy")
		case strings.HasPrefix(p, orgPrefix):
			why = append(why, fmt.Sprintf("%s lets every account of organization %s pull, and reclaim cannot list them: declare %s in ecr.outOfScopePullers with a reason (once fleet.eks and ecr.consumers cover its accounts)", by, strings.TrimPrefix(p, orgPrefix), strings.TrimPrefix(p, orgPrefix)))
		case !pc.clusters[p] || !pc.consumers[p]:
			var miss []string
			if !pc.clusters[p] {
				miss = append(miss, "no EKS cluster of it (add it to fleet.eks)")
			}
			if !pc.consumers[p] {
				miss = append(miss, "no ECS, Lambda or Batch use of it (add it to ecr.consumers)")
			}
			why = append(why, fmt.Sprintf("%s lets account %s pull, but reclaim reads %s — or declare it in ecr.outOfScopePullers with a reason", by, p, strings.Join(miss, " and ")))
		}
	}
	return strings.Join(why, "; ")
}

// guards are the source keys of the pullers' clusters: every EKS cluster
// of a puller account, read or not, and its discovery scopes.
func (pc *pullerCheck) guards(f *inventory.Fleet, own string, pullers []string) []string {
	var accounts []string
	for _, p := range pullers {
		if p != own && p != anyone && !strings.HasPrefix(p, orgPrefix) {
			accounts = append(accounts, p)
		}
	}
	if len(accounts) == 0 || f == nil {
		return nil
	}
	u := engine.Users{Members: f.EKSOf(accounts...)}
	for _, l := range f.Listings {
		account, _, _ := strings.Cut(l.Scope, "/")
		if l.Platform == inventory.EKS && slices.Contains(accounts, account) {
			u.Scopes = append(u.Scopes, inventory.EKS+" "+l.Scope)
		}
	}
	return u.Keys(f)
}

// notices repeat each declaration a trim relied on.
func (pc *pullerCheck) notices() []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(pc.relied)) {
		out = append(out, fmt.Sprintf("puller %s is declared out of scope (ecr.outOfScopePullers): %s — what it pulls from ECR is not protected", p, pc.declared[p]))
	}
	return out
}
