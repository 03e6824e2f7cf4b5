package app

import (
	"bytes"
	"cmp"
	"context"
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile/kinds/netiface"
)

// Discoverer lists the clusters of one discovery scope (a GKE project, an
// EKS account and region) and mints the short-lived tokens its clusters are
// read with.
type Discoverer struct {
	Platform, Scope string
	List            func(ctx context.Context) inventory.FleetListing
	// Token returns the token source for one of its clusters; nil when the
	// scope cannot mint one (the cluster is then not read, and holds).
	Token func(c inventory.FleetCluster) oauth2.TokenSource
	// Expand, if set, returns the discoverers its listing calls for (an
	// account's regions call for the EKS listing of each): they run after.
	Expand func(ctx context.Context, l inventory.FleetListing) []Discoverer
}

// discover runs every discoverer at once, then those their listings call
// for (Expand); one listing per discoverer it returns, in order.
func discover(ctx context.Context, ds []Discoverer) ([]Discoverer, []inventory.FleetListing) {
	list := func(ds []Discoverer) []inventory.FleetListing {
		out := make([]inventory.FleetListing, len(ds))
		var wg sync.WaitGroup
		for i, d := range ds {
			wg.Go(func() {
				l := d.List(ctx)
				l.Platform, l.Scope = d.Platform, d.Scope
				out[i] = l
			})
		}
		wg.Wait()
		return out
	}
	out := list(ds)
	var more []Discoverer
	for i, d := range ds {
		if d.Expand != nil {
			more = append(more, d.Expand(ctx, out[i])...)
		}
	}
	if len(more) == 0 {
		return ds, out
	}
	return append(slices.Clip(ds), more...), append(out, list(more)...)
}

// fleetPlan is the fleet of a run, and the discovered clusters to read.
type fleetPlan struct {
	fleet inventory.Fleet
	read  []kube.Target
	// conflicts are the configured clusters whose name a discovered
	// cluster shares without their identities agreeing: read, but held,
	// with what collides and how to resolve it.
	conflicts map[string]string
}

// apiServer is what a configured cluster's kubeconfig (or the pod's
// in-cluster config) says of its API server: its host:port and CA
// certificates (DER). Either may be unknown.
type apiServer struct {
	host string
	cas  [][]byte
}

// verdict is how a configured and a discovered cluster of one cloud name
// relate.
type verdict int

const (
	same     verdict = iota // the same cluster: joined
	distinct                // two clusters that the config tells apart
	conflict                // cannot be told apart, or disagree: both hold
)

// judge compares a configured cluster's API server and declared place with
// a discovered cluster: the API server decides where both are known (the
// same host or CA is the same cluster, another is not); else the declared
// place does; else nothing can tell them apart.
func judge(api apiServer, where inventory.Place, c inventory.FleetCluster) (verdict, string) {
	declared := where.Known()
	if declared && !where.Agrees(c) {
		return distinct, ""
	}
	if api.host != "" && c.Endpoint != "" {
		if api.host == hostOf(c.Endpoint) || sharesCA(api.cas, c.CAData) {
			return same, ""
		}
		return conflict, fmt.Sprintf("its kubeconfig's API server %s is not the discovered cluster's %s", api.host, hostOf(c.Endpoint))
	}
	if len(api.cas) > 0 && len(c.CAData) > 0 {
		if sharesCA(api.cas, c.CAData) {
			return same, ""
		}
		return conflict, "its API server's CA is not the discovered cluster's"
	}
	if declared {
		return same, ""
	}
	return conflict, "reclaim cannot compare their API servers and the entry does not say where it lives"
}

// assembleFleet joins the configured clusters, the discovery listings and
// the out-of-scope declarations into the run's fleet, by identity, never by
// name alone: a discovered cluster is the configured one with the same API
// server (or CA), else the one with its cloud name whose API server or
// declared place agrees. A same-name pair that disagrees, or cannot be
// told apart, is a conflict: the discovered cluster is not read, the
// configured one is read but held, and both say why. Other discovered
// clusters are read (with a token from their discoverer), excluded by a
// rule, or declared out of scope by identity. discovers says whether the
// fleet is discovered (else it is the config's); reads are the shared
// reads the kinds that are on rely on (Modules.Reads). apis maps a
// configured cluster's name to its API server, where it could be read.
func assembleFleet(cfg *config.Config, reads map[string]bool, discovers bool, ds []Discoverer, listings []inventory.FleetListing, apis map[string]apiServer, clouds map[string]any, now time.Time) fleetPlan {
	a := &assembly{cfg: cfg, reads: reads, ds: ds, apis: apis, clouds: clouds, now: now, taken: map[string]bool{},
		f: inventory.Fleet{Discovery: discovers, Listings: listings}, plan: fleetPlan{conflicts: map[string]string{}}}
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
	a.plan.fleet = a.f
	return a.plan
}

// assembly is the fleet as assembleFleet puts it together.
type assembly struct {
	cfg       *config.Config
	reads     map[string]bool
	ds        []Discoverer
	apis      map[string]apiServer
	clouds    map[string]any
	now       time.Time
	f         inventory.Fleet
	plan      fleetPlan
	taken     map[string]bool // members' names
	namesakes map[string]int  // discovered clusters by namesakeKey
}

// configured makes a member of each configured cluster.
func (a *assembly) configured() {
	for i, cl := range a.cfg.Clusters {
		a.taken[cl.Name] = true
		a.f.Members = append(a.f.Members, inventory.FleetMember{Name: cl.Name, Configured: true, State: inventory.MemberRead,
			Rule: fmt.Sprintf("clusters[%d]", i), Where: placeOf(cl), CloudName: cmp.Or(cl.CloudName, cl.Name)})
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
			a.plan.conflicts[cl.Name] = fmt.Sprintf("its name %q is also that of the discovered cluster in %s %s, which reclaim cannot tell apart from it (%s): nothing either could use is deleted — give clusters[%d] the kubeconfig context of that cluster, or its platform, account or project, and location, or a cloudName if they are different clusters", c.Name, c.Platform, c.Scope(), w, i)
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
		a.plan.read = append(a.plan.read, discoveredTarget(cfg, a.reads, name, c, ts, netiface.NetworksIn(a.clouds)))
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

func namesakeKey(c inventory.FleetCluster) string { return c.Platform + " " + c.Scope() + " " + c.Name }

func outOfScopeRule(i int) string { return fmt.Sprintf("fleet.outOfScope[%d]", i) }

func expiredWhy(i int, o config.OutOfScope) string {
	return fmt.Sprintf("fleet.outOfScope[%d] expired on %s (it said: %s), so it holds again as not read — read it, or renew the declaration", i, o.Expires, o.Reason)
}

// outOfScope matches a discovered cluster against the declarations: the
// state it takes (out of scope, or a conflict for a declaration that has
// expired, does not pin the cluster, or pins another), the rule and the
// reason; "" when none names it. A declaration names one cluster (its
// platform, account or project, location and name are required), but a
// cluster rebuilt in its place has all of them too: only its endpoint and
// creation time tell the declared cluster from its successor, so a live
// cluster a declaration pinning neither matches holds, and the reason
// gives the values to pin.
func outOfScope(decls []config.OutOfScope, c inventory.FleetCluster, now time.Time) (rule, state, reason string) {
	// A declaration that pins c covers it, whatever another of its name
	// and place (the cluster it replaced) says.
	for i, o := range decls {
		// The location exactly: a region declared is a regional cluster,
		// not a zonal namesake in that region.
		if o.Name != c.Name || !declaredPlace(o).Agrees(c) || o.Location != c.Location {
			continue
		}
		why := ""
		switch exp := o.ExpiresAt(); {
		case !exp.IsZero() && !now.Before(exp):
			why = expiredWhy(i, o)
		case o.Endpoint == "" && o.Created == "":
			why = fmt.Sprintf("fleet.outOfScope[%d] declares %q in %s without its endpoint or creation time, and a live cluster of that name is there: reclaim cannot tell the declared cluster from one rebuilt in its place, so it holds — if it is the declared cluster, pin it with %s; else remove the declaration to read the cluster", i, o.Name, declaredPlace(o), pins(c))
		case o.Endpoint != "" && hostOf(o.Endpoint) != hostOf(c.Endpoint):
			why = fmt.Sprintf("fleet.outOfScope[%d] declares %q with the API server %s, but the live cluster of that name in %s %s serves %s: it was rebuilt or is another cluster, so it holds — update the declaration, or remove it to read the cluster", i, o.Name, hostOf(o.Endpoint), c.Platform, c.Scope(), cmp.Or(hostOf(c.Endpoint), "no API server yet"))
		case o.Created != "" && !o.CreatedAt().Truncate(time.Second).Equal(c.Created.Truncate(time.Second)):
			why = fmt.Sprintf("fleet.outOfScope[%d] declares %q created at %s, but the live cluster of that name in %s %s %s: it was rebuilt in its place or is another cluster, so it holds — update the declaration, or remove it to read the cluster", i, o.Name, o.CreatedAt().UTC().Format(time.RFC3339), c.Platform, c.Scope(), createdWhen(c))
		default:
			return outOfScopeRule(i), inventory.MemberOutOfScope, o.Reason
		}
		if state == "" {
			rule, state, reason = outOfScopeRule(i), inventory.MemberConflict, why
		}
	}
	return rule, state, reason
}

// pins are the declaration fields that would pin a discovered cluster.
func pins(c inventory.FleetCluster) string {
	var out []string
	if c.Endpoint != "" {
		out = append(out, "endpoint: "+c.Endpoint)
	}
	if !c.Created.IsZero() {
		out = append(out, "created: "+c.Created.UTC().Format(time.RFC3339))
	}
	if len(out) == 0 {
		return "its endpoint or created (discovery lists neither yet)"
	}
	return strings.Join(out, " or ")
}

// createdWhen says when discovery says c was created.
func createdWhen(c inventory.FleetCluster) string {
	if c.Created.IsZero() {
		return "has no creation time discovery reports"
	}
	return "was created at " + c.Created.UTC().Format(time.RFC3339)
}

// placeOf is where a configured cluster says it lives.
func placeOf(cl config.Cluster) inventory.Place {
	return inventory.Place{Platform: platformOf(cl.Platform, cl.Account, cl.Project), Account: cl.Account, Project: cl.Project, Location: cl.Location}
}

// declaredPlace is where an out-of-scope declaration says its cluster lives.
func declaredPlace(o config.OutOfScope) inventory.Place {
	return inventory.Place{Platform: platformOf(o.Platform, o.Account, o.Project), Account: o.Account, Project: o.Project, Location: o.Location}
}

// platformOf: an account is AWS's, a project GCP's.
func platformOf(platform, account, project string) string {
	switch {
	case platform != "":
		return platform
	case account != "":
		return inventory.EKS
	case project != "":
		return inventory.GKE
	}
	return ""
}

// sharesCA says whether a configured cluster's CA certificates and a
// discovered cluster's CA bundle (PEM) have a certificate in common: each
// cluster has a CA of its own.
func sharesCA(cas [][]byte, pemData []byte) bool {
	if len(cas) == 0 || len(pemData) == 0 {
		return false
	}
	for _, der := range certsOf(pemData) {
		if slices.ContainsFunc(cas, func(c []byte) bool { return bytes.Equal(c, der) }) {
			return true
		}
	}
	return false
}

// certsOf are the DER certificates of a PEM bundle.
func certsOf(data []byte) [][]byte {
	var out [][]byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return out
		}
		if b.Type == "CERTIFICATE" {
			out = append(out, b.Bytes)
		}
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

// hostOf is the host:port of an API server URL, for matching a configured
// cluster's kubeconfig with a discovered endpoint.
func hostOf(endpoint string) string {
	if endpoint == "" {
		return ""
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	h := u.Host
	if u.Port() == "" && u.Scheme == "https" {
		h += ":443"
	}
	return strings.ToLower(h)
}

// configuredAPIs reads each configured cluster's API server from its
// kubeconfig: its host and CA certificates. An in-cluster entry's host is
// the service's address, which discovery never lists, so only its CA (the
// pod's mounted bundle) counts. One that cannot be loaded is unknown: it
// joins a discovered cluster only by its declared place.
func configuredAPIs(targets []kube.Target) map[string]apiServer {
	out := map[string]apiServer{}
	for _, t := range targets {
		rc, err := kube.RESTConfig(t)
		if err != nil {
			continue
		}
		var api apiServer
		if !t.InCluster {
			api.host = hostOf(rc.Host)
		}
		ca := rc.CAData
		if len(ca) == 0 && rc.CAFile != "" {
			ca, _ = os.ReadFile(rc.CAFile)
		}
		api.cas = certsOf(ca)
		out[t.Name] = api
	}
	return out
}
