// Package records is the rules of trust for the clusters' records that
// agents publish (fleet.records): a deleter reads each cluster from its
// record instead of its API server, and believes a record only as far as
// its identity, age and plausibility allow (Reader); an agent writes its
// cluster's (Publisher). What the state keeps of each record between
// passes is Seen.
package records

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/providers/gcpclient"
)

// Store is where the clusters' records are (fleet.records): the
// bucket client, or a harness's.
type Store interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key string, body []byte) error
}

// lister is a Store that lists its objects: the reader lists the
// records' prefix once a pass and reads only the records whose version
// changed since it read them (bucket.Client is one).
type lister interface {
	List(ctx context.Context, prefix string) ([]bucket.Object, error)
}

// opener is a Store that reads an object as it arrives and says which
// version it read (bucket.Client is one): what the reader remembers a
// record under.
type opener interface {
	Open(ctx context.Context, key string) (io.ReadCloser, string, error)
}

// Both stores list and open: a pass reads only what changed on either.
var (
	_, _ lister = (*bucket.Client)(nil), (*bucket.GCS)(nil)
	_, _ opener = (*bucket.Client)(nil), (*bucket.GCS)(nil)
)

// Open opens the fleet.records bucket (GCS's with gcs, else S3's), its
// objects bounded by b; its clients say userAgent.
func Open(ctx context.Context, s *config.Records, b Bounds, userAgent string, log *zap.Logger) (Store, error) {
	if g := s.GCS; g != nil {
		c, err := bucket.NewGCS(ctx, bucket.GCSOptions{Bucket: g.Bucket, MaxObject: b.Object, Reach: gcpclient.Reach{
			Endpoint: g.Endpoint, CredentialsFile: g.CredentialsFile, UserAgent: userAgent}})
		if err != nil {
			return nil, fmt.Errorf("fleet.records.gcs: %w", err)
		}
		return c, nil
	}
	c, err := bucket.New(ctx, bucket.Options{Bucket: s.Bucket, PathStyle: s.Endpoint != "", MaxObject: b.Object, Service: awsclient.Service{
		Account: s.Account, Region: s.Region, Profile: s.Profile, RoleARN: s.RoleARN, ExternalID: s.ExternalID,
		Endpoint: s.Endpoint, UserAgent: userAgent, Logger: awsclient.ZapLogger(log)}})
	if err != nil {
		return nil, fmt.Errorf("fleet.records: %w", err)
	}
	return c, nil
}

// Seen is what a deleter remembers of a cluster's published record:
// the kube-system UID its first accepted record pinned, the sizes of the
// records accepted within fleet.records.dropSettle (the last one
// always), since when each class of evidence has been accepted, and the
// classes that dropped, each since when. Its slices and maps are never
// changed in place: a new Seen has new ones. The state keeps them,
// per record's object key, under "records" (engine.State.Records), as
// ParseSeen and SeenJSON read and write them.
type Seen struct {
	KubeSystemUID string `json:"kubeSystemUID"`
	// Sizes are the accepted records' counts per class of evidence, oldest
	// first, one per stretch of time (the largest of each class in it).
	Sizes []Sizes `json:"sizes,omitempty"`
	// Since is when each class of evidence was first listed by a record
	// of this cluster (its identity proven): the cluster's view releases
	// nothing until every class it lists has stood for dropSettle.
	Since map[string]time.Time `json:"since,omitempty"`
	// Drops are the classes listing much less than the records accepted
	// before (or, in a first record, none of what the clouds show made
	// for the cluster), each on its own clock.
	Drops map[string]Drop `json:"drops,omitempty"`
	// DropSince is an older reclaim's one clock for every class: read as
	// the clock of each class dropping now, never written.
	DropSince time.Time `json:"dropSince,omitzero"`
}

// Drop is one class's drop: since when, and the count it dropped to. A
// drop deeper than maxDrop below that count is a new drop, on a new
// clock.
type Drop struct {
	Since time.Time `json:"since"`
	To    int       `json:"to"`
}

// Sizes are what accepted records listed, per class of evidence
// ("pvs", "pods", "podIPs", "nodes", "images", a tap's name...), in the
// stretch of time beginning At.
type Sizes struct {
	At     time.Time      `json:"at"`
	Counts map[string]int `json:"counts"`
}

// IsZero: nothing is remembered.
func (s Seen) IsZero() bool {
	return s.KubeSystemUID == "" && len(s.Sizes) == 0 && len(s.Since) == 0 && len(s.Drops) == 0 && s.DropSince.IsZero()
}

// ParseSeen reads what the state remembers of each record (engine.State.Records).
func ParseSeen(raw json.RawMessage) (map[string]Seen, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var seen map[string]Seen
	if err := json.Unmarshal(raw, &seen); err != nil {
		return nil, fmt.Errorf("the state's records: %w", err)
	}
	return seen, nil
}

// SeenJSON is seen as the state keeps it: nil when there is none.
func SeenJSON(seen map[string]Seen) (json.RawMessage, error) {
	if len(seen) == 0 {
		return nil, nil
	}
	return json.Marshal(seen)
}

// Reader reads clusters from their agents' records instead of their
// API servers. What it cannot accept is an incomplete cluster, with why:
// it holds whatever the cluster could use.
type Reader struct {
	// Config is the fleet.records section; Store where the records
	// are; Taps the decoders of the taps the deleter's kinds read
	// (Decoders); Now the clock.
	Config *config.Records
	Store  Store
	Taps   map[string]published.Decoder
	Now    func() time.Time
	// Bounds bound what reading the records takes of the memory (BoundsFor):
	// zero, the process's memory target's.
	Bounds Bounds
	// Evidence says what the clouds show made for a cluster, which its
	// first record is believed against (nil: nothing).
	Evidence Evidence

	// prev is what the state remembered of each record; seen what this
	// pass accepted (or kept remembering), for the state saved after it.
	prev map[string]Seen
	mu   sync.Mutex
	seen map[string]Seen
	// clouds are the pass's cloud reads: what a first record is believed
	// against (Evidence).
	clouds map[string]any
	// cas are the CA bundles discovery lists for configured clusters, by
	// name: what their records' CA is compared with.
	cas map[string][]byte
	// claims are the pass's records by the kube-system UID they claim:
	// two clusters' records claiming one are not both right (Twins).
	claims map[string][]claim
	// limits bound the memory the records' reads take at once, set once
	// (BoundsFor); gets and decoding hold it.
	limits   sync.Once
	gets     chan struct{}
	decoding *weighted

	// The pass's listing of the records' prefix (a lister's), made once,
	// by the pass's first read: what every record of the pass is judged
	// current by.
	listMu  sync.Mutex
	listed  bool
	listing map[string]bucket.Object
	listErr error
	// cache is the records read in earlier passes of this process (a
	// daemon's), by key, with the version read: a record whose listed
	// version is the one read is not read again. Only the GET and the
	// decoding are saved: every check runs on it again each pass. used
	// are the keys the pass read; Begin forgets the others.
	cache map[string]cachedRecord
	used  map[string]bool
}

// cachedRecord is a record as the reader keeps it (fetched), with the
// version the GET returned.
type cachedRecord struct {
	version string
	fetched
}

// fetched is a record as the reader keeps it: what the deleter's kinds
// read of it (narrow), and what it listed per class of evidence
// (classCounts), counted before.
type fetched struct {
	rec    published.Record
	counts map[string]int
	// images, workloads: whether the record's images and workloads were
	// kept (narrow).
	images, workloads bool
	// written is when the store wrote the object, as this pass's listing
	// says (zero if it does not): it bounds the record's read time.
	written time.Time
}

// grant names the deleter's grant a denied call lacks, in its store's
// words, and where deploy/ has it.
func (rr *Reader) grant(s3, gcs string) string {
	if rr.Config.GCS != nil {
		return gcs + " on the prefix (deploy/gcp)"
	}
	return s3 + " on the prefix (deploy/aws)"
}

// recordCost is how many times its decompressed size a record costs while
// it is decoded, counting every byte allocated: the decoder's buffer,
// which doubles as it grows (the old ones garbage until collected), and
// the values decoded, maps and shared strings and all. A record of pods
// with labels, PVs and images allocates about 8 times its size
// (TestRecordDecodeCost measures it).
const recordCost = 9

// defaultMemoryTarget is the deleter's memory target when GOMEMLIMIT sets
// none: what deploy/ sets it to under the pod's 512Mi.
const defaultMemoryTarget = 280 << 20

// MemoryTarget is the process's: GOMEMLIMIT, or defaultMemoryTarget.
func MemoryTarget() int64 {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return l
	}
	return defaultMemoryTarget
}

// Bounds are what the records' reads may take of the memory target
// at once: half of it, whatever the records say. A quarter holds the
// objects being fetched (each at most Object bytes, Gets of them at
// once); three quarters (Decoding) the records being decoded, each
// weighing recordCost times what it may decompress to (PerRecord at most).
type Bounds struct {
	Target, PerRecord, Object, Decoding int64
	Gets                                int
}

// BoundsFor is how a deleter with memory target reads s's records; an
// error if maxRecordSize does not fit it.
func BoundsFor(s *config.Records, target int64) (Bounds, error) {
	per := int64(s.MaxRecordSize)
	if per <= 0 {
		per = int64(config.DefaultMaxRecordSize)
	}
	b := Bounds{Target: target, PerRecord: per, Object: max(per/4, 64<<10), Decoding: target / 2 * 3 / 4}
	b.Gets = int(min(max(target/2/4/b.Object, 1), readAtOnce))
	if recordCost*per > b.Decoding {
		return b, fmt.Errorf("fleet.records.maxRecordSize %s: decoding a record that large takes %d MiB, more than the %d MiB the memory target (GOMEMLIMIT %d MiB) leaves for it — raise GOMEMLIMIT (and the pod's memory limit) to at least %d MiB, or lower maxRecordSize",
			config.Size(per), recordCost*per>>20, b.Decoding>>20, target>>20, recordCost*per*8/3>>20+1)
	}
	return b, nil
}

// weighted is a semaphore of bytes. One acquirer at a time waits for its
// whole weight, and holders wait for nothing, so none waits forever.
type weighted struct {
	mu   sync.Mutex
	cond *sync.Cond
	free int64
}

func newWeighted(n int64) *weighted {
	w := &weighted{free: n}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (w *weighted) acquire(n int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.free < n {
		w.cond.Wait()
	}
	w.free -= n
}

func (w *weighted) release(n int64) {
	w.mu.Lock()
	w.free += n
	w.mu.Unlock()
	w.cond.Broadcast()
}

// bound sets the reader's bounds, once: a reader the wiring made has them
// set already (its config was checked); one without takes the process's.
func (rr *Reader) bound() {
	rr.limits.Do(func() {
		if rr.Bounds.PerRecord == 0 {
			rr.Bounds, _ = BoundsFor(rr.Config, MemoryTarget())
		}
		rr.gets = make(chan struct{}, rr.Bounds.Gets)
		rr.decoding = newWeighted(rr.Bounds.Decoding)
	})
}

// Begin starts a pass with what the state remembers.
func (rr *Reader) Begin(prev map[string]Seen) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.prev, rr.seen, rr.clouds, rr.cas, rr.claims = prev, map[string]Seen{}, nil, nil, map[string][]claim{}
	rr.listMu.Lock()
	defer rr.listMu.Unlock()
	rr.listed, rr.listing, rr.listErr = false, nil, nil
	// What the last pass did not read is not kept: a cluster gone from
	// the fleet costs no memory.
	for k := range rr.cache {
		if !rr.used[k] {
			delete(rr.cache, k)
		}
	}
	rr.used = map[string]bool{}
}

// recordsPrefix is where every record is under the configured prefix.
func recordsPrefix(prefix string) string {
	return path.Join(prefix, "clusters") + "/"
}

// list is the pass's listing, made by its first call: the objects by key,
// or why there is none. Nil, nil: the store does not list.
func (rr *Reader) list(ctx context.Context) (map[string]bucket.Object, error) {
	l, ok := rr.Store.(lister)
	if !ok {
		return nil, nil
	}
	rr.listMu.Lock()
	defer rr.listMu.Unlock()
	if !rr.listed {
		objs, err := l.List(ctx, recordsPrefix(rr.Config.Prefix))
		if err != nil {
			rr.listErr = err
		} else {
			rr.listing = make(map[string]bucket.Object, len(objs))
			for _, o := range objs {
				rr.listing[o.Key] = o
			}
		}
		rr.listed = true
	}
	return rr.listing, rr.listErr
}

// cached is the record read before at key if its version is version and
// it kept what t reads.
func (rr *Reader) cached(key, version string, t kube.Target) (fetched, bool) {
	rr.listMu.Lock()
	defer rr.listMu.Unlock()
	c, ok := rr.cache[key]
	if !ok || version == "" || c.version != version || t.Images && !c.images || t.Workloads && !c.workloads {
		return fetched{}, false
	}
	rr.used[key] = true
	return c.fetched, true
}

// keep remembers the record read at key, at the version the GET returned;
// a store that says no version has nothing remembered.
func (rr *Reader) keep(key, version string, f fetched) {
	rr.listMu.Lock()
	defer rr.listMu.Unlock()
	if version == "" {
		delete(rr.cache, key)
		return
	}
	if rr.cache == nil {
		rr.cache = map[string]cachedRecord{}
	}
	if rr.used == nil {
		rr.used = map[string]bool{}
	}
	rr.cache[key], rr.used[key] = cachedRecord{version: version, fetched: f}, true
}

// claim is a record of the pass: its cluster (the deleter's name) and key.
type claim struct{ cluster, key string }

// Twins holds every cluster of clusters whose record claims the
// kube-system UID another cluster's record of the pass claims: one of
// them, at least, is not its cluster's (a copied agent config, a forged
// record), and which one cannot be told. What the pass remembered of
// them is dropped: a record not accepted changes nothing remembered. Run
// after every record of the pass is read.
func (rr *Reader) Twins(clusters []inventory.ClusterRefs) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	why := map[string]string{}
	for uid, cs := range rr.claims {
		keys := map[string]bool{}
		for _, c := range cs {
			keys[c.key] = true
		}
		if len(keys) < 2 {
			continue
		}
		var names []string
		for _, c := range cs {
			names = append(names, c.cluster)
		}
		slices.Sort(names)
		names = slices.Compact(names)
		for _, c := range cs {
			why[c.cluster] = fmt.Sprintf("%s: its record claims kube-system UID %s, as the records of %s do: one cluster's agent publishes as another (a copied agent config, or a forged record), so every cluster claiming it is held — pin each cluster's UID in fleet.records.kubeSystemUIDs and fix the agent that publishes the other's",
				rr.Config.Where(c.key), uid, strings.Join(names, ", "))
			if prev, ok := rr.prev[c.key]; ok {
				rr.seen[c.key] = prev
			} else {
				delete(rr.seen, c.key)
			}
		}
	}
	for i := range clusters {
		if w, ok := why[clusters[i].Name]; ok {
			clusters[i].Complete = false
			clusters[i].Problems = append([]string{w}, clusters[i].Problems...)
		}
	}
}

// WithCAs gives the pass the CAs discovery lists for configured clusters.
func (rr *Reader) WithCAs(cas map[string][]byte) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.cas = cas
}

// DiscoveredCAs are the CA bundles discovery lists for the fleet's
// configured clusters, by name.
func DiscoveredCAs(f *inventory.Fleet) map[string][]byte {
	out := map[string][]byte{}
	for _, m := range f.Members {
		if m.Configured && m.Discovered && len(m.Cloud.CAData) > 0 {
			out[m.Name] = m.Cloud.CAData
		}
	}
	return out
}

// WithClouds gives the pass its cloud reads, before its clusters are read.
func (rr *Reader) WithClouds(clouds map[string]any) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.clouds = clouds
}

// Remembered is what the pass leaves for the next: this pass's records,
// and what was remembered of those it did not look at.
func (rr *Reader) Remembered() map[string]Seen {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	out := make(map[string]Seen, len(rr.prev)+len(rr.seen))
	for k, v := range rr.prev {
		out[k] = v
	}
	for k, v := range rr.seen {
		out[k] = v
	}
	return out
}

// readAtOnce is the most records read at once: enough Gets in flight
// that a fleet's read is bound by decoding its records, not by S3's
// latency. Bounds lowers it to what the memory target holds.
const readAtOnce = 64

// Read reads every target's record, readAtOnce at a time; one result per
// target.
func (rr *Reader) Read(ctx context.Context, targets []kube.Target) []inventory.ClusterRefs {
	out := make([]inventory.ClusterRefs, len(targets))
	rr.bound()
	_ = awsclient.Each(len(targets), rr.Bounds.Gets, func(i int) error {
		out[i] = rr.one(ctx, targets[i])
		return nil
	})
	return out
}

// one reads a target's record and says whether it can stand for the
// cluster: the deleter's limits (projects, accounts, subnets) are the
// target's, never the record's.
func (rr *Reader) one(ctx context.Context, t kube.Target) inventory.ClusterRefs {
	start := rr.Now()
	key := published.Key(rr.Config.Prefix, t.Place, t.CloudName)
	held := func(problems ...string) inventory.ClusterRefs {
		return inventory.ClusterRefs{Name: t.Name, Projects: t.Projects, Accounts: t.Accounts, Subnets: t.Subnets,
			Problems: problems, Duration: rr.Now().Sub(start)}
	}
	where := rr.Config.Where(key)
	f, problem := rr.fetch(ctx, key, where, t)
	if problem != "" {
		return held(problem)
	}
	rec := f.rec
	rr.mu.Lock()
	last := rr.prev[key]
	rr.mu.Unlock()
	now := rr.Now()
	problems := rr.identify(&rec, f.written, t, last, where, now)
	counts := f.counts
	next := last // a record not accepted changes nothing remembered
	var settles time.Time
	if len(problems) == 0 {
		rr.mu.Lock()
		clouds := rr.clouds
		rr.mu.Unlock()
		if last.KubeSystemUID != "" && last.KubeSystemUID != rec.Cluster.KubeSystemUID {
			last = Seen{} // the cluster was recreated (its new UID pinned): a new history
		}
		var why string
		next, settles, why = rr.judge(last, counts, clouds, t, now)
		next.KubeSystemUID = rec.Cluster.KubeSystemUID
		if why != "" {
			problems = append(problems, where+": "+why)
		} else {
			next.Sizes = rr.remember(last.Sizes, counts, now)
		}
	}
	rr.note(key, next, rec.Cluster.KubeSystemUID, t)
	c := rr.refs(rec, f.written, t, now, settles, problems)
	c.Duration = rr.Now().Sub(start)
	return c
}

// note remembers what the pass accepted of the record at key (next), and
// the kube-system UID it claims, for twins.
func (rr *Reader) note(key string, next Seen, uid string, t kube.Target) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if !next.IsZero() {
		rr.seen[key] = next
	}
	if uid != "" {
		if rr.claims == nil {
			rr.claims = map[string][]claim{}
		}
		rr.claims[uid] = append(rr.claims[uid], claim{cluster: t.Name, key: key})
	}
}

// refs is what the record shows of t's cluster, under the deleter's name
// and limits, with its read time (bounded by when the store wrote it),
// when it settles, and its problems and notes.
func (rr *Reader) refs(rec published.Record, written time.Time, t kube.Target, now, settles time.Time, problems []string) inventory.ClusterRefs {
	// The record may be remembered for the next pass (cache): what is set
	// here for this target is set on copies.
	c := rec.Refs
	c.Name, c.Projects, c.Accounts, c.Subnets = t.Name, t.Projects, t.Accounts, t.Subnets
	c.PVs, c.PVCs, c.Problems = slices.Clone(c.PVs), slices.Clone(c.PVCs), slices.Clip(c.Problems)
	c.ReadAt = rec.ReadAt(written) // what decides whether it is fresh enough to delete on
	if ahead := rec.TakenAt.Sub(written); !written.IsZero() && ahead > published.ClockSkew {
		c.Problems = append(c.Problems, fmt.Sprintf("note: the record says it was read at %s, %s after the store wrote it: the agent's clock runs ahead, so the record is taken as read when it was written",
			fmtTime(rec.TakenAt), ahead.Round(time.Second)))
	}
	if now.Before(settles) {
		c.Settles = settles
		c.Problems = append(c.Problems, fmt.Sprintf("note: the cluster's records settle at %s: until they have stood for fleet.records.dropSettle %s, what they show in use is kept but nothing the cluster could use is deleted",
			fmtTime(settles), rr.Config.DropSettle))
	}
	for i := range c.PVs {
		c.PVs[i].Cluster = t.Name
	}
	for i := range c.PVCs {
		c.PVCs[i].Cluster = t.Name
	}
	if len(problems) > 0 {
		c.Complete = false
		c.Problems = append(problems, c.Problems...)
	} else if rr.Config.KubeSystemUIDs[t.Name] == "" {
		// Said every pass, complete or not: the pin is only as good as
		// the record that made it.
		c.Problems = append(c.Problems, fmt.Sprintf("note: kube-system UID %s is trusted on first use (pinned by the cluster's first accepted record, not by the config): pin it ahead in fleet.records.kubeSystemUIDs.%s",
			rec.Cluster.KubeSystemUID, t.Name))
	}
	return c
}

// identify says why a record cannot be its cluster's, or nothing: its
// name, place, CA (as pinned, and as discovery lists it) and kube-system
// UID (as pinned by the config, else by the first accepted record), and
// its age. Each problem names where the record is.
func (rr *Reader) identify(rec *published.Record, written time.Time, t kube.Target, last Seen, where string, now time.Time) []string {
	pin := rr.Config.KubeSystemUIDs[t.Name]
	if pin == "" {
		pin = last.KubeSystemUID
	}
	ca := t.CAData
	if len(ca) == 0 {
		rr.mu.Lock()
		ca = rr.cas[t.Name]
		rr.mu.Unlock()
	}
	listed, pinnedCA := published.CAHash(ca), strings.ToLower(rr.Config.CASHA256s[t.Name])
	caFrom := ""
	if pinnedCA != "" {
		caFrom = "the one fleet.records.caSHA256s." + t.Name + " pins"
	}
	problems := rec.Check(published.Expect{Name: t.CloudName, Place: t.Place, CA: cmp.Or(pinnedCA, listed), CAFrom: caFrom,
		KubeSystemUID: pin, MaxAge: rr.Config.MaxAge.Std(), Now: now, Written: written})
	if pinnedCA != "" && listed != "" && rec.Cluster.CA != "" && rec.Cluster.CA != listed {
		problems = append(problems, fmt.Sprintf("the record's API server CA (sha256 %.12s…) is not the one discovery lists for the cluster (%.12s…): %v",
			rec.Cluster.CA, listed, published.ErrMismatch))
	}
	for i, p := range problems {
		problems[i] = where + ": " + p
	}
	if pin != "" && rec.Cluster.KubeSystemUID != pin {
		problems = append(problems, fmt.Sprintf("if the cluster was recreated, pin its new UID: fleet.records.kubeSystemUIDs.%s: %s", t.Name, rec.Cluster.KubeSystemUID))
	}
	return problems
}

// fetch is the record at key, or why it cannot be had (a problem that
// holds the cluster). With a store that lists, the pass's listing says
// whether there is a record, how large it is and its version: a record
// the listing does not show is missing, one larger than a record may be
// is refused unread, and one whose version this reader read before is
// taken from memory. Whatever is read is remembered at the version its
// GET returned, never the listing's: a record replaced between the
// listing and the GET is newer bytes than the listing says.
func (rr *Reader) fetch(ctx context.Context, key, where string, t kube.Target) (fetched, string) {
	listing, err := rr.list(ctx)
	version := ""
	switch {
	case errors.Is(err, bucket.ErrDenied):
		return fetched{}, fmt.Sprintf("listing %s was denied, so no record can be told current: grant reclaim %s", rr.Config.Where(recordsPrefix(rr.Config.Prefix)), rr.grant("s3:ListBucket", "storage.objects.list"))
	case err != nil:
		return fetched{}, fmt.Sprintf("listing %s failed, so no record can be told current: %v", rr.Config.Where(recordsPrefix(rr.Config.Prefix)), err)
	case listing != nil:
		o, ok := listing[key]
		if !ok {
			return fetched{}, fmt.Sprintf("no record at %s (the bucket's listing has none): is reclaim agent running in the cluster, as %s in %s?", where, t.CloudName, t.Place)
		}
		if o.Size > rr.Bounds.Object {
			return fetched{}, fmt.Sprintf("the record at %s is not read: its object is %d bytes, more than the %d a record of at most fleet.records.maxRecordSize %s may be gzipped: %v",
				where, o.Size, rr.Bounds.Object, config.Size(rr.Bounds.PerRecord), published.ErrTooLarge)
		}
		if f, ok := rr.cached(key, o.Version, t); ok {
			f.written = o.Modified
			return f, ""
		}
	}
	// The gets at once (configured and discovered clusters are read side
	// by side) are bounded across reads: each holds its object until its
	// record is decoded.
	rr.bound()
	select {
	case rr.gets <- struct{}{}:
	case <-ctx.Done():
		return fetched{}, fmt.Sprintf("reading %s: %v", where, ctx.Err())
	}
	defer func() { <-rr.gets }()
	rec, version, err, decErr := rr.get(ctx, key, listing)
	switch {
	case errors.Is(err, outcome.ErrNotFound):
		return fetched{}, fmt.Sprintf("no record at %s: is reclaim agent running in the cluster, as %s in %s?", where, t.CloudName, t.Place)
	case errors.Is(err, bucket.ErrDenied):
		return fetched{}, fmt.Sprintf("reading %s was denied: grant reclaim %s", where, rr.grant("s3:GetObject", "storage.objects.get"))
	case err != nil:
		return fetched{}, fmt.Sprintf("reading %s: %v", where, err)
	case errors.Is(decErr, published.ErrTooLarge):
		return fetched{}, fmt.Sprintf("the record at %s cannot be read: %v; its cluster is held. If the cluster's record is that large, raise fleet.records.maxRecordSize (now %s) and the deleter's GOMEMLIMIT and memory limit with it; else the object is not its agent's",
			where, decErr, config.Size(rr.Bounds.PerRecord))
	case decErr != nil:
		return fetched{}, fmt.Sprintf("the record at %s cannot be read: %v", where, decErr)
	}
	f := narrow(rec, t)
	if listing != nil {
		rr.keep(key, version, f)
		// The listing's time, though the GET may have read a newer
		// version: an earlier bound is only more careful.
		f.written = listing[key].Modified
	}
	return f, ""
}

// get reads and decodes the record at key: as it arrives when the listing
// says how large it is, else whole. err is the GET's, decErr the
// decoding's; version is the one the GET read.
func (rr *Reader) get(ctx context.Context, key string, listing map[string]bucket.Object) (rec published.Record, version string, err, decErr error) {
	var body []byte
	op, opens := rr.Store.(opener)
	streamed := false
	if o, ok := listing[key]; ok && opens {
		// Decoded as it arrives: the listing said how large the object is.
		var rc io.ReadCloser
		if rc, version, err = op.Open(ctx, key); err == nil {
			rec, decErr = rr.decodeStream(rc, o.Size)
		}
		streamed = !errors.Is(decErr, errMoreThanListed)
	}
	if !streamed {
		if opens {
			var rc io.ReadCloser
			if rc, version, err = op.Open(ctx, key); err == nil {
				body, err = readObject(rc, rr.Bounds.Object)
			}
		} else {
			body, err = rr.Store.Get(ctx, key)
		}
	}
	if err == nil && !streamed {
		rec, decErr = rr.decode(body)
	}
	return rec, version, err, decErr
}

// narrow is what the reader keeps of a record read for t: its counts per
// class of evidence, taken first (what is plausible is judged on the
// whole record), and what the deleter's kinds read of it. The images and
// the workloads (pods, nodes, Jobs, CronJobs) are kept only if t reads
// them (kube.Target's Images, Workloads: some kind of the deleter's relies
// on them); else they are dropped and the cluster says it did not list
// them, as a direct read of it does. A deleter holds every cluster's
// record at once, and a daemon from one pass to the next: the pods are
// most of a record. The slices kept are copied to their length (the
// decoder's are up to twice as long).
func narrow(rec published.Record, t kube.Target) fetched {
	f := fetched{counts: classCounts(&rec), images: t.Images, workloads: t.Workloads}
	c := &rec.Refs
	if t.Images {
		c.Images = slices.Clone(c.Images)
	} else {
		c.Images, c.ImagesListed = nil, false
	}
	if t.Workloads {
		c.Pods, c.Nodes, c.Jobs, c.CronJobs = slices.Clone(c.Pods), slices.Clone(c.Nodes), slices.Clone(c.Jobs), slices.Clone(c.CronJobs)
	} else {
		c.Pods, c.Nodes, c.Jobs, c.CronJobs, c.WorkloadsListed = nil, nil, nil, nil, false
	}
	f.rec = rec
	return f
}

// streamRatio is how many times its gzipped size a record is set aside
// for when it is decoded as it arrives: JSON records gzip 5 to 20 times
// (BenchmarkRecordFleet's: 16). One that decompresses to more is read
// again whole (decode), its gzip trailer's claim its bound.
const streamRatio = 32

// errMoreThanListed: a record decoded as it arrived decompressed to more
// than streamRatio times its listed size.
var errMoreThanListed = errors.New("decompresses to more than its listed size allows")

// decodeStream decodes a record from its object's body as it arrives,
// through gzip, and closes it. size is the object's listed size: the
// record is set aside recordCost times streamRatio times it (at most
// maxRecordSize, and the pool), and decompresses to no more than that;
// more is errMoreThanListed when the bound is less than maxRecordSize
// (read it whole, as decode does), ErrTooLarge when it is not. The body
// is read to at most Bounds.Object bytes: an object replaced by a larger
// one since the listing is refused as decode refuses it.
func (rr *Reader) decodeStream(rc io.ReadCloser, size int64) (published.Record, error) {
	defer rc.Close()
	b := rr.Bounds
	limit := min(max(size*streamRatio, 64<<10), b.PerRecord)
	weight := min(recordCost*limit, b.Decoding)
	rr.decoding.acquire(weight)
	defer rr.decoding.release(weight)
	lr := &objectReader{r: rc, left: b.Object}
	rec, err := published.DecodeLimit(lr, limit, rr.Taps)
	switch {
	case lr.over:
		return rec, fmt.Errorf("its object is more than the %d bytes a record of at most fleet.records.maxRecordSize may be gzipped: %w", b.Object, published.ErrTooLarge)
	case errors.Is(err, published.ErrTooLarge) && limit < b.PerRecord:
		return rec, errMoreThanListed
	case errors.Is(err, published.ErrTooLarge):
		return rec, fmt.Errorf("it decompresses to more than fleet.records.maxRecordSize %s: %w", config.Size(b.PerRecord), published.ErrTooLarge)
	}
	return rec, err
}

// objectReader reads at most left bytes of r; over says it had more.
type objectReader struct {
	r    io.Reader
	left int64
	over bool
}

func (o *objectReader) Read(p []byte) (int, error) {
	if o.left <= 0 {
		// One byte more says whether the object ends here.
		var one [1]byte
		if n, _ := io.ReadFull(o.r, one[:]); n > 0 {
			o.over = true
			return 0, published.ErrTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > o.left {
		p = p[:o.left]
	}
	n, err := o.r.Read(p)
	o.left -= int64(n)
	return n, err
}

// readObject reads an opened object to its end, at most max bytes (one
// more is ErrTooLarge), and closes it.
func readObject(rc io.ReadCloser, max int64) ([]byte, error) {
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("its object is more than the %d bytes a record of at most fleet.records.maxRecordSize may be gzipped: %w", max, published.ErrTooLarge)
	}
	return b, nil
}

// decode decodes a record's object within the reader's bounds: the object
// is at most Bounds.Object (the bucket's Get bounds it; a store that does
// not, here), and decompresses to no more than it claims, nor than
// maxRecordSize. recordCost times the claim is set aside while it is
// decoded, so the records decoded at once fit the memory target whatever
// they say.
func (rr *Reader) decode(body []byte) (published.Record, error) {
	b := rr.Bounds
	if int64(len(body)) > b.Object {
		return published.Record{}, fmt.Errorf("its object is %d bytes, more than the %d a record of at most fleet.records.maxRecordSize may be gzipped: %w",
			len(body), b.Object, published.ErrTooLarge)
	}
	claim, ok := published.Claimed(body)
	if !ok {
		return published.Record{}, errors.New("not a gzipped record: too short")
	}
	if claim > b.PerRecord {
		return published.Record{}, fmt.Errorf("its gzip trailer says it decompresses to %d bytes, more than fleet.records.maxRecordSize %s (or it is truncated): %w",
			claim, config.Size(b.PerRecord), published.ErrTooLarge)
	}
	// At most the whole pool: BoundsFor refuses a maxRecordSize whose
	// record would not fit it, but a reader a test made is not refused.
	weight := min(recordCost*max(claim, 64<<10), b.Decoding)
	rr.decoding.acquire(weight)
	defer rr.decoding.release(weight)
	rec, err := published.DecodeLimit(bytes.NewReader(body), claim, rr.Taps)
	if errors.Is(err, published.ErrTooLarge) {
		err = fmt.Errorf("it decompresses to more than the %d bytes it says (a gzip bomb, or corrupt): %w", claim, published.ErrTooLarge)
	}
	return rec, err
}

// classCounts are what a record lists per class of evidence: each is
// what some kind of the deleter's relies on (PVs and claims keep disks
// and volumes, pods and their addresses and nodes keep interfaces, images
// keep images, each tap its kind's objects: volume handles), so each is
// judged on its own: a record that keeps its pods but drops its PVs is as
// implausible as one that drops everything. Jobs are not: the agents'
// own kinds delete them.
func classCounts(r *published.Record) map[string]int {
	c := &r.Refs
	ips := 0
	for i := range c.Pods {
		ips += len(c.Pods[i].IPs)
	}
	out := map[string]int{"pvs": len(c.PVs), "pvcs": len(c.PVCs), "pods": len(c.Pods), "podIPs": ips, "nodes": len(c.Nodes),
		"images": len(c.Images)}
	for name, t := range c.Taps {
		out["tap "+name] = tapSize(t)
	}
	return out
}

// tapSize is how many things a tap's decoded data holds (a map's keys, a
// slice's items: an EBS tap's volume handles), not the count the record
// says it listed: a record's claims are what is judged.
func tapSize(t inventory.Tapped) int {
	if s, ok := t.Data.(interface{ Len() int }); ok {
		return s.Len()
	}
	switch v := reflect.ValueOf(t.Data); v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		return v.Len()
	}
	return 0
}

// largest is, per class, the most the records accepted within dropSettle
// of now listed, and the last accepted's, however old (an agent that
// stopped for longer is no more believed when it comes back with less).
func largest(sizes []Sizes, now time.Time, settle time.Duration) map[string]int {
	out := map[string]int{}
	for i, s := range sizes {
		if i < len(sizes)-1 && now.Sub(s.At) > settle+sizeStretch(settle) {
			continue
		}
		for k, n := range s.Counts {
			out[k] = max(out[k], n)
		}
	}
	return out
}

// sizeStretch is the stretch of time whose records are remembered as one
// size: a 24th of dropSettle, so that a day's history is some 25 entries.
func sizeStretch(settle time.Duration) time.Duration {
	return max(settle/24, time.Minute)
}

// remember adds an accepted record's counts to the sizes remembered: the
// largest of each class within its stretch, the stretches within
// dropSettle and the last. sizes is not changed.
func (rr *Reader) remember(sizes []Sizes, counts map[string]int, now time.Time) []Sizes {
	settle := rr.Config.DropSettle.Std()
	stretch := sizeStretch(settle)
	var out []Sizes
	for _, s := range sizes {
		if now.Sub(s.At) <= settle+stretch {
			out = append(out, s)
		}
	}
	if n := len(out); n > 0 && now.Sub(out[n-1].At) < stretch {
		merged := maps.Clone(out[n-1].Counts)
		for k, v := range counts {
			merged[k] = max(merged[k], v)
		}
		out[n-1] = Sizes{At: out[n-1].At, Counts: merged}
		return out
	}
	const most = 48
	if len(out) >= most {
		out = out[len(out)-most+1:]
	}
	return append(out, Sizes{At: now, Counts: counts})
}

// judge is what a record of counts, its identity proven, leaves
// remembered after last (but its sizes: only an accepted record's are),
// when the cluster's view settles, and why the record cannot be believed
// yet, if it cannot. Each class of evidence keeps its own clocks: since
// when it is listed (a first record, or a class new in the records,
// releases nothing until it has stood for dropSettle), and since when it
// dropped. A class drops when it lists more than maxDrop less than the
// largest accepted within dropSettle (small clusters included: one PV of
// one is all of them), or, in a cluster's first record, lists none where
// the clouds show some made for the cluster; a drop deeper than maxDrop
// below what it dropped to starts its clock again. A cluster that
// suddenly "uses nothing", or keeps its pods but no PV, is more often an
// agent reading the wrong cluster, a partial read or a forged record than
// the truth; but what the clouds show may be leaked, and what reclaim is
// for, so a drop that stands for dropSettle is believed.
func (rr *Reader) judge(last Seen, counts map[string]int, clouds map[string]any, t kube.Target, now time.Time) (next Seen, settles time.Time, why string) {
	settle := rr.Config.DropSettle.Std()
	next = Seen{Sizes: last.Sizes, Since: map[string]time.Time{}}
	for k, at := range last.Since {
		next.Since[k] = at
	}
	if len(last.Since) == 0 {
		// An older reclaim's state: its classes accepted since its oldest size.
		for _, s := range last.Sizes {
			for k := range s.Counts {
				if _, ok := next.Since[k]; !ok {
					next.Since[k] = last.Sizes[0].At
				}
			}
		}
	}
	for k := range next.Since {
		if _, ok := counts[k]; !ok {
			delete(next.Since, k) // a class no longer listed is new again if it comes back
		}
	}
	for k := range counts {
		if _, ok := next.Since[k]; !ok {
			next.Since[k] = now
		}
		settles = latest(settles, next.Since[k].Add(settle))
	}
	was := largest(last.Sizes, now, settle)
	ev := Shown{}
	if len(last.Sizes) == 0 && rr.Evidence != nil {
		rr.Evidence(clouds, t, ev)
	}
	var held []string
	var until time.Time
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		n, w := counts[k], was[k]
		what := ""
		switch {
		case w > 0 && float64(n) < float64(w)*(1-rr.Config.MaxDrop.Fraction()):
			what = fmt.Sprintf("%d %s where it listed %d", n, k, w)
		case n == 0 && len(ev[k]) > 0:
			what = ev.unseen(k)
		default:
			continue // a class that does not drop (any more) forgets its clock
		}
		d, ok := last.Drops[k]
		switch {
		case !ok && !last.DropSince.IsZero():
			d = Drop{Since: last.DropSince, To: n}
		case !ok:
			d = Drop{Since: now, To: n}
		case float64(n) < float64(d.To)*(1-rr.Config.MaxDrop.Fraction()):
			d = Drop{Since: now, To: n} // deeper still: a new drop
		}
		if next.Drops == nil {
			next.Drops = map[string]Drop{}
		}
		next.Drops[k] = d
		if now.Sub(d.Since) < settle {
			until = latest(until, d.Since.Add(settle))
			held = append(held, fmt.Sprintf("%s (since %s)", what, fmtTime(d.Since)))
		}
	}
	if len(held) > 0 {
		why = fmt.Sprintf("the record lists %s: a class of evidence that drops by more than fleet.records.maxDrop %s, or that a first record lists none of, is believed once it has stood for fleet.records.dropSettle %s, so what the cluster could use is held until %s, unless its use comes back",
			strings.Join(held, "; "), rr.Config.MaxDrop, rr.Config.DropSettle, fmtTime(until))
	}
	return next, settles, why
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// fmtTime is a time in the records' words: UTC, to the second.
func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Decoders are the taps' Decoders by name: the taps whose data a deleter
// reads from records.
func Decoders(taps []kube.Tap) map[string]published.Decoder {
	out := map[string]published.Decoder{}
	for _, t := range taps {
		if t.Decode != nil {
			out[t.Name] = t.Decode
		}
	}
	return out
}
