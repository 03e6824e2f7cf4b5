package app

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"golang.org/x/oauth2"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
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
}

// discover runs every discoverer at once; one listing per discoverer, in order.
func discover(ctx context.Context, ds []Discoverer) []inventory.FleetListing {
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

// fleetPlan is the fleet of a run, and the discovered clusters to read.
type fleetPlan struct {
	fleet inventory.Fleet
	read  []kube.Target
}

// assembleFleet joins the configured clusters, the discovery listings and
// the out-of-scope declarations into the run's fleet: a discovered cluster
// is the configured one with the same name, cloud name or API server; else
// it is read (with a token from its discoverer), excluded by a rule, or
// declared out of scope. hosts maps a configured cluster's name to its API
// server's host, where its kubeconfig could be read.
func assembleFleet(cfg *config.Config, ds []Discoverer, listings []inventory.FleetListing, hosts map[string]string, networks []inventory.NetworkListing) fleetPlan {
	f := inventory.Fleet{Discovery: cfg.Fleet.Discover, Listings: listings}
	index := map[string]int{}
	byHost := map[string]int{}
	for i, cl := range cfg.Clusters {
		index[cl.Name] = len(f.Members)
		if cl.CloudName != "" {
			index[cl.CloudName] = len(f.Members)
		}
		if h := hosts[cl.Name]; h != "" {
			byHost[h] = len(f.Members)
		}
		f.Members = append(f.Members, inventory.FleetMember{Name: cl.Name, Configured: true, State: inventory.MemberRead,
			Rule: fmt.Sprintf("clusters[%d]", i)})
	}
	var plan fleetPlan
	reads := Reads(cfg)
	for li, l := range listings {
		for _, c := range l.Clusters {
			i, ok := index[c.Name]
			if !ok {
				i, ok = byHost[hostOf(c.Endpoint)]
			}
			if ok && f.Members[i].Configured && !f.Members[i].Discovered {
				f.Members[i].Cloud, f.Members[i].Discovered = c, true
				continue
			}
			name := c.Name
			if _, taken := index[name]; taken {
				name = c.Name + "@" + c.Scope() // the same name in two scopes
			}
			m := inventory.FleetMember{Name: name, Cloud: c, Discovered: true}
			index[name] = len(f.Members)
			if reason, out := cfg.Fleet.OutOfScopeReason(name); out {
				m.State, m.Reason, m.Rule = inventory.MemberOutOfScope, reason, "fleet.outOfScope"
			} else if ok, rule := cfg.Fleet.Matches(c.Name, c.Labels); !ok {
				m.State, m.Rule = inventory.MemberExcluded, rule
			} else if !cfg.Fleet.ReadDiscovered {
				m.State, m.Rule = inventory.MemberUnlisted, "fleet.readDiscovered is false"
			} else {
				m.State, m.Rule = inventory.MemberRead, fmt.Sprintf("discovered in %s %s", c.Platform, c.Scope())
				var ts oauth2.TokenSource
				if li < len(ds) && ds[li].Token != nil {
					ts = ds[li].Token(c)
				}
				plan.read = append(plan.read, discoveredTarget(cfg, reads, name, c, ts, networks))
			}
			f.Members = append(f.Members, m)
		}
	}
	for _, o := range cfg.Fleet.OutOfScope {
		if _, known := index[o.Name]; !known {
			index[o.Name] = len(f.Members)
			f.Members = append(f.Members, inventory.FleetMember{Name: o.Name, State: inventory.MemberOutOfScope, Reason: o.Reason, Rule: "fleet.outOfScope"})
		}
	}
	f.SortMembers()
	plan.fleet = f
	return plan
}

// discoveredTarget reads a discovered cluster with the fleet's limits. A
// GKE cluster's volumes reference its own project's disks; an EKS cluster
// may pull from any account, and its pods and nodes use subnets of its VPC:
// its own subnets and every listed subnet in that VPC.
func discoveredTarget(cfg *config.Config, reads map[string]bool, name string, c inventory.FleetCluster, ts oauth2.TokenSource, networks []inventory.NetworkListing) kube.Target {
	t := kube.Target{Name: name, Discovered: true, Endpoint: c.Endpoint, CAData: c.CAData, Token: ts,
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

// configuredHosts reads each configured cluster's API server from its
// kubeconfig (in-cluster ones are skipped); one that cannot be loaded is
// matched by name only.
func configuredHosts(targets []kube.Target) map[string]string {
	out := map[string]string{}
	for _, t := range targets {
		if t.InCluster {
			continue
		}
		if rc, err := kube.RESTConfig(t); err == nil {
			out[t.Name] = hostOf(rc.Host)
		}
	}
	return out
}
