package fleetsim

import (
	"fmt"
	"slices"
	"strings"

	"reclaim.dev/reclaim/inventory"
)

// Who may pull: repository and registry policies that let accounts outside
// the fleet (documented example ids), an organization or anyone pull. What
// a puller runs is protected unless every principal that lets it pull is
// declared out of scope (ecr.outOfScopePullers): then the user accepted it.

var (
	foreignAccounts = []string{"444455556666", "777788889999"}
	orgID           = "o-a1b2c3d4e5" // its members: the foreign accounts
	orgPrincipal    = "org:" + orgID
)

// foreign is an account outside the fleet that a policy lets pull: what
// its ECS tasks, Lambda functions or Batch jobs run (read when
// ecr.consumers names it), and its EKS clusters in ecrRegion (discovered
// when fleet.eks looks there).
type foreign struct {
	account string
	// region is where it runs ("": ecrRegion); one of the fleet's own
	// accounts in another region is one of world.remote.
	region string
	kind   string // ecs, lambda or batch
	read   bool
	listed bool
	refs   []*imgRef
}

func (w *world) foreignOf(account string) *foreign {
	for _, fa := range w.foreign {
		if fa.account == account {
			return fa
		}
	}
	return nil
}

// pullersOf are who r's and its registry's policies let pull.
func (w *world) pullersOf(r *repo) []string {
	return slices.Concat(r.pullers, w.regPullers[r.key.Account])
}

func covers(principal, account string) bool {
	return principal == account || principal == "*" || principal == orgPrincipal && slices.Contains(foreignAccounts, account)
}

func (w *world) isDeclared(principal string) bool {
	_, ok := w.declared[strings.TrimPrefix(principal, "org:")]
	return ok
}

// may says whether account may pull from r.
func (w *world) may(account string, r *repo) bool {
	return account == r.key.Account || slices.ContainsFunc(w.pullersOf(r), func(p string) bool { return covers(p, account) })
}

// protected says whether what account pulls from r is protected: its own
// registry, or a principal that lets it pull is not declared out of scope.
func (w *world) protected(account string, r *repo) bool {
	return account == r.key.Account || slices.ContainsFunc(w.pullersOf(r), func(p string) bool { return covers(p, account) && !w.isDeclared(p) })
}

// protects says whether c's use of r's images is protected: a configured
// cluster's always (reclaim reads it), a discovered one's as its account's.
func (w *world) protects(c *cluster, r *repo) bool {
	switch {
	case c.outOfScope():
		return false
	case c.configured:
		return true
	}
	return w.protected(c.home.account, r)
}

// readsPuller says whether reclaim reads an account's pulls: discovery
// lists its EKS clusters and ecr.consumers reads it.
func (w *world) readsPuller(account string) bool {
	fa := w.foreignOf(account)
	return fa != nil && fa.read && fa.listed
}

// setupPullers lets foreign principals pull from some repositories or a
// registry, declares some, and gives the accounts they let pull what they
// run: a consumer (read or not) and perhaps an EKS cluster (discovered and
// read or not, or not discovered).
func (f *fleet) setupPullers() {
	w := f.w
	w.regPullers = map[string][]string{}
	w.declared = map[string]string{}
	if !f.chance(0.5) {
		return
	}
	for range 1 + f.rng.IntN(2) {
		p := pick(f, []string{foreignAccounts[0], foreignAccounts[1], foreignAccounts[0], orgPrincipal, "*"})
		on := "repository"
		if f.chance(0.3) {
			a := pick(f, w.accounts)
			if slices.Contains(w.regPullers[a], p) {
				continue
			}
			w.regPullers[a] = append(w.regPullers[a], p)
			on = "registry"
		} else {
			r := pick(f, w.repos)
			if slices.Contains(r.pullers, p) {
				continue
			}
			r.pullers = append(r.pullers, p)
		}
		kind := "account"
		switch p {
		case orgPrincipal:
			kind = "organization"
		case "*":
			kind = "anyone"
		}
		if f.chance(0.3) {
			w.declared[strings.TrimPrefix(p, "org:")] = "a vendor's CI pulls release images only"
		}
		// Who it lets pull runs images: the account, or one of the
		// organization (or of anyone).
		account := p
		if kind != "account" {
			account = pick(f, foreignAccounts)
		}
		fa := w.foreignOf(account)
		if fa == nil {
			fa = &foreign{account: account, kind: pick(f, []string{"ecs", "lambda", "batch"}), read: f.chance(0.65), listed: w.mode == fleetOn && f.chance(0.75)}
			w.foreign = append(w.foreign, fa)
			if fa.listed {
				w.eksScopes = append(w.eksScopes, account+"/"+ecrRegion)
			}
			if f.chance(0.75) {
				f.foreignCluster(fa)
			}
		}
		for range 1 + f.rng.IntN(3) {
			f.accountRef(nil, account, func(r *imgRef) { fa.refs = append(fa.refs, r) })
		}
		status := "unread"
		switch {
		case w.isDeclared(p):
			status = "declared"
		case kind == "account" && w.readsPuller(p):
			status = "read"
		}
		f.stats.Faults[fmt.Sprintf("foreign puller %s: %s on its %s policy", status, kind, on)]++
		f.tracef("puller %s on a %s policy, declared %v; account %+v", p, on, w.isDeclared(p), *fa)
	}
	if len(w.declared) > 0 {
		f.imgPol.OutOfScopePullers = w.declared
	}
}

// foreignCluster makes an EKS cluster of a foreign account: discovered
// when fleet.eks lists the account (read, excluded or not in the config),
// else one reclaim does not know.
func (f *fleet) foreignCluster(fa *foreign) {
	c := &cluster{name: fmt.Sprintf("wl-%d", f.w.next()), home: home{platform: inventory.EKS, account: fa.account, region: ecrRegion},
		projects: []string{"none"}, subnets: []string{"none"}, accounts: []string{"none"}}
	if fa.listed {
		c.state = pick(f, []string{inventory.MemberRead, inventory.MemberExcluded, inventory.MemberUnlisted})
	}
	if c.read() {
		f.w.clusters = append(f.w.clusters, c)
	} else {
		f.w.unseen = append(f.w.unseen, c)
	}
	for range 1 + f.rng.IntN(2) {
		f.accountRef(c, fa.account, func(r *imgRef) { c.refs = append(c.refs, r) })
	}
}

// accountRef makes a reference, by digest or tag, to an image of a
// repository account may pull from, and adds it.
func (f *fleet) accountRef(c *cluster, account string, add func(*imgRef)) {
	var can []*repo
	for _, r := range f.w.repos {
		if f.w.may(account, r) && len(r.images) > 0 {
			can = append(can, r)
		}
	}
	if len(can) == 0 {
		return
	}
	r := pick(f, can)
	img := pick(f, r.images)
	ref := &imgRef{repo: r.key, digest: img.digest}
	if len(img.tags) > 0 && f.chance(0.5) {
		ref.tag, ref.digest = pick(f, img.tags), ""
	}
	add(ref)
	img.lastPull = f.now
}

// mutatePullers changes what foreign accounts run between runs.
func (f *fleet) mutatePullers() {
	if len(f.w.foreign) == 0 || !f.chance(0.4) {
		return
	}
	fa := pick(f, f.w.foreign)
	if len(fa.refs) > 0 && f.chance(0.4) {
		i := f.rng.IntN(len(fa.refs))
		fa.refs = slices.Delete(fa.refs, i, i+1)
		return
	}
	f.accountRef(nil, fa.account, func(r *imgRef) { fa.refs = append(fa.refs, r) })
}

// consumers are the image sources of the foreign accounts ecr.consumers
// reads; an incomplete one misses some.
func (f *fleet) consumers() []inventory.ImageSource {
	var out []inventory.ImageSource
	for _, fa := range f.w.foreign {
		if !fa.read {
			continue
		}
		name := fa.kind + ":" + fa.account + "/" + ecrRegion
		src := inventory.ImageSource{Kind: fa.kind, Name: name, Complete: !f.rf.consumers[fa.account]}
		if !src.Complete {
			src.Problems = []string{"ListTaskDefinitions page 2: ThrottlingException: Rate exceeded"}
		}
		for i, ref := range fa.refs {
			if !src.Complete && f.chance(0.5) {
				continue
			}
			src.Images = append(src.Images, use(ref, fmt.Sprintf("%s/app-%d", name, i)))
		}
		out = append(out, src)
	}
	return out
}

// pullerEvidence says which evidence of who may pull from r reclaim did
// not have this run: a principal it cannot read that is not declared, the
// listing or a cluster of an account it reads.
func (f *fleet) pullerEvidence(r *repo) string {
	w := f.w
	if f.rf.regPolicy[r.key.Account] {
		return "the registry policy of " + r.key.Account + " could not be read"
	}
	for _, p := range w.pullersOf(r) {
		if p == r.key.Account || w.isDeclared(p) {
			continue
		}
		if p == "*" || p == orgPrincipal || !w.readsPuller(p) {
			return "puller " + p + " is not read and not declared"
		}
		if why := f.accountEvidence(p); why != "" {
			return "puller " + why
		}
	}
	for _, fa := range w.foreign {
		if fa.read && f.rf.consumers[fa.account] {
			return "the " + fa.kind + " consumer of " + fa.account + " was incomplete"
		}
	}
	return ""
}

// accountEvidence: with discovery on, an EKS listing of account that
// failed, or a cluster it lists that reclaim did not read completely.
func (f *fleet) accountEvidence(account string) string {
	if f.w.mode != fleetOn {
		return ""
	}
	for _, s := range f.w.eksScopes {
		if strings.HasPrefix(s, account+"/") {
			if why := f.discoveryEvidence(inventory.EKS, s); why != "" {
				return why
			}
		}
	}
	for _, c := range f.w.all() {
		if c.home.platform == inventory.EKS && c.home.account == account && f.w.listedScope(c.home) {
			if why := f.unread(c); why != "" {
				return why + " (an EKS cluster of " + account + ")"
			}
		}
	}
	return ""
}
