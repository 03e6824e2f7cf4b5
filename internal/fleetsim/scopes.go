package fleetsim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
)

// The fleet's identity: where each cluster runs, what discovery lists, the
// inventory.Fleet the config makes of it (as inventory/fleet's Assemble
// does), and same-name clusters elsewhere: a cluster of another account,
// region or project that has a configured cluster's cloud name. Cloud
// evidence (a subnet's or an interface's cluster tag, a disk's cluster
// label) names a cluster of its own scope only.

// How the config makes the fleet.
const (
	fleetNil = iota // no Fleet: a snapshot from before discovery
	fleetOff        // discovery off: the configured clusters and declarations
	fleetOn         // discovery on
)

// selfManaged is the platform of Kubernetes on EC2 instances (kops,
// kubeadm): it tags its subnets, but no discovery lists it.
const selfManaged = "ec2"

// home is where a cluster runs: an EKS or self-managed cluster's account
// and region, a GKE cluster's project and location; platform "" is on
// premises, where no cloud evidence names it.
type home struct {
	platform          string
	account, region   string
	project, location string
}

// scope is the home's discovery scope: account/region, or the project.
func (h home) scope() string {
	if h.platform == inventory.GKE {
		return h.project
	}
	return h.account + "/" + h.region
}

// key is the scope as inventory.DiscoveryKey names it: "eks 1111/us-east-1".
func (h home) key() string { return h.platform + " " + h.scope() }

// in says whether the cluster runs in the scope of cloud evidence of
// platform (an EKS account/region, a GKE project).
func (h home) in(platform, scope string) bool {
	if platform == inventory.GKE {
		return h.platform == inventory.GKE && h.project == scope
	}
	return (h.platform == inventory.EKS || h.platform == selfManaged) && h.scope() == scope
}

// place is the home as a declaration states it.
func (h home) place() inventory.Place {
	if h.platform == inventory.GKE {
		return inventory.Place{Platform: inventory.GKE, Project: h.project, Location: h.location}
	}
	return inventory.Place{Platform: inventory.EKS, Account: h.account, Location: h.region}
}

func (c *cluster) cloudName() string {
	if c.cloud != "" {
		return c.cloud
	}
	return c.name
}

// read says whether the config reads it: configured, or discovered and read.
func (c *cluster) read() bool { return c.configured || c.state == inventory.MemberRead }

// outOfScope: declared out of scope, it protects nothing.
func (c *cluster) outOfScope() bool { return c.state == inventory.MemberOutOfScope }

func (w *world) all() []*cluster { return slices.Concat(w.clusters, w.unseen) }

func (w *world) configured(name string) *cluster {
	for _, c := range w.clusters {
		if c.configured && c.name == name {
			return c
		}
	}
	return nil
}

// owners are the clusters that cloud evidence of a scope names: those of
// that cloud name that run there (GKE's namesakes in two locations of a
// project: the evidence may be either's).
func (w *world) owners(platform, scope, name string) []*cluster {
	var out []*cluster
	for _, c := range w.all() {
		if c.cloudName() == name && c.home.in(platform, scope) {
			out = append(out, c)
		}
	}
	return out
}

func (w *world) listedScope(h home) bool {
	if w.mode != fleetOn {
		return false
	}
	switch h.platform {
	case inventory.EKS:
		return slices.Contains(w.eksScopes, h.scope())
	case inventory.GKE:
		return slices.Contains(w.gkeScopes, h.scope())
	}
	return false
}

// agrees says whether a declared place may be h: what it leaves out may
// be anything, and a region holds its zones.
func agrees(p inventory.Place, h home) bool {
	if p.Platform != "" && p.Platform != h.platform || p.Account != "" && p.Account != h.account || p.Project != "" && p.Project != h.project {
		return false
	}
	loc, reg := h.region, h.region
	if h.platform == inventory.GKE {
		loc, reg = h.location, gkeRegion(h.location)
	}
	return p.Location == "" || p.Location == loc || p.Location == reg
}

// rulesOut says whether a declared place rules out a scope: evidence there
// cannot name the declared cluster.
func rulesOut(p inventory.Place, platform, scope string) bool {
	if p.Platform != "" && p.Platform != platform {
		return true
	}
	if platform == inventory.GKE {
		return p.Project != "" && p.Project != scope
	}
	account, region, _ := strings.Cut(scope, "/")
	return p.Account != "" && p.Account != account || p.Location != "" && p.Location != region
}

func gkeRegion(location string) string {
	if strings.Count(location, "-") == 2 {
		return inventory.RegionOfZone(location)
	}
	return location
}

func vpcOf(account, region string) string { return "vpc-" + account[8:] + "-" + region }

// setupHomes draws where each configured cluster runs, what its entry says
// of it, and how the config makes the fleet.
func (f *fleet) setupHomes() {
	w := f.w
	switch x := f.rng.Float64(); {
	case x < 0.2:
		w.mode = fleetNil
	case x < 0.45:
		w.mode = fleetOff
	default:
		w.mode = fleetOn
	}
	w.regions = []string{ecrRegion}
	for _, c := range w.clusters {
		c.configured = true
		switch x := f.rng.Float64(); {
		case x < 0.4:
			c.home = home{platform: inventory.EKS, account: pick(f, w.accounts), region: ecrRegion}
		case x < 0.7:
			c.home = home{platform: inventory.GKE, project: pick(f, w.projects), location: pick(f, append([]string{region}, w.zones...))}
		default:
			continue // on premises: nothing to declare
		}
		switch x := f.rng.Float64(); {
		case x < 0.5:
			c.where = c.home.place()
		case x < 0.65:
			c.where = c.home.place()
			c.where.Location = ""
		}
	}
}

// setupTwins makes same-name clusters elsewhere, the discovery scopes, and
// each twin's use: interfaces of its subnets, labelled disks its PVs bind,
// images of its account. A twin no discovery lists is protected only by
// the scope of its evidence: made only where its configured namesake's
// declared place rules that scope out (else reclaim cannot tell them apart
// by design), or where discovery does not look.
func (f *fleet) setupTwins() {
	w := f.w
	var twins []*cluster
	for n := 0; w.mode != fleetNil && n < 2 && f.chance(0.45-0.15*float64(n)); n++ {
		var cs []*cluster
		for _, c := range w.clusters {
			if c.configured {
				cs = append(cs, c)
			}
		}
		c := pick(f, cs)
		t := &cluster{cloud: c.name}
		switch x := f.rng.Float64(); {
		case x < 0.3:
			var ps []string
			for _, p := range w.projects {
				if c.home.platform != inventory.GKE || p != c.home.project {
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 {
				continue
			}
			t.home = home{platform: inventory.GKE, project: pick(f, ps), location: pick(f, append([]string{region}, w.zones...))}
			if f.chance(0.6) && t.home.location != region {
				// GKE names are unique per location, not per project: a
				// namesake of t in another zone of its project. (Not the
				// region: a declaration of the regional cluster agrees
				// with every zone of it, and outOfScope matches by that.)
				var others []string
				for _, l := range w.zones {
					if l != t.home.location {
						others = append(others, l)
					}
				}
				if len(others) > 0 && !slices.ContainsFunc(twins, func(o *cluster) bool { return o.cloud == t.cloud && o.home.scope() == t.home.scope() }) {
					ns := &cluster{cloud: t.cloud, home: t.home}
					ns.home.location = pick(f, others)
					twins = append(twins, ns)
				}
			}
		default:
			t.home = home{platform: inventory.EKS, account: pick(f, w.accounts), region: ecrRegion}
			if x > 0.75 {
				t.home.platform = selfManaged
			}
			if f.chance(0.3) || c.home.platform == inventory.EKS && c.home.scope() == t.home.scope() {
				t.home.region = westRegion
			}
		}
		if slices.ContainsFunc(twins, func(o *cluster) bool { return o.cloud == t.cloud && o.home.place() == t.home.place() }) {
			continue
		}
		if t.home.region == westRegion && !slices.Contains(w.regions, westRegion) {
			w.regions = append(w.regions, westRegion)
		}
		twins = append(twins, t)
	}
	// Named as inventory/fleet's Assemble names what it did not
	// configure: same-name clusters of one scope each with its location.
	taken := map[string]bool{}
	for _, c := range w.clusters {
		taken[c.name] = true
	}
	namesakes := map[string]int{}
	for _, t := range twins {
		namesakes[t.home.platform+" "+t.home.scope()+" "+t.cloud]++
	}
	for _, t := range twins {
		t.name = inventory.MemberName(taken, t.cloud, t.home.place(), namesakes[t.home.platform+" "+t.home.scope()+" "+t.cloud] > 1)
	}
	if w.mode == fleetOn {
		for _, a := range w.accounts {
			for _, r := range w.regions {
				w.eksScopes = append(w.eksScopes, a+"/"+r)
			}
		}
		w.gkeScopes = slices.Clone(w.projects)
		if f.chance(0.08) { // a scope fleet.eks or fleet.gke leaves out
			all := append(slices.Clone(w.eksScopes), w.gkeScopes...)
			s := pick(f, all)
			w.eksScopes = slices.DeleteFunc(w.eksScopes, func(x string) bool { return x == s })
			w.gkeScopes = slices.DeleteFunc(w.gkeScopes, func(x string) bool { return x == s })
			f.stats.Faults["discovery scope unlisted"]++
		}
	}
	for _, t := range twins {
		c := w.configured(t.cloud)
		discovered := w.listedScope(t.home)
		platform := inventory.EKS
		if t.home.platform == inventory.GKE {
			platform = inventory.GKE
		}
		// Discovery that does not look in its scope holds all there.
		unlisted := w.mode == fleetOn && f.discoveryEvidence(platform, t.home.scope()) != ""
		if !discovered && !unlisted && !rulesOut(c.where, platform, t.home.scope()) {
			continue
		}
		if !discovered && !unlisted && namesakes[t.home.platform+" "+t.home.scope()+" "+t.cloud] > 1 {
			// Unlisted, a namesake of its scope is told from a declared
			// one by nothing: as with a configured one, by design.
			continue
		}
		switch x := f.rng.Float64(); {
		case x < 0.15:
			t.state = inventory.MemberOutOfScope
		case !discovered:
		case x < 0.45:
			t.state = inventory.MemberRead
		case x < 0.7:
			t.state = inventory.MemberExcluded
		default:
			t.state = inventory.MemberUnlisted
		}
		if namesakes[t.home.platform+" "+t.home.scope()+" "+t.cloud] > 1 {
			f.stats.Faults["same-name clusters in one project: "+orDefault(t.state, "unknown to reclaim")]++
		}
		how := map[string]string{inventory.EKS: "EKS", inventory.GKE: "GKE", selfManaged: "self-managed"}[t.home.platform]
		if !discovered {
			how += " undiscovered"
		}
		f.stats.Faults[fmt.Sprintf("same-name cluster elsewhere: %s, %s", how, orDefault(t.state, "unknown to reclaim"))]++
		f.tracef("same-name cluster %s (%s, discovered %v, state %q) of %s (home %+v, declared %+v)", t.name, t.home.key(), discovered, t.state, c.name, c.home, c.where)
		// What it may use: its scope's subnets, its project's disks, its
		// account's images.
		t.projects, t.subnets, t.accounts = []string{"none"}, []string{"none"}, []string{"none"}
		if t.state == inventory.MemberRead {
			w.clusters = append(w.clusters, t)
		} else {
			w.unseen = append(w.unseen, t)
		}
		switch t.home.platform {
		case inventory.GKE:
			t.projects = []string{t.home.project}
			for range 1 + f.rng.IntN(3) {
				f.twinDisk(t)
			}
			if f.chance(0.3) { // one it no longer uses
				f.twinDisk(t).users = nil
				t.pvs = t.pvs[:len(t.pvs)-1]
			}
		default:
			f.subnetIn(t.home.account, t.home.region)
			t.subnets = nil
			for _, s := range w.subnets {
				if s.account == t.home.account && s.region == t.home.region {
					t.subnets = append(t.subnets, s.id)
				}
			}
			if f.chance(0.6) {
				s := w.subnetByID(pick(f, t.subnets))
				s.tagged = append(s.tagged, t.cloud)
			}
			for range 1 + f.rng.IntN(3) {
				f.twinIface(t)
			}
			if discovered && t.home.platform == inventory.EKS {
				t.accounts = []string{t.home.account}
				for range f.rng.IntN(3) {
					f.accountRef(t, t.home.account, func(r *imgRef) { t.refs = append(t.refs, r) })
				}
			}
		}
	}
	// A configured EKS cluster tags a subnet of its own scope too: its
	// name there is its own.
	for _, c := range w.clusters {
		if c.configured && c.home.platform == inventory.EKS && f.chance(0.4) {
			s := f.subnetIn(c.home.account, c.home.region)
			s.tagged = append(s.tagged, c.name)
		}
	}
}

// subnetIn returns a subnet of account and region, made if none is.
func (f *fleet) subnetIn(account, region string) *subnet {
	var in []*subnet
	for _, s := range f.w.subnets {
		if s.account == account && s.region == region {
			in = append(in, s)
		}
	}
	if len(in) > 0 {
		return pick(f, in)
	}
	n := f.w.next()
	s := &subnet{id: fmt.Sprintf("subnet-%05d", n), account: account, region: region, octet: n % 250}
	f.w.subnets = append(f.w.subnets, s)
	return s
}

// twinIface makes an interface in one of t's subnets that carries t's
// cloud name in its own tags (the VPC CNI's, or the VPC resource
// controller's on a branch interface), and mostly a running pod of t that
// holds its address.
func (f *fleet) twinIface(t *cluster) *iface {
	s := f.w.subnetByID(pick(f, t.subnets))
	inst := fmt.Sprintf("i-%08x", f.w.next())
	n := &iface{id: fmt.Sprintf("eni-%08x", f.w.next()), account: s.account, region: s.region, subnet: s.id, status: "available", typ: "interface",
		tags: map[string]string{cniTag: inst, inventory.InterfaceClusterTag: t.cloud}, desc: cniDesc + inst, ips: []string{f.ip(s)}}
	if f.chance(0.5) {
		n.typ, n.desc = "branch", branchDescPf
		n.tags = map[string]string{branchTag: branchVal, inventory.SubnetClusterTagPrefix + t.cloud: "owned"}
	}
	f.w.ifaces = append(f.w.ifaces, n)
	if f.chance(0.75) {
		f.twinPod(t).ips = []string{n.ips[0]}
	}
	return n
}

func (f *fleet) twinPod(t *cluster) *wpod {
	if t.read() {
		return f.newPod(t, batchNS, fmt.Sprintf("svc-%d", f.w.next()), nil, "Running")
	}
	p := &wpod{ns: "ml", name: fmt.Sprintf("train-%d", f.w.next()), uid: f.uid(), phase: "Running", created: f.now}
	t.wpods = append(t.wpods, p)
	return p
}

// twinDisk makes a disk of t's project that t's CSI driver labelled with
// its cloud name, and t's PV that binds it.
func (f *fleet) twinDisk(t *cluster) *disk {
	d := f.newDisk(f.diskKey(t.home.project), f.now.Add(-time.Duration(f.rng.IntN(100))*time.Hour))
	d.labels[ownerLabel], d.labels[gcedisk.ClusterLabel] = "true", t.cloud
	t.pvs = append(t.pvs, &pv{name: "pv-" + d.key.Name, disk: d.key, retain: true})
	if f.chance(0.5) {
		d.users = []string{f.instance(d.key)}
	}
	return d
}

// mutateTwins changes what same-name clusters use between runs.
func (f *fleet) mutateTwins() {
	var twins []*cluster
	for _, c := range f.w.all() {
		if c.cloud != "" {
			twins = append(twins, c)
		}
	}
	if len(twins) == 0 || !f.chance(0.4) {
		return
	}
	t := pick(f, twins)
	switch {
	case t.home.platform == inventory.GKE && f.chance(0.5):
		f.twinDisk(t)
	case t.home.platform == inventory.GKE:
		if len(t.pvs) > 0 { // its PV released: the disk is its no longer
			i := f.rng.IntN(len(t.pvs))
			if d := f.w.diskAt(t.pvs[i].disk); d != nil && len(d.users) > 0 {
				d.users, d.lastDetach = nil, f.now
			}
			t.pvs = slices.Delete(t.pvs, i, i+1)
		}
	case f.chance(0.5):
		f.twinIface(t)
	default: // a pod that held an address is gone
		i := slices.IndexFunc(t.wpods, func(p *wpod) bool { return len(p.ips) > 0 && p.phase == "Running" })
		if i < 0 {
			return
		}
		if t.read() {
			f.removePod(t, t.wpods[i], false)
		} else {
			t.wpods = slices.Delete(t.wpods, i, i+1)
		}
	}
}

// assemble makes this run's fleet as inventory/fleet's Assemble does,
// from the truth and this run's discovery faults: the configured clusters,
// joined to what discovery lists of them; each other listed cluster read,
// excluded, not in the config, declared out of scope, or in conflict with
// the configured one of its name (unjoined, and its declared place, if
// any, agrees): then neither is read completely. A discovered cluster the
// config reads that is not listed or in conflict is not read this run.
func (f *fleet) assemble() {
	w := f.w
	f.membership = nil
	if w.mode == fleetNil {
		return
	}
	fl := &inventory.Fleet{Discovery: w.mode == fleetOn}
	at := map[*cluster]int{}
	for i, c := range w.clusters {
		if c.configured {
			at[c] = len(fl.Members)
			fl.Members = append(fl.Members, inventory.FleetMember{Name: c.name, Configured: true, State: inventory.MemberRead,
				Rule: fmt.Sprintf("clusters[%d]", i), Where: c.where, CloudName: c.name})
		}
	}
	listed := map[*cluster]bool{}
	var order []*cluster
	if w.mode == fleetOn {
		scopes := map[string][]string{inventory.EKS: w.eksScopes, inventory.GKE: w.gkeScopes}
		for _, platform := range []string{inventory.EKS, inventory.GKE} {
			for _, s := range scopes[platform] {
				key := platform + " " + s
				l := inventory.FleetListing{Platform: platform, Scope: s, Complete: !f.rf.listings[key]}
				if !l.Complete {
					l.Problem = "ListClusters page 2: ThrottlingException: Rate exceeded"
				}
				for _, c := range w.all() {
					if c.home.platform != platform || c.home.scope() != s || !l.Complete && f.chance(0.4) {
						continue
					}
					l.Clusters = append(l.Clusters, fleetCluster(c))
					listed[c] = true
					order = append(order, c)
				}
				fl.Listings = append(fl.Listings, l)
			}
		}
		fl.Listings = append(fl.Listings, f.regionListings()...)
	}
	for _, c := range order { // the same API server: the configured cluster
		if c.configured {
			m := &fl.Members[at[c]]
			m.Cloud, m.Discovered = fleetCluster(c), true
		}
	}
	for _, c := range order {
		if c.configured {
			continue
		}
		m := inventory.FleetMember{Name: c.name, Cloud: fleetCluster(c), Discovered: true, State: c.state}
		switch c.state {
		case inventory.MemberRead:
			m.Rule = "discovered in " + c.home.key()
		case inventory.MemberExcluded:
			m.Rule = `fleet.exclude[0] "*"`
		case inventory.MemberUnlisted:
			m.Rule = "fleet.readDiscovered is false"
		case inventory.MemberOutOfScope:
			// A live cluster is covered only by a declaration of its
			// platform, account or project, location, name and endpoint.
			m.Rule, m.Reason = "fleet.outOfScope[0]", "another team's cluster"
		}
		if o := w.configured(c.cloudName()); o != nil && !listed[o] && (o.where == inventory.Place{} || agrees(o.where, c.home)) {
			m.State, m.Rule, m.Reason = inventory.MemberConflict, "clusters[] by name", fmt.Sprintf("its name %q is also that of a configured cluster reclaim cannot tell it from", o.name)
			if f.rf.clusters[o.name] == "" {
				f.rf.clusters[o.name] = "conflict"
			}
			f.stats.Faults["same-name cluster in conflict"]++
		}
		fl.Members = append(fl.Members, m)
	}
	state := map[string]string{}
	taken := map[string]bool{}
	for _, m := range fl.Members {
		state[m.Name], taken[m.Name] = m.State, true
	}
	for _, c := range w.all() {
		switch {
		case c.state == inventory.MemberRead && (!listed[c] || state[c.name] != inventory.MemberRead):
			f.rf.clusters[c.name] = "not read"
		case c.outOfScope() && !listed[c]:
			// A declaration no listing matched answers for its place.
			fl.Members = append(fl.Members, inventory.FleetMember{Name: inventory.MemberName(taken, c.cloudName(), c.home.place(), false), State: inventory.MemberOutOfScope,
				Rule: "fleet.outOfScope[0]", Reason: "another team's cluster", Where: c.home.place(), CloudName: c.cloudName()})
		}
	}
	fl.SortMembers()
	f.membership = fl
	if traceOn {
		for _, m := range fl.Members {
			f.tracef("fleet member %s: %s (%s %s) where %+v", m.Name, m.State, m.Cloud.Platform, m.Cloud.Scope(), m.Where)
		}
	}
}

// discoveredReach is what reclaim reads a discovered cluster for, as
// inventory/fleet's discoveredTarget says: a GKE cluster references its own
// project's disks; an EKS cluster may pull from any account and reference
// any project, and uses the subnets of its VPC (any, when none is listed).
func (f *fleet) discoveredReach(c *cluster) (projects, accounts, subnets []string) {
	if c.home.platform == inventory.GKE {
		return []string{c.home.project}, nil, nil
	}
	for _, s := range f.w.subnets {
		if s.account == c.home.account && s.region == c.home.region {
			subnets = append(subnets, s.id)
		}
	}
	return nil, nil, subnets
}

// twinIn says whether a same-name cluster runs in scope.
func (w *world) twinIn(platform, scope string) bool {
	return slices.ContainsFunc(w.all(), func(c *cluster) bool { return c.cloud != "" && c.home.in(platform, scope) })
}

// fleetCluster is what discovery lists of c.
func fleetCluster(c *cluster) inventory.FleetCluster {
	h := c.home
	fc := inventory.FleetCluster{Name: c.cloudName(), Platform: h.platform, Status: "ACTIVE"}
	if h.platform == inventory.GKE {
		fc.Project, fc.Location, fc.Network, fc.Status = h.project, h.location, "default", "RUNNING"
		fc.ID = fmt.Sprintf("projects/%s/locations/%s/clusters/%s", h.project, h.location, fc.Name)
	} else {
		fc.Account, fc.Location, fc.Network = h.account, h.region, vpcOf(h.account, h.region)
		fc.ID = fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", h.region, h.account, fc.Name)
	}
	fc.Endpoint = fmt.Sprintf("https://%x.example", len(fc.ID)*7919+len(c.name))
	return fc
}

// unread says why reclaim did not read c completely this run, or "": a
// cluster it reads with a fault, one it never reads; a cluster declared
// out of scope needs no reading.
func (f *fleet) unread(c *cluster) string {
	switch {
	case c.outOfScope():
		return ""
	case c.read():
		if why := f.rf.clusters[c.name]; why != "" {
			return "cluster " + c.name + " " + why
		}
		return ""
	}
	return "cluster " + c.name + " was never read"
}

// discoveryEvidence says why discovery may hide a cluster of a scope this
// run, or "".
func (f *fleet) discoveryEvidence(platform, scope string) string {
	key := platform + " " + scope
	switch {
	case f.w.mode != fleetOn:
		return ""
	case platform == inventory.EKS && !slices.Contains(f.w.eksScopes, scope), platform == inventory.GKE && !slices.Contains(f.w.gkeScopes, scope):
		return "discovery does not look in " + key
	case f.rf.listings[key]:
		return "discovery of " + key + " was incomplete"
	}
	return ""
}

// scopeEvidence: with discovery on, what of an EKS scope (an interface's)
// or a GKE project (a disk's) discovery may hide, or lists but reclaim did
// not read completely: every such cluster may use what is there.
func (f *fleet) scopeEvidence(platform, scope string) string {
	if f.w.mode != fleetOn {
		return ""
	}
	if why := f.discoveryEvidence(platform, scope); why != "" {
		return why
	}
	for _, c := range f.w.all() {
		if c.home.platform == platform && c.home.scope() == scope {
			if why := f.unread(c); why != "" {
				return why + " (discovery lists it in " + scope + ")"
			}
		}
	}
	return ""
}

// namedEvidence: the cluster that cloud evidence of a scope names, if
// reclaim did not read it completely.
func (f *fleet) namedEvidence(platform, scope, name string) string {
	cs := f.w.owners(platform, scope, name)
	if len(cs) == 0 {
		return "evidence in " + scope + " names " + name + ", which nobody runs there"
	}
	for _, c := range cs {
		if why := f.unread(c); why != "" {
			return why + " (named " + name + " by evidence in " + scope + ")"
		}
	}
	return ""
}

// tagged are the clusters an interface's own tags name.
func tagged(tags map[string]string) []string {
	var out []string
	for k, v := range tags {
		if name, ok := strings.CutPrefix(k, inventory.SubnetClusterTagPrefix); ok {
			out = append(out, name)
		} else if k == inventory.InterfaceClusterTag {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
