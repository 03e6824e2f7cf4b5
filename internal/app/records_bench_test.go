package app

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/published"
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
	recRSSTarget    = 400 << 20 // peak RSS, bytes: the deleter's fleet target (as BenchmarkEKSFleet)
	recLatency      = 20 * time.Millisecond
	recGCELatency   = 5 * time.Millisecond
	recBucket       = "fleet"
	recPrefix       = "reclaim"
	recAccount      = "123456789012"
	recRegion       = "us-east-1"
	recECRAccount   = "210987654321"
	recSampleDecode = 100
)

// BenchmarkRecordFleet is one dry-run pass of a deleter that reads its
// fleet from the agents' records (fleet.snapshots): 1,000 clusters, 500 on
// EKS and 500 on GKE in 4 projects, each record about 300 pods with their
// IPs, 24 nodes, 40 finished Jobs, 30 ECR image uses and, on GKE, 20 PVs
// and PVCs on GCE disks. The records are encoded once with
// published.Encode into an in-memory bucket that answers each Get after
// 20 ms, as S3's first byte does; the gce section lists the 4 projects'
// 10,500 disks from gcefake: the 10,000 the PVs name are kept, the 500
// nothing names are marked.
//
// The pass runs through New and Once with the bucket as Deps.Records.
// Reading a record is a Get and a decode, as many at a time as the memory
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
// whose peak RSS against the 400 MiB target (the deleter's fleet target
// under the 512 MiB limit) is peak-rss/target. Its wall time is reported
// too (pod-wall-s), with the floor its bucket client's own pacing sets
// (pod-pace-floor-s).
// RECORD_BENCH_HEAPPROFILE=file writes a heap profile at the in-process
// pass's live heap peak.
//
// Run it with: go test -tags demo ./internal/app -run '^$' -bench RecordFleet -benchtime 1x
// (make bench runs it too).
func BenchmarkRecordFleet(b *testing.B) {
	now := time.Now().Truncate(time.Second)

	// ---- the disks ----
	srv := gcefake.New(gcefake.Options{Latency: recGCELatency})
	defer srv.Close()
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
	store := &recStore{objects: map[string][]byte{}, latency: recLatency}
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
		store.objects[published.Key(recPrefix, cl.place, cl.name)] = body
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
		return fmt.Sprintf("fleet:\n  discover: false\n  snapshots:\n    bucket: %s\n    prefix: %s\n    account: %q\n    region: %s\n    endpoint: %s\n    maxAge: 2h\n",
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

	// ---- the floor ----
	// One record's decode throughput, alone: a sample of records decoded
	// one after another, as the reader decodes each.
	taps := decoders(Taps(cfg))
	// The records fetched at once, as the reader bounds them for the
	// memory target the pass runs with (280MiB unless GOMEMLIMIT says).
	target := int64(280 << 20)
	if os.Getenv("GOMEMLIMIT") != "" {
		target = memoryTarget()
	}
	rb, err := boundsFor(cfg.Fleet.Snapshots, target)
	if err != nil {
		b.Fatal(err)
	}
	recReadAtOnce := rb.gets
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
	// which fleet.snapshots does not change): its own floor.
	paceFloor := float64(max(0, recClusters-bucket.DefaultBurst)) / bucket.DefaultRequestsPerSecond

	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		store.gets.Store(0)
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
			if s.Kind == engine.SourceCluster {
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
		if n := store.gets.Load(); n != recClusters {
			b.Fatalf("%d Gets of the bucket, want one per cluster (%d)", n, recClusters)
		}
		if got := len(p.State.Records); got != recClusters {
			b.Fatalf("the state remembers %d records, want %d", got, recClusters)
		}

		// ---- as the pod runs it ----
		s3 := httptest.NewServer(store)
		dir := b.TempDir()
		auditPath := filepath.Join(dir, "audit.jsonl")
		podCfg := filepath.Join(dir, "reclaim.yaml")
		for path, body := range map[string]string{auditPath: "", podCfg: y.String() + snapshots(s3.URL) +
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

// recStore is the bucket: every record in memory, each Get answered after
// latency. It is also the S3 stand-in the binary reads (path-style GET
// /bucket/key).
type recStore struct {
	objects map[string][]byte
	latency time.Duration
	gets    atomic.Int64
}

func (s *recStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.gets.Add(1)
	select {
	case <-time.After(s.latency):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	body, ok := s.objects[key]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", key, outcome.ErrNotFound)
	}
	return body, nil
}

func (s *recStore) Put(context.Context, string, []byte) error {
	return fmt.Errorf("the deleter wrote a record")
}

func (s *recStore) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	key, ok := strings.CutPrefix(req.URL.Path, "/"+recBucket+"/")
	if req.Method != http.MethodGet || !ok {
		http.Error(w, "not a GetObject", http.StatusMethodNotAllowed)
		return
	}
	body, err := s.Get(req.Context(), key)
	if err != nil {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>%s</Key></Error>`, key)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
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
