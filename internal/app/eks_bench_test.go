package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
	"reclaim.dev/reclaim/reconcile/state"
)

// EKS fleet shape (issue 9). Each cluster holds eksJobs finished Jobs and
// eksJobs Pods: pods 0..eksRSPods-1 are a ReplicaSet's running pods, pod p
// from eksRSPods on is the pod of Job p (Jobs 0..eksRSPods-1, the oldest,
// have lost theirs long ago).
const (
	eksClusters      = 10
	eksJobs          = 10000 // per cluster: 100,000 in all
	eksRSPods        = 500
	eksRSSTarget     = 400 << 20 // peak RSS, bytes
	eksCronJobs      = 20        // Job j belongs to CronJob j%25 when that is < 20
	eksNodes         = 24        // EC2 nodes per cluster, 12 in each of its two subnets
	eksSubnets       = 6
	eksPerSubnet     = 2000 // interfaces: 12,000 in all
	eksLeakedPer     = 17   // detached, VPC CNI evidence, no address on a pod: 102 in all
	eksUnownedPer    = 3    // detached without evidence: kept
	eksAccount       = "123456789012"
	eksRegion        = "us-east-1"
	eksKubeLatency   = time.Millisecond
	eksEC2Latency    = 2 * time.Millisecond
	eksProtectLabel  = "reclaim.dev/protect"
	eksRetentionNote = "reclaim.dev/retention"
)

// BenchmarkEKSFleet is one applying pass of reclaim over an EKS fleet at the
// scale of issue 9: 10 clusters holding 100,000 finished Jobs and 100,000
// Pods between them (5,000 of the pods running, the rest finished Job pods),
// and one account's 6 /20 subnets holding 12,000 network interfaces: Fargate
// pod interfaces whose addresses are pods' podIPs, attached node interfaces,
// 102 leaked VPC CNI interfaces and 18 detached ones without evidence.
//
// Every cluster is an in-process HTTP fake of the Kubernetes API (eksCluster)
// that the real collector lists through client-go, built from a kubeconfig
// by the real kube.Pool with the config's qps, burst and pageSize: it answers
// the list endpoints the collector calls in pages that honour limit and
// continue, the GET and DELETE of single Jobs and Pods (DELETE checks the
// UID precondition, records propagationPolicy and, for Background or
// Foreground, removes the Job's pods as the garbage collector would), and
// 404 for Argo Workflows. Pages are generated on demand from the object's
// index, so the fake holds no copy of the fleet (pre-encoding 200,000
// objects would add about 150 MiB to the process the memory figures are
// about). The EC2 account is providers/ec2/ec2fake with EC2's own buckets,
// driven by ec2.NewFleet (the real SDK).
//
// The state is seeded as after earlier runs: every Job and Pod has been a
// candidate for more than the 1h grace, and the leaked interfaces for more
// than 6h. The run deletes, with Apply, at most jobs.maxDeletesPerRun Jobs and
// pods.maxDeletesPerRun Pods at deletesPerSecond per cluster, and every
// leaked interface at ec2Interfaces.deletesPerSecond.
//
// The applier deletes kind by kind, batch by batch, and a kind's decisions
// come cluster by cluster: deletesPerSecond is a per-cluster bucket, but only
// one cluster's is drawn on at a time, so it is also the fleet's rate. The
// floor adds up the phases in that order: the EC2 listing (inventory.Collect
// lists networks before clusters), the cluster lists, then the interface,
// Job and Pod deletes, each cluster's stretch through its buckets.
//
// It reports objects listed and deleted per second, API calls against the
// minimum, the floor the configured rates set (and wall/floor), CPU, the time
// the state store's saves took, and memory: peak heap in use, the live heap
// the run adds (run-live-MiB), and the live heap after the run with its
// report still held. Then the same run again as the pod runs it: the
// binary in its own process (runAsPod), whose peak RSS is peak-rss-MiB; the
// target is at most 400 MiB (under the CronJob's 512 MiB limit, with the
// GOMEMLIMIT=280MiB deploy/ sets), reported as peak-rss/target.
// EKS_BENCH_HEAPPROFILE=file writes a heap profile at the live heap's peak.
//
// Run it with: go test ./internal/app -run '^$' -bench EKS -benchtime 1x
// (make bench runs it too).
func BenchmarkEKSFleet(b *testing.B) {
	const (
		// Per cluster client (client-go's token bucket, shared by the lists,
		// the re-reads and the deletes of a cluster). Burst must be >= qps.
		clusterQPS   = 200
		clusterBurst = 200
		pageSize     = 500
		// The jobs and pods sections: deletesPerSecond paces the re-reads and
		// deletes of each cluster (its own bucket, burst = the rate).
		jobsPerSecond = 200
		jobsPerRun    = 3000
		podsPerSecond = 200
		podsPerRun    = 2000
		// The ec2Interfaces section: the client's describe bucket, and the delete
		// bucket (config allows at most 5/s and a burst of 100).
		ec2RPS         = 10
		ec2Burst       = 5
		ec2Deletes     = 5
		ec2DeleteBurst = 80
		ec2Page        = 1000
	)
	now := time.Now().Truncate(time.Second)
	runNow := now

	// ---- the network ----
	var ec2Rec callTimes
	ec2srv := ec2fake.New(ec2fake.Options{Region: eksRegion, Account: eksAccount, Latency: eksEC2Latency,
		Describe: ec2fake.RateLimit{PerSecond: 20, Burst: 100}, Delete: ec2fake.RateLimit{PerSecond: 5, Burst: 100},
		OnRequest: func(action string) { ec2Rec.add(action) }})
	ec2srv.Start()
	defer ec2srv.Close()
	nw := newEKSNetwork()
	for _, sn := range nw.subnets {
		ec2srv.AddSubnet(sn)
	}
	ec2srv.AddInterfaces(nw.ifaces...)

	// ---- the clusters ----
	dir := b.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	clusters := make([]*eksCluster, eksClusters)
	var kc strings.Builder
	kc.WriteString("apiVersion: v1\nkind: Config\nusers:\n  - name: bench\n    user: {}\nclusters:\n")
	for c := range eksClusters {
		cl := newEKSCluster(c, now, nw)
		cl.ts = httptest.NewServer(cl)
		defer cl.ts.Close()
		clusters[c] = cl
		fmt.Fprintf(&kc, "  - name: %s\n    cluster:\n      server: %s\n", cl.name, cl.ts.URL)
	}
	kc.WriteString("contexts:\n")
	for _, cl := range clusters {
		fmt.Fprintf(&kc, "  - name: %s\n    context:\n      cluster: %s\n      user: bench\n", cl.name, cl.name)
	}
	if err := os.WriteFile(kubeconfig, []byte(kc.String()), 0o600); err != nil {
		b.Fatal(err)
	}

	// ---- the config ----
	var y strings.Builder
	y.WriteString("clusters:\n")
	for _, cl := range clusters {
		fmt.Fprintf(&y, "  - name: %s\n    kubeconfig: %s\n    context: %s\n    awsSubnets: [%s, %s]\n    qps: %d\n    burst: %d\n    pageSize: %d\n    timeout: 5m\n",
			cl.name, kubeconfig, cl.name, nw.subnets[cl.subnets[0]].ID, nw.subnets[cl.subnets[1]].ID, clusterQPS, clusterBurst, pageSize)
	}
	ids := make([]string, len(nw.subnets))
	for i, sn := range nw.subnets {
		ids[i] = sn.ID
	}
	fmt.Fprintf(&y, `kubernetes:
  protectLabel: %s
ec2Interfaces:
  networks:
    - account: %q
      region: %s
      subnets: [%s]
  endpoint: %s
  requestsPerSecond: %d
  burst: %d
  deletesPerSecond: %d
  deleteBurst: %d
  pageSize: %d
  interfaces:
    grace: 6h
    maxDeletesPerRun: 200
    maxDeletePercent: 100%%
jobs:
  succeeded: 24h
  failed: 7d
  retentionAnnotation: %s
  grace: 1h
  maxDeletesPerRun: %d
  maxDeletePercent: 100%%
  deletesPerSecond: %d
pods:
  succeeded: 1h
  failed: 7d
  retentionAnnotation: %s
  grace: 1h
  maxDeletesPerRun: %d
  maxDeletePercent: 100%%
  deletesPerSecond: %d
`, eksProtectLabel, eksAccount, eksRegion, strings.Join(ids, ", "), ec2srv.URL(), ec2RPS, ec2Burst, ec2Deletes, ec2DeleteBurst, ec2Page,
		eksRetentionNote, jobsPerRun, jobsPerSecond, eksRetentionNote, podsPerRun, podsPerSecond)
	cfg, err := config.Parse([]byte(y.String()), "eks-bench.yaml")
	if err != nil {
		b.Fatal(err)
	}

	// ---- the state of earlier runs ----
	// Finished Jobs and Pods keep no clocks: earlier runs left complete
	// reads of every cluster, 5h and 3h ago. The one 3h ago showed every
	// object at its current resourceVersion: every Job and pod past its
	// retention has been a candidate since then at least. The one 5h ago
	// showed the oldest 500 Jobs of each cluster (which have no pods left)
	// and the oldest 400 Job pods (of Jobs 500-899), so that the per-run
	// caps, which take the longest candidates first, delete pods of other
	// Jobs than the Jobs they delete. The
	// leaked interfaces were first seen 7h ago (a cloud resource keeps its
	// clock).
	seed := func(kinds []engine.Kind) engine.State {
		prev := engine.NewState()
		// The listings' names: one per cluster and kind, and one per
		// CronJob (and its history limits) for the Jobs it owns.
		snap := &inventory.View{}
		for _, cl := range clusters {
			refs := inventory.ClusterRefs{Name: cl.name, Complete: true, WorkloadsListed: true}
			for k := range eksCronJobs {
				uid := eksUID(3, cl.c, k)
				refs.CronJobs = append(refs.CronJobs, inventory.CronJob{UID: uid, SuccessfulLimit: 3, FailedLimit: 1})
				refs.Jobs = append(refs.Jobs, inventory.Job{Status: "Complete", CronJob: &inventory.Owner{Kind: "CronJob", UID: uid}})
			}
			snap.Clusters = append(snap.Clusters, refs)
		}
		prev.Reads = map[string][]engine.Read{}
		for _, k := range kinds {
			for key := range k.Propose(snap, now).Listings {
				early := "999999999"
				switch {
				case k.Name() == k8sjob.Name:
					early = strconv.Itoa(1000 + eksRSPods - 1)
				case k.Name() == k8spod.Name && strings.Contains(key, " pods "):
					early = strconv.Itoa(200000 + eksRSPods + 2*podsPerRun/eksClusters - 1)
				}
				prev.Reads[k.Name()+" "+key] = []engine.Read{{At: now.Add(-5 * time.Hour), Version: early}, {At: now.Add(-3 * time.Hour), Version: "999999999"}}
			}
		}
		for _, id := range nw.leaked {
			prev.Seen(ec2interface.ID(eksAccount, eksRegion, id), "", now.Add(-7*time.Hour))
		}
		return prev
	}

	// ---- minimum calls ----
	listsPerCluster := map[string]int{
		"list pods": ceilDiv(eksJobs, pageSize), "list jobs": ceilDiv(eksJobs, pageSize), "list cronjobs": ceilDiv(eksCronJobs, pageSize),
		"list nodes": ceilDiv(eksNodes, pageSize), "list persistentvolumes": 1, "list persistentvolumeclaims": 1, "list workflows": 1,
	}
	minListCalls := 0
	for _, n := range listsPerCluster {
		minListCalls += n * eksClusters
	}
	nIfaces := len(nw.ifaces)
	minEC2 := map[string]int{
		ec2fake.ActionDescribeSubnets:           1,
		ec2fake.ActionDescribeNetworkInterfaces: ceilDiv(nIfaces, ec2Page) + ceilDiv(len(nw.leaked), ec2interface.BatchSize),
		ec2fake.ActionDeleteNetworkInterface:    len(nw.leaked),
	}
	// The EC2 listing: its calls through the client's describe bucket.
	ec2ListFloor := float64(max(0, 1+ceilDiv(nIfaces, ec2Page)-ec2Burst)) / ec2RPS
	// A cluster's lists: through its client's bucket.
	clusterListFloor := 0.0
	{
		perCluster := 0
		for _, n := range listsPerCluster {
			perCluster += n
		}
		waves := ceilDiv(eksClusters, 8) // Pool.Collect: 8 clusters at a time
		clusterListFloor = float64(waves) * float64(max(0, perCluster-clusterBurst)) / clusterQPS
	}
	eniFloor := float64(max(0, len(nw.leaked)-ec2DeleteBurst)) / ec2Deletes

	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for _, cl := range clusters {
			cl.reset()
		}
		ec2srv.AddInterfaces(nw.ifaces...) // put back what the last iteration deleted
		ec2srv.ResetCalls()
		ec2srv.SetRate(ec2fake.ClassDescribe, ec2fake.RateLimit{PerSecond: 20, Burst: 100})
		ec2srv.SetRate(ec2fake.ClassDelete, ec2fake.RateLimit{PerSecond: 5, Burst: 100})
		ec2Rec.reset()
		// The store holds its own copy of the state, where a file or a
		// ConfigMap would hold it outside the process: part of the
		// fixture's live heap.
		// A file store, as a CronJob with a state volume uses: each save
		// encodes the whole state.
		fs := &state.FileStore{Path: filepath.Join(b.TempDir(), "state.json")}
		store := &timedStore{Store: fs}

		nopts := ec2interface.NetworkOptions(cfg, zap.NewNop(), "reclaim/bench")
		for i := range nopts {
			nopts[i].Credentials = credentials.NewStaticCredentialsProvider("AKIDBENCH", "bench-secret", "")
		}
		fleet, err := ec2.NewFleet(context.Background(), nopts)
		if err != nil {
			b.Fatal(err)
		}
		nets := &timedNetworks{Fleet: fleet}
		// The pool app.New would build, timed: a new process's clients and
		// rate limiters.
		pool := kube.NewPool(Targets(cfg))
		var collectTime, collectCPU time.Duration
		var collectEnd atomic.Int64
		collect := func(ctx context.Context) []inventory.ClusterRefs {
			start, cpu := time.Now(), cpuTime()
			defer func() {
				collectTime, collectCPU = time.Since(start), cpuTime()-cpu
				collectEnd.Store(time.Now().UnixNano())
			}()
			return pool.Collect(ctx, kube.Options{ProtectLabel: cfg.Kubernetes.ProtectLabel, RetentionAnnotation: KubeOptions(cfg).RetentionAnnotation}, 8)
		}
		ec2Rec.after = &collectEnd
		r, err := New(context.Background(), cfg, Deps{Clients: map[string]any{ec2interface.Read: nets}, Clusters: collect, Kube: pool.Client,
			Store: store, Audit: audit.New(io.Discard), Now: func() time.Time { return runNow }})
		if err != nil {
			b.Fatal(err)
		}
		if err := fs.Save(context.Background(), seed(r.Kinds())); err != nil {
			b.Fatal(err)
		}

		stateSize := func() int { st, _ := store.Store.Load(context.Background()); return st.Clocks() }()
		// Run as deployed: the CronJob and daemon manifests set GOMEMLIMIT
		// to 280MiB under a 512Mi limit (an explicit GOMEMLIMIT wins).
		memLimit := "GOMEMLIMIT " + os.Getenv("GOMEMLIMIT") + " from the environment"
		if os.Getenv("GOMEMLIMIT") == "" {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(280 << 20))
			memLimit = "GOMEMLIMIT 280MiB, as deploy/ sets it"
		}
		// Give the fixtures' garbage back to the OS, so that the peak RSS
		// below is the run's (and the fakes' live data), not the seeding's.
		debug.FreeOSMemory()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		baseLive := liveHeap()
		rssBase, hwmReset := resetPeakRSS()
		// EKS_BENCH_HEAPPROFILE: a heap profile at the live peak, at most once a second.
		var lastProfile time.Time
		stopSampling := sampleMemory(base.HeapInuse, baseLive, func() {
			if prof := os.Getenv("EKS_BENCH_HEAPPROFILE"); prof != "" && time.Since(lastProfile) > time.Second {
				lastProfile = time.Now()
				if f, err := os.Create(prof); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		})
		b.StartTimer()

		start, cpu := time.Now(), cpuTime()
		rep, err := r.Once(context.Background(), Options{Apply: true})
		wall, cpu := time.Since(start), cpuTime()-cpu

		b.StopTimer()
		pk := stopSampling()
		hwm := peakRSS()
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		runLive := pk.live - min(pk.live, baseLive)
		runtime.GC()
		afterLive := liveHeap()
		runtime.KeepAlive(rep)

		p := rep.Plan
		if p.Incomplete || p.BreakerTripped {
			for _, s := range p.Sources {
				if !s.Complete {
					b.Errorf("%s %s incomplete: %v", s.Kind, s.Name, s.Problems)
				}
			}
			b.Fatalf("plan incomplete or breaker tripped: %v", p.Blocked)
		}
		o := rep.Outcome
		if o == nil {
			b.Fatal("no outcome from an applying run")
		}

		// What was deleted, per kind and cluster.
		type tally struct{ deleted, gone, other int }
		byKind := map[string]*tally{}
		perCluster := map[string]map[string]*tally{} // kind -> cluster
		for _, res := range o.Results {
			t := byKind[res.Kind]
			if t == nil {
				t = &tally{}
				byKind[res.Kind] = t
			}
			cl := ""
			if rest, ok := strings.CutPrefix(res.ID, "clusters/"); ok {
				cl, _, _ = strings.Cut(rest, "/")
			}
			if perCluster[res.Kind] == nil {
				perCluster[res.Kind] = map[string]*tally{}
			}
			ct := perCluster[res.Kind][cl]
			if ct == nil {
				ct = &tally{}
				perCluster[res.Kind][cl] = ct
			}
			switch res.Result {
			case audit.Deleted:
				t.deleted++
				ct.deleted++
			case audit.AlreadyGone:
				t.gone++
				ct.gone++
			default:
				t.other++
				if t.other <= 3 {
					b.Errorf("%s %s: %s %s %s", res.Kind, res.ID, res.Result, res.Reason, res.Error)
				}
			}
		}
		get := func(k string) tally {
			if t := byKind[k]; t != nil {
				return *t
			}
			return tally{}
		}
		jobsT, podsT, eniT := get(k8sjob.Name), get(k8spod.Name), get(ec2interface.Name)
		if jobsT.deleted != jobsPerRun || podsT.deleted != podsPerRun || eniT.deleted != len(nw.leaked) || o.Failed > 0 || o.Skipped > 0 || o.Stopped != "" {
			b.Fatalf("deleted %d Jobs, %d Pods, %d interfaces (want %d, %d, %d); %d failed, %d skipped, stopped %q",
				jobsT.deleted, podsT.deleted, eniT.deleted, jobsPerRun, podsPerRun, len(nw.leaked), o.Failed, o.Skipped, o.Stopped)
		}

		// The fakes' side.
		kcalls := map[string]int{}
		var prop = map[string]int{}
		conflicts, cascaded, jobsGone, podsGone := 0, 0, 0, 0
		phase := map[string][2]time.Time{}
		for _, cl := range clusters {
			st := cl.stats()
			for op, n := range st.calls {
				kcalls[op] += n
			}
			for k, n := range st.propagation {
				prop[k] += n
			}
			conflicts += st.conflicts
			cascaded += st.cascaded
			jobsGone += st.jobsGone
			podsGone += st.podsGone
			for op, fl := range st.firstLast {
				cur, ok := phase[op]
				if !ok || fl[0].Before(cur[0]) {
					cur[0] = fl[0]
				}
				if fl[1].After(cur[1]) {
					cur[1] = fl[1]
				}
				phase[op] = cur
			}
		}
		if prop["Background"] != jobsT.deleted || conflicts != 0 || kcalls["other"] != 0 {
			b.Fatalf("fake: propagation %v for %d Job deletes, %d precondition conflicts, %d unexpected calls", prop, jobsT.deleted, conflicts, kcalls["other"])
		}
		if jobsGone != jobsT.deleted || podsGone != podsT.deleted+cascaded {
			b.Fatalf("fake: %d Jobs and %d Pods gone, want %d and %d+%d", jobsGone, podsGone, jobsT.deleted, podsT.deleted, cascaded)
		}
		ecalls := ec2srv.CallCounts()
		throttled := ec2srv.Throttled()

		// Minimum calls and the floor of the delete phases: the applier goes
		// kind by kind, batch by batch, and a kind's decisions run cluster by
		// cluster; each cluster's stretch of re-reads and deletes goes
		// through two buckets of equal rate (the kind's deletesPerSecond,
		// burst = rate, and client-go's qps/burst, full again by then).
		stretch := func(kind string, rate, burst float64) (calls int, floor float64) {
			for _, t := range perCluster[kind] {
				n := 2*t.deleted + t.gone // re-read + delete; a gone one only its re-read
				calls += n
				floor += max(0, float64(n)-burst) / rate
			}
			return calls, floor
		}
		minJobCalls, jobsFloor := stretch(k8sjob.Name, jobsPerSecond, min(jobsPerSecond, clusterBurst))
		minPodCalls, podsFloor := stretch(k8spod.Name, podsPerSecond, min(podsPerSecond, clusterBurst))
		floor := ec2ListFloor + clusterListFloor + eniFloor + jobsFloor + podsFloor
		listCalls := 0
		for op, n := range kcalls {
			if strings.HasPrefix(op, "list ") {
				listCalls += n
			}
		}
		jobCalls, podCalls := kcalls["get job"]+kcalls["delete job"], kcalls["get pod"]+kcalls["delete pod"]
		minEC2Total, ec2Total := 0, 0
		for op, n := range minEC2 {
			minEC2Total += n
			ec2Total += ecalls[op]
		}

		// Throughput.
		listedK8s := eksClusters * (eksJobs + eksJobs + eksCronJobs + eksNodes)
		listed := listedK8s + nIfaces + len(nw.subnets)
		listTime := nets.took + collectTime
		deleted := jobsT.deleted + podsT.deleted + eniT.deleted
		span := func(first, last string) time.Duration {
			f, l := phase[first], phase[last]
			if f[0].IsZero() || l[1].IsZero() {
				return 0
			}
			return l[1].Sub(f[0])
		}
		jobsTime, podsTime := span("get job", "delete job"), span("get pod", "delete pod")
		eniStart, _ := ec2Rec.firstAfter(ec2fake.ActionDescribeNetworkInterfaces)
		_, eniEnd := ec2Rec.firstAfter(ec2fake.ActionDeleteNetworkInterface)
		eniTime := eniEnd.Sub(eniStart)
		applyStart := eniStart
		applyEnd := phase["delete pod"][1]
		applyTime := applyEnd.Sub(applyStart)
		planTime := applyStart.Sub(time.Unix(0, collectEnd.Load()))
		perSec := func(n int, d time.Duration) float64 {
			if d <= 0 {
				return 0
			}
			return float64(n) / d.Seconds()
		}
		ratio := wall.Seconds() / floor

		b.ReportMetric(wall.Seconds(), "wall-s/op")
		b.ReportMetric(floor, "floor-s")
		b.ReportMetric(ratio, "wall/floor")
		b.ReportMetric(perSec(listed, listTime), "listed/s")
		b.ReportMetric(perSec(deleted, applyTime), "deleted/s")
		b.ReportMetric(float64(listCalls), "k8s-list-calls/op")
		b.ReportMetric(float64(minListCalls), "k8s-list-min")
		b.ReportMetric(float64(jobCalls+podCalls), "k8s-delete-calls/op")
		b.ReportMetric(float64(minJobCalls+minPodCalls), "k8s-delete-min")
		b.ReportMetric(float64(ec2Total), "ec2-calls/op")
		b.ReportMetric(float64(minEC2Total), "ec2-min")
		b.ReportMetric(float64(throttled), "ec2-throttled/op")
		b.ReportMetric(cpu.Seconds(), "cpu-s/op")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu/wall")
		b.ReportMetric(float64(pk.inuse)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(baseLive)/(1<<20), "fixture-live-MiB")
		b.ReportMetric(float64(runLive)/(1<<20), "run-live-MiB")
		b.ReportMetric(float64(afterLive)/(1<<20), "after-live-MiB")
		if hwm > 0 {
			b.ReportMetric(float64(hwm)/(1<<20), "test-process-rss-MiB")
		}
		rssNote := "peak RSS of the test process unknown"
		if hwm > 0 {
			what := "since the process started"
			if hwmReset {
				what = fmt.Sprintf("during the run; %d MiB before it", rssBase>>20)
			}
			rssNote = fmt.Sprintf("peak RSS of the test process %d MiB (%s; the fakes and the fixtures included)", hwm>>20, what)
		}

		// The same run as the pod runs it: the binary in its own process,
		// against the same fakes reset, from the same state.
		for _, cl := range clusters {
			cl.reset()
		}
		ec2srv.AddInterfaces(nw.ifaces...)
		ec2srv.SetRate(ec2fake.ClassDescribe, ec2fake.RateLimit{PerSecond: 20, Burst: 100})
		ec2srv.SetRate(ec2fake.ClassDelete, ec2fake.RateLimit{PerSecond: 5, Burst: 100})
		podDir := b.TempDir()
		podState := &state.FileStore{Path: filepath.Join(podDir, "state.json")}
		if err := podState.Save(context.Background(), seed(r.Kinds())); err != nil {
			b.Fatal(err)
		}
		podCfg := filepath.Join(podDir, "reclaim.yaml")
		if err := os.WriteFile(podCfg, []byte(y.String()+fmt.Sprintf("fleet:\n  discover: false\nstate:\n  file: %s\naudit:\n  file: %s\n",
			podState.Path, filepath.Join(podDir, "audit.jsonl"))), 0o600); err != nil {
			b.Fatal(err)
		}
		pod := runAsPod(b, podCfg, filepath.Join(podDir, "audit.jsonl"), "--apply")
		if pod.Deleted != deleted || pod.Failed > 0 || pod.ExitCode != 0 {
			b.Fatalf("the binary's run: exit %d, %d deleted, %d failed; want %d deleted as in-process:\n%s", pod.ExitCode, pod.Deleted, pod.Failed, deleted, pod.Report)
		}
		b.ReportMetric(pod.CPU.Seconds()/pod.Wall.Seconds(), "pod-cpu/wall")
		pod.reportMemory(b, eksRSSTarget, fmt.Sprintf("%d deleted", pod.Deleted))
		var k8sOps []string
		for op, n := range kcalls {
			k8sOps = append(k8sOps, fmt.Sprintf("%s %d", op, n))
		}
		sort.Strings(k8sOps)
		var ec2Ops []string
		for _, op := range []string{ec2fake.ActionDescribeSubnets, ec2fake.ActionDescribeNetworkInterfaces, ec2fake.ActionDeleteNetworkInterface} {
			ec2Ops = append(ec2Ops, fmt.Sprintf("%s %d/%d", op, ecalls[op], minEC2[op]))
		}
		b.Logf("%d clusters: %d Jobs (%d CronJobs), %d Pods, %d nodes; %d subnets, %d interfaces (%d leaked); clusters qps %d burst %d page %d; jobs %d/s/cluster cap %d, pods %d/s/cluster cap %d; ec2 %d/s burst %d, deletes %d/s burst %d",
			eksClusters, eksClusters*eksJobs, eksClusters*eksCronJobs, eksClusters*eksJobs, eksClusters*eksNodes, len(nw.subnets), nIfaces, len(nw.leaked),
			clusterQPS, clusterBurst, pageSize, jobsPerSecond, jobsPerRun, podsPerSecond, podsPerRun, ec2RPS, ec2Burst, ec2Deletes, ec2DeleteBurst)
		b.Logf("wall %s = %.2f× the rate-limit floor %.2fs (EC2 list %.2fs + cluster lists %.2fs + interface deletes %.2fs + Job deletes %.2fs + Pod deletes %.2fs); %s CPU on %d cores (fakes included)",
			wall.Round(time.Millisecond), ratio, floor, ec2ListFloor, clusterListFloor, eniFloor, jobsFloor, podsFloor, cpu.Round(time.Millisecond), runtime.GOMAXPROCS(0))
		b.Logf("listed %d objects in %s: %.0f/s (EC2 %d in %s, then clusters %d in %s, %s CPU: %.0f objects/s)",
			listed, listTime.Round(time.Millisecond), perSec(listed, listTime), nIfaces+len(nw.subnets), nets.took.Round(time.Millisecond),
			listedK8s, collectTime.Round(time.Millisecond), collectCPU.Round(time.Millisecond), perSec(listedK8s, collectTime))
		b.Logf("planned in %s; deleted %d in %s: %.1f/s (interfaces %d in %s: %.1f/s; Jobs %d in %s: %.1f/s, floor %.2fs; Pods %d in %s: %.1f/s, floor %.2fs); %d Pods went with their Jobs",
			planTime.Round(time.Millisecond), deleted, applyTime.Round(time.Millisecond), perSec(deleted, applyTime),
			eniT.deleted, eniTime.Round(time.Millisecond), perSec(eniT.deleted, eniTime),
			jobsT.deleted, jobsTime.Round(time.Millisecond), perSec(jobsT.deleted, jobsTime), jobsFloor,
			podsT.deleted, podsTime.Round(time.Millisecond), perSec(podsT.deleted, podsTime), podsFloor, cascaded)
		b.Logf("Kubernetes calls made/minimum: lists %d/%d, Job re-reads+deletes %d/%d, Pod re-reads+deletes %d/%d (%s); propagationPolicy %v",
			listCalls, minListCalls, jobCalls, minJobCalls, podCalls, minPodCalls, strings.Join(k8sOps, ", "), prop)
		b.Logf("EC2 calls made/minimum: %s (the minimum counts the re-read of each batch of %d before its deletes); %d throttled",
			strings.Join(ec2Ops, ", "), ec2interface.BatchSize, throttled)
		b.Logf("memory (%s): %s; peak heap in use %d MiB; live heap %d MiB before the run (the fakes and the clients; the state file holds %d clocks), at most %d MiB during it (%d MiB more: the run's own; GOGC=100 alone needs about twice that), %d MiB after it with its report held",
			memLimit, rssNote, pk.inuse>>20, baseLive>>20, stateSize, pk.live>>20, runLive>>20, afterLive>>20)
		fi, _ := os.Stat(fs.Path)
		b.Logf("state: %d bytes, %d clocks after the run; %d whole saves took %s (%.0f ms each), %d journal entries (one per delete batch) %s (%.2f ms each), %d loads %s",
			fi.Size(), func() int { st, _ := fs.Load(context.Background()); return st.Clocks() }(),
			store.saves, store.saveTime.Round(time.Millisecond), store.saveTime.Seconds()*1000/float64(max(1, store.saves)),
			store.notes, store.noteTime.Round(time.Millisecond), store.noteTime.Seconds()*1000/float64(max(1, store.notes)),
			store.loads, store.loadTime.Round(time.Millisecond))
		b.ReportMetric(float64(fi.Size()), "state-bytes")
		b.ReportMetric(store.saveTime.Seconds()+store.noteTime.Seconds(), "state-save-s")
		b.Logf("plan: %d decisions: Jobs %d deleted, Pods %d deleted, interfaces %d deleted; %d actions held by caps or kept",
			p.Len(), jobsT.deleted, podsT.deleted, eniT.deleted, p.Len()-deleted)
	}
}

// timedStore times the state store's loads, saves and journal entries.
type timedStore struct {
	engine.Store
	loads, saves, notes          int
	loadTime, saveTime, noteTime time.Duration
}

func (s *timedStore) Note(ctx context.Context, j engine.Journal) error {
	start := time.Now()
	defer func() { s.notes++; s.noteTime += time.Since(start) }()
	return s.Store.(engine.Journaled).Note(ctx, j)
}

func (s *timedStore) Lock(ctx context.Context, holder string) (func(), error) {
	return s.Store.(engine.Locker).Lock(ctx, holder)
}

func (s *timedStore) Load(ctx context.Context) (engine.State, error) {
	start := time.Now()
	defer func() { s.loads++; s.loadTime += time.Since(start) }()
	return s.Store.Load(ctx)
}

func (s *timedStore) Save(ctx context.Context, st engine.State) error {
	start := time.Now()
	defer func() { s.saves++; s.saveTime += time.Since(start) }()
	return s.Store.Save(ctx, st)
}

// timedNetworks times the EC2 listing of a run.
type timedNetworks struct {
	*ec2.Fleet
	took time.Duration
}

func (t *timedNetworks) List(ctx context.Context) []inventory.NetworkListing {
	start := time.Now()
	defer func() { t.took = time.Since(start) }()
	return t.Fleet.List(ctx)
}

// callTimes records the first and last EC2 request of each action made
// after *after (a UnixNano; nil or 0: not yet), i.e. during the apply phase.
type callTimes struct {
	mu    sync.Mutex
	after *atomic.Int64
	first map[string]time.Time
	last  map[string]time.Time
}

func (c *callTimes) add(action string) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.after == nil || c.after.Load() == 0 {
		return
	}
	if c.first == nil {
		c.first, c.last = map[string]time.Time{}, map[string]time.Time{}
	}
	if _, ok := c.first[action]; !ok {
		c.first[action] = now
	}
	c.last[action] = now
}

func (c *callTimes) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.first, c.last, c.after = nil, nil, nil
}

func (c *callTimes) firstAfter(action string) (first, last time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.first[action], c.last[action]
}

// ---- the network ----

type eksNetwork struct {
	subnets []ec2fake.Subnet
	ifaces  []ec2fake.Interface
	leaked  []string
	// users[s] are the clusters whose awsSubnets hold subnet s.
	users [eksSubnets][]int
	// nodeIPs[c][k] is node k of cluster c's address; fargate[c] the
	// addresses of cluster c's Fargate pod interfaces.
	nodeIPs [eksClusters][eksNodes]netip.Addr
	fargate [eksClusters][]netip.Addr
}

func eksClusterSubnets(c int) [2]int { return [2]int{c % eksSubnets, (c + 3) % eksSubnets} }

func newEKSNetwork() *eksNetwork {
	n := &eksNetwork{}
	for c := range eksClusters {
		for _, s := range eksClusterSubnets(c) {
			n.users[s] = append(n.users[s], c)
		}
	}
	for s := range eksSubnets {
		id := fmt.Sprintf("subnet-0b0c0d0e0f0a%05x", s)
		base := netip.AddrFrom4([4]byte{10, 0, byte(16 * s), 0})
		n.subnets = append(n.subnets, ec2fake.Subnet{ID: id, VPC: "vpc-0bench", AZ: eksRegion + string(rune('a'+s%3)), CIDR: base.String() + "/20",
			Tags: map[string]string{"kubernetes.io/role/internal-elb": "1"}})
		k := 0
		next := func() (string, netip.Addr) {
			a := base
			for range 4 + k { // AWS keeps the first four
				a = a.Next()
			}
			eni := fmt.Sprintf("eni-%017x", s*100000+k)
			k++
			return eni, a
		}
		// Node interfaces, attached to their instances.
		for _, c := range n.users[s] {
			for node := range eksNodes {
				if eksClusterSubnets(c)[node%2] != s {
					continue
				}
				eni, ip := next()
				n.nodeIPs[c][node] = ip
				n.ifaces = append(n.ifaces, ec2fake.Interface{ID: eni, Subnet: id, IPs: []string{ip.String()}, Instance: eksInstance(c, node),
					Description: "", Tags: map[string]string{"cluster.k8s.amazonaws.com/name": eksClusterName(c)}})
			}
		}
		// Leaked: detached, left by the VPC CNI of an instance long gone.
		for range eksLeakedPer {
			eni, ip := next()
			n.leaked = append(n.leaked, eni)
			n.ifaces = append(n.ifaces, ec2fake.Interface{ID: eni, Subnet: id, IPs: []string{ip.String()}, Status: "available",
				Description: "aws-K8S-" + eksInstance(99, k), Tags: map[string]string{"node.k8s.amazonaws.com/instance_id": eksInstance(99, k)}})
		}
		// Detached without evidence: someone's, not the fleet's.
		for range eksUnownedPer {
			eni, ip := next()
			n.ifaces = append(n.ifaces, ec2fake.Interface{ID: eni, Subnet: id, IPs: []string{ip.String()}, Status: "available", Description: "manual test"})
		}
		// Fargate pod interfaces, round robin over the clusters using the subnet.
		for i := 0; k < eksPerSubnet; i++ {
			eni, ip := next()
			c := n.users[s][i%len(n.users[s])]
			n.fargate[c] = append(n.fargate[c], ip)
			n.ifaces = append(n.ifaces, ec2fake.Interface{ID: eni, Subnet: id, IPs: []string{ip.String()}, Status: "in-use",
				RequesterManaged: true, RequesterID: "amazon-eks-fargate", Description: "[EKS Fargate] pod interface"})
		}
	}
	return n
}

func eksClusterName(c int) string { return fmt.Sprintf("eks-%02d", c) }

func eksInstance(c, node int) string { return fmt.Sprintf("i-0%016x", c*1000+node) }

// ---- the clusters ----

// eksCluster is an in-process Kubernetes API server holding one cluster's
// Jobs, CronJobs, Pods and Nodes (no PVs, PVCs or Argo Workflows). Objects
// are generated from their index; the fake keeps only which were deleted.
type eksCluster struct {
	c       int
	name    string
	now     time.Time
	subnets [2]int
	podIPs  []netip.Addr // by pod index
	nodes   [eksNodes]netip.Addr
	ts      *httptest.Server

	mu          sync.Mutex
	jobGone     []bool
	podGone     []bool
	calls       map[string]int
	firstLast   map[string][2]time.Time
	propagation map[string]int
	conflicts   int
	cascaded    int
}

func newEKSCluster(c int, now time.Time, n *eksNetwork) *eksCluster {
	cl := &eksCluster{c: c, name: eksClusterName(c), now: now, subnets: eksClusterSubnets(c), nodes: n.nodeIPs[c],
		podIPs: make([]netip.Addr, eksJobs)}
	// Fargate addresses go to the running pods first, then to the newest
	// Job pods; every other pod has an address of the CNI's custom
	// networking range, in no subnet reclaim watches.
	f := n.fargate[c]
	for p := 0; p < eksRSPods && len(f) > 0; p++ {
		cl.podIPs[p], f = f[0], f[1:]
	}
	for p := eksJobs - 1; p >= eksRSPods && len(f) > 0; p-- {
		cl.podIPs[p], f = f[0], f[1:]
	}
	for p := range cl.podIPs {
		if !cl.podIPs[p].IsValid() {
			cl.podIPs[p] = netip.AddrFrom4([4]byte{100, byte(64 + c), byte(p / 250), byte(p%250 + 1)})
		}
	}
	cl.reset()
	return cl
}

func (cl *eksCluster) reset() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.jobGone, cl.podGone = make([]bool, eksJobs), make([]bool, eksJobs)
	cl.calls, cl.firstLast, cl.propagation = map[string]int{}, map[string][2]time.Time{}, map[string]int{}
	cl.conflicts, cl.cascaded = 0, 0
}

type eksStats struct {
	calls               map[string]int
	firstLast           map[string][2]time.Time
	propagation         map[string]int
	conflicts, cascaded int
	jobsGone, podsGone  int
}

func (cl *eksCluster) stats() eksStats {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	s := eksStats{calls: map[string]int{}, firstLast: map[string][2]time.Time{}, propagation: map[string]int{}, conflicts: cl.conflicts, cascaded: cl.cascaded}
	for k, v := range cl.calls {
		s.calls[k] = v
	}
	for k, v := range cl.firstLast {
		s.firstLast[k] = v
	}
	for k, v := range cl.propagation {
		s.propagation[k] = v
	}
	for i := range eksJobs {
		if cl.jobGone[i] {
			s.jobsGone++
		}
		if cl.podGone[i] {
			s.podsGone++
		}
	}
	return s
}

func (cl *eksCluster) count(op string) {
	now := time.Now()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.calls[op]++
	fl := cl.firstLast[op]
	if fl[0].IsZero() {
		fl[0] = now
	}
	fl[1] = now
	cl.firstLast[op] = fl
}

// eksJob is Job j of a cluster.
type eksJob struct {
	j                 int
	ns, name, uid     string
	cron              int // -1: none
	failed            bool
	created, finished time.Time
	never, protected  bool
	ttl               bool
}

func (cl *eksCluster) job(j int, out *eksJob) {
	*out = eksJob{j: j, cron: -1}
	g := j % 25
	out.ns = "team-" + strconv.Itoa(g%8)
	if g < eksCronJobs {
		out.cron = g
		out.name = fmt.Sprintf("etl-%02d-%05d", g, j)
	} else {
		out.name = fmt.Sprintf("adhoc-%05d", j)
	}
	out.uid = eksUID(1, cl.c, j)
	out.failed = j%10 == 3
	// Job 0 finished 27.8 days ago, Job 9999 an hour and 4 minutes ago.
	out.finished = cl.now.Add(-time.Hour - time.Duration(eksJobs-j)*4*time.Minute)
	out.created = out.finished.Add(-3 * time.Minute)
	out.never = j%1000 == 7
	out.protected = j%1000 == 11
	out.ttl = j%500 == 13
}

// eksPod is pod p of a cluster: a ReplicaSet's running pod below
// eksRSPods, else the pod of Job p.
type eksPod struct {
	p             int
	ns, name, uid string
	job           eksJob // when a Job's
	ip            netip.Addr
}

func (cl *eksCluster) pod(p int, out *eksPod) {
	*out = eksPod{p: p, ip: cl.podIPs[p]}
	if p < eksRSPods {
		out.ns = "team-" + strconv.Itoa(p%8)
		out.name = fmt.Sprintf("web-%d-7c9f8d6b5-%05d", p%10, p)
	} else {
		cl.job(p, &out.job)
		out.ns = out.job.ns
		out.name = out.job.name + "-" + fmt.Sprintf("%05d", p)
	}
	out.uid = eksUID(2, cl.c, p)
}

func eksUID(kind, c, i int) string { return fmt.Sprintf("%08x-%04x-4000-8000-%012x", kind, c, i) }

func appendTime(buf []byte, t time.Time) []byte {
	buf = append(buf, '"')
	buf = t.UTC().AppendFormat(buf, time.RFC3339)
	return append(buf, '"')
}

func appendStr(buf []byte, s string) []byte { return strconv.AppendQuote(buf, s) }

const eksImage = `"123456789012.dkr.ecr.us-east-1.amazonaws.com/batch/etl:v2.14.1"`

func (cl *eksCluster) appendJob(buf []byte, js *eksJob, typed bool) []byte {
	buf = append(buf, '{')
	if typed {
		buf = append(buf, `"kind":"Job","apiVersion":"batch/v1",`...)
	}
	buf = append(buf, `"metadata":{"name":`...)
	buf = appendStr(buf, js.name)
	buf = append(buf, `,"namespace":`...)
	buf = appendStr(buf, js.ns)
	buf = append(buf, `,"uid":`...)
	buf = appendStr(buf, js.uid)
	buf = append(buf, `,"resourceVersion":"`...)
	buf = strconv.AppendInt(buf, int64(1000+js.j), 10)
	buf = append(buf, `","creationTimestamp":`...)
	buf = appendTime(buf, js.created)
	buf = append(buf, `,"labels":{"app.kubernetes.io/part-of":"etl"`...)
	if js.protected {
		buf = append(buf, `,"`+eksProtectLabel+`":"true"`...)
	}
	buf = append(buf, '}')
	if js.never {
		buf = append(buf, `,"annotations":{"`+eksRetentionNote+`":"never"}`...)
	}
	if js.cron >= 0 {
		buf = append(buf, `,"ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":`...)
		buf = appendStr(buf, fmt.Sprintf("etl-%02d", js.cron))
		buf = append(buf, `,"uid":`...)
		buf = appendStr(buf, eksUID(3, cl.c, js.cron))
		buf = append(buf, `,"controller":true,"blockOwnerDeletion":true}]`...)
	}
	buf = append(buf, `},"spec":{"backoffLimit":0,"completions":1,"parallelism":1,`...)
	if js.ttl {
		buf = append(buf, `"ttlSecondsAfterFinished":3600,`...)
	}
	buf = append(buf, `"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":`+eksImage+`}]}}},"status":{"startTime":`...)
	buf = appendTime(buf, js.created)
	if js.failed {
		buf = append(buf, `,"failed":1,"conditions":[{"type":"Failed","status":"True","reason":"BackoffLimitExceeded","lastProbeTime":`...)
	} else {
		buf = append(buf, `,"succeeded":1,"completionTime":`...)
		buf = appendTime(buf, js.finished)
		buf = append(buf, `,"conditions":[{"type":"Complete","status":"True","lastProbeTime":`...)
	}
	buf = appendTime(buf, js.finished)
	buf = append(buf, `,"lastTransitionTime":`...)
	buf = appendTime(buf, js.finished)
	return append(buf, `}]}}`...)
}

func (cl *eksCluster) appendPod(buf []byte, ps *eksPod, typed bool) []byte {
	buf = append(buf, '{')
	if typed {
		buf = append(buf, `"kind":"Pod","apiVersion":"v1",`...)
	}
	buf = append(buf, `"metadata":{"name":`...)
	buf = appendStr(buf, ps.name)
	buf = append(buf, `,"namespace":`...)
	buf = appendStr(buf, ps.ns)
	buf = append(buf, `,"uid":`...)
	buf = appendStr(buf, ps.uid)
	buf = append(buf, `,"resourceVersion":"`...)
	buf = strconv.AppendInt(buf, int64(200000+ps.p), 10)
	buf = append(buf, `","creationTimestamp":`...)
	running := ps.p < eksRSPods
	fargate := !strings.HasPrefix(ps.ip.String(), "100.")
	if running {
		buf = appendTime(buf, cl.now.Add(-72*time.Hour))
		rs := fmt.Sprintf("web-%d-7c9f8d6b5", ps.p%10)
		buf = append(buf, `,"labels":{"app":"web","pod-template-hash":"7c9f8d6b5"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":`...)
		buf = appendStr(buf, rs)
		buf = append(buf, `,"uid":`...)
		buf = appendStr(buf, eksUID(4, cl.c, ps.p%10))
	} else {
		buf = appendTime(buf, ps.job.created)
		buf = append(buf, `,"labels":{"job-name":`...)
		buf = appendStr(buf, ps.job.name)
		buf = append(buf, `,"batch.kubernetes.io/controller-uid":`...)
		buf = appendStr(buf, ps.job.uid)
		buf = append(buf, `},"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":`...)
		buf = appendStr(buf, ps.job.name)
		buf = append(buf, `,"uid":`...)
		buf = appendStr(buf, ps.job.uid)
	}
	buf = append(buf, `,"controller":true,"blockOwnerDeletion":true}]},"spec":{"restartPolicy":"Never","nodeName":`...)
	ip := ps.ip.String()
	if fargate {
		buf = appendStr(buf, "fargate-ip-"+strings.ReplaceAll(ip, ".", "-")+".ec2.internal")
	} else {
		buf = appendStr(buf, "ip-"+strings.ReplaceAll(cl.nodes[ps.p%eksNodes].String(), ".", "-")+".ec2.internal")
	}
	buf = append(buf, `,"containers":[{"name":"main","image":`+eksImage+`}]},"status":{"phase":`...)
	switch {
	case running:
		buf = append(buf, `"Running"`...)
	case ps.job.failed:
		buf = append(buf, `"Failed"`...)
	default:
		buf = append(buf, `"Succeeded"`...)
	}
	buf = append(buf, `,"podIP":"`...)
	buf = append(buf, ip...)
	buf = append(buf, `","podIPs":[{"ip":"`...)
	buf = append(buf, ip...)
	buf = append(buf, `"}],"containerStatuses":[{"name":"main","image":`+eksImage+`,"imageID":"123456789012.dkr.ecr.us-east-1.amazonaws.com/batch/etl@sha256:4f1c2a9e8b7d6c5f4e3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e","restartCount":0,"ready":`...)
	if running {
		buf = append(buf, `true,"state":{"running":{"startedAt":`...)
		buf = appendTime(buf, cl.now.Add(-72*time.Hour))
		return append(buf, `}}}]}}`...)
	}
	code := "0"
	if ps.job.failed {
		code = "1"
	}
	buf = append(buf, `false,"state":{"terminated":{"exitCode":`+code+`,"startedAt":`...)
	buf = appendTime(buf, ps.job.created)
	buf = append(buf, `,"finishedAt":`...)
	buf = appendTime(buf, ps.job.finished)
	return append(buf, `}}}]}}`...)
}

func (cl *eksCluster) appendCronJob(buf []byte, k int) []byte {
	buf = append(buf, `{"metadata":{"name":`...)
	buf = appendStr(buf, fmt.Sprintf("etl-%02d", k))
	buf = append(buf, `,"namespace":"team-`...)
	buf = strconv.AppendInt(buf, int64(k%8), 10)
	buf = append(buf, `","uid":`...)
	buf = appendStr(buf, eksUID(3, cl.c, k))
	buf = append(buf, `,"creationTimestamp":`...)
	buf = appendTime(buf, cl.now.Add(-90*24*time.Hour))
	return append(buf, `},"spec":{"schedule":"*/15 * * * *","successfulJobsHistoryLimit":3,"failedJobsHistoryLimit":1,"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":`+eksImage+`}]}}}}}}`...)
}

func (cl *eksCluster) appendNode(buf []byte, k int) []byte {
	ip := cl.nodes[k].String()
	az := eksRegion + string(rune('a'+cl.subnets[k%2]%3))
	buf = append(buf, `{"metadata":{"name":`...)
	buf = appendStr(buf, "ip-"+strings.ReplaceAll(ip, ".", "-")+".ec2.internal")
	buf = append(buf, `,"uid":`...)
	buf = appendStr(buf, eksUID(5, cl.c, k))
	buf = append(buf, `,"labels":{"topology.kubernetes.io/zone":`...)
	buf = appendStr(buf, az)
	buf = append(buf, `}},"spec":{"providerID":`...)
	buf = appendStr(buf, "aws:///"+az+"/"+eksInstance(cl.c, k))
	buf = append(buf, `},"status":{"addresses":[{"type":"InternalIP","address":"`...)
	buf = append(buf, ip...)
	return append(buf, `"}]}}`...)
}

var eksBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1<<20); return &b }}

func (cl *eksCluster) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	time.Sleep(eksKubeLatency)
	path := req.URL.Path
	if req.Method == http.MethodGet {
		all := func(int) bool { return true }
		switch path {
		case "/api/v1/pods":
			cl.list(w, req, "pods", "PodList", "v1", eksJobs, func(i int) bool { return !cl.gone(&cl.podGone, i) }, func(buf []byte, i int) []byte {
				var ps eksPod
				cl.pod(i, &ps)
				return cl.appendPod(buf, &ps, false)
			})
			return
		case "/apis/batch/v1/jobs":
			cl.list(w, req, "jobs", "JobList", "batch/v1", eksJobs, func(i int) bool { return !cl.gone(&cl.jobGone, i) }, func(buf []byte, i int) []byte {
				var js eksJob
				cl.job(i, &js)
				return cl.appendJob(buf, &js, false)
			})
			return
		case "/apis/batch/v1/cronjobs":
			cl.list(w, req, "cronjobs", "CronJobList", "batch/v1", eksCronJobs, all, cl.appendCronJob)
			return
		case "/api/v1/nodes":
			cl.list(w, req, "nodes", "NodeList", "v1", eksNodes, all, cl.appendNode)
			return
		case "/api/v1/persistentvolumes":
			cl.list(w, req, "persistentvolumes", "PersistentVolumeList", "v1", 0, all, nil)
			return
		case "/api/v1/persistentvolumeclaims":
			cl.list(w, req, "persistentvolumeclaims", "PersistentVolumeClaimList", "v1", 0, all, nil)
			return
		case "/apis/argoproj.io/v1alpha1/workflows":
			cl.count("list workflows")
			eksStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource", "")
			return
		}
	}
	// /apis/batch/v1/namespaces/NS/jobs/NAME and /api/v1/namespaces/NS/pods/NAME
	var ns, res, name string
	if rest, ok := strings.CutPrefix(path, "/apis/batch/v1/namespaces/"); ok {
		ns, rest, _ = strings.Cut(rest, "/")
		res, name, _ = strings.Cut(rest, "/")
		if res != "jobs" {
			res = ""
		}
	} else if rest, ok := strings.CutPrefix(path, "/api/v1/namespaces/"); ok {
		ns, rest, _ = strings.Cut(rest, "/")
		res, name, _ = strings.Cut(rest, "/")
		if res != "pods" {
			res = ""
		}
	}
	verb := map[string]string{http.MethodGet: "get", http.MethodDelete: "delete"}[req.Method]
	if res == "" || verb == "" || name == "" || strings.Contains(name, "/") {
		cl.count("other")
		eksStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource", "")
		return
	}
	singular := strings.TrimSuffix(res, "s")
	cl.count(verb + " " + singular)
	idx := -1
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil && n >= 0 && n < eksJobs {
			idx = n
		}
	}
	var js eksJob
	var ps eksPod
	var uid string
	gone := &cl.jobGone
	if res == "jobs" {
		if idx >= 0 {
			cl.job(idx, &js)
		}
		if idx < 0 || js.ns != ns || js.name != name {
			idx = -1
		}
		uid = js.uid
	} else {
		gone = &cl.podGone
		if idx >= 0 {
			cl.pod(idx, &ps)
		}
		if idx < 0 || ps.ns != ns || ps.name != name {
			idx = -1
		}
		uid = ps.uid
	}
	group := map[string]string{"jobs": "batch", "pods": ""}[res]
	notFound := func() {
		what := res
		if group != "" {
			what += "." + group
		}
		eksStatus(w, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", what, name), name)
	}
	if idx < 0 || cl.gone(gone, idx) {
		notFound()
		return
	}
	if verb == "get" {
		bp := eksBufs.Get().(*[]byte)
		buf := (*bp)[:0]
		if res == "jobs" {
			buf = cl.appendJob(buf, &js, true)
		} else {
			buf = cl.appendPod(buf, &ps, true)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(buf)
		*bp = buf
		eksBufs.Put(bp)
		return
	}
	// client-go sends DeleteOptions as protobuf for built-in types (JSON
	// when so configured): the universal deserializer reads either.
	var opts metav1.DeleteOptions
	if req.Body != nil {
		body, _ := io.ReadAll(req.Body)
		if len(body) > 0 {
			if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &opts); err != nil {
				eksStatus(w, http.StatusBadRequest, "BadRequest", "bad DeleteOptions: "+err.Error(), name)
				return
			}
		}
	}
	if pp := req.URL.Query().Get("propagationPolicy"); pp != "" && opts.PropagationPolicy == nil {
		p := metav1.DeletionPropagation(pp)
		opts.PropagationPolicy = &p
	}
	cl.mu.Lock()
	if (*gone)[idx] {
		cl.mu.Unlock()
		notFound()
		return
	}
	if opts.Preconditions != nil && opts.Preconditions.UID != nil && string(*opts.Preconditions.UID) != uid {
		cl.conflicts++
		cl.mu.Unlock()
		eksStatus(w, http.StatusConflict, "Conflict", fmt.Sprintf("Operation cannot be fulfilled on %s %q: Precondition failed: UID in precondition: %s, UID in object meta: %s",
			res, name, *opts.Preconditions.UID, uid), name)
		return
	}
	policy := "(none)"
	if opts.PropagationPolicy != nil {
		policy = string(*opts.PropagationPolicy)
	}
	if res == "jobs" {
		cl.propagation[policy]++
		// The garbage collector removes a Job's pods (Background or
		// Foreground); here at once. Job j's pod is pod j.
		if (policy == "Background" || policy == "Foreground") && idx >= eksRSPods && !cl.podGone[idx] {
			cl.podGone[idx] = true
			cl.cascaded++
		}
	}
	(*gone)[idx] = true
	cl.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":%q,"group":%q,"kind":%q,"uid":%q}}`, name, group, res, uid)
}

func (cl *eksCluster) gone(set *[]bool, i int) bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return (*set)[i]
}

// list answers one page of a list: limit and continue (the index to go on
// from) are honoured, and the continue token is set only when more remain.
func (cl *eksCluster) list(w http.ResponseWriter, req *http.Request, res, kind, apiVersion string, n int, exists func(int) bool, item func([]byte, int) []byte) {
	cl.count("list " + res)
	q := req.URL.Query()
	limit := n
	if s := q.Get("limit"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			limit = v
		}
	}
	from := 0
	if s := q.Get("continue"); s != "" {
		v, err := strconv.Atoi(strings.TrimPrefix(s, "i"))
		if err != nil || v < 0 || v > n || !strings.HasPrefix(s, "i") {
			eksStatus(w, http.StatusBadRequest, "BadRequest", "invalid continue token", "")
			return
		}
		from = v
	}
	var page []int
	i := from
	for ; i < n && len(page) < limit; i++ {
		if exists(i) {
			page = append(page, i)
		}
	}
	next := -1
	for j := i; j < n; j++ { // is anything left? (a gone object is not)
		if exists(j) {
			next = i
			break
		}
	}
	bp := eksBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	buf = append(buf, `{"kind":"`...)
	buf = append(buf, kind...)
	buf = append(buf, `","apiVersion":"`...)
	buf = append(buf, apiVersion...)
	buf = append(buf, `","metadata":{"resourceVersion":"424242"`...)
	if next >= 0 {
		buf = append(buf, `,"continue":"i`...)
		buf = strconv.AppendInt(buf, int64(next), 10)
		buf = append(buf, '"')
	}
	buf = append(buf, `},"items":[`...)
	for k, idx := range page {
		if k > 0 {
			buf = append(buf, ',')
		}
		buf = item(buf, idx)
	}
	buf = append(buf, "]}"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(buf)
	*bp = buf
	eksBufs.Put(bp)
}

func eksStatus(w http.ResponseWriter, code int, reason, msg, name string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"details":{"name":%q},"code":%d}`, msg, reason, name, code)
}
