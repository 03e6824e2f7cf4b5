// Package fleet is how a run's fleet is put together: the configured
// clusters and the discovered ones joined by identity (API server, CA,
// declared place), never by name alone; the out-of-scope declarations;
// and the targets the discovered clusters are read with. The wiring
// (internal/app) runs the discoverers and reads what Assemble plans.
package fleet

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"golang.org/x/oauth2"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
)

// Plan is the fleet of a run, and the discovered clusters to read.
type Plan struct {
	Fleet inventory.Fleet
	Read  []kube.Target
	// Conflicts are the configured clusters whose name a discovered
	// cluster shares without their identities agreeing: read, but held,
	// with what collides and how to resolve it.
	Conflicts map[string]string
}

// Assemble joins the configured clusters, the discovery listings and
// the out-of-scope declarations into the run's fleet, by identity, never by
// name alone: a discovered cluster is the configured one with the same API
// server (or CA), else the one with its cloud name whose API server or
// declared place agrees. A same-name pair that disagrees, or cannot be
// told apart, is a conflict: the discovered cluster is not read, the
// configured one is read but held, and both say why. Other discovered
// clusters are read (with a token from their discoverer), excluded by a
// rule, or declared out of scope by identity. discovers says whether the
// fleet is discovered (else it is the config's); reads are the shared
// reads the kinds that are on rely on (the wiring's Modules.Reads). apis
// maps a configured cluster's name to its API server, where it could be
// read. networks are the EC2 networks the run listed: a discovered EKS
// cluster may use any subnet of its VPC.
func Assemble(cfg *config.Config, reads map[string]bool, discovers bool, ds []Discoverer, listings []inventory.FleetListing, apis map[string]APIServer, networks []inventory.NetworkListing, now time.Time) Plan {
	a := &assembly{cfg: cfg, reads: reads, ds: ds, apis: apis, networks: networks, now: now, taken: map[string]bool{},
		f: inventory.Fleet{Discovery: discovers, Listings: listings}, plan: Plan{Conflicts: map[string]string{}}}
	a.configured()
	joined := a.joinByAPI(listings)
	// Same-name clusters of one scope (GKE names are unique per location,
	// not per project) are each named with their location, whatever the
	// order discovery lists them in.
	a.namesakes = map[string]int{}
	for _, l := range listings {
		for _, c := range l.Clusters {
			a.namesakes[namesakeKey(c)]++
		}
	}
	for li, l := range listings {
		for ci, c := range l.Clusters {
			if !joined[li][ci] {
				a.discovered(li, c)
			}
		}
	}
	a.declared()
	a.f.SortMembers()
	a.plan.Fleet = a.f
	return a.plan
}

// assembly is the fleet as Assemble puts it together.
type assembly struct {
	cfg       *config.Config
	reads     map[string]bool
	ds        []Discoverer
	apis      map[string]APIServer
	networks  []inventory.NetworkListing
	now       time.Time
	f         inventory.Fleet
	plan      Plan
	taken     map[string]bool // members' names
	namesakes map[string]int  // discovered clusters by namesakeKey
}

// configured makes a member of each configured cluster.
func (a *assembly) configured() {
	for i, cl := range a.cfg.Clusters {
		a.taken[cl.Name] = true
		a.f.Members = append(a.f.Members, inventory.FleetMember{Name: cl.Name, Configured: true, State: inventory.MemberRead,
			Rule: fmt.Sprintf("clusters[%d]", i), Where: PlaceOf(cl), CloudName: cmp.Or(cl.CloudName, cl.Name)})
	}
}

// joinByAPI joins discovered clusters to configured ones by their API
// servers first: a host or CA in common is the same cluster, whatever the
// names. It says which discovered clusters it joined.
func (a *assembly) joinByAPI(listings []inventory.FleetListing) [][]bool {
	joined := make([][]bool, len(listings))
	for li, l := range listings {
		joined[li] = make([]bool, len(l.Clusters))
		for ci, c := range l.Clusters {
			for i, cl := range a.cfg.Clusters {
				api := a.apis[cl.Name]
				byHost := api.host != "" && c.Endpoint != "" && api.host == hostOf(c.Endpoint)
				m := &a.f.Members[i]
				if m.Discovered || !byHost && !sharesCA(api.cas, c.CAData) {
					continue
				}
				if w := m.Where; w.Known() && !w.Agrees(c) {
					continue // a declared place that disagrees: judged by name below
				}
				m.Cloud, m.Discovered, joined[li][ci] = c, true, true
				break
			}
		}
	}
	return joined
}

// byName joins a discovered cluster to the configured one of its cloud
// name, when judge says they are the same; why says a conflict.
func (a *assembly) byName(c inventory.FleetCluster) (joined bool, why string) {
	for i, cl := range a.cfg.Clusters {
		m := &a.f.Members[i]
		if m.CloudName != c.Name {
			continue
		}
		if m.Discovered {
			continue // joined to its own discovered cluster: this one is another
		}
		v, w := judge(a.apis[cl.Name], m.Where, c)
		if v == same {
			m.Cloud, m.Discovered = c, true
			return true, ""
		} else if v == conflict {
			why = fmt.Sprintf("its name %q is also clusters[%d] (%s), but %s — tell them apart: give clusters[%d] the kubeconfig context of this cluster, or its platform, account or project, and location, or a cloudName if it is another cluster", c.Name, i, cl.Name, w, i)
			a.plan.Conflicts[cl.Name] = fmt.Sprintf("its name %q is also that of the discovered cluster in %s %s, which reclaim cannot tell apart from it (%s): nothing either could use is deleted — give clusters[%d] the kubeconfig context of that cluster, or its platform, account or project, and location, or a cloudName if they are different clusters", c.Name, c.Platform, c.Scope(), w, i)
		}
		return false, why
	}
	return false, ""
}

// discovered places a discovered cluster of listing li not joined by its
// API server: joined by name, or a member of its own — in conflict,
// out of scope, excluded, unlisted or read.
func (a *assembly) discovered(li int, c inventory.FleetCluster) {
	joined, why := a.byName(c)
	if joined {
		return
	}
	cfg := a.cfg
	name := inventory.MemberName(a.taken, c.Name, c.Place(), a.namesakes[namesakeKey(c)] > 1)
	m := inventory.FleetMember{Name: name, Cloud: c, Discovered: true}
	if why != "" {
		m.State, m.Rule, m.Reason = inventory.MemberConflict, "clusters[] by name", why
	} else if o, state, why := outOfScope(cfg.Fleet.OutOfScope, c, a.now); state != "" {
		m.State, m.Rule, m.Reason = state, o, why
	} else if ok, rule := cfg.Fleet.Matches(c.Name, c.Labels); !ok {
		m.State, m.Rule = inventory.MemberExcluded, rule
	} else if !cfg.Fleet.ReadDiscovered {
		m.State, m.Rule = inventory.MemberUnlisted, "fleet.readDiscovered is false"
	} else {
		m.State, m.Rule = inventory.MemberRead, fmt.Sprintf("discovered in %s %s", c.Platform, c.Scope())
		var ts oauth2.TokenSource
		if li < len(a.ds) && a.ds[li].Token != nil {
			ts = a.ds[li].Token(c)
		}
		a.plan.Read = append(a.plan.Read, discoveredTarget(cfg, a.reads, name, c, ts, a.networks))
	}
	a.f.Members = append(a.f.Members, m)
}

// declared adds the out-of-scope declarations no discovered cluster
// matched: they still answer for the clusters cloud evidence names (a
// subnet tag, a disk label) where they say the cluster lives.
func (a *assembly) declared() {
	for i, o := range a.cfg.Fleet.OutOfScope {
		if slices.ContainsFunc(a.f.Members, func(m inventory.FleetMember) bool { return m.Rule == outOfScopeRule(i) }) {
			continue
		}
		m := inventory.FleetMember{Name: o.Name, State: inventory.MemberOutOfScope, Reason: o.Reason, Rule: outOfScopeRule(i),
			Where: declaredPlace(o), CloudName: o.Name}
		if exp := o.ExpiresAt(); !exp.IsZero() && !a.now.Before(exp) {
			m.State, m.Reason = inventory.MemberConflict, expiredWhy(i, o)
		}
		m.Name = inventory.MemberName(a.taken, o.Name, m.Where, false)
		a.f.Members = append(a.f.Members, m)
	}
}

// discoveredTarget reads a discovered cluster with the fleet's limits. A
// GKE cluster's volumes reference its own project's disks; an EKS cluster
// may pull from any account, and its pods and nodes use subnets of its VPC:
// its own subnets and every listed subnet in that VPC.
func discoveredTarget(cfg *config.Config, reads map[string]bool, name string, c inventory.FleetCluster, ts oauth2.TokenSource, networks []inventory.NetworkListing) kube.Target {
	t := kube.Target{Name: name, Discovered: true, Endpoint: c.Endpoint, CAData: c.CAData, Token: ts,
		Place: c.Place(), CloudName: c.Name,
		Images: reads[inventory.ReadImages], Workloads: reads[inventory.ReadWorkloads],
		Timeout: cfg.Fleet.Timeout.Std(), QPS: cfg.Fleet.QPS, Burst: cfg.Fleet.Burst, PageSize: cfg.Fleet.PageSize}
	switch c.Platform {
	case inventory.GKE:
		t.Projects = []string{c.Project}
	case inventory.EKS:
		// Nil when nothing is known: any subnet, so a failed read holds every interface.
		t.Subnets = append([]string(nil), c.Subnets...)
		for _, l := range networks {
			for _, sn := range l.Subnets {
				if l.Account == c.Account && c.Network != "" && sn.VPC == c.Network && !slices.Contains(t.Subnets, sn.ID) {
					t.Subnets = append(t.Subnets, sn.ID)
				}
			}
		}
	}
	return t
}

func namesakeKey(c inventory.FleetCluster) string { return c.Platform + " " + c.Scope() + " " + c.Name }
