package config

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"time"
)

// Records is where cluster agents publish what their clusters use
// (reclaim agent), and where a deleter reads it instead of the API
// servers: with it, reclaim run dials no cluster and holds no kube
// credential. One object per cluster, under Prefix, by where the cluster
// lives and its name, in an S3 bucket (Bucket and the fields after it) or
// a GCS bucket (GCS).
type Records struct {
	// GCS chooses a GCS bucket instead of S3: then none of S3's fields
	// (bucket, account, region, profile, roleARN, externalID, endpoint)
	// is set.
	GCS *GCSRecords `json:"gcs,omitempty"`
	// Bucket is the S3 bucket; Account its owner (every call names it, so
	// a same-name bucket elsewhere is never used); Region its region.
	Bucket  string `json:"bucket,omitempty"`
	Prefix  string `json:"prefix"`
	Account string `json:"account,omitempty"`
	Region  string `json:"region,omitempty"`
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
	// DeleteMaxAge is how old a record may be to delete on: an older one
	// (or one taken before a candidate's grace began) still keeps what it
	// shows in use, but holds every delete its cluster could object to. It
	// bounds the window in which a use made in the cluster since its
	// agent's last publish can lose its resource.
	DeleteMaxAge Duration `json:"deleteMaxAge"`
	// Heartbeat is how often an agent in watch mode (reclaim daemon
	// --agent) publishes when nothing changes; a change publishes within
	// the agent's debounce.
	Heartbeat Duration `json:"heartbeat"`
	// MaxDrop is how much smaller than the last accepted record a record
	// may be: a cluster that suddenly "uses nothing" holds, until its
	// smaller record has been published for DropSettle.
	MaxDrop    Percent  `json:"maxDrop"`
	DropSettle Duration `json:"dropSettle"`
	// KubeSystemUIDs pin clusters to their kube-system namespace's UID, by
	// clusters[] name: a record with another is another cluster's. Set
	// them before the first record to trust none on first use: a cluster
	// not pinned here is pinned by its first accepted record, and each
	// report says so.
	KubeSystemUIDs Tags `json:"kubeSystemUIDs,omitempty"`
	// CASHA256s pin clusters to the SHA-256 of their API server's CA
	// bundle (hex), by clusters[] name: a record with another CA is
	// another cluster's. Where discovery lists the cluster's CA too, the
	// record must match both. A cluster not pinned here is compared with
	// discovery's only (if discovery lists it).
	CASHA256s Tags `json:"caSHA256s,omitempty"`
	// MaxRecordSize is the most a record may decompress to: a larger one
	// is refused, having decompressed no more, and holds its cluster. The
	// deleter sets aside nine times it for each record it decodes, within
	// half its memory target (GOMEMLIMIT), so raise both together.
	MaxRecordSize Size `json:"maxRecordSize"`
}

// GCSRecords is a GCS bucket for the records. GCS bucket names are
// global, so the bucket alone names it.
type GCSRecords struct {
	Bucket string `json:"bucket"`
	// Endpoint overrides the JSON API's (https://storage.googleapis.com/storage/v1/):
	// a Private Service Connect endpoint, or a fake.
	Endpoint string `json:"endpoint,omitempty"`
	// CredentialsFile is a service account key file; empty: application
	// default credentials (GKE Workload Identity, the metadata server).
	CredentialsFile string `json:"credentialsFile,omitempty"`
}

// Where is the record store's URL of key: gs://BUCKET/KEY or s3://BUCKET/KEY.
func (s *Records) Where(key string) string {
	if s.GCS != nil {
		return "gs://" + s.GCS.Bucket + "/" + key
	}
	return "s3://" + s.Bucket + "/" + key
}

const (
	defaultRecordsMaxAge     = Duration(3 * time.Hour)
	defaultRecordsHeartbeat  = Duration(5 * time.Minute)
	defaultRecordsMaxDrop    = Percent(0.5)
	defaultRecordsDropSettle = Duration(24 * time.Hour)
	// DefaultMaxRecordSize is fleet.records.maxRecordSize's default: a
	// cluster of some 20,000 pods.
	DefaultMaxRecordSize = Size(8 << 20)
)

// DeleteMaxAgeFor is fleet.records.deleteMaxAge's default for agents
// that heartbeat every heartbeat: a watching agent publishes at least that
// often, so a record older than two heartbeats and slack (a missed
// publish, the debounce, a collect and a put: 2m) means the agent is not
// watching; 12m for the 5m default.
func DeleteMaxAgeFor(heartbeat Duration) Duration {
	return 2*heartbeat + Duration(2*time.Minute)
}

func (c *Config) recordsDefaults() {
	s := c.Fleet.Records
	if s == nil {
		return
	}
	def(c, "fleet.records.maxAge", &s.MaxAge, defaultRecordsMaxAge)
	def(c, "fleet.records.heartbeat", &s.Heartbeat, defaultRecordsHeartbeat)
	def(c, "fleet.records.deleteMaxAge", &s.DeleteMaxAge, DeleteMaxAgeFor(s.Heartbeat))
	def(c, "fleet.records.maxDrop", &s.MaxDrop, defaultRecordsMaxDrop)
	def(c, "fleet.records.dropSettle", &s.DropSettle, defaultRecordsDropSettle)
	def(c, "fleet.records.maxRecordSize", &s.MaxRecordSize, DefaultMaxRecordSize)
}

func (s *Records) validate(ps *problems, path string) {
	if s.GCS != nil {
		s.validateGCS(ps, path)
	} else {
		if s.Bucket == "" {
			ps.add(path+".bucket", "is required — the S3 bucket the agents publish to (or, for a GCS bucket, gcs.bucket)")
		}
		validateAWSTarget(ps, path, AWSTarget{Account: s.Account, Region: s.Region, RoleARN: s.RoleARN, ExternalID: s.ExternalID})
		validateEndpoint(ps, path+".endpoint", s.Endpoint, "s3")
	}
	if strings.HasPrefix(s.Prefix, "/") || strings.HasSuffix(s.Prefix, "/") {
		ps.add(path+".prefix", "%q: write it without a leading or trailing slash, e.g. reclaim/prod", s.Prefix)
	}
	if s.MaxAge <= 0 {
		ps.add(path+".maxAge", "must be more than 0 — e.g. 3h for agents that publish hourly")
	}
	switch {
	case s.DeleteMaxAge <= 0:
		ps.add(path+".deleteMaxAge", "must be more than 0 — e.g. %s for agents in watch mode that heartbeat every %s", DeleteMaxAgeFor(s.Heartbeat), s.Heartbeat)
	case s.MaxAge > 0 && s.DeleteMaxAge > s.MaxAge:
		ps.add(path+".deleteMaxAge", "%s is more than fleet.records.maxAge %s: a record too old to report on cannot be fresh enough to delete on — lower it (e.g. %s) or raise maxAge", s.DeleteMaxAge, s.MaxAge, DeleteMaxAgeFor(s.Heartbeat))
	case s.Heartbeat > 0 && s.Heartbeat >= s.DeleteMaxAge:
		ps.add(path+".deleteMaxAge", "%s is not more than fleet.records.heartbeat %s: a quiet cluster's record would hold every delete between heartbeats — use at least %s", s.DeleteMaxAge, s.Heartbeat, DeleteMaxAgeFor(s.Heartbeat))
	}
	if s.Heartbeat <= 0 {
		ps.add(path+".heartbeat", "must be more than 0 — e.g. 5m")
	}
	if s.MaxDrop <= 0 || s.MaxDrop > 1 {
		ps.add(path+".maxDrop", "%s is out of range — use more than 0%% and at most 100%%", s.MaxDrop)
	}
	for name, h := range s.CASHA256s {
		if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
			ps.add(path+".caSHA256s."+name, "%q is not a SHA-256 in hex (64 digits): e.g. the output of sha256sum on the cluster's CA bundle", h)
		}
	}
	if s.MaxRecordSize < 0 || s.MaxRecordSize > 1<<30 {
		ps.add(path+".maxRecordSize", "%s is out of range — use at most 1Gi, e.g. 8Mi", s.MaxRecordSize)
	}
	if s.DropSettle < 0 {
		ps.add(path+".dropSettle", "must not be negative")
	}
}

// validateGCS: a GCS bucket, and none of S3's fields (they would be
// ignored, and say the records are somewhere they are not).
func (s *Records) validateGCS(ps *problems, path string) {
	g := s.GCS
	if g.Bucket == "" {
		ps.add(path+".gcs.bucket", "is required — the GCS bucket the agents publish to")
	} else if strings.ContainsAny(g.Bucket, "/:") {
		ps.add(path+".gcs.bucket", "%q: write the bucket's name alone, e.g. acme-reclaim (the key prefix is fleet.records.prefix)", g.Bucket)
	}
	validateEndpoint(ps, path+".gcs.endpoint", g.Endpoint, "storage")
	validateGCSEndpointPath(ps, path+".gcs.endpoint", g.Endpoint)
	for _, f := range [][2]string{{"bucket", s.Bucket}, {"account", s.Account}, {"region", s.Region}, {"profile", s.Profile},
		{"roleARN", s.RoleARN}, {"externalID", s.ExternalID}, {"endpoint", s.Endpoint}} {
		if f[1] != "" {
			ps.add(path+"."+f[0], "is S3's: with fleet.records.gcs the records are in GCS — remove it (or remove gcs to use S3)")
		}
	}
}

// gcsAPIPath is where GCS's JSON API is under its endpoint: the client
// reads and lists at ENDPOINT + "b/BUCKET/o", so the endpoint is the API's
// base URL, its path included, with its trailing slash.
const gcsAPIPath = "/storage/v1/"

// validateGCSEndpointPath: an endpoint without the JSON API's path would
// send every read and listing to the wrong path (a host alone: /b/…; no
// trailing slash: /storage/b/…), which a server answers as denied or
// missing, and every record would hold for a reason that is not it.
func validateGCSEndpointPath(ps *problems, p, endpoint string) {
	u, err := url.Parse(endpoint)
	if endpoint == "" || err != nil || u.Host == "" || strings.HasSuffix(u.Path, gcsAPIPath) {
		return
	}
	base := strings.TrimSuffix(endpoint, u.RequestURI())
	switch {
	case u.RawQuery != "" || u.Fragment != "":
		ps.add(p, "%q: the endpoint is a base URL, with no query or fragment — write e.g. %s%s", endpoint, base, gcsAPIPath)
	case strings.TrimSuffix(u.Path, "/") == "":
		ps.add(p, "%q has no API path: GCS's JSON API is under %s, and without it every read goes to the wrong path and reads as denied or missing — write %s%s", endpoint, gcsAPIPath, base, gcsAPIPath)
	case strings.HasSuffix(u.Path, strings.TrimSuffix(gcsAPIPath, "/")):
		ps.add(p, "%q: the API path needs its trailing slash (without it reads go to %sb/…) — write %s/", endpoint, strings.TrimSuffix(u.Path, "v1"), endpoint)
	default:
		ps.add(p, "%q does not end with GCS's JSON API path %s — write the API's base URL with it, e.g. %s%s", endpoint, gcsAPIPath, strings.TrimSuffix(endpoint, "/"), gcsAPIPath)
	}
}

// crossValidateRecords: a cluster's record is found by where it lives,
// so each cluster says so (reclaim run refuses a kubeconfig too: it dials
// no cluster; reclaim agent keeps its own).
func (c *Config) crossValidateRecords(ps *problems) {
	s := c.Fleet.Records
	if s == nil {
		return
	}
	// A record is found by the cluster's identity: two entries of one
	// place and cloud name would read one record, and the other cluster
	// would look read.
	records := map[[5]string]int{}
	for i, cl := range c.Clusters {
		if cl.Platform == "" || cl.Location == "" || cl.Account == "" && cl.Project == "" {
			ps.add(index("clusters", i), "with fleet.records, say where the cluster lives (platform, account or project, location): its record is found by them")
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
	for key, pins := range map[string]Tags{"kubeSystemUIDs": s.KubeSystemUIDs, "caSHA256s": s.CASHA256s} {
		for name := range pins {
			found := false
			for _, cl := range c.Clusters {
				found = found || cl.Name == name
			}
			if !found {
				ps.add("fleet.records."+key+"."+name, "names no cluster of clusters[]")
			}
		}
	}
}
