package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/glob"
)

// Fleet says how reclaim learns which clusters exist. A cluster reclaim
// does not read completely holds everything it could use, so discovery is
// on by default: the clouds, not a hand-typed list, say what the fleet is.
type Fleet struct {
	// Discover finds every GKE cluster of the gke projects and every EKS
	// cluster of the eks accounts and regions. false: the fleet is whatever
	// clusters lists, and every report says so.
	Discover bool `json:"discover"`
	// GKE and EKS are the scopes searched. Empty: the projects of gce, and
	// every enabled region of the accounts of ecr.registries and
	// ec2Interfaces.networks.
	GKE GKEDiscovery   `json:"gke"`
	EKS []EKSDiscovery `json:"eks"`
	// Regions narrows the regions of an AWS account that reclaim treats as
	// in use (where the default discovery and ecr.consumers look, and
	// where a puller of an ECR registry may run) to these, besides the
	// ones fleet.eks lists. Empty: every region enabled for the account.
	Regions []string `json:"regions"`
	// everyRegion: fleet.eks is the default, so discovery covers every
	// enabled region of its accounts.
	everyRegion bool
	// ReadDiscovered reads every discovered cluster that is not configured
	// (with a short-lived identity minted in process); false only lists them,
	// and each then holds what it could use.
	ReadDiscovered bool `json:"readDiscovered"`
	// Include and Exclude are globs on a discovered cluster's name;
	// IncludeLabels and ExcludeLabels match its GKE resource labels or EKS
	// tags ("" matches any value). An excluded cluster is not read, and
	// holds what it could use.
	Include       []string `json:"include"`
	Exclude       []string `json:"exclude"`
	IncludeLabels Tags     `json:"includeLabels,omitempty"`
	ExcludeLabels Tags     `json:"excludeLabels,omitempty"`
	// OutOfScope declares clusters whose use reclaim does not need to see
	// (decommissioned, sandbox); every report repeats the declaration.
	OutOfScope []OutOfScope `json:"outOfScope"`
	// Timeout, QPS, Burst and PageSize apply to discovered clusters read
	// (configured ones have their own).
	Timeout  Duration `json:"timeout"`
	QPS      float32  `json:"qps"`
	Burst    int      `json:"burst"`
	PageSize int64    `json:"pageSize"`
	// Records, if set, is where the clusters' agents publish what they
	// use; the deleter then reads their records, never their API servers.
	Records *Records `json:"records,omitempty"`
}

// GKEDiscovery is where GKE clusters are searched, and how.
type GKEDiscovery struct {
	Projects []string `json:"projects"`
	// Endpoint overrides the container API (a fake, a private endpoint).
	Endpoint              string `json:"endpoint,omitempty"`
	WithoutAuthentication bool   `json:"withoutAuthentication"`
	// CredentialsFile is a service-account key; empty means the pod's
	// identity (Workload Identity, application default credentials). It
	// also mints the tokens discovered clusters are read with.
	CredentialsFile string `json:"credentialsFile,omitempty"`
	// PrivateEndpoint reads clusters through their private endpoint.
	PrivateEndpoint bool `json:"privateEndpoint"`
}

// EKSDiscovery is one account and region where EKS clusters are searched.
type EKSDiscovery struct {
	AWSTarget
	// Endpoint and STSEndpoint override EKS's and STS's (fakes);
	// EC2Endpoint EC2's, where the account's regions are listed.
	Endpoint    string `json:"endpoint,omitempty"`
	STSEndpoint string `json:"stsEndpoint,omitempty"`
	EC2Endpoint string `json:"ec2Endpoint,omitempty"`
}

// OutOfScope is one cluster declared out of reclaim's view, by identity:
// its platform, account (EKS) or project (GKE), location and name are all
// required, so a declaration means one cluster, never every namesake. A
// discovered cluster is covered only when all of them agree and it is
// pinned (endpoint, created) and every pin agrees: a live cluster the
// declaration does not pin may be one rebuilt in its place, and holds as
// a conflict.
type OutOfScope struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
	// Platform, Account (EKS) or Project (GKE), and Location (an EKS
	// region, a GKE zone or region) say where it lives. Endpoint is its API
	// server's URL and Created when the cloud created it (GKE createTime,
	// EKS createdAt): a cluster rebuilt in its place gets a new endpoint
	// (a GKE private endpoint may keep its address) and always a later
	// creation time. Only a declaration pinned by one of them covers a
	// cluster discovery still lists; without, it covers only what cloud
	// evidence names of a cluster discovery does not list (one that is
	// gone).
	Platform string `json:"platform,omitempty"`
	Account  string `json:"account,omitempty"`
	Project  string `json:"project,omitempty"`
	Location string `json:"location,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Created  string `json:"created,omitempty"`
	// Expires (a date, 2027-01-31) ends the declaration: from that day the
	// cluster holds again as not read, and the report says the
	// declaration expired.
	Expires string `json:"expires,omitempty"`
}

// ExpiresAt is when the declaration ends; zero when it does not.
func (o OutOfScope) ExpiresAt() time.Time {
	t, _ := time.Parse(time.DateOnly, o.Expires)
	return t
}

// CreatedAt is the creation time the declaration pins; zero when none.
func (o OutOfScope) CreatedAt() time.Time {
	t, _ := time.Parse(time.RFC3339, o.Created)
	return t
}

// validateOutOfScopeIdentity requires what makes a declaration one
// cluster: its platform, its account (EKS) or project (GKE), and its
// location (the name is checked by the caller).
func validateOutOfScopeIdentity(ps *problems, p string, o OutOfScope) {
	switch {
	case o.Platform == "":
		ps.add(p+".platform", "is required — eks or gke, the platform the cluster ran on")
	case o.Platform == "eks" && o.Account == "":
		ps.add(p+".account", "is required — the AWS account id the EKS cluster lived in, e.g. \"123456789012\"")
	case o.Platform == "gke" && o.Project == "":
		ps.add(p+".project", "is required — the GCP project the GKE cluster lived in")
	}
	if o.Platform == "" && o.Account == "" && o.Project == "" {
		ps.add(p+".account", "is required — the AWS account id (EKS), or set project: the GCP project (GKE) the cluster lived in")
	}
	if o.Location == "" {
		ps.add(p+".location", "is required — the region (EKS) or zone/region (GKE) the cluster lived in")
	}
}

// validatePlace checks where a configured cluster or a declaration says a
// cluster lives.
func validatePlace(ps *problems, path, platform, account, project, location string) {
	switch platform {
	case "", "gke", "eks":
	default:
		ps.add(path+".platform", "%q is not a platform — use gke or eks", platform)
	}
	if account != "" {
		if !awsAccount.MatchString(account) {
			ps.add(path+".account", "%q is not an AWS account id — %s", account, accountHint)
		}
		if platform == "gke" {
			ps.add(path+".account", "a GKE cluster lives in a project — set project, not account")
		}
	}
	if project != "" {
		if msg := validateProject(project); msg != "" {
			ps.add(path+".project", "%s", msg)
		}
		if platform == "eks" {
			ps.add(path+".project", "an EKS cluster lives in an account — set account, not project")
		}
	}
	if account != "" && project != "" {
		ps.add(path, "set either account (EKS) or project (GKE), not both")
	}
	if location != "" && !isDNSLabel(location) {
		ps.add(path+".location", "%q is not a region or zone — e.g. us-east-1, us-central1 or us-central1-a", location)
	}
}

const (
	defaultFleetDiscover = true
	defaultFleetRead     = true
)

func (c *Config) fleetDefaults() {
	f := &c.Fleet
	def(c, "fleet.discover", &f.Discover, defaultFleetDiscover)
	def(c, "fleet.readDiscovered", &f.ReadDiscovered, defaultFleetRead)
	def(c, "fleet.timeout", &f.Timeout, defaultClusterTimeout)
	def(c, "fleet.qps", &f.QPS, defaultClusterQPS)
	def(c, "fleet.burst", &f.Burst, defaultClusterBurst)
	def(c, "fleet.pageSize", &f.PageSize, defaultClusterPageSize)
	c.recordsDefaults()
	if !f.Discover {
		return
	}
	if g, ok := c.sectionGKE(); ok {
		// The GCE section's identity discovers its projects' clusters.
		if !c.present["fleet.gke.projects"] {
			f.GKE.Projects = slices.Clone(g.Projects)
		}
		if !c.present["fleet.gke.credentialsFile"] && !c.present["fleet.gke.withoutAuthentication"] {
			if f.GKE.WithoutAuthentication = g.WithoutAuthentication; !g.WithoutAuthentication {
				f.GKE.CredentialsFile = g.CredentialsFile
			}
		}
	}
	if !c.present["fleet.eks"] {
		f.EKS = c.defaultEKSDiscovery()
		f.everyRegion = true
	}
}

// EveryRegion says whether EKS discovery (and the default ecr.consumers)
// covers every enabled region of each account of fleet.eks, narrowed by
// fleet.regions: true when fleet.eks is left out. A listed fleet.eks means
// what it lists.
func (f *Fleet) EveryRegion() bool { return f.everyRegion }

// RegionsOf narrows an account's enabled regions to fleet.regions, and
// adds the ones fleet.eks lists for it and the extra ones (an ecr
// registry's): the regions reclaim treats as the account's. Sorted.
func (f *Fleet) RegionsOf(account string, enabled []string, extra ...string) []string {
	var out []string
	add := func(r string) {
		if r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, r := range enabled {
		if len(f.Regions) == 0 || slices.Contains(f.Regions, r) {
			add(r)
		}
	}
	for _, e := range f.EKS {
		if e.Account == account {
			add(e.Region)
		}
	}
	for _, r := range extra {
		add(r)
	}
	slices.Sort(out)
	return out
}

// defaultEKSDiscovery is every account and region of the kinds' sections
// (ecr.registries, ec2Interfaces.networks), reached the same way.
func (c *Config) defaultEKSDiscovery() []EKSDiscovery {
	var out []EKSDiscovery
	seen := map[string]bool{}
	add := func(d EKSDiscovery) {
		if k := d.Account + "/" + d.Region; !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	for _, d := range c.sectionAWS() {
		add(d)
	}
	return out
}

func (f *Fleet) normalize(ps *problems) {
	v, err := expandHome(f.GKE.CredentialsFile)
	if err != nil {
		ps.add("fleet.gke.credentialsFile", "%v", err)
		return
	}
	f.GKE.CredentialsFile = v
}

// validate checks the fleet section; scopes copied from gce, ecr and ec2
// (not present in the file) are checked there.
func (f *Fleet) validate(ps *problems, path string, present map[string]bool) {
	if present[path+".gke.projects"] {
		validateList(ps, path+".gke.projects", f.GKE.Projects, validateProject)
	}
	validateEndpoint(ps, path+".gke.endpoint", f.GKE.Endpoint, "container")
	if f.GKE.WithoutAuthentication && f.GKE.CredentialsFile != "" {
		ps.add(path+".gke", "set either withoutAuthentication or credentialsFile, not both")
	}
	seen := map[string]int{}
	for i, e := range f.EKS {
		if !present[path+".eks"] {
			break
		}
		p := index(path+".eks", i)
		validateAWSTarget(ps, p, e.AWSTarget)
		validateEndpoint(ps, p+".endpoint", e.Endpoint, "eks")
		validateEndpoint(ps, p+".stsEndpoint", e.STSEndpoint, "sts")
		validateEndpoint(ps, p+".ec2Endpoint", e.EC2Endpoint, "ec2")
		k := e.Account + "/" + e.Region
		if j, dup := seen[k]; dup {
			ps.add(p, "account %s region %s is listed twice (%s and %s)", e.Account, e.Region, index(path+".eks", j), p)
		}
		seen[k] = i
	}
	validateList(ps, path+".regions", f.Regions, func(r string) string {
		if !isDNSLabel(r) || strings.Count(r, "-") < 2 {
			return fmt.Sprintf("%q is not a region — e.g. us-east-1", r)
		}
		return ""
	})
	for _, l := range []struct {
		key   string
		globs []string
	}{{"include", f.Include}, {"exclude", f.Exclude}} {
		validateList(ps, path+"."+l.key, l.globs, func(g string) string {
			if _, err := glob.Compile(g); err != nil {
				return fmt.Sprintf("%q is not a glob: %v", g, err)
			}
			return ""
		})
	}
	for _, m := range []struct {
		key  string
		tags Tags
	}{{"includeLabels", f.IncludeLabels}, {"excludeLabels", f.ExcludeLabels}} {
		for k := range m.tags {
			if k == "" {
				ps.add(path+"."+m.key, "a label key must not be empty")
			}
		}
	}
	names := map[OutOfScope]int{}
	for i, o := range f.OutOfScope {
		p := index(path+".outOfScope", i)
		if o.Name == "" {
			ps.add(p+".name", "is required — the cluster's name as reports show it")
		}
		if o.Reason == "" {
			ps.add(p+".reason", "is required — every report repeats why this cluster's use may be ignored (e.g. \"decommissioned, ticket OPS-123\")")
		}
		validateOutOfScopeIdentity(ps, p, o)
		validatePlace(ps, p, o.Platform, o.Account, o.Project, o.Location)
		if o.Endpoint != "" {
			if u, err := url.Parse(o.Endpoint); err != nil || u.Host == "" {
				ps.add(p+".endpoint", "%q is not an API server URL — e.g. https://ABC123.gr7.us-east-1.eks.amazonaws.com", o.Endpoint)
			}
		}
		if o.Created != "" && o.CreatedAt().IsZero() {
			ps.add(p+".created", "%q is not a creation time — write it as the cloud reports it (gcloud container clusters describe: createTime; aws eks describe-cluster: createdAt), e.g. 2026-03-02T10:11:12Z", o.Created)
		}
		if o.Expires != "" && o.ExpiresAt().IsZero() {
			ps.add(p+".expires", "%q is not a date — write 2027-01-31", o.Expires)
		}
		k := OutOfScope{Name: o.Name, Platform: o.Platform, Account: o.Account, Project: o.Project, Location: o.Location, Endpoint: o.Endpoint, Created: o.Created}
		if j, dup := names[k]; dup && o.Name != "" {
			ps.add(p+".name", "%q is declared twice (%s and %s)", o.Name, index(path+".outOfScope", j), p)
		}
		names[k] = i
	}
	validateClusterLimits(ps, path, f.Timeout, f.QPS, f.Burst, f.PageSize, present)
	if f.Records != nil {
		f.Records.validate(ps, path+".records")
	}
}

// Discovers says whether discovery is on and has somewhere to look: then
// the clouds, not the config, say which clusters exist.
func (f *Fleet) Discovers() bool {
	return f.Discover && (len(f.GKE.Projects) > 0 || len(f.EKS) > 0)
}

// crossValidateFleet checks the fleet against the clusters: a configured
// cluster is read, so it cannot also be declared out of scope (unless the
// two say they live in different places).
func (c *Config) crossValidateFleet(ps *problems) {
	differ := func(a, b string) bool { return a != "" && b != "" && a != b }
	for i, o := range c.Fleet.OutOfScope {
		for j, cl := range c.Clusters {
			if differ(o.Platform, cl.Platform) || differ(o.Account, cl.Account) || differ(o.Project, cl.Project) || differ(o.Location, cl.Location) {
				continue
			}
			if o.Name != "" && (o.Name == cl.Name || o.Name == cl.CloudName) {
				ps.add(index("fleet.outOfScope", i)+".name", "%q is configured as %s — it is read, so it cannot be out of scope; remove one of the two", o.Name, index("clusters", j))
			}
		}
	}
}

// Matches says whether a discovered cluster's name and labels pass the
// include and exclude rules; rule names the rule that excluded it.
func (f *Fleet) Matches(name string, labels map[string]string) (ok bool, rule string) {
	if len(f.Include) > 0 {
		in := false
		for _, g := range f.Include {
			if re, err := glob.Compile(g); err == nil && re.MatchString(name) {
				in = true
				break
			}
		}
		if !in {
			return false, fmt.Sprintf("fleet.include (%s) does not match its name", quoteList(f.Include))
		}
	}
	for i, g := range f.Exclude {
		if re, err := glob.Compile(g); err == nil && re.MatchString(name) {
			return false, fmt.Sprintf("fleet.exclude[%d] %q", i, g)
		}
	}
	if len(f.IncludeLabels) > 0 && !labelsMatch(f.IncludeLabels, labels) {
		return false, "fleet.includeLabels does not match its labels"
	}
	for _, k := range sortedTagKeys(f.ExcludeLabels) {
		if v, has := labels[k]; has && (f.ExcludeLabels[k] == "" || f.ExcludeLabels[k] == v) {
			return false, fmt.Sprintf("fleet.excludeLabels %s", k)
		}
	}
	return true, ""
}

func labelsMatch(want Tags, have map[string]string) bool {
	for k, v := range want {
		hv, ok := have[k]
		if !ok || (v != "" && hv != v) {
			return false
		}
	}
	return true
}

func sortedTagKeys(t Tags) []string {
	out := make([]string, 0, len(t))
	for k := range t {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
