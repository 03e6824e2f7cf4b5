package inventory

import (
	"slices"
	"sort"
	"strings"
)

// Platforms of discovered clusters.
const (
	GKE = "gke"
	EKS = "eks"
)

// FleetCluster is one Kubernetes cluster a cloud says exists: what discovery
// (GKE's container API, EKS's DescribeCluster) returned, converted at the
// provider's edge.
type FleetCluster struct {
	// Name is the cluster's name in its cloud (GKE's name, EKS's name).
	Name     string
	Platform string // GKE or EKS
	// ID is GKE's projects/P/locations/L/clusters/N or EKS's cluster ARN.
	ID string
	// Project (GKE) or Account (EKS) and Location: a GKE zone or region, an
	// EKS region.
	Project  string
	Account  string
	Location string
	// Network is GKE's network or EKS's VPC id; Subnets are GKE's
	// subnetwork or EKS's resourcesVpcConfig.subnetIds.
	Network string
	Subnets []string
	// Labels are GKE's resourceLabels or EKS's tags.
	Labels map[string]string
	// Endpoint is the API server's https URL; CAData its CA bundle, PEM.
	Endpoint string
	CAData   []byte
	Status   string // GKE RUNNING, RECONCILING, ...; EKS ACTIVE, CREATING, ...
}

// Scope is the project, or account/region, the cluster was discovered in.
func (c FleetCluster) Scope() string {
	if c.Platform == GKE {
		return c.Project
	}
	return c.Account + "/" + c.Region()
}

// Region is the region of the cluster's location.
func (c FleetCluster) Region() string {
	if c.Platform == GKE && strings.Count(c.Location, "-") == 2 {
		return RegionOfZone(c.Location)
	}
	return c.Location
}

// FleetListing is what discovery returned for one scope: a GKE project, or an
// EKS account and region.
type FleetListing struct {
	Platform string
	Scope    string
	Clusters []FleetCluster
	// Complete is false when the listing failed or was partial (a page, a
	// describe, GKE's missingZones): a cluster missing from it may exist.
	Complete bool
	Problem  string
	// Calls counts the API calls the listing made (lists and describes).
	Calls int
}

// Member states, as reports print them.
const (
	MemberRead       = "read"          // reclaim read it this run
	MemberExcluded   = "excluded"      // a fleet rule excluded it: not read, holds
	MemberUnlisted   = "not-in-config" // discovered, not configured and not read: holds
	MemberOutOfScope = "out-of-scope"  // declared out of scope with a reason: holds nothing
)

// FleetMember is one cluster of the fleet, configured or discovered, and
// what reclaim did with it this run.
type FleetMember struct {
	// Name is how reclaim names it: the configured name, else the cloud's.
	Name string
	// Cloud is what discovery says of it (zero when only configured).
	Cloud      FleetCluster
	Configured bool
	Discovered bool
	// State is one of the Member* constants.
	State string
	// Rule names the rule behind the state: "fleet.exclude[0] \"sandbox-*\"",
	// "clusters[2]", "discovered in gke project p1".
	Rule string
	// Reason is an out-of-scope declaration's reason, repeated in every report.
	Reason string
}

// Fleet is every cluster reclaim knows of, and how it knows.
type Fleet struct {
	// Discovery is false when the config turned discovery off: then the
	// fleet is whatever the config lists, and every report says so.
	Discovery bool
	Listings  []FleetListing
	Members   []FleetMember
	// aliases maps a cloud name to the member's name.
	aliases map[string]string
}

// Resolve maps a cluster name found in cloud evidence (a subnet tag, a disk
// label, a discovered cluster) to the name reclaim uses for it: the
// configured cluster's name when the two differ, else the name itself.
func (f *Fleet) Resolve(cloudName string) string {
	if f == nil {
		return cloudName
	}
	if f.aliases == nil {
		f.aliases = map[string]string{}
		for _, m := range f.Members {
			if m.Cloud.Name != "" && m.Cloud.Name != m.Name {
				f.aliases[m.Cloud.Name] = m.Name
			}
		}
	}
	if n, ok := f.aliases[cloudName]; ok {
		return n
	}
	return cloudName
}

// Member returns the member named name (reclaim's name).
func (f *Fleet) Member(name string) (FleetMember, bool) {
	if f == nil {
		return FleetMember{}, false
	}
	for _, m := range f.Members {
		if m.Name == name {
			return m, true
		}
	}
	return FleetMember{}, false
}

// Complete says whether every discovery listing was complete.
func (f *Fleet) Complete() bool {
	if f == nil {
		return true
	}
	for _, l := range f.Listings {
		if !l.Complete {
			return false
		}
	}
	return true
}

// GKEAt returns the discovered GKE clusters of project that could attach a
// disk in location (a zone, or a region for a regional disk): every cluster
// in the same region, since a zonal cluster's node pools may span the
// region's zones.
func (f *Fleet) GKEAt(project, location string) []FleetMember {
	if f == nil {
		return nil
	}
	region := location
	if strings.Count(location, "-") == 2 {
		region = RegionOfZone(location)
	}
	var out []FleetMember
	for _, m := range f.Members {
		if c := m.Cloud; c.Platform == GKE && c.Project == project && c.Region() == region {
			out = append(out, m)
		}
	}
	return out
}

// EKSIn returns the discovered EKS clusters of account whose VPC is vpc or
// whose subnets include subnet.
func (f *Fleet) EKSIn(account, vpc, subnet string) []FleetMember {
	if f == nil {
		return nil
	}
	var out []FleetMember
	for _, m := range f.Members {
		c := m.Cloud
		if c.Platform != EKS || (account != "" && c.Account != account) {
			continue
		}
		if (vpc != "" && c.Network == vpc) || (subnet != "" && slices.Contains(c.Subnets, subnet)) {
			out = append(out, m)
		}
	}
	return out
}

// EKSOf returns the discovered EKS clusters of the accounts.
func (f *Fleet) EKSOf(accounts ...string) []FleetMember {
	if f == nil {
		return nil
	}
	var out []FleetMember
	for _, m := range f.Members {
		if m.Cloud.Platform == EKS && slices.Contains(accounts, m.Cloud.Account) {
			out = append(out, m)
		}
	}
	return out
}

// SortMembers orders members by name.
func (f *Fleet) SortMembers() {
	sort.SliceStable(f.Members, func(i, j int) bool { return f.Members[i].Name < f.Members[j].Name })
	f.aliases = nil
}
