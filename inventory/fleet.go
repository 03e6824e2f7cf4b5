package inventory

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
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
	// Created is when the cloud created it (GKE createTime, EKS
	// createdAt): a cluster rebuilt under the same name and place has a
	// later one. Zero when the cloud did not say.
	Created time.Time
}

// Scope is the project, or account/region, the cluster was discovered in.
func (c FleetCluster) Scope() string {
	if c.Platform == GKE {
		return c.Project
	}
	return c.Account + "/" + c.Region()
}

// Place is where discovery says the cluster lives.
func (c FleetCluster) Place() Place {
	return Place{Platform: c.Platform, Account: c.Account, Project: c.Project, Location: c.Location}
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
	// Regions are the regions a Regions listing found (an AWS account's
	// enabled regions, narrowed by fleet.regions); LeftOut the enabled ones
	// fleet.regions left out.
	Regions, LeftOut []string
}

// Member states, as reports print them.
const (
	MemberRead       = "read"          // reclaim read it this run
	MemberExcluded   = "excluded"      // a fleet rule excluded it: not read, holds
	MemberUnlisted   = "not-in-config" // discovered, not configured and not read: holds
	MemberOutOfScope = "out-of-scope"  // declared out of scope with a reason: holds nothing
	// MemberConflict is a discovered cluster whose name matches a configured
	// cluster or an out-of-scope declaration whose identity disagrees or
	// cannot be told: not read, holds, and so does the configured one.
	MemberConflict = "conflict"
)

// ScopedName is how reclaim names a cluster of cloud name name in a
// discovery scope ("project" or "account/region") when the name alone is
// taken or unknown: name@project, name@account.region. No '/': the name
// is part of the Kubernetes kinds' ids.
func ScopedName(name, scope string) string {
	return name + "@" + strings.ReplaceAll(scope, "/", ".")
}

// MemberName is the name reclaim knows a cluster of cloud name name at a
// place by when the config does not name it (a discovered cluster, an
// out-of-scope declaration), unique among taken, which it joins: the
// cloud name; with its scope when another cluster has that name
// (NAME@PROJECT, NAME@ACCOUNT.REGION); with its scope and location when a
// namesake shares its scope (NAME@PROJECT.LOCATION: GKE names are unique
// per location, not per project). A name is a label: a cluster's identity
// is its platform, account or project, location and cloud name, and no two
// members share a name, since their reads, records and sources are found
// by it.
func MemberName(taken map[string]bool, name string, at Place, namesake bool) string {
	scoped := ScopedName(name, at.Scope())
	located := scoped
	if at.Project != "" && at.Location != "" {
		located = ScopedName(name, at.Project+"/"+at.Location)
	}
	if namesake {
		return claim(taken, located)
	}
	return claim(taken, name, scoped, located)
}

// claim takes the first of names not taken; when every one is, the last
// with a number.
func claim(taken map[string]bool, names ...string) string {
	for _, n := range names {
		if !taken[n] {
			taken[n] = true
			return n
		}
	}
	last := names[len(names)-1]
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s~%d", last, i); !taken[n] {
			taken[n] = true
			return n
		}
	}
}

// Place is where a cluster lives as far as reclaim knows it: what a
// configured entry or an out-of-scope declaration says, or what discovery
// listed. An empty field is unknown.
type Place struct {
	Platform string // GKE or EKS
	Account  string // EKS
	Project  string // GKE
	// Location is an EKS region, or a GKE zone or region.
	Location string
}

// Known says whether the place says anything.
func (p Place) Known() bool { return p != Place{} }

// Agrees says whether c may be at p: every field p sets matches c (a
// region matches the zones in it).
func (p Place) Agrees(c FleetCluster) bool {
	switch {
	case p.Platform != "" && p.Platform != c.Platform,
		p.Account != "" && p.Account != c.Account,
		p.Project != "" && p.Project != c.Project:
		return false
	}
	return p.Location == "" || p.Location == c.Location || p.Location == c.Region()
}

// In says whether p may be in the discovery scope (platform, "project" or
// "account/region"): what it leaves unknown may be anywhere.
func (p Place) In(platform, scope string) bool {
	if p.Platform != "" && p.Platform != platform {
		return false
	}
	if platform == GKE {
		// A GKE scope is a project: any location in it.
		return p.Project == "" || p.Project == scope
	}
	account, region, _ := strings.Cut(scope, "/")
	return (p.Account == "" || p.Account == account) && (p.Location == "" || p.Location == region)
}

// Scope is the place as a scope name: "project", "account/region", or
// what it knows of them.
func (p Place) Scope() string {
	if p.Project != "" {
		return p.Project
	}
	var parts []string
	for _, s := range []string{p.Account, p.Location} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, "/")
}

// String is the place as reports print it: "eks 111122223333/us-east-1".
func (p Place) String() string {
	var parts []string
	for _, s := range []string{p.Platform, p.Project, p.Account, p.Location} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "an unknown place"
	}
	return strings.Join(parts, " ")
}

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
	// Reason is an out-of-scope declaration's reason, repeated in every
	// report, or what a conflict is and how to resolve it.
	Reason string
	// Where is what the config says of where it lives (a configured
	// cluster, an out-of-scope declaration); zero when it says nothing.
	Where Place
	// CloudName is the name cloud evidence uses for a configured or
	// declared cluster: its cloudName, else its name.
	CloudName string
}

// at says whether m is the cluster cloud evidence of (platform, scope)
// names name: a discovered member by its listing, else a configured or
// declared one by its cloud name where what it declares allows. With
// discovery on, a member discovery did not find must say where it lives:
// its name alone is no identity (a namesake nobody listed, a self-managed
// cluster, may live there).
func (m FleetMember) at(platform, scope, name string, discovered, discovery bool) bool {
	if discovered {
		return m.Cloud.Name == name && m.Cloud.Platform == platform && m.Cloud.Scope() == scope
	}
	if discovery && !m.Where.Known() {
		return false
	}
	return m.Cloud.Platform == "" && m.CloudName == name && m.Where.In(platform, scope)
}

// Fleet is every cluster reclaim knows of, and how it knows.
type Fleet struct {
	// Discovery is false when the config turned discovery off: then the
	// fleet is whatever the config lists, and every report says so.
	Discovery bool
	Listings  []FleetListing
	Members   []FleetMember
	// aliases caches ResolveAt: "platform scope location name" to the
	// members' names.
	aliases map[string][]string
}

// Resolve maps a cluster name found in cloud evidence of one scope (a
// subnet's or an interface's tag in an EKS account and region, a disk's
// label in a GKE project) to the members reclaim knows by that identity:
// the discovered clusters of that name in that scope, else the configured
// or declared ones whose cloud name it is and that may live there (with
// discovery on, that say they live there). A name no member answers for
// is ScopedName(name, scope): a cluster nobody read, which holds what it
// may use. A name in one account never means another account's cluster of
// that name. A name that more than one member answers for (two GKE
// clusters of one name in two locations of a project) means every one of
// them: the evidence holds by each, never by one picked.
func (f *Fleet) Resolve(platform, scope, cloudName string) []string {
	return f.ResolveAt(platform, scope, "", cloudName)
}

// ResolveAt is Resolve for GKE evidence that says where it is: a disk's
// zone or region. Only the clusters of that region can attach it, so of
// same-name clusters in one project those of its region answer for it;
// when none of them is there, every one of the name does.
func (f *Fleet) ResolveAt(platform, scope, location, cloudName string) []string {
	if f == nil {
		return []string{cloudName}
	}
	key := platform + " " + scope + " " + location + " " + cloudName
	if n, ok := f.aliases[key]; ok {
		return n
	}
	if f.aliases == nil {
		f.aliases = map[string][]string{}
	}
	var out []string
	for _, discovered := range []bool{true, false} {
		var all, there []string
		for _, m := range f.Members {
			if !m.at(platform, scope, cloudName, discovered, f.Discovery) {
				continue
			}
			all = append(all, m.Name)
			if location == "" || m.in(gkeRegion(location)) {
				there = append(there, m.Name)
			}
		}
		if out = there; len(out) == 0 {
			out = all
		}
		if len(out) > 0 {
			break
		}
	}
	if len(out) == 0 {
		out = []string{ScopedName(cloudName, scope)}
	}
	f.aliases[key] = out
	return out
}

// in says whether m may live in region: a discovered member where it was
// listed, another where it says it lives (anywhere, if it does not say).
func (m FleetMember) in(region string) bool {
	if m.Cloud.Platform != "" {
		return m.Cloud.Region() == region
	}
	return m.Where.Location == "" || gkeRegion(m.Where.Location) == region
}

// gkeRegion is the region of a GKE location: a zone's region, else the
// location itself.
func gkeRegion(location string) string {
	if strings.Count(location, "-") == 2 {
		return RegionOfZone(location)
	}
	return location
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
