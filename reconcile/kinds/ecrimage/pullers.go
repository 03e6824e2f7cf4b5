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

// place is an AWS account and region.
type place struct{ account, region string }

// pullerCheck says whether reclaim reads who may pull from a registry, by
// account and region: the registry's own account and every account its
// registry's or repository's policy lets pull, in each of their regions.
// A region's pulls are seen when discovery lists its EKS clusters (or a
// configured cluster says it lives there) and its image consumers (ECS,
// Lambda, Batch) are read; an organization or anyone never are. An
// account's regions are its enabled regions when the run listed them
// (inventory.Regions), else the regions the run knows of it (its
// listings, consumers, configured clusters and registry). What reclaim
// does not read holds the trims of what it may pull, unless the puller is
// declared in ecr.outOfScopePullers.
type pullerCheck struct {
	fleet *inventory.Fleet
	// clusters are the places whose EKS clusters are listed or
	// configured; anywhere the accounts with a configured cluster that
	// does not say its region.
	clusters  map[place]bool
	anywhere  map[string]bool
	consumers map[place]bool
	// known are the regions the run knows of each account, for an
	// account whose regions were not listed.
	known    map[string][]string
	declared map[string]string
	// relied are the declarations a trim relied on, for the notices.
	relied map[string]bool
}

func newPullerCheck(snap *inventory.View, declared map[string]string) *pullerCheck {
	pc := &pullerCheck{fleet: snap.Fleet, clusters: map[place]bool{}, anywhere: map[string]bool{}, consumers: map[place]bool{},
		known: map[string][]string{}, declared: declared, relied: map[string]bool{}}
	know := func(p place) {
		if p.region != "" && !slices.Contains(pc.known[p.account], p.region) {
			pc.known[p.account] = append(pc.known[p.account], p.region)
		}
	}
	if f := snap.Fleet; f != nil {
		for _, l := range f.Listings {
			if l.Platform == inventory.EKS {
				account, region, _ := strings.Cut(l.Scope, "/")
				pc.clusters[place{account, region}] = true
				know(place{account, region})
			}
		}
		for _, m := range f.Members {
			if m.Configured && m.Where.Account != "" {
				if m.Where.Location == "" {
					pc.anywhere[m.Where.Account] = true
				}
				pc.clusters[place{m.Where.Account, m.Where.Location}] = true
				know(place{m.Where.Account, m.Where.Location})
			}
		}
	}
	for _, s := range ImageSourcesOf(snap) {
		switch s.SourceKind() {
		case "ecs", "lambda", "batch":
			scope := strings.TrimPrefix(s.Name, s.SourceKind()+":")
			account, region, _ := strings.Cut(scope, "/")
			pc.consumers[place{account, region}] = true
			know(place{account, region})
		}
	}
	for _, r := range RegistriesOf(snap) {
		know(place{r.Account, r.Region})
	}
	return pc
}

// regions are the regions account may pull from: its listed regions, or
// the ones the run knows of it; problem says why they are unknown.
func (pc *pullerCheck) regions(account string) (regions []string, problem string) {
	if l, ok := pc.fleet.RegionsOf(account); ok {
		if !l.Complete {
			return nil, l.Problem
		}
		return l.Regions, ""
	}
	return slices.Sorted(slices.Values(pc.known[account])), ""
}

// unreadOwn says which regions of a registry's own account reclaim does
// not read the clusters or consumers of, when the run listed the
// account's regions: a cluster or a service of the account in another
// region pulls from it as readily as one in the registry's. "" when it
// reads them all, or the account's regions were not listed (its
// registry's region is then guarded by its discovery scope).
func (pc *pullerCheck) unreadOwn(own string) string {
	if _, ok := pc.fleet.RegionsOf(own); !ok {
		return ""
	}
	return pc.unreadRegions(own, fmt.Sprintf("the registry's own account %s pulls from it", own))
}

// unread says which pullers (by is what named them: "its repository
// policy") reclaim does not read, and how to resolve it; "" when it reads
// them all. The registry's own account is unreadOwn's.
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
		default:
			if w := pc.unreadRegions(p, fmt.Sprintf("%s lets account %s pull", by, p)); w != "" {
				why = append(why, w+" — or declare it in ecr.outOfScopePullers with a reason")
			}
		}
	}
	return strings.Join(why, "; ")
}

// unreadRegions says which regions of account reclaim does not read the
// clusters or consumers of, after who (what lets it pull); "" when it
// reads them all.
func (pc *pullerCheck) unreadRegions(account, who string) string {
	regions, problem := pc.regions(account)
	if problem != "" {
		return fmt.Sprintf("%s, but its enabled regions could not be listed (%s), so a cluster or consumer of it anywhere may pull", who, problem)
	}
	var noCluster, noConsumer []string
	for _, r := range regions {
		if !pc.clusters[place{account, r}] && !pc.anywhere[account] {
			noCluster = append(noCluster, r)
		}
		if !pc.consumers[place{account, r}] {
			noConsumer = append(noConsumer, r)
		}
	}
	var miss []string
	switch {
	case len(regions) == 0:
		miss = append(miss, "no EKS cluster of it (add it to fleet.eks)", "no ECS, Lambda or Batch use of it (add it to ecr.consumers)")
	default:
		if len(noCluster) > 0 {
			miss = append(miss, fmt.Sprintf("no EKS cluster of it in %s (add the region to fleet.eks)", strings.Join(noCluster, ", ")))
		}
		if len(noConsumer) > 0 {
			miss = append(miss, fmt.Sprintf("no ECS, Lambda or Batch use of it in %s (add the region to ecr.consumers)", strings.Join(noConsumer, ", ")))
		}
	}
	if len(miss) == 0 {
		return ""
	}
	return fmt.Sprintf("%s, but reclaim reads %s", who, strings.Join(miss, " and "))
}

// guards are the source keys of who may pull from a registry of own: every
// EKS cluster of own and of the puller accounts, read or not, the
// discovery scopes of each of their regions (an unlisted one holds) and
// the listing of their regions; and every cluster reclaim did not read,
// whatever its platform (it may pull with any credentials).
func (pc *pullerCheck) guards(f *inventory.Fleet, own string, pullers []string) []string {
	if f == nil {
		return nil
	}
	accounts := []string{own}
	for _, p := range pullers {
		if p != own && p != anyone && !strings.HasPrefix(p, orgPrefix) {
			accounts = append(accounts, p)
		}
	}
	u := engine.Users{Members: f.EKSOf(accounts...)}
	for _, m := range f.Members {
		if m.State != inventory.MemberRead && m.State != inventory.MemberOutOfScope {
			u.Members = append(u.Members, m)
		}
	}
	for _, a := range accounts {
		if _, ok := f.RegionsOf(a); ok {
			u.Scopes = append(u.Scopes, inventory.Regions+" "+a)
		}
		regions, _ := pc.regions(a)
		for _, r := range regions {
			u.Scopes = append(u.Scopes, inventory.EKS+" "+a+"/"+r)
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
