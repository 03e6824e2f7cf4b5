// Package gcefake is a wire-level fake of the parts of the Compute Engine v1 REST
// API that reclaim uses: disks and regionDisks (aggregatedList, get, delete,
// createSnapshot), regions.get, snapshots (list, get, delete), images.list
// and the zone, region and global operations (get and wait). It speaks the same JSON the real API does, so the
// real cloud.google.com/go/compute/apiv1 clients can drive it through
// option.WithEndpoint(server.URL()) and option.WithoutAuthentication().
//
// Everything a test needs to arrange or observe is a method on *Server: seeding
// (AddDisk, AddSnapshot, AddImage, SetQuota, SetScopeWarning, Attach, SetLabels), fault injection
// (FailNext, FailNextOp, SetOnRequest), latency (SetLatency) and call counters
// (Calls, CallCounts, MutatingCalls). Methods are named by their compute method
// ids: "disks.aggregatedList", "disks.get", "regionDisks.delete", ...
//
// Disk keys are strings in the form projects/P/zones/Z/disks/D or
// projects/P/regions/R/disks/D (inventory.DiskKey.String()); a full
// https://www.googleapis.com/compute/v1/ URL is accepted too.
//
// All methods are safe for concurrent use.
package gcefake

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"reclaim.dev/reclaim/providers/fakeapi"
)

// Method ids, as in the compute v1 discovery document.
const (
	MethodDisksAggregatedList       = "disks.aggregatedList"
	MethodDisksGet                  = "disks.get"
	MethodDisksDelete               = "disks.delete"
	MethodDisksCreateSnapshot       = "disks.createSnapshot"
	MethodRegionDisksGet            = "regionDisks.get"
	MethodRegionDisksDelete         = "regionDisks.delete"
	MethodRegionDisksCreateSnapshot = "regionDisks.createSnapshot"
	MethodRegionsGet                = "regions.get"
	MethodSnapshotsGet              = "snapshots.get"
	MethodSnapshotsList             = "snapshots.list"
	MethodSnapshotsDelete           = "snapshots.delete"
	MethodImagesList                = "images.list"
	MethodZoneOperationsGet         = "zoneOperations.get"
	MethodZoneOperationsWait        = "zoneOperations.wait"
	MethodRegionOperationsGet       = "regionOperations.get"
	MethodRegionOperationsWait      = "regionOperations.wait"
	MethodGlobalOperationsGet       = "globalOperations.get"
	MethodGlobalOperationsWait      = "globalOperations.wait"
	// MethodUnknown counts requests that matched no route (answered 404).
	MethodUnknown = "unknown"
)

// BaseURL prefixes every selfLink, zone, region and type URL the fake returns,
// as the real API does.
const BaseURL = "https://www.googleapis.com/compute/v1/"

// MaxPageSize is the largest maxResults the real API honours.
const MaxPageSize = 500

// emptyLabelFingerprint is what GCE reports for a resource without labels.
const emptyLabelFingerprint = "42WmSpB8rSM="

// wireTimeZone renders timestamps the way GCE does: local Pacific time with an offset.
var wireTimeZone = time.FixedZone("PDT", -7*3600)

const wireTimeLayout = "2006-01-02T15:04:05.000-07:00"

// Options configures a Server. The zero value is usable.
type Options struct {
	// Latency is added to every request before it is handled.
	Latency time.Duration
	// OpPolls is how many operations.get/wait calls answer RUNNING before the
	// operation is DONE. 0 (the default) means the first poll sees DONE.
	OpPolls int
	// OpDelay, if set, keeps an operation RUNNING until this long after it was
	// created, regardless of OpPolls. operations.wait sleeps until then.
	OpDelay time.Duration
	// RegionalQuotaFactor multiplies a regional disk's size when a delete gives
	// quota back. Default 1 (see the package README note in SetQuota).
	RegionalQuotaFactor float64
	// OnRequest, if set, is called for every routed request with its method id;
	// a non-nil Fault is answered instead of the real handling.
	OnRequest func(method string) *Fault
	// OnDelete, if set, is called (outside the fake's lock) after a delete
	// operation completed and the disk is gone, with the disk's key.
	OnDelete func(key string)
	// Logf receives one line per unknown path. Default log.Printf.
	Logf func(format string, args ...any)
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Disk is a disk to seed, and what Disk(key) returns.
type Disk struct {
	// Exactly one of Zone and Region.
	Zone   string
	Region string
	Name   string
	SizeGB int64
	// Type is a disk type name: pd-standard, pd-balanced, pd-ssd, pd-extreme, hyperdisk-*.
	// Default pd-balanced.
	Type        string
	Status      string // default READY; DELETING while a delete operation runs
	Users       []string
	Labels      map[string]string
	Description string
	Created     time.Time // default: the fake's clock at AddDisk
	LastAttach  time.Time
	LastDetach  time.Time
	// ReplicaZones are zone names (not URLs) for regional disks.
	ReplicaZones []string
	// SourceSnapshot is the snapshot the disk was made from: a path
	// (projects/P/global/snapshots/N) or URL.
	SourceSnapshot string

	// Generated by the fake; ignored by AddDisk.
	ID               string
	SelfLink         string
	LabelFingerprint string
}

// Key returns the disk's key in the projects/P/zones/Z/disks/D form.
func (d Disk) key(project string) string {
	if d.Region != "" {
		return "projects/" + project + "/regions/" + d.Region + "/disks/" + d.Name
	}
	return "projects/" + project + "/zones/" + d.Zone + "/disks/" + d.Name
}

func (d Disk) scope() string {
	if d.Region != "" {
		return "regions/" + d.Region
	}
	return "zones/" + d.Zone
}

func (d Disk) region() string {
	if d.Region != "" {
		return d.Region
	}
	if i := strings.LastIndexByte(d.Zone, '-'); i > 0 {
		return d.Zone[:i]
	}
	return d.Zone
}

// Snapshot is a snapshot created through createSnapshot, or seeded
// (AddSnapshot).
type Snapshot struct {
	Project      string
	Name         string
	SourceDisk   string // key of the source disk, projects/P/zones/Z/disks/D
	SourceDiskID string
	Labels       map[string]string
	Description  string
	SizeGB       int64
	StorageBytes int64
	Status       string // CREATING until its operation is done, then READY
	Created      time.Time
	ID           string
	// Type is STANDARD (the default) or ARCHIVE.
	Type string
	// SchedulePolicy is the resource policy (a path or URL) of the
	// snapshot schedule that made it.
	SchedulePolicy string
	op             *operation // the createSnapshot that makes it
}

// Fault is an error response to inject.
type Fault struct {
	Status  int    // HTTP status, e.g. 500
	Reason  string // e.g. backendError, rateLimitExceeded; default derived from Status
	Message string // default derived from Reason
	Domain  string // default usageLimits for quota/rate reasons, else global
}

type quota struct{ limit, usage float64 }

type region struct {
	quotas map[string]*quota
	order  []string
}

type project struct {
	disks    map[string]*Disk // by key
	images   map[string]*Image
	regions  map[string]*region
	warnings map[string][2]string // scope -> code, message
}

type operation struct {
	project   string
	zone      string
	region    string
	name      string
	id        string
	opType    string
	target    string // disk key
	targetID  string
	created   time.Time
	pollsLeft int
	done      bool
	ended     time.Time
	failCode  string
	failMsg   string
	complete  func() (onDelete string) // runs under lock once, when the op becomes DONE
}

type opFault struct {
	n             int
	code, message string
}

// Server is the fake compute API.
type Server struct {
	// Counter counts requests by operation (Calls, CallCounts, TotalCalls,
	// MutatingCalls, ResetCalls).
	fakeapi.Counter

	mu        sync.Mutex
	opts      Options
	projects  map[string]*project
	ops       map[string]*operation // by project/scope/name
	snapshots map[string]*Snapshot  // by project/name
	snapOrder []string
	faults    map[string][]Fault
	opFaults  map[string]*opFault
	nextID    uint64
	latency   time.Duration

	ts *httptest.Server
}

// New starts a fake on a local httptest server.
func New(opts Options) *Server {
	s := NewHandler(opts)
	s.ts = httptest.NewServer(s)
	return s
}

// NewHandler returns a fake that is not listening; serve it yourself (it is an http.Handler).
func NewHandler(opts Options) *Server {
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RegionalQuotaFactor == 0 {
		opts.RegionalQuotaFactor = 1
	}
	return &Server{
		opts:      opts,
		projects:  map[string]*project{},
		ops:       map[string]*operation{},
		snapshots: map[string]*Snapshot{},
		faults:    map[string][]Fault{},
		opFaults:  map[string]*opFault{},
		nextID:    4_000_000_000_000_000_000,
		latency:   opts.Latency,
	}
}

// URL is the endpoint to give option.WithEndpoint.
func (s *Server) URL() string {
	if s.ts == nil {
		return ""
	}
	return s.ts.URL
}

// Close stops the server started by New.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.Close()
	}
}

// SetLatency changes the per-request latency.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// SetOnRequest replaces the OnRequest hook.
func (s *Server) SetOnRequest(fn func(method string) *Fault) {
	s.mu.Lock()
	s.opts.OnRequest = fn
	s.mu.Unlock()
}

// SetOnDelete replaces the OnDelete hook.
func (s *Server) SetOnDelete(fn func(key string)) {
	s.mu.Lock()
	s.opts.OnDelete = fn
	s.mu.Unlock()
}

func (s *Server) project(p string) *project {
	pr := s.projects[p]
	if pr == nil {
		pr = &project{disks: map[string]*Disk{}, regions: map[string]*region{}, warnings: map[string][2]string{}}
		s.projects[p] = pr
	}
	return pr
}

func (s *Server) id() string {
	s.nextID += 7919
	return strconv.FormatUint(s.nextID, 10)
}

// AddDisk seeds a disk (replacing one with the same key) and returns its key.
// The disk's region becomes known to regions.get (without quotas unless SetQuota).
// Adding a disk does not change quota usage; set usage with SetQuota.
func (s *Server) AddDisk(projectID string, d Disk) string {
	if (d.Zone == "") == (d.Region == "") || d.Name == "" || projectID == "" {
		panic(fmt.Sprintf("gcefake.AddDisk: need a project, a name and exactly one of Zone and Region, got %q %+v", projectID, d))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.Type == "" {
		d.Type = "pd-balanced"
	}
	if d.Status == "" {
		d.Status = "READY"
	}
	if d.Created.IsZero() {
		d.Created = s.opts.Now()
	}
	d.Users = slices.Clone(d.Users)
	d.Labels = maps.Clone(d.Labels)
	d.ReplicaZones = slices.Clone(d.ReplicaZones)
	d.ID = s.id()
	key := d.key(projectID)
	d.SelfLink = BaseURL + key
	d.LabelFingerprint = fingerprint(d.Labels)
	pr := s.project(projectID)
	pr.disks[key] = &d
	if pr.regions[d.region()] == nil {
		pr.regions[d.region()] = &region{quotas: map[string]*quota{}}
	}
	return key
}

// RemoveDisk deletes a disk out of band (no operation, no hooks). It reports whether it existed.
func (s *Server) RemoveDisk(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, k, err := normKey(key)
	if err != nil {
		return false
	}
	pr := s.projects[p]
	if pr == nil || pr.disks[k] == nil {
		return false
	}
	delete(pr.disks, k)
	return true
}

// AddRegion makes a region known to regions.get, without quotas.
func (s *Server) AddRegion(projectID, regionName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.project(projectID)
	if pr.regions[regionName] == nil {
		pr.regions[regionName] = &region{quotas: map[string]*quota{}}
	}
}

// SetQuota sets one regional quota metric (and makes the region known).
// Deleting a disk gives its size back to DISKS_TOTAL_GB (pd-standard) or
// SSD_TOTAL_GB (pd-balanced, pd-ssd, pd-extreme) when that metric is set;
// regional disks give back size × Options.RegionalQuotaFactor (default 1).
func (s *Server) SetQuota(projectID, regionName, metric string, limit, usage float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.project(projectID)
	r := pr.regions[regionName]
	if r == nil {
		r = &region{quotas: map[string]*quota{}}
		pr.regions[regionName] = r
	}
	if r.quotas[metric] == nil {
		r.order = append(r.order, metric)
	}
	r.quotas[metric] = &quota{limit: limit, usage: usage}
}

// Quota returns a metric's limit and usage, and whether it is set.
func (s *Server) Quota(projectID, regionName, metric string) (limit, usage float64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pr := s.projects[projectID]; pr != nil {
		if r := pr.regions[regionName]; r != nil {
			if q := r.quotas[metric]; q != nil {
				return q.limit, q.usage, true
			}
		}
	}
	return 0, 0, false
}

// SetScopeWarning makes aggregatedList answer the scope ("zones/Z" or
// "regions/R") with this warning and no disks, on every page. Code
// "NO_RESULTS_ON_PAGE" is harmless; anything else (UNREACHABLE) means the
// scope's disks are unknown. An empty code clears the warning.
func (s *Server) SetScopeWarning(projectID, scope, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.project(projectID)
	if code == "" {
		delete(pr.warnings, scope)
		return
	}
	if message == "" {
		message = fmt.Sprintf("Scope '%s' is unreachable.", scope)
	}
	pr.warnings[scope] = [2]string{code, message}
}

// normKey turns a key or URL into (project, canonical key).
func normKey(key string) (string, string, error) {
	if i := strings.Index(key, "/projects/"); i >= 0 && strings.HasPrefix(key, "http") {
		key = key[i+1:]
	}
	p := strings.Split(key, "/")
	if len(p) != 6 || p[0] != "projects" || (p[2] != "zones" && p[2] != "regions") || p[4] != "disks" {
		return "", "", fmt.Errorf("gcefake: bad disk key %q, want projects/P/zones/Z/disks/D or projects/P/regions/R/disks/D", key)
	}
	return p[1], key, nil
}

// resolve accepts a full key, or a key relative to projectID (zones/Z/disks/D).
func resolve(projectID, key string) (string, string, error) {
	if projectID != "" && !strings.Contains(key, "projects/") {
		key = "projects/" + projectID + "/" + strings.TrimPrefix(key, "/")
	}
	p, k, err := normKey(key)
	if err == nil && projectID != "" && p != projectID {
		err = fmt.Errorf("gcefake: key %q is not in project %q", key, projectID)
	}
	return p, k, err
}

func (s *Server) lookup(projectID, key string) (*Disk, error) {
	p, k, err := resolve(projectID, key)
	if err != nil {
		return nil, err
	}
	if pr := s.projects[p]; pr != nil {
		if d := pr.disks[k]; d != nil {
			return d, nil
		}
	}
	return nil, fmt.Errorf("gcefake: no disk %s", k)
}

// Attach adds instanceURL to the disk's users and sets its lastAttachTimestamp.
// key is projects/P/zones/Z/disks/D (or relative to projectID: zones/Z/disks/D);
// projectID may be "".
func (s *Server) Attach(projectID, key, instanceURL string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.lookup(projectID, key)
	if err != nil {
		return err
	}
	if !slices.Contains(d.Users, instanceURL) {
		d.Users = append(d.Users, instanceURL)
	}
	d.LastAttach = s.opts.Now()
	return nil
}

// Detach removes instanceURL (all users if "") and sets lastDetachTimestamp.
func (s *Server) Detach(projectID, key, instanceURL string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.lookup(projectID, key)
	if err != nil {
		return err
	}
	if instanceURL == "" {
		d.Users = nil
	} else {
		d.Users = slices.DeleteFunc(d.Users, func(u string) bool { return u == instanceURL })
	}
	if len(d.Users) == 0 {
		d.Users = nil
	}
	d.LastDetach = s.opts.Now()
	return nil
}

// SetLabels replaces the disk's labels; the labelFingerprint changes with them.
func (s *Server) SetLabels(projectID, key string, labels map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.lookup(projectID, key)
	if err != nil {
		return err
	}
	d.Labels = maps.Clone(labels)
	d.LabelFingerprint = fingerprint(d.Labels)
	return nil
}

// Disk returns a copy of the disk at key.
func (s *Server) Disk(key string) (Disk, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.lookup("", key)
	if err != nil {
		return Disk{}, false
	}
	return cloneDisk(d), true
}

// HasDisk reports whether the disk at key exists (a disk whose delete operation
// has not completed still exists).
func (s *Server) HasDisk(key string) bool {
	_, ok := s.Disk(key)
	return ok
}

// Disks returns copies of a project's disks, sorted by key.
func (s *Server) Disks(projectID string) []Disk {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[projectID]
	if pr == nil {
		return nil
	}
	out := make([]Disk, 0, len(pr.disks))
	for _, k := range slices.Sorted(maps.Keys(pr.disks)) {
		out = append(out, cloneDisk(pr.disks[k]))
	}
	return out
}

func cloneDisk(d *Disk) Disk {
	c := *d
	c.Users = slices.Clone(d.Users)
	c.Labels = maps.Clone(d.Labels)
	c.ReplicaZones = slices.Clone(d.ReplicaZones)
	return c
}

// Snapshots returns every snapshot created, in creation order.
func (s *Server) Snapshots() []Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Snapshot, 0, len(s.snapOrder))
	for _, k := range s.snapOrder {
		sn := *s.snapshots[k]
		sn.Labels = maps.Clone(sn.Labels)
		sn.op = nil
		out = append(out, sn)
	}
	return out
}

// FailNext makes the next n requests of method (a method id, or "*" for any)
// answer with status and reason instead of being handled. Faults queue up.
func (s *Server) FailNext(method string, n int, status int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], Fault{Status: status, Reason: reason})
	}
}

// FailNextOp makes the next n operations started by method (e.g.
// "disks.delete", "regionDisks.createSnapshot") finish DONE with an error of
// this code (e.g. "RESOURCE_IN_USE_BY_ANOTHER_RESOURCE") and message, with
// httpErrorStatusCode 400, and without taking effect.
func (s *Server) FailNextOp(method string, n int, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opFaults[method] = &opFault{n: n, code: code, message: message}
}

// CompleteOperations marks every pending operation DONE now (running OnDelete hooks).
func (s *Server) CompleteOperations() {
	s.mu.Lock()
	var deleted []string
	for _, op := range s.ops {
		if !op.done {
			if k := s.finish(op); k != "" {
				deleted = append(deleted, k)
			}
		}
	}
	hook := s.opts.OnDelete
	s.mu.Unlock()
	s.runOnDelete(hook, deleted...)
}

// PendingOperations counts operations not yet DONE.
func (s *Server) PendingOperations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, op := range s.ops {
		if !op.done {
			n++
		}
	}
	return n
}

func (s *Server) runOnDelete(hook func(string), keys ...string) {
	if hook == nil {
		return
	}
	for _, k := range keys {
		hook(k)
	}
}

func fingerprint(labels map[string]string) string {
	if len(labels) == 0 {
		return emptyLabelFingerprint
	}
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(h, "%s=%s\n", k, labels[k])
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)[:8])
}

func wireTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(wireTimeZone).Format(wireTimeLayout)
}

// ---- HTTP ----

type route struct {
	method  string // compute method id
	project string
	zone    string
	region  string
	name    string // disk, operation or snapshot name
}

const prefix = "/compute/v1/projects/"

func match(httpMethod, path string) (route, bool) {
	if !strings.HasPrefix(path, prefix) {
		return route{}, false
	}
	p := strings.Split(strings.TrimPrefix(path, prefix), "/")
	for _, seg := range p {
		if seg == "" {
			return route{}, false
		}
	}
	r := route{project: p[0]}
	rest := p[1:]
	get, post, del := httpMethod == http.MethodGet, httpMethod == http.MethodPost, httpMethod == http.MethodDelete
	switch {
	case len(rest) == 2 && rest[0] == "aggregated" && rest[1] == "disks" && get:
		r.method = MethodDisksAggregatedList
	case len(rest) == 2 && rest[0] == "regions" && get:
		r.method, r.region = MethodRegionsGet, rest[1]
	case len(rest) == 3 && rest[0] == "global" && rest[1] == "snapshots" && get:
		r.method, r.name = MethodSnapshotsGet, rest[2]
	case len(rest) == 3 && rest[0] == "global" && rest[1] == "snapshots" && del:
		r.method, r.name = MethodSnapshotsDelete, rest[2]
	case len(rest) == 2 && rest[0] == "global" && rest[1] == "snapshots" && get:
		r.method = MethodSnapshotsList
	case len(rest) == 2 && rest[0] == "global" && rest[1] == "images" && get:
		r.method = MethodImagesList
	case len(rest) == 3 && rest[0] == "global" && rest[1] == "operations" && get:
		r.method, r.name = MethodGlobalOperationsGet, rest[2]
	case len(rest) == 4 && rest[0] == "global" && rest[1] == "operations" && rest[3] == "wait" && post:
		r.method, r.name = MethodGlobalOperationsWait, rest[2]
	case len(rest) >= 4 && (rest[0] == "zones" || rest[0] == "regions"):
		zonal := rest[0] == "zones"
		if zonal {
			r.zone = rest[1]
		} else {
			r.region = rest[1]
		}
		r.name = rest[3]
		pick := func(z, rg string) string {
			if zonal {
				return z
			}
			return rg
		}
		switch {
		case rest[2] == "disks" && len(rest) == 4 && get:
			r.method = pick(MethodDisksGet, MethodRegionDisksGet)
		case rest[2] == "disks" && len(rest) == 4 && del:
			r.method = pick(MethodDisksDelete, MethodRegionDisksDelete)
		case rest[2] == "disks" && len(rest) == 5 && rest[4] == "createSnapshot" && post:
			r.method = pick(MethodDisksCreateSnapshot, MethodRegionDisksCreateSnapshot)
		case rest[2] == "operations" && len(rest) == 4 && get:
			r.method = pick(MethodZoneOperationsGet, MethodRegionOperationsGet)
		case rest[2] == "operations" && len(rest) == 5 && rest[4] == "wait" && post:
			r.method = pick(MethodZoneOperationsWait, MethodRegionOperationsWait)
		}
	}
	return r, r.method != ""
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rt, ok := match(req.Method, req.URL.Path)
	s.mu.Lock()
	latency := s.latency
	method := MethodUnknown
	if ok {
		method = rt.method
	}
	// Every DELETE and every POST (createSnapshot, any unrouted POST) but
	// operations.wait, which only reads, could change state.
	s.Count(method, req.Method == http.MethodDelete || (req.Method == http.MethodPost && !strings.HasSuffix(req.URL.Path, "/wait")))
	fakeapi.Saw(Permission(method))
	var fault *Fault
	if ok {
		for _, m := range []string{rt.method, "*"} {
			if q := s.faults[m]; len(q) > 0 {
				f := q[0]
				s.faults[m] = q[1:]
				fault = &f
				break
			}
		}
	}
	hook := s.opts.OnRequest
	logf := s.opts.Logf
	s.mu.Unlock()

	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return
		}
	}
	if !ok {
		logf("gcefake: no route for %s %s", req.Method, req.URL.RequestURI())
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("gcefake: no route for %s %s", req.Method, req.URL.Path), "")
		return
	}
	if fault == nil && hook != nil {
		fault = hook(rt.method)
	}
	if fault != nil {
		writeFault(w, *fault)
		return
	}
	switch rt.method {
	case MethodDisksAggregatedList:
		s.aggregatedList(w, req, rt)
	case MethodDisksGet, MethodRegionDisksGet:
		s.getDisk(w, rt)
	case MethodDisksDelete, MethodRegionDisksDelete:
		s.deleteDisk(w, rt)
	case MethodDisksCreateSnapshot, MethodRegionDisksCreateSnapshot:
		s.createSnapshot(w, req, rt)
	case MethodRegionsGet:
		s.getRegion(w, rt)
	case MethodSnapshotsGet:
		s.getSnapshot(w, rt)
	case MethodSnapshotsList:
		s.listSnapshots(w, req, rt)
	case MethodSnapshotsDelete:
		s.deleteSnapshot(w, rt)
	case MethodImagesList:
		s.listImages(w, req, rt)
	case MethodZoneOperationsGet, MethodRegionOperationsGet, MethodGlobalOperationsGet:
		s.pollOp(w, req, rt, false)
	case MethodZoneOperationsWait, MethodRegionOperationsWait, MethodGlobalOperationsWait:
		s.pollOp(w, req, rt, true)
	}
}

func defaultReason(status int) string {
	switch status {
	case 400:
		return "invalid"
	case 403:
		return "forbidden"
	case 404:
		return "notFound"
	case 409:
		return "alreadyExists"
	case 429:
		return "rateLimitExceeded"
	case 503:
		return "backendError"
	}
	if status >= 500 {
		return "backendError"
	}
	return "invalid"
}

func writeFault(w http.ResponseWriter, f Fault) {
	if f.Status == 0 {
		f.Status = http.StatusInternalServerError
	}
	if f.Reason == "" {
		f.Reason = defaultReason(f.Status)
	}
	if f.Message == "" {
		switch f.Reason {
		case "rateLimitExceeded":
			f.Message = "Rate Limit Exceeded"
		case "quotaExceeded":
			f.Message = "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute' of service 'compute.googleapis.com'."
		case "backendError":
			f.Message = "Internal error. Please try again or contact Google Support."
		default:
			f.Message = "gcefake injected " + f.Reason
		}
	}
	writeError(w, f.Status, f.Reason, f.Message, f.Domain)
}

type errorItem struct {
	Domain  string `json:"domain"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, reason, message, domain string) {
	if domain == "" {
		domain = "global"
		if reason == "quotaExceeded" || reason == "rateLimitExceeded" || reason == "userRateLimitExceeded" {
			domain = "usageLimits"
		}
	}
	body := map[string]any{"error": map[string]any{
		"code":    status,
		"message": message,
		"errors":  []errorItem{{Domain: domain, Reason: reason, Message: message}},
	}}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ---- disks ----

type wireDisk struct {
	Kind                   string            `json:"kind"`
	ID                     string            `json:"id"`
	CreationTimestamp      string            `json:"creationTimestamp,omitempty"`
	Name                   string            `json:"name"`
	Description            string            `json:"description,omitempty"`
	SizeGb                 string            `json:"sizeGb"`
	Zone                   string            `json:"zone,omitempty"`
	Region                 string            `json:"region,omitempty"`
	Status                 string            `json:"status"`
	SelfLink               string            `json:"selfLink"`
	Type                   string            `json:"type"`
	LastAttachTimestamp    string            `json:"lastAttachTimestamp,omitempty"`
	LastDetachTimestamp    string            `json:"lastDetachTimestamp,omitempty"`
	Users                  []string          `json:"users,omitempty"`
	Labels                 map[string]string `json:"labels,omitempty"`
	LabelFingerprint       string            `json:"labelFingerprint"`
	ReplicaZones           []string          `json:"replicaZones,omitempty"`
	PhysicalBlockSizeBytes string            `json:"physicalBlockSizeBytes"`
	SourceSnapshot         string            `json:"sourceSnapshot,omitempty"`
}

func toWire(projectID string, d *Disk) wireDisk {
	w := wireDisk{
		Kind:                   "compute#disk",
		ID:                     d.ID,
		CreationTimestamp:      wireTime(d.Created),
		Name:                   d.Name,
		Description:            d.Description,
		SizeGb:                 strconv.FormatInt(d.SizeGB, 10),
		Status:                 d.Status,
		SelfLink:               d.SelfLink,
		LastAttachTimestamp:    wireTime(d.LastAttach),
		LastDetachTimestamp:    wireTime(d.LastDetach),
		Users:                  slices.Clone(d.Users),
		Labels:                 maps.Clone(d.Labels),
		LabelFingerprint:       d.LabelFingerprint,
		PhysicalBlockSizeBytes: "4096",
		SourceSnapshot:         wireURL(d.SourceSnapshot),
	}
	loc := BaseURL + "projects/" + projectID + "/" + d.scope()
	if d.Region != "" {
		w.Region = loc
		w.Type = loc + "/diskTypes/" + d.Type
		for _, z := range d.ReplicaZones {
			w.ReplicaZones = append(w.ReplicaZones, BaseURL+"projects/"+projectID+"/zones/"+z)
		}
	} else {
		w.Zone = loc
		w.Type = loc + "/diskTypes/" + d.Type
	}
	return w
}

func routeKey(rt route) string {
	if rt.region != "" {
		return "projects/" + rt.project + "/regions/" + rt.region + "/disks/" + rt.name
	}
	return "projects/" + rt.project + "/zones/" + rt.zone + "/disks/" + rt.name
}

func notFound(w http.ResponseWriter, what string) {
	writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("The resource '%s' was not found", what), "")
}

func (s *Server) getDisk(w http.ResponseWriter, rt route) {
	s.mu.Lock()
	s.advanceTimedOps()
	key := routeKey(rt)
	var body *wireDisk
	if pr := s.projects[rt.project]; pr != nil {
		if d := pr.disks[key]; d != nil {
			wd := toWire(rt.project, d)
			body = &wd
		}
	}
	s.mu.Unlock()
	if body == nil {
		notFound(w, key)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

type pageToken struct {
	After string `json:"a"`
}

func (s *Server) aggregatedList(w http.ResponseWriter, req *http.Request, rt route) {
	q := req.URL.Query()
	pageSize := MaxPageSize
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "invalid", "Invalid value for field 'maxResults': '"+v+"'.", "")
			return
		}
		if n > 0 && n < pageSize {
			pageSize = n
		}
	}
	after, ok := pageAfter(w, q.Get("pageToken"))
	if !ok {
		return
	}

	s.mu.Lock()
	s.advanceTimedOps()
	pr := s.projects[rt.project]
	type entry struct {
		sortKey string
		scope   string
		disk    wireDisk
	}
	scopes := map[string]bool{}
	var all []entry
	warnings := map[string][2]string{}
	if pr != nil {
		maps.Copy(warnings, pr.warnings)
		for _, d := range pr.disks {
			sc := d.scope()
			scopes[sc] = true
			if wn, ok := warnings[sc]; ok && wn[0] != "NO_RESULTS_ON_PAGE" {
				continue // unreachable scope: its disks are not listed
			}
			all = append(all, entry{sortKey: sc + "\x00" + d.Name, scope: sc, disk: toWire(rt.project, d)})
		}
		for sc := range pr.warnings {
			scopes[sc] = true
		}
	}
	s.mu.Unlock()

	sort.Slice(all, func(i, j int) bool { return all[i].sortKey < all[j].sortKey })
	start := sort.Search(len(all), func(i int) bool { return all[i].sortKey > after })
	if after == "" {
		start = 0
	}
	end := min(start+pageSize, len(all))
	page := all[start:end]

	items := map[string]any{}
	byScope := map[string][]wireDisk{}
	for _, e := range page {
		byScope[e.scope] = append(byScope[e.scope], e.disk)
	}
	for sc := range scopes {
		if wn, ok := warnings[sc]; ok && wn[0] != "NO_RESULTS_ON_PAGE" {
			items[sc] = map[string]any{"warning": warning(wn[0], wn[1], sc)}
			continue
		}
		if ds := byScope[sc]; len(ds) > 0 {
			items[sc] = map[string]any{"disks": ds}
			continue
		}
		items[sc] = map[string]any{"warning": warning("NO_RESULTS_ON_PAGE",
			fmt.Sprintf("There are no results for scope '%s' on this page.", sc), sc)}
	}
	resp := map[string]any{
		"kind":     "compute#diskAggregatedList",
		"id":       "projects/" + rt.project + "/aggregated/disks",
		"items":    items,
		"selfLink": BaseURL + "projects/" + rt.project + "/aggregated/disks",
	}
	if end < len(all) {
		b, _ := json.Marshal(pageToken{After: all[end-1].sortKey})
		resp["nextPageToken"] = base64.RawURLEncoding.EncodeToString(b)
	}
	writeJSON(w, http.StatusOK, resp)
}

func warning(code, message, scope string) map[string]any {
	return map[string]any{
		"code":    code,
		"message": message,
		"data":    []map[string]string{{"key": "scope", "value": scope}},
	}
}

// ---- operations ----

func opKey(project, zone, region, name string) string {
	switch {
	case zone != "":
		return project + "/zones/" + zone + "/" + name
	case region != "":
		return project + "/regions/" + region + "/" + name
	}
	return project + "/global/" + name
}

// newOp registers an operation; caller holds the lock.
func (s *Server) newOp(rt route, opType, method string, targetID string, complete func() string) *operation {
	id := s.id()
	op := &operation{
		project:   rt.project,
		zone:      rt.zone,
		region:    rt.region,
		name:      "operation-" + id + "-" + opType,
		id:        id,
		opType:    opType,
		target:    routeKey(rt),
		targetID:  targetID,
		created:   s.opts.Now(),
		pollsLeft: s.opts.OpPolls,
		complete:  complete,
	}
	if f := s.opFaults[method]; f != nil && f.n > 0 {
		f.n--
		op.failCode, op.failMsg = f.code, f.message
		op.complete = nil
	}
	s.ops[opKey(op.project, op.zone, op.region, op.name)] = op
	return op
}

// finish marks op DONE and applies its effect; caller holds the lock.
func (s *Server) finish(op *operation) string {
	if op.done {
		return ""
	}
	op.done = true
	op.ended = s.opts.Now()
	if op.complete != nil {
		return op.complete()
	}
	return ""
}

// advanceTimedOps completes operations whose OpDelay has passed (only when
// OpDelay is set and OpPolls is 0); caller holds the lock.
func (s *Server) advanceTimedOps() []string {
	if s.opts.OpDelay <= 0 || s.opts.OpPolls > 0 {
		return nil
	}
	var deleted []string
	now := s.opts.Now()
	for _, op := range s.ops {
		if !op.done && now.Sub(op.created) >= s.opts.OpDelay {
			if k := s.finish(op); k != "" {
				deleted = append(deleted, k)
			}
		}
	}
	return deleted
}

func (s *Server) opJSON(op *operation) map[string]any {
	m := map[string]any{
		"kind":          "compute#operation",
		"id":            op.id,
		"name":          op.name,
		"operationType": op.opType,
		"targetLink":    BaseURL + op.target,
		"targetId":      op.targetID,
		"status":        "RUNNING",
		"progress":      0,
		"user":          "reclaim@gcefake.iam.gserviceaccount.com",
		"insertTime":    wireTime(op.created),
		"startTime":     wireTime(op.created),
	}
	base := BaseURL + "projects/" + op.project + "/"
	switch {
	case op.zone != "":
		m["zone"] = base + "zones/" + op.zone
		m["selfLink"] = base + "zones/" + op.zone + "/operations/" + op.name
	case op.region != "":
		m["region"] = base + "regions/" + op.region
		m["selfLink"] = base + "regions/" + op.region + "/operations/" + op.name
	default:
		m["selfLink"] = base + "global/operations/" + op.name
	}
	if op.done {
		m["status"] = "DONE"
		m["progress"] = 100
		m["endTime"] = wireTime(op.ended)
		if op.failCode != "" {
			m["error"] = map[string]any{"errors": []map[string]string{{"code": op.failCode, "message": op.failMsg}}}
			m["httpErrorStatusCode"] = 400
			m["httpErrorMessage"] = "BAD REQUEST"
		}
	}
	return m
}

func opPath(rt route) string {
	switch {
	case rt.zone != "":
		return "projects/" + rt.project + "/zones/" + rt.zone + "/operations/" + rt.name
	case rt.region != "":
		return "projects/" + rt.project + "/regions/" + rt.region + "/operations/" + rt.name
	}
	return "projects/" + rt.project + "/global/operations/" + rt.name
}

func (s *Server) pollOp(w http.ResponseWriter, req *http.Request, rt route, wait bool) {
	key := opKey(rt.project, rt.zone, rt.region, rt.name)
	s.mu.Lock()
	deleted := s.advanceTimedOps()
	op := s.ops[key]
	if op == nil {
		hook := s.opts.OnDelete
		s.mu.Unlock()
		s.runOnDelete(hook, deleted...)
		notFound(w, opPath(rt))
		return
	}
	var sleep time.Duration
	if !op.done {
		if s.opts.OpDelay > 0 && s.opts.OpPolls == 0 {
			if wait {
				sleep = max(0, op.created.Add(s.opts.OpDelay).Sub(s.opts.Now()))
			}
		} else if op.pollsLeft > 0 {
			op.pollsLeft--
		} else if k := s.finish(op); k != "" {
			deleted = append(deleted, k)
		}
	}
	hook := s.opts.OnDelete
	s.mu.Unlock()
	s.runOnDelete(hook, deleted...)
	if sleep > 0 {
		t := time.NewTimer(sleep)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return
		}
		s.mu.Lock()
		deleted = s.advanceTimedOps()
		hook = s.opts.OnDelete
		s.mu.Unlock()
		s.runOnDelete(hook, deleted...)
	}
	s.mu.Lock()
	body := s.opJSON(op)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

func quotaMetric(diskType string) string {
	switch diskType {
	case "pd-standard":
		return "DISKS_TOTAL_GB"
	case "pd-balanced", "pd-ssd", "pd-extreme":
		return "SSD_TOTAL_GB"
	}
	return ""
}

func (s *Server) deleteDisk(w http.ResponseWriter, rt route) {
	key := routeKey(rt)
	s.mu.Lock()
	deleted := s.advanceTimedOps()
	pr := s.projects[rt.project]
	var d *Disk
	if pr != nil {
		d = pr.disks[key]
	}
	var status int
	var reason, msg string
	var body map[string]any
	switch {
	case d == nil:
		status, reason, msg = http.StatusNotFound, "notFound", fmt.Sprintf("The resource '%s' was not found", key)
	case len(d.Users) > 0:
		status, reason = http.StatusBadRequest, "resourceInUseByAnotherResource"
		msg = fmt.Sprintf("The disk resource '%s' is already being used by '%s'", key, trimBase(d.Users[0]))
	default:
		d.Status = "DELETING"
		method := rt.method
		op := s.newOp(rt, "delete", method, d.ID, func() string {
			cur := pr.disks[key]
			if cur != d {
				return "" // already gone (or replaced): nothing to do
			}
			delete(pr.disks, key)
			if m := quotaMetric(d.Type); m != "" {
				if r := pr.regions[d.region()]; r != nil {
					if q := r.quotas[m]; q != nil {
						size := float64(d.SizeGB)
						if d.Region != "" {
							size *= s.opts.RegionalQuotaFactor
						}
						q.usage = max(0, q.usage-size)
					}
				}
			}
			return key
		})
		if op.failCode != "" {
			d.Status = "READY"
		}
		body = s.opJSON(op)
		body["status"] = "PENDING"
	}
	hook := s.opts.OnDelete
	s.mu.Unlock()
	s.runOnDelete(hook, deleted...)
	if body == nil {
		writeError(w, status, reason, msg, "")
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func trimBase(u string) string {
	if i := strings.Index(u, "/projects/"); i >= 0 && strings.HasPrefix(u, "http") {
		return u[i+1:]
	}
	return u
}

type wireSnapshotReq struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	Description string            `json:"description"`
}

func (s *Server) createSnapshot(w http.ResponseWriter, req *http.Request, rt route) {
	var body wireSnapshotReq
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "parseError", "This API does not support parsing form-encoded input: "+err.Error(), "")
		return
	}
	if body.Name == "" {
		writeError(w, http.StatusBadRequest, "required", "Required field 'resource.name' not specified", "")
		return
	}
	key := routeKey(rt)
	s.mu.Lock()
	deleted := s.advanceTimedOps()
	var d *Disk
	if pr := s.projects[rt.project]; pr != nil {
		d = pr.disks[key]
	}
	snapKey := rt.project + "/" + body.Name
	var resp map[string]any
	var status int
	var reason, msg string
	switch {
	case d == nil:
		status, reason, msg = http.StatusNotFound, "notFound", fmt.Sprintf("The resource '%s' was not found", key)
	case s.snapshots[snapKey] != nil:
		status, reason = http.StatusConflict, "alreadyExists"
		msg = fmt.Sprintf("The resource 'projects/%s/global/snapshots/%s' already exists", rt.project, body.Name)
	default:
		sn := &Snapshot{
			Project: rt.project, Name: body.Name, SourceDisk: key, Labels: maps.Clone(body.Labels),
			SizeGB: d.SizeGB, Status: "CREATING", Created: s.opts.Now(), ID: s.id(), SourceDiskID: d.ID, Type: "STANDARD",
			// What it stores: the whole disk, as a first snapshot of a full one would.
			StorageBytes: d.SizeGB << 30,
		}
		op := s.newOp(rt, "createSnapshot", rt.method, d.ID, func() string {
			sn.Status = "READY"
			return ""
		})
		sn.op = op
		if op.failCode == "" {
			s.snapshots[snapKey] = sn
			s.snapOrder = append(s.snapOrder, snapKey)
		}
		resp = s.opJSON(op)
		resp["status"] = "PENDING"
	}
	hook := s.opts.OnDelete
	s.mu.Unlock()
	s.runOnDelete(hook, deleted...)
	if resp == nil {
		writeError(w, status, reason, msg, "")
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) getSnapshot(w http.ResponseWriter, rt route) {
	s.mu.Lock()
	deleted := s.advanceTimedOps()
	sn := s.snapshots[rt.project+"/"+rt.name]
	var body map[string]any
	if sn != nil && sn.op != nil && !sn.op.done && (s.opts.OpDelay <= 0 || s.opts.OpPolls > 0) {
		// A snapshot makes progress whether or not its operation is
		// polled: a get counts as a poll of it (OpPolls).
		if sn.op.pollsLeft > 0 {
			sn.op.pollsLeft--
		} else {
			s.finish(sn.op)
		}
	}
	if sn != nil {
		body = snapshotJSON(sn)
	}
	hook := s.opts.OnDelete
	s.mu.Unlock()
	s.runOnDelete(hook, deleted...)
	if body == nil {
		notFound(w, "projects/"+rt.project+"/global/snapshots/"+rt.name)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// ---- regions ----

func (s *Server) getRegion(w http.ResponseWriter, rt route) {
	s.mu.Lock()
	s.advanceTimedOps()
	var body map[string]any
	if pr := s.projects[rt.project]; pr != nil {
		if r := pr.regions[rt.region]; r != nil {
			body = map[string]any{
				"kind":        "compute#region",
				"id":          "1000",
				"name":        rt.region,
				"description": rt.region,
				"status":      "UP",
				"selfLink":    BaseURL + "projects/" + rt.project + "/regions/" + rt.region,
			}
			if len(r.order) > 0 {
				qs := make([]map[string]any, 0, len(r.order))
				for _, m := range r.order {
					qs = append(qs, map[string]any{"metric": m, "limit": r.quotas[m].limit, "usage": r.quotas[m].usage})
				}
				body["quotas"] = qs
			}
		}
	}
	s.mu.Unlock()
	if body == nil {
		notFound(w, "projects/"+rt.project+"/regions/"+rt.region)
		return
	}
	writeJSON(w, http.StatusOK, body)
}
