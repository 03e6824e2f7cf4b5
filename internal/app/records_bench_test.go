package app

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/state"
)

// Record fleet shape (issue 31): 1,000 clusters, every other one on GKE,
// each read by its agent and published as one record. What a cluster
// uses is sized as a busy cluster's: a few hundred running pods with
// their addresses, its nodes, finished Jobs of a few CronJobs, the ECR
// images its pods run, and (on GKE) PVs and their claims on GCE disks.
const (
	recClusters     = 1000
	recPods         = 300 // per cluster: 300,000 in all
	recNodes        = 24
	recJobs         = 40
	recCronJobs     = 4
	recImages       = 30
	recPVs          = 20 // per GKE cluster, each on its own disk: 10,000 in all
	recProjects     = 4  // GKE clusters' projects, and the gce section's
	recOrphans      = 500
	recRSSTarget    = 256 << 20 // peak RSS, bytes: the record deleter's target (issue 40)
	recLatency      = 20 * time.Millisecond
	recGCELatency   = 5 * time.Millisecond
	recBucket       = "fleet"
	recPrefix       = "reclaim"
	recAccount      = "123456789012"
	recRegion       = "us-east-1"
	recECRAccount   = "210987654321"
	recSampleDecode = 100
)

// recBench is the record fleet's world: the disks (gcefake), the records
// in the bucket, and the deleter's config.
type recBench struct {
	srv                 *gcefake.Server
	projects            []string
	fleet               []recCluster
	store               *recStore
	compressed, decoded int
	kept                int
	// y is the config without fleet.records; snapshots is the section
	// for a bucket at endpoint; cfg is both, parsed, for the in-process
	// passes (its endpoint is never dialled).
	y         string
	snapshots func(endpoint string) string
	cfg       *config.Config
}

// newRecBench builds the record fleet's world as of now: each cluster's
// record published, encoded with published.Encode.
func newRecBench(b *testing.B, now time.Time) *recBench {
	// ---- the disks ----
	srv := gcefake.New(gcefake.Options{Latency: recGCELatency})
	b.Cleanup(srv.Close)
	projects := make([]string, recProjects)
	for p := range projects {
		projects[p] = fmt.Sprintf("gke-fleet-%d", p)
	}
	disk := func(project, zone, name string, used bool) {
		d := gcefake.Disk{Zone: zone, Name: name, SizeGB: 100, Type: "pd-balanced",
			Labels: map[string]string{"goog-gke-volume": ""}, Created: now.Add(-60 * 24 * time.Hour)}
		if !used {
			d.LastDetach = now.Add(-30 * 24 * time.Hour)
		}
		srv.AddDisk(project, d)
	}

	// ---- the records ----
	fleet := make([]recCluster, recClusters)
	store := newRecStore(recLatency)
	var compressed, decoded int
	var buf bytes.Buffer
	for c := range fleet {
		cl := newRecCluster(c, projects)
		fleet[c] = cl
		rec := cl.record(now)
		for _, pv := range rec.Refs.PVs {
			disk(pv.Disk.Project, pv.Disk.Zone, pv.Disk.Name, true)
		}
		buf.Reset()
		if err := published.Encode(&buf, rec); err != nil {
			b.Fatal(err)
		}
		body := bytes.Clone(buf.Bytes())
		store.put(published.Key(recPrefix, cl.place, cl.name), body)
		compressed += len(body)
		decoded += gunzippedSize(b, body)
	}
	for i := range recOrphans {
		p := projects[i%recProjects]
		disk(p, recZone(i), fmt.Sprintf("pvc-orphan-%05d", i), false)
	}
	kept := recClusters / 2 * recPVs

	// ---- the config ----
	var y strings.Builder
	y.WriteString("clusters:\n")
	for _, cl := range fleet {
		fmt.Fprintf(&y, "  - name: %s\n", cl.name)
		if cl.place.Platform == inventory.GKE {
			fmt.Fprintf(&y, "    platform: gke\n    project: %s\n    location: %s\n", cl.place.Project, cl.place.Location)
		} else {
			fmt.Fprintf(&y, "    platform: eks\n    account: %q\n    location: %s\n", cl.place.Account, cl.place.Location)
		}
	}
	snapshots := func(endpoint string) string {
		return fmt.Sprintf("fleet:\n  discover: false\n  records:\n    bucket: %s\n    prefix: %s\n    account: %q\n    region: %s\n    endpoint: %s\n    maxAge: 2h\n",
			recBucket, recPrefix, recAccount, recRegion, endpoint)
	}
	fmt.Fprintf(&y, `gce:
  projects: [%s]
  endpoint: %s
  withoutAuthentication: true
  concurrency: 4
disks:
  minAge: 24h
  grace: 6h
  minDetached: 1h
  maxDeletePercent: 100%%
`, strings.Join(projects, ", "), srv.URL())
	// The in-process pass is given its bucket; the endpoint is never dialled.
	cfg, err := config.Parse([]byte(y.String()+snapshots("http://127.0.0.1:1")), "records-bench.yaml")
	if err != nil {
		b.Fatal(err)
	}

	return &recBench{srv: srv, projects: projects, fleet: fleet, store: store, compressed: compressed, decoded: decoded, kept: kept,
		y: y.String(), snapshots: snapshots, cfg: cfg}
}

// BenchmarkRecordFleet is one dry-run pass of a deleter that reads its
// fleet from the agents' records (fleet.records): 1,000 clusters, 500 on
// EKS and 500 on GKE in 4 projects, each record about 300 pods with their
// IPs, 24 nodes, 40 finished Jobs, 30 ECR image uses and, on GKE, 20 PVs
// and PVCs on GCE disks. The records are encoded once with
// published.Encode into an in-memory bucket that answers each Get after
// 20 ms, as S3's first byte does; the gce section lists the 4 projects'
// 10,500 disks from gcefake: the 10,000 the PVs name are kept, the 500
// nothing names are marked.
//
// The pass runs through New and Once with the bucket as Deps.Records.
// The bucket's prefix is listed once (one page of 1,000 keys); reading a
// record is a Get decoded as it arrives, as many at a time as the memory
// target allows (recordBounds). The floor
// is the larger of two: the decode time of every record's bytes (one
// record's throughput, measured alone on a sample, times every record's
// decoded bytes) spread over the cores the reader can use (min(GOMAXPROCS,
// readAtOnce)), and the Gets' latency, one wave after another. wall/floor
// near 1 is a pass whose time follows the records' size, not the number
// of round trips (1,000 × 20 ms one after another); read/floor is the
// same for the records' read alone.
//
// Then the same pass as the pod runs it (runAsPod): the binary, reading
// the same bytes over HTTP from an S3 stand-in with the same latency,
// whose peak RSS against the 256 MiB target (issue 40's, under the
// deploy's 512 MiB limit) is peak-rss/target, checked. Its wall time is reported
// too (pod-wall-s), with the floor its bucket client's own pacing sets
// (pod-pace-floor-s).
// RECORD_BENCH_HEAPPROFILE=file writes a heap profile at the in-process
// pass's live heap peak.
//
// Run it with: go test -tags demo ./internal/app -run '^$' -bench RecordFleet -benchtime 1x
// (make bench runs it too).
func BenchmarkRecordFleet(b *testing.B) {
	now := time.Now().Truncate(time.Second)
	w := newRecBench(b, now)
	srv, fleet, store, compressed, decoded, kept, snapshots, cfg := w.srv, w.fleet, w.store, w.compressed, w.decoded, w.kept, w.snapshots, w.cfg

	// ---- the floor ----
	// One record's decode throughput, alone: a sample of records decoded
	// one after another, as the reader decodes each.
	taps := records.Decoders(On(cfg).Taps(cfg))
	// The records fetched at once, as the reader bounds them for the
	// memory target the pass runs with (280MiB unless GOMEMLIMIT says).
	target := int64(280 << 20)
	if os.Getenv("GOMEMLIMIT") != "" {
		target = records.MemoryTarget()
	}
	rb, err := records.BoundsFor(cfg.Fleet.Records, target)
	if err != nil {
		b.Fatal(err)
	}
	recReadAtOnce := rb.Gets
	var sampleBytes int
	sampleStart := time.Now()
	for i := range recSampleDecode {
		c := fleet[i*recClusters/recSampleDecode]
		body := store.objects[published.Key(recPrefix, c.place, c.name)]
		if _, err := published.Decode(bytes.NewReader(body), taps); err != nil {
			b.Fatal(err)
		}
		sampleBytes += gunzippedSize(b, body)
	}
	perByte := time.Since(sampleStart).Seconds() / float64(sampleBytes)
	cores := min(runtime.GOMAXPROCS(0), recReadAtOnce)
	decodeAll := perByte * float64(decoded)
	decodeFloor := decodeAll / float64(cores)
	// The Gets, readAtOnce at a time: at least the latency of each wave.
	getsFloor := float64(ceilDiv(recClusters, recReadAtOnce)) * recLatency.Seconds()
	floor := max(decodeFloor, getsFloor)
	bound := "the decoding"
	if getsFloor > decodeFloor {
		bound = "the Gets' latency"
	}
	roundTrips := float64(recClusters) * recLatency.Seconds()
	// The binary's bucket client paces its Gets (bucket.New's defaults,
	// which fleet.records does not change): its own floor.
	paceFloor := float64(max(0, recClusters-bucket.DefaultBurst)) / bucket.DefaultRequestsPerSecond

	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		store.gets.Store(0)
		store.lists.Store(0)
		srv.ResetCalls()
		r, err := New(context.Background(), cfg, Deps{Records: store, Store: state.NewMemoryStore(engine.NewState()),
			Audit: audit.New(io.Discard), Now: func() time.Time { return now }})
		if err != nil {
			b.Fatal(err)
		}
		// The read of the records, timed: New made it the runner's clusters.
		var read time.Duration
		readRecords := r.d.Clusters
		r.d.Clusters = func(ctx context.Context) []inventory.ClusterRefs {
			start := time.Now()
			defer func() { read = time.Since(start) }()
			return readRecords(ctx)
		}
		memLimit := "GOMEMLIMIT " + os.Getenv("GOMEMLIMIT") + " from the environment"
		if os.Getenv("GOMEMLIMIT") == "" {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(280 << 20))
			memLimit = "GOMEMLIMIT 280MiB, as deploy/ sets it"
		}
		debug.FreeOSMemory()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		baseLive := liveHeap()
		var lastProfile time.Time
		stopSampling := sampleMemory(base.HeapInuse, baseLive, func() {
			if prof := os.Getenv("RECORD_BENCH_HEAPPROFILE"); prof != "" && time.Since(lastProfile) > time.Second {
				lastProfile = time.Now()
				if f, err := os.Create(prof); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		})
		b.StartTimer()

		start, cpu := time.Now(), cpuTime()
		rep, err := r.Once(context.Background(), Options{})
		wall, cpu := time.Since(start), cpuTime()-cpu

		b.StopTimer()
		pk := stopSampling()
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		runLive := pk.live - min(pk.live, baseLive)

		// The plan: every cluster read from its record and complete, every
		// disk a PV names kept, every orphan marked.
		p := rep.Plan
		clusters := 0
		for _, s := range p.Sources {
			if !s.Complete {
				b.Errorf("%s %s incomplete: %v", s.Kind, s.Name, s.Problems)
			}
			if s.Kind == inventory.SourceCluster {
				clusters++
			}
		}
		if p.Incomplete || p.BreakerTripped || clusters != recClusters {
			b.Fatalf("%d clusters read (want %d), incomplete %v, breaker %v: %v", clusters, recClusters, p.Incomplete, p.BreakerTripped, p.Blocked)
		}
		keeps, marks, deletes := p.Count(gcedisk.Name, engine.Keep), p.Count(gcedisk.Name, engine.Mark), p.Count(gcedisk.Name, engine.Delete)
		if keeps != kept || marks != recOrphans || deletes != 0 {
			b.Fatalf("disks: %d kept, %d marked, %d deleted; want %d, %d, 0", keeps, marks, deletes, kept, recOrphans)
		}
		if n, l := store.gets.Load(), store.lists.Load(); n != recClusters || l != int64(ceilDiv(recClusters, recPage)) {
			b.Fatalf("%d Gets and %d listings of the bucket, want one Get per cluster (%d) and one listing of %d pages", n, l, recClusters, ceilDiv(recClusters, recPage))
		}
		if seen, _ := records.ParseSeen(p.State.Records); len(seen) != recClusters {
			got := len(seen)
			b.Fatalf("the state remembers %d records, want %d", got, recClusters)
		}

		// ---- as the pod runs it ----
		s3 := httptest.NewServer(store)
		dir := b.TempDir()
		auditPath := filepath.Join(dir, "audit.jsonl")
		podCfg := filepath.Join(dir, "reclaim.yaml")
		for path, body := range map[string]string{auditPath: "", podCfg: w.y + snapshots(s3.URL) +
			fmt.Sprintf("state:\n  file: %s\naudit:\n  file: %s\n", filepath.Join(dir, "state.json"), auditPath)} {
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				b.Fatal(err)
			}
		}
		store.gets.Store(0)
		pod := runAsPod(b, podCfg, auditPath)
		s3.Close()
		if pod.ExitCode != 0 || pod.Deleted != 0 || store.gets.Load() != recClusters {
			b.Fatalf("the binary's run: exit %d, %d deleted, %d Gets (want 0, 0, %d):\n%s", pod.ExitCode, pod.Deleted, store.gets.Load(), recClusters, pod.Report)
		}
		if want := fmt.Sprintf("mark %d", recOrphans); !bytes.Contains(pod.Stdout, []byte(want)) {
			b.Fatalf("the binary's report does not say %q as the in-process plan does:\n%s", want, pod.Report)
		}

		ratio := wall.Seconds() / floor
		b.ReportMetric(wall.Seconds(), "wall-s/op")
		b.ReportMetric(floor, "floor-s")
		b.ReportMetric(decodeFloor, "decode-floor-s")
		b.ReportMetric(getsFloor, "gets-floor-s")
		b.ReportMetric(ratio, "wall/floor")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu/wall")
		b.ReportMetric(read.Seconds(), "read-s")
		b.ReportMetric(read.Seconds()/floor, "read/floor")
		b.ReportMetric(float64(compressed), "records-gz-bytes")
		b.ReportMetric(float64(decoded), "records-bytes")
		b.ReportMetric(float64(decoded)/wall.Seconds()/(1<<20), "decoded-MiB/s")
		b.ReportMetric(float64(pk.inuse)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(runLive)/(1<<20), "run-live-MiB")
		b.ReportMetric(pod.Wall.Seconds(), "pod-wall-s")
		b.ReportMetric(pod.Wall.Seconds()/floor, "pod-wall/floor")
		b.ReportMetric(paceFloor, "pod-pace-floor-s")
		b.ReportMetric(pod.CPU.Seconds()/pod.Wall.Seconds(), "pod-cpu/wall")
		pod.reportMemory(b, recRSSTarget, fmt.Sprintf("the same plan (%d kept, %d marked) from %d records", keeps, marks, recClusters))
		if pod.PeakRSS > recRSSTarget {
			b.Fatalf("as a pod: peak RSS %d MiB, more than the %d MiB target", pod.PeakRSS>>20, recRSSTarget>>20)
		}

		b.Logf("%d clusters (%d EKS, %d GKE in %d projects): %d pods, %d nodes, %d Jobs, %d image uses, %d PVs and PVCs; %d disks (%d orphans)",
			recClusters, recClusters-recClusters/2, recClusters/2, recProjects, recClusters*recPods, recClusters*recNodes, recClusters*recJobs,
			recClusters*recImages, kept, kept+recOrphans, recOrphans)
		b.Logf("records: %d MiB gzipped, %d MiB decoded (%d KiB and %d KiB a cluster); one record decodes at %.0f MiB/s alone",
			compressed>>20, decoded>>20, compressed/recClusters>>10, decoded/recClusters>>10, 1/perByte/(1<<20))
		b.Logf("wall %s = %.2f× the floor %.2fs, set by %s: the decoding %.2fs (every record's bytes at one record's rate, %.2fs, over %d cores), the Gets %.2fs (%d waves of %d at %s; one after another they would take %.0fs); %s CPU = %.0f%% of wall on %d cores (gcefake included)",
			wall.Round(time.Millisecond), ratio, floor, bound, decodeFloor, decodeAll, cores, getsFloor, ceilDiv(recClusters, recReadAtOnce), recReadAtOnce, recLatency,
			roundTrips, cpu.Round(time.Millisecond), 100*cpu.Seconds()/wall.Seconds(), runtime.GOMAXPROCS(0))
		b.Logf("of it: the records read in %s = %.2f× the floor; the rest (the disks listed before, the plan and report after) %s",
			read.Round(time.Millisecond), read.Seconds()/floor, (wall - read).Round(time.Millisecond))
		b.Logf("in process (%s): peak heap in use %d MiB; live heap %d MiB before the pass (the records' bytes, the fakes), at most %d MiB during it (%d MiB more: the pass's own)",
			memLimit, pk.inuse>>20, baseLive>>20, pk.live>>20, runLive>>20)
		b.Logf("as a pod: wall %s = %.2f× the floor, CPU %s = %.0f%% of wall; its bucket client paces Gets at %.0f a second (burst %d), a floor of %.1fs for %d records whatever their size",
			pod.Wall.Round(time.Millisecond), pod.Wall.Seconds()/floor, pod.CPU.Round(time.Millisecond), 100*pod.CPU.Seconds()/pod.Wall.Seconds(),
			float64(bucket.DefaultRequestsPerSecond), bucket.DefaultBurst, paceFloor, recClusters)
	}
}

// recStore is the bucket: every record in memory, each request answered
// after latency, counted by kind. It lists (a page of at most 1,000
// keys, as S3) and says each object's version (its MD5, as S3's ETag of
// a single-part put). It is also the S3 stand-in the binary reads
// (path-style GET /bucket/key, and ListObjectsV2 at GET /bucket?list-type=2).
type recStore struct {
	mu      sync.RWMutex
	objects map[string][]byte
	etags   map[string]string
	// written is when each object was put, as S3's LastModified says.
	written map[string]time.Time
	latency time.Duration
	// What the store was asked: LIST pages, GETs, PUTs, and the bytes
	// the GETs returned.
	lists, gets, puts, bytes atomic.Int64
}

func newRecStore(latency time.Duration) *recStore {
	return &recStore{objects: map[string][]byte{}, etags: map[string]string{}, written: map[string]time.Time{}, latency: latency}
}

// put is an agent's publication.
func (s *recStore) put(key string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.puts.Add(1)
	s.objects[key], s.etags[key] = body, fmt.Sprintf("%q", fmt.Sprintf("%x", md5.Sum(body)))
	s.written[key] = time.Now()
}

// writtenAt is when key was put, as a listing says it (S3's LastModified).
func (s *recStore) writtenAt(key string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.written[key].UTC().Format("2006-01-02T15:04:05.000Z")
}

func (s *recStore) object(key string) ([]byte, string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, ok := s.objects[key]
	return b, s.etags[key], ok
}

func (s *recStore) wait(ctx context.Context) error {
	select {
	case <-time.After(s.latency):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *recStore) Get(ctx context.Context, key string) ([]byte, error) {
	rc, _, err := s.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func (s *recStore) Open(ctx context.Context, key string) (io.ReadCloser, string, error) {
	s.gets.Add(1)
	if err := s.wait(ctx); err != nil {
		return nil, "", err
	}
	body, etag, ok := s.object(key)
	if !ok {
		return nil, "", fmt.Errorf("get %s: %w", key, outcome.ErrNotFound)
	}
	s.bytes.Add(int64(len(body)))
	return io.NopCloser(bytes.NewReader(body)), etag, nil
}

// recPage is the most keys a listing's page holds (S3's ListObjectsV2).
const recPage = 1000

func (s *recStore) List(ctx context.Context, prefix string) ([]bucket.Object, error) {
	var out []bucket.Object
	after := ""
	for {
		page, more := s.page(ctx, prefix, after)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, page...)
		if !more {
			return out, nil
		}
		after = page[len(page)-1].Key
	}
}

// page is one page of a listing: the keys under prefix after after, in
// order, and whether more follow.
func (s *recStore) page(ctx context.Context, prefix, after string) ([]bucket.Object, bool) {
	s.lists.Add(1)
	if s.wait(ctx) != nil {
		return nil, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var keys []string
	for k := range s.objects {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	more := len(keys) > recPage
	keys = keys[:min(len(keys), recPage)]
	out := make([]bucket.Object, len(keys))
	for i, k := range keys {
		out[i] = bucket.Object{Key: k, Version: s.etags[k], Size: int64(len(s.objects[k]))}
	}
	return out, more
}

func (s *recStore) Put(context.Context, string, []byte) error {
	return fmt.Errorf("the deleter wrote a record")
}

func (s *recStore) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet && req.URL.Path == "/"+recBucket && req.URL.Query().Get("list-type") == "2" {
		q := req.URL.Query()
		after := q.Get("continuation-token")
		if after == "" {
			after = q.Get("start-after")
		}
		page, more := s.page(req.Context(), q.Get("prefix"), after)
		type content struct {
			Key          string
			LastModified string
			ETag         string
			Size         int64
			StorageClass string
		}
		res := struct {
			XMLName               xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
			Name, Prefix          string
			KeyCount, MaxKeys     int
			IsTruncated           bool
			Contents              []content
			ContinuationToken     string `xml:",omitempty"`
			NextContinuationToken string `xml:",omitempty"`
		}{Name: recBucket, Prefix: q.Get("prefix"), KeyCount: len(page), MaxKeys: recPage, IsTruncated: more, ContinuationToken: q.Get("continuation-token")}
		for _, o := range page {
			res.Contents = append(res.Contents, content{Key: o.Key, LastModified: s.writtenAt(o.Key), ETag: o.Version, Size: o.Size, StorageClass: "STANDARD"})
		}
		if more {
			res.NextContinuationToken = page[len(page)-1].Key
		}
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, xml.Header)
		xml.NewEncoder(w).Encode(res)
		return
	}
	key, ok := strings.CutPrefix(req.URL.Path, "/"+recBucket+"/")
	if req.Method != http.MethodGet || !ok {
		http.Error(w, "not a GetObject or ListObjectsV2", http.StatusMethodNotAllowed)
		return
	}
	rc, etag, err := s.Open(req.Context(), key)
	if err != nil {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>%s</Key></Error>`, key)
		return
	}
	body, _ := io.ReadAll(rc)
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.Write(body)
}

// recCluster is one cluster of the record fleet.
type recCluster struct {
	c     int
	name  string
	place inventory.Place
}

func newRecCluster(c int, projects []string) recCluster {
	if c%2 == 1 {
		return recCluster{c: c, name: fmt.Sprintf("gke-%04d", c),
			place: inventory.Place{Platform: inventory.GKE, Project: projects[c/2%len(projects)], Location: recGKERegion(c)}}
	}
	return recCluster{c: c, name: fmt.Sprintf("eks-%04d", c),
		place: inventory.Place{Platform: inventory.EKS, Account: fmt.Sprintf("1000000%05d", c/2%50), Location: []string{"us-east-1", "eu-west-1", "ap-northeast-1"}[c%3]}}
}

func recGKERegion(c int) string {
	return []string{"europe-west1", "us-central1", "asia-northeast1"}[c%3]
}

func recZone(i int) string { return recGKERegion(i) + "-" + string(rune('a'+i%3)) }

// record is what the cluster's agent would publish: what the collector
// reads of a cluster (kube.Collect with images and workloads), taken
// five minutes ago.
func (cl recCluster) record(now time.Time) published.Record {
	c, gke := cl.c, cl.place.Platform == inventory.GKE
	uid := func(kind, i int) string { return fmt.Sprintf("%08x-%04x-4000-8000-%012x", kind, c, i) }
	taken := now.Add(-5 * time.Minute)
	refs := inventory.ClusterRefs{Name: cl.name, Complete: true, ImagesListed: true, WorkloadsListed: true,
		JobsVersion: fmt.Sprint(9000000 + c), PodsVersion: fmt.Sprint(9000001 + c)}
	nss := []string{"default", "kube-system", "payments", "search", "ingest", "batch", "monitoring", "web"}
	refs.NamespaceLabels = map[string]map[string]string{}
	for i, ns := range nss {
		refs.NamespaceLabels[ns] = map[string]string{"team": fmt.Sprintf("team-%d", i)}
	}
	node := func(n int) string {
		if gke {
			return fmt.Sprintf("gke-%s-pool-%08x-%04d", cl.name, c, n)
		}
		return fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", c%250, n/250, n%250+1)
	}
	for n := range recNodes {
		nd := inventory.Node{Name: node(n), IPs: []string{fmt.Sprintf("10.%d.%d.%d", c%250, n/250, n%250+1)}}
		if !gke {
			nd.Instance = fmt.Sprintf("i-0%016x", c*1000+n)
		}
		refs.Nodes = append(refs.Nodes, nd)
	}
	image := func(i int) inventory.ImageRef {
		return inventory.ImageRef{Repo: inventory.RepoKey{Account: recECRAccount, Region: recRegion, Name: fmt.Sprintf("svc/app-%02d", i)},
			Tag: fmt.Sprintf("v1.%d.%d", i, c%7), Digest: "sha256:" + fmt.Sprintf("%064x", c*100+i)}
	}
	for i := range recImages {
		ns := nss[i%len(nss)]
		refs.Images = append(refs.Images, inventory.ImageUse{Ref: image(i), Where: fmt.Sprintf("%s/%s/Deployment/app-%02d (main)", cl.name, ns, i),
			Users: recPods / recImages})
	}
	for p := range recPods {
		ns := nss[p%len(nss)]
		rs := fmt.Sprintf("app-%02d-%08x", p%recImages, c)
		refs.Pods = append(refs.Pods, inventory.Pod{Namespace: ns, Name: fmt.Sprintf("%s-%05x", rs, p), UID: uid(1, p),
			Version: fmt.Sprint(8000000 + p), Phase: "Running", Node: node(p % recNodes),
			IPs:     []string{fmt.Sprintf("10.%d.%d.%d", 100+c%100, 16+p/250, p%250+1)},
			Created: now.Add(-time.Duration(p+1) * time.Hour), Owner: &inventory.Owner{Kind: "ReplicaSet", Name: rs, UID: uid(2, p%recImages)}})
	}
	for k := range recCronJobs {
		refs.CronJobs = append(refs.CronJobs, inventory.CronJob{Namespace: "batch", Name: fmt.Sprintf("nightly-%d", k), UID: uid(3, k),
			SuccessfulLimit: 3, FailedLimit: 1})
	}
	for j := range recJobs {
		k := j % recCronJobs
		finished := now.Add(-time.Duration(j+1) * 6 * time.Hour)
		refs.Jobs = append(refs.Jobs, inventory.Job{Namespace: "batch", Name: fmt.Sprintf("nightly-%d-%08d", k, 29000000+j), UID: uid(4, j),
			Version: fmt.Sprint(7000000 + j), Created: finished.Add(-20 * time.Minute), Status: "Complete", Finished: finished,
			CronJob: &inventory.Owner{Kind: "CronJob", Name: fmt.Sprintf("nightly-%d", k), UID: uid(3, k)}})
	}
	if gke {
		for v := range recPVs {
			zone := recGKERegion(c) + "-" + string(rune('a'+v%3))
			ns := nss[v%len(nss)]
			pv := fmt.Sprintf("pvc-%s", uid(5, v))
			claim := fmt.Sprintf("data-%s-%d", ns, v)
			refs.PVs = append(refs.PVs, inventory.PVRef{Cluster: cl.name, PV: pv, Phase: "Bound", ClaimNamespace: ns, Claim: claim, CapacityGB: 100,
				Disk: inventory.DiskKey{Project: cl.place.Project, Zone: zone, Name: pv},
				Pods: []inventory.PodRef{{Namespace: ns, Name: fmt.Sprintf("db-%d-0", v), Phase: "Running"}}})
			d := inventory.DiskKey{Project: cl.place.Project, Zone: zone, Name: pv}
			refs.PVCs = append(refs.PVCs, inventory.PVCRef{Cluster: cl.name, Namespace: ns, Name: claim, UID: uid(5, v), Volume: pv, CapacityGB: 100,
				Created: now.Add(-90 * 24 * time.Hour), Pods: []inventory.PodRef{{Namespace: ns, Name: fmt.Sprintf("db-%d-0", v), Phase: "Running"}}, Disk: &d})
		}
	}
	return published.Record{TakenAt: taken, Agent: "bench", Refs: refs,
		Cluster: published.Identity{Name: cl.name, Platform: cl.place.Platform, Account: cl.place.Account, Project: cl.place.Project,
			Location: cl.place.Location, CA: published.CAHash([]byte(uid(7, 0))), KubeSystemUID: uid(6, 0)}}
}

// gunzippedSize is the size of a gzipped body once decompressed.
func gunzippedSize(b *testing.B, body []byte) int {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil {
		b.Fatal(err)
	}
	return int(n)
}
