package config

import (
	"strings"
	"time"
)

// Snapshots is where cluster agents publish what their clusters use
// (reclaim agent), and where a deleter reads it instead of the API
// servers: with it, reclaim run dials no cluster and holds no kube
// credential. One S3 object per cluster, under Prefix, by where the
// cluster lives and its name.
type Snapshots struct {
	// Bucket is the S3 bucket; Account its owner (every call names it, so
	// a same-name bucket elsewhere is never used); Region its region.
	Bucket  string `json:"bucket"`
	Prefix  string `json:"prefix"`
	Account string `json:"account"`
	Region  string `json:"region"`
	// Profile, RoleARN and ExternalID say how the bucket is reached;
	// empty: the pod's identity.
	Profile    string `json:"profile,omitempty"`
	RoleARN    string `json:"roleARN,omitempty"`
	ExternalID string `json:"externalID,omitempty"`
	// Endpoint overrides S3's (an S3-compatible server; path-style).
	Endpoint string `json:"endpoint,omitempty"`
	// MaxAge is how old a record may be: an older one holds what its
	// cluster could use (its agent stopped, or cannot write).
	MaxAge Duration `json:"maxAge"`
	// MaxDrop is how much smaller than the last accepted record a record
	// may be: a cluster that suddenly "uses nothing" holds, until its
	// smaller record has been published for DropSettle.
	MaxDrop    Percent  `json:"maxDrop"`
	DropSettle Duration `json:"dropSettle"`
	// KubeSystemUIDs pin clusters to their kube-system namespace's UID, by
	// clusters[] name: a record with another is another cluster's. A
	// cluster not pinned here is pinned by its first accepted record.
	KubeSystemUIDs Tags `json:"kubeSystemUIDs,omitempty"`
}

const (
	defaultSnapshotMaxAge     = Duration(3 * time.Hour)
	defaultSnapshotMaxDrop    = Percent(0.5)
	defaultSnapshotDropSettle = Duration(24 * time.Hour)
)

func (c *Config) snapshotDefaults() {
	s := c.Fleet.Snapshots
	if s == nil {
		return
	}
	def(c, "fleet.snapshots.maxAge", &s.MaxAge, defaultSnapshotMaxAge)
	def(c, "fleet.snapshots.maxDrop", &s.MaxDrop, defaultSnapshotMaxDrop)
	def(c, "fleet.snapshots.dropSettle", &s.DropSettle, defaultSnapshotDropSettle)
}

func (s *Snapshots) validate(ps *problems, path string) {
	if s.Bucket == "" {
		ps.add(path+".bucket", "is required — the S3 bucket the agents publish to")
	}
	if strings.HasPrefix(s.Prefix, "/") || strings.HasSuffix(s.Prefix, "/") {
		ps.add(path+".prefix", "%q: write it without a leading or trailing slash, e.g. reclaim/prod", s.Prefix)
	}
	validateAWSTarget(ps, path, s.Account, s.Region, s.RoleARN, s.ExternalID)
	validateEndpoint(ps, path+".endpoint", s.Endpoint, "s3")
	if s.MaxAge <= 0 {
		ps.add(path+".maxAge", "must be more than 0 — e.g. 3h for agents that publish hourly")
	}
	if s.MaxDrop <= 0 || s.MaxDrop > 1 {
		ps.add(path+".maxDrop", "%s is out of range — use more than 0%% and at most 100%%", s.MaxDrop)
	}
	if s.DropSettle < 0 {
		ps.add(path+".dropSettle", "must not be negative")
	}
}

// crossValidateSnapshots: a cluster's record is found by where it lives,
// so each cluster says so (reclaim run refuses a kubeconfig too: it dials
// no cluster; reclaim agent keeps its own).
func (c *Config) crossValidateSnapshots(ps *problems) {
	s := c.Fleet.Snapshots
	if s == nil {
		return
	}
	// A record is found by the cluster's identity: two entries of one
	// place and cloud name would read one record, and the other cluster
	// would look read.
	records := map[[5]string]int{}
	for i, cl := range c.Clusters {
		if cl.Platform == "" || cl.Location == "" || cl.Account == "" && cl.Project == "" {
			ps.add(index("clusters", i), "with fleet.snapshots, say where the cluster lives (platform, account or project, location): its record is found by them")
			continue
		}
		name := cl.CloudName
		if name == "" {
			name = cl.Name
		}
		k := [5]string{cl.Platform, cl.Account, cl.Project, cl.Location, name}
		if j, dup := records[k]; dup {
			ps.add(index("clusters", i), "has the identity of %s (%s %s%s %s, cloud name %s), so both would read one record — each cluster's record is found by its platform, account or project, location and cloud name: correct the one that is wrong", index("clusters", j), cl.Platform, cl.Account, cl.Project, cl.Location, name)
			continue
		}
		records[k] = i
	}
	for name := range s.KubeSystemUIDs {
		found := false
		for _, cl := range c.Clusters {
			found = found || cl.Name == name
		}
		if !found {
			ps.add("fleet.snapshots.kubeSystemUIDs."+name, "names no cluster of clusters[]")
		}
	}
}
