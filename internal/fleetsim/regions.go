package fleetsim

import (
	"fmt"
	"slices"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// Multi-region pulls: with discovery on, reclaim lists each registry
// account's enabled regions (inventory.Regions), and a cluster or an
// ECS, Lambda or Batch consumer of the same account in another region
// pulls from the registry. Its EKS region is searched (fleet.eks) or not,
// and its consumers read (ecr.consumers) or not; the region listing may
// fail. What such a user runs is in use: reclaim must hold while any of it
// is unseen.

// remoteRegion is the other region of a registry account.
const remoteRegion = "us-west-2"

// setupRegions gives registry accounts their enabled regions, and some a
// second region with a consumer (read or not) and perhaps a cluster
// (discovered or not) running the account's images.
func (f *fleet) setupRegions() {
	w := f.w
	w.enabled = map[string][]string{}
	if w.mode != fleetOn {
		return
	}
	for _, a := range w.accounts {
		switch x := f.rng.Float64(); {
		case x < 0.5:
			w.enabled[a] = []string{ecrRegion, remoteRegion}
			fa := &foreign{account: a, region: remoteRegion, kind: pick(f, []string{"ecs", "lambda", "batch"}), read: f.chance(0.75), listed: f.chance(0.75)}
			w.remote = append(w.remote, fa)
			if fa.listed {
				w.eksScopes = append(w.eksScopes, a+"/"+remoteRegion)
			}
			if f.chance(0.6) {
				c := &cluster{name: fmt.Sprintf("usw2-%d", w.next()), home: home{platform: inventory.EKS, account: a, region: remoteRegion},
					projects: []string{"none"}, subnets: []string{"none"}, accounts: []string{"none"}}
				if fa.listed {
					c.state = pick(f, []string{inventory.MemberRead, inventory.MemberRead, inventory.MemberExcluded, inventory.MemberUnlisted})
				}
				if c.read() {
					w.clusters = append(w.clusters, c)
				} else {
					w.unseen = append(w.unseen, c)
				}
				for range 1 + f.rng.IntN(2) {
					f.remoteRef(c, a, func(r *imgRef) { c.refs = append(c.refs, r) })
				}
			}
			for range 1 + f.rng.IntN(3) {
				f.remoteRef(nil, a, func(r *imgRef) { fa.refs = append(fa.refs, r) })
			}
			f.stats.Faults[fmt.Sprintf("registry account in 2 regions, consumer read %v, region searched %v", fa.read, fa.listed)]++
		case x < 0.8:
			w.enabled[a] = []string{ecrRegion}
		}
	}
}

// mutateRegions changes what the other regions run between runs.
func (f *fleet) mutateRegions() {
	if len(f.w.remote) == 0 || !f.chance(0.3) {
		return
	}
	fa := pick(f, f.w.remote)
	if len(fa.refs) > 0 && f.chance(0.4) {
		i := f.rng.IntN(len(fa.refs))
		fa.refs = slices.Delete(fa.refs, i, i+1)
		return
	}
	f.remoteRef(nil, fa.account, func(r *imgRef) { fa.refs = append(fa.refs, r) })
}

// remoteRef is accountRef for a user in another region; mostly a service
// that has run for months, whose image ECR last saw pulled long ago
// (keepPulledWithin does not keep it).
func (f *fleet) remoteRef(c *cluster, account string, add func(*imgRef)) {
	before := map[*image]time.Time{}
	for _, r := range f.w.repos {
		for _, img := range r.images {
			before[img] = img.lastPull
		}
	}
	f.accountRef(c, account, add)
	if f.chance(0.7) {
		for img, t := range before {
			img.lastPull = t
		}
	}
}

// regionListings are the accounts' region listings; one may fail.
func (f *fleet) regionListings() []inventory.FleetListing {
	var out []inventory.FleetListing
	for _, a := range f.w.accounts {
		rs, ok := f.w.enabled[a]
		if !ok {
			continue
		}
		l := inventory.FleetListing{Platform: inventory.Regions, Scope: a, Complete: !f.rf.regions[a]}
		if l.Complete {
			l.Regions = slices.Clone(rs)
		} else {
			l.Problem = "ec2 DescribeRegions: RequestLimitExceeded"
		}
		out = append(out, l)
	}
	return out
}

// regionConsumers are the default consumers of the accounts whose regions
// are listed: the registry's region (nothing runs there outside
// Kubernetes) and the other region's, when read.
func (f *fleet) regionConsumers() []inventory.ImageSource {
	var out []inventory.ImageSource
	for _, a := range f.w.accounts {
		if _, ok := f.w.enabled[a]; !ok {
			continue
		}
		for _, k := range []string{"ecs", "lambda", "batch"} {
			out = append(out, inventory.ImageSource{Kind: k, Name: k + ":" + a + "/" + ecrRegion, Complete: true})
		}
	}
	for _, fa := range f.w.remote {
		if !fa.read {
			continue
		}
		name := fa.kind + ":" + fa.account + "/" + fa.region
		src := inventory.ImageSource{Kind: fa.kind, Name: name, Complete: true}
		for i, ref := range fa.refs {
			src.Images = append(src.Images, use(ref, fmt.Sprintf("%s/svc-%d", name, i)))
		}
		out = append(out, src)
		for _, k := range []string{"ecs", "lambda", "batch"} {
			if k != fa.kind {
				out = append(out, inventory.ImageSource{Kind: k, Name: k + ":" + fa.account + "/" + fa.region, Complete: true})
			}
		}
	}
	return out
}

// regionEvidence says what of account's regions reclaim did not see this
// run: the listing failed, or another region's consumers or clusters are
// not read.
func (f *fleet) regionEvidence(account string) string {
	if _, ok := f.w.enabled[account]; !ok {
		return ""
	}
	if f.rf.regions[account] {
		return "the regions of " + account + " could not be listed"
	}
	for _, fa := range f.w.remote {
		switch {
		case fa.account != account:
		case !fa.read:
			return "the consumers of " + account + " in " + fa.region + " are not read"
		case !fa.listed:
			return "the EKS clusters of " + account + " in " + fa.region + " are not searched"
		}
	}
	return ""
}
