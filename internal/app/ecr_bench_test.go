package app

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/state"
)

// BenchmarkECRFleet is one dry-run pass of reclaim over an ECR registry at
// fleet scale: 20 clusters of 5,000 pods each (100,000 pods, plus a
// Deployment and two ReplicaSets per service) in client-go fake clientsets,
// and one registry of 500 repositories × 2,000 images (1,000,000; 1% of them
// multi-arch indexes with two children each) in the ECR fake, driven by the
// real aws-sdk-go-v2 client over HTTP. The fake adds 5ms to every call and
// rate-limits each API on its own. 50 "hot" repositories sit above their
// high-water mark, so the planner trims them; earlier runs have already seen
// their oldest images, so some trims are due and the run's delete cap bites.
// 5 repositories carry the protect tag.
//
// It reports wall time against the floor the fake's rate limits set, API
// calls by operation against the minimum (pages of 1000, batches of 100,
// one ListTagsForResource per repository), the calls the fake throttled,
// CPU time, and memory: peak heap in use and peak RSS of the process (both
// include the fakes' fixtures, about 700 MiB live, which GOGC=100 doubles),
// and the live heap the run itself adds (run-live-MiB).
//
// Run it with: go test ./internal/app -run '^$' -bench ECRFleet -benchtime 1x
// (make bench runs it too).
// ecrRSSTarget is the ECR fleet's peak RSS target (bytes), and chunk the
// ConfigMap store's chunk size.
const (
	ecrRSSTarget = 256 << 20
	chunk        = 1<<20 - 64<<10
)

func BenchmarkECRFleet(b *testing.B) {
	const (
		account        = "123456789012"
		region         = "us-east-1"
		nClusters      = 20
		podsPerService = 20
		nRepos         = 500
		hotRepos       = 50 // hot/svc-NNN: above high-water, trimmed
		perRepo        = 2000
		latency        = 5 * time.Millisecond
		protectTag     = "reclaim.dev/protect"
		// The client's token bucket of each operation, as ECR's quotas are
		// per action (see the floors below): 10% under the fake's 100 a
		// second with half its burst, since one throttle is expensive (the
		// SDK's adaptive retry mode then slows the whole client for
		// seconds), and calls paced together can arrive together.
		clientRPS   = 90
		clientBurst = 10
		concurrency = 8
	)
	// Per-API limits on the fake; the bursts of those at 100/s are the
	// fake's default, ceil(rate). The floor is set by these.
	rates := map[string]ecrfake.RateLimit{
		ecrfake.OpDescribeRepositories: {PerSecond: 10, Burst: 1},
		ecrfake.OpDescribeImages:       {PerSecond: 100, Burst: 20},
		ecrfake.OpBatchGetImage:        {PerSecond: 100, Burst: 100},
		ecrfake.OpListTagsForResource:  {PerSecond: 100, Burst: 100},
		ecrfake.OpGetRepositoryPolicy:  {PerSecond: 100, Burst: 100},
		ecrfake.OpGetRegistryPolicy:    {PerSecond: 10, Burst: 1},
	}
	day := 24 * time.Hour
	now := time.Now().Truncate(time.Second)

	// ---- the registry ----
	srv := ecrfake.New(ecrfake.Options{Region: region, Latency: latency, Rates: rates,
		// Reading an index with BatchGetImage would otherwise record a pull
		// and change what the next iteration's plan keeps.
		PullTimeExcluded: true})
	srv.Start()
	defer srv.Close()

	type ref struct{ tag, digest string }
	type repoSeed struct {
		name    string
		builds  []ref // tagged single-platform builds, oldest first
		index   ref   // the newest multi-arch index
		oldest  []string
		indexes int
		images  int
	}
	seeds := make([]repoSeed, nRepos)
	host := account + ".dkr.ecr." + region + ".amazonaws.com/"
	protected := 0
	for r := range nRepos {
		rs := &seeds[r]
		if r < hotRepos {
			rs.name = fmt.Sprintf("hot/svc-%03d", r)
		} else {
			rs.name = fmt.Sprintf("team-%02d/svc-%03d", r%25, r)
		}
		tags := map[string]string{"team": fmt.Sprintf("team-%02d", r%25)}
		if r%100 == 99 {
			tags[protectTag] = "true"
			protected++
		}
		srv.AddRepository(account, rs.name, now.Add(-400*day), tags)
		imgs := make([]ecrfake.Image, 0, perRepo)
		build := 0
		for i := range perRepo {
			// One push every 2h: the newest 12 are younger than a day.
			pushed := now.Add(-time.Duration(perRepo-i) * 2 * time.Hour)
			digest := ecrfake.Digest(rs.name + "/" + strconv.Itoa(i))
			switch i % 100 {
			case 48, 49: // the two platform manifests of the index that follows: untagged
				imgs = append(imgs, ecrfake.Image{Digest: digest, PushedAt: pushed, SizeBytes: 60 << 20, MediaType: ecrfake.MediaTypeOCIManifest})
			case 50:
				idx := ecrfake.NewIndex(pushed, []string{imgs[i-2].Digest, imgs[i-1].Digest}, fmt.Sprintf("multiarch-%02d", i/100))
				imgs = append(imgs, idx)
				rs.index = ref{idx.Tags[0], idx.Digest}
				rs.indexes++
			default:
				build++
				img := ecrfake.Image{Digest: digest, PushedAt: pushed, SizeBytes: int64(40+i%64) << 20, MediaType: ecrfake.MediaTypeOCIManifest}
				switch {
				case build%100 == 0:
					img.Tags = []string{fmt.Sprintf("build-%04d", build), fmt.Sprintf("release-%d", build/100)}
				case build%5 != 0: // every fifth build is an untagged CI intermediate
					img.Tags = []string{fmt.Sprintf("build-%04d", build)}
				}
				if build%50 == 7 { // pulled lately by something outside the clusters
					img.LastPull = now.Add(-time.Duration(build%20) * day)
				}
				imgs = append(imgs, img)
				if len(img.Tags) > 0 {
					rs.builds = append(rs.builds, ref{img.Tags[0], img.Digest})
				}
			}
		}
		srv.AddImages(account, rs.name, imgs)
		rs.images = len(imgs)
		if r < hotRepos {
			for _, im := range imgs[:150] {
				rs.oldest = append(rs.oldest, im.Digest)
			}
		}
	}

	// ---- the clusters ----
	// Each cluster runs 250 services (each repository runs in 10 clusters),
	// 20 pods apiece, with an Istio sidecar that is not from ECR. Clusters
	// are one to three builds behind the newest; a rollout is in flight (4
	// pods on the build before); repositories with r%10 == 0 run their
	// newest multi-arch index; every old ReplicaSet, scaled to zero, keeps
	// its rollback build; and in hot repositories one pod per cluster runs an
	// old build by digest, from inside the range the planner would trim.
	type clusterSet struct {
		name string
		objs []k8sruntime.Object
	}
	fleet := make([]clusterSet, nClusters)
	const sidecar = "docker.io/istio/proxyv2:1.22.3"
	const sidecarID = "docker.io/istio/proxyv2@sha256:0f9b6c7e5a6d4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3"
	distinct := map[string]bool{}
	zero, replicas := int32(0), int32(podsPerService)
	for c := range nClusters {
		cl := &fleet[c]
		cl.name = fmt.Sprintf("c%02d", c)
		for r := range nRepos {
			if (r+c)%2 != 0 {
				continue
			}
			rs := &seeds[r]
			ns := fmt.Sprintf("team-%02d", r%25)
			svc := fmt.Sprintf("svc-%03d", r)
			behind := c % 3
			cur := rs.builds[len(rs.builds)-1-behind]
			prev := rs.builds[len(rs.builds)-2-behind]
			rollback := rs.builds[len(rs.builds)-3-behind]
			if r%10 == 0 {
				cur = rs.index
			}
			repo := host + rs.name
			tmpl := func(img string) corev1.PodTemplateSpec {
				return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": svc}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: img}, {Name: "istio-proxy", Image: sidecar}}}}
			}
			sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": svc}}
			cl.objs = append(cl.objs,
				&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc},
					Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: sel, Template: tmpl(repo + ":" + cur.tag)}},
				&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc + "-" + cur.digest[7:17]},
					Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: sel, Template: tmpl(repo + ":" + cur.tag)}},
				&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc + "-" + rollback.digest[7:17]},
					Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Selector: sel, Template: tmpl(repo + ":" + rollback.tag)}},
			)
			distinct[repo+":"+cur.tag], distinct[repo+":"+rollback.tag] = true, true
			for j := range podsPerService {
				run, spec := cur, repo+":"+cur.tag
				switch {
				case r < hotRepos && j == podsPerService-1:
					run = rs.builds[10+c]
					spec = repo + "@" + run.digest
				case j >= podsPerService-4:
					run, spec = prev, repo+":"+prev.tag
				}
				distinct[spec], distinct[repo+"@"+run.digest] = true, true
				cl.objs = append(cl.objs, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%s-%02d", svc, run.digest[7:17], j), Labels: map[string]string{"app": svc}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: spec}, {Name: "istio-proxy", Image: sidecar}},
						NodeName: fmt.Sprintf("node-%03d", j*7%97)},
					Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
						{Name: "app", Image: spec, ImageID: repo + "@" + run.digest, Ready: true},
						{Name: "istio-proxy", Image: sidecar, ImageID: sidecarID, Ready: true},
					}},
				})
			}
		}
	}
	type clients struct {
		name string
		cs   *fake.Clientset
		dyn  *dynfake.FakeDynamicClient
	}
	cls := make([]clients, nClusters)
	pods := 0
	for i, c := range fleet {
		for _, o := range c.objs {
			if _, ok := o.(*corev1.Pod); ok {
				pods++
			}
		}
		cls[i] = clients{name: c.name, cs: fake.NewSimpleClientset(c.objs...),
			dyn: dynfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
				map[schema.GroupVersionResource]string{kube.WorkflowGVR: "WorkflowList"})}
	}
	fleet = nil // the clientsets hold their own copies

	// ---- the config ----
	var y strings.Builder
	y.WriteString("clusters:\n")
	for _, c := range cls {
		fmt.Fprintf(&y, "  - name: %s\n    context: %s\n", c.name, c.name)
	}
	fmt.Fprintf(&y, `ecr:
  consumers: []
  registries:
    - account: %q
      region: %s
  endpoint: %s
  requestsPerSecond: %d
  burst: %d
  concurrency: %d
  protectTag: %s
  repositories:
    - match: "hot/**"
      limit: 2100       # 2,000 images > high-water 1,890: trim to 1,680
      highWater: 90%%
      target: 80%%
      keepNewest: 10
      keepTags: [latest, "release-*"]
      keepPulledWithin: 30d
    - match: "**"       # 2,000 of 10,000: counted, nothing to trim
      keepTags: [latest, "release-*"]
  grace: 2h
`, account, region, srv.URL(), clientRPS, clientBurst, concurrency, protectTag)
	cfg, err := config.Parse([]byte(y.String()), "ecr-bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	// Earlier runs saw the 150 oldest images of every hot repository 3h ago,
	// longer than the 2h grace.
	prev := engine.NewState()
	for _, rs := range seeds[:hotRepos] {
		for _, d := range rs.oldest {
			prev.Seen(ecrimage.ID(inventory.RepoKey{Account: account, Region: region, Name: rs.name}, d), "", now.Add(-3*time.Hour))
		}
	}

	// ---- minimum calls and floors ----
	images, indexes := 0, 0
	minCalls := map[string]int{
		ecrfake.OpDescribeRepositories: ceilDiv(nRepos, ecr.MaxPageSize),
		ecrfake.OpListTagsForResource:  nRepos,
		// Who may pull: each repository's policy, and the registry's.
		ecrfake.OpGetRepositoryPolicy: nRepos,
		ecrfake.OpGetRegistryPolicy:   1,
	}
	for _, rs := range seeds {
		images += rs.images
		indexes += rs.indexes
		minCalls[ecrfake.OpDescribeImages] += ceilDiv(rs.images, ecr.MaxPageSize)
		minCalls[ecrfake.OpBatchGetImage] += ceilDiv(rs.indexes, ecr.MaxBatch)
	}
	ops := []string{ecrfake.OpDescribeRepositories, ecrfake.OpListTagsForResource, ecrfake.OpDescribeImages, ecrfake.OpBatchGetImage,
		ecrfake.OpGetRepositoryPolicy, ecrfake.OpGetRegistryPolicy}
	// Each API has its own bucket on the fake and the operations can run at
	// once, so the fake's floor is the slowest API's: max over ops of
	// (min calls - burst) / rate. The client's buckets, one per operation,
	// pace each the same way at the client's rate. The run can finish no
	// sooner than the larger of the two.
	fakeFloor, clientFloor := 0.0, 0.0
	opFloor := map[string]float64{}
	for _, op := range ops {
		rl := rates[op]
		opFloor[op] = float64(max(0, minCalls[op]-rl.Burst)) / rl.PerSecond
		fakeFloor = max(fakeFloor, opFloor[op])
		clientFloor = max(clientFloor, float64(max(0, minCalls[op]-clientBurst))/clientRPS)
	}
	var floorOps []string
	for _, op := range ops {
		if opFloor[op] > fakeFloor-0.005 {
			floorOps = append(floorOps, op)
		}
	}

	// ---- the runs ----
	opts := ecrimage.RegistryOptions(cfg, zap.NewNop(), "reclaim/bench")
	for i := range opts {
		opts[i].Credentials = credentials.NewStaticCredentialsProvider("AKIDBENCH", "bench-secret", "")
	}
	var collectTime, collectCPU time.Duration
	collect := func(ctx context.Context) []inventory.ClusterRefs {
		start, cpu := time.Now(), cpuTime()
		defer func() { collectTime, collectCPU = time.Since(start), cpuTime()-cpu }()
		out := make([]inventory.ClusterRefs, len(cls))
		sem := make(chan struct{}, 8) // as Run's own kube.CollectAll
		var wg sync.WaitGroup
		for i, c := range cls {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				out[i] = kube.Collect(ctx, c.name, c.cs, c.dyn, kube.Options{ProtectLabel: cfg.Kubernetes.ProtectLabel,
					PageSize: 500, Timeout: time.Minute, Images: true})
			})
		}
		wg.Wait()
		return out
	}
	runNow := now.Add(time.Minute)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		srv.ResetCalls()
		for op, rl := range rates {
			srv.SetRate(op, rl) // full buckets, as for a first run
		}
		fl, err := ecr.NewFleet(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		imgs := &timedImages{Provider: fl}
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		baseLive := liveHeap()
		rssBase, hwmReset := resetPeakRSS()
		// ECR_BENCH_HEAPPROFILE: a heap profile at the live peak, at most once a second.
		var lastProfile time.Time
		stopSampling := sampleMemory(base.HeapInuse, baseLive, func() {
			if prof := os.Getenv("ECR_BENCH_HEAPPROFILE"); prof != "" && time.Since(lastProfile) > time.Second {
				lastProfile = time.Now()
				if f, err := os.Create(prof); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		})
		b.StartTimer()

		start, cpu := time.Now(), cpuTime()
		store := state.NewMemoryStore(prev)
		rep, err := Run(context.Background(), cfg, Deps{Clients: map[string]any{ecrimage.Read: imgs}, Clusters: collect,
			Store: store, Audit: audit.New(io.Discard),
			Now: func() time.Time { return runNow }}, Options{})
		wall, cpu := time.Since(start), cpuTime()-cpu

		b.StopTimer()
		pk := stopSampling()
		runLive := pk.live - min(pk.live, baseLive)
		hwm := peakRSS()
		if err != nil {
			b.Fatal(err)
		}
		p := rep.Plan
		if p.Incomplete {
			for _, s := range p.Sources {
				if !s.Complete {
					b.Errorf("%s %s incomplete: %v", s.Kind, s.Name, s.Problems)
				}
			}
			b.Fatalf("plan incomplete: %v", p.Blocked)
		}
		listed, prot, inUse := 0, 0, 0
		for _, rsum := range ecrimage.RepositoriesOf(p) {
			listed += rsum.Images
			if rsum.Blocked != "" {
				prot++
			}
			inUse += rsum.Kept[ecrimage.ClassInUse]
		}
		if len(ecrimage.RepositoriesOf(p)) != nRepos || listed != images || prot != protected {
			b.Fatalf("%d repositories, %d images, %d protected; want %d, %d, %d", len(ecrimage.RepositoriesOf(p)), listed, prot, nRepos, images, protected)
		}
		if n := srv.MutatingCalls(); n != 0 {
			b.Fatalf("a dry run made %d BatchDeleteImage calls", n)
		}
		del, mark := p.Count(ecrimage.Name, engine.Delete), p.Count(ecrimage.Name, engine.Mark)
		if del == 0 || mark == 0 || inUse == 0 {
			b.Fatalf("plan: %d image deletes, %d marks, %d in use; the fixture should produce all three", del, mark, inUse)
		}

		calls := srv.CallCounts()
		throttled := srv.Throttled()
		ratio := wall.Seconds() / fakeFloor
		b.ReportMetric(wall.Seconds(), "wall-s/op")
		b.ReportMetric(fakeFloor, "floor-s")
		b.ReportMetric(clientFloor, "client-floor-s")
		b.ReportMetric(ratio, "wall/floor")
		for _, op := range ops {
			b.ReportMetric(float64(calls[op]), op+"-calls/op")
			b.ReportMetric(float64(minCalls[op]), op+"-min")
		}
		b.ReportMetric(float64(throttled), "throttled/op")
		b.ReportMetric(cpu.Seconds(), "cpu-s/op")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu/wall")
		b.ReportMetric(float64(pk.inuse)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(baseLive)/(1<<20), "fixture-live-MiB")
		b.ReportMetric(float64(runLive)/(1<<20), "run-live-MiB")
		if hwm > 0 {
			b.ReportMetric(float64(hwm)/(1<<20), "peak-rss-MiB")
		}

		var byOp []string
		for _, op := range ops {
			byOp = append(byOp, fmt.Sprintf("%s %d/%d", op, calls[op], minCalls[op]))
		}
		for op, n := range calls {
			if minCalls[op] == 0 && n > 0 {
				byOp = append(byOp, fmt.Sprintf("%s %d/0", op, n))
			}
		}
		sort.Strings(byOp[len(ops):])
		rssNote := "peak RSS unknown"
		if hwm > 0 {
			what := "since the process started"
			if hwmReset {
				what = fmt.Sprintf("during the run; %d MiB before it", rssBase>>20)
			}
			rssNote = fmt.Sprintf("peak RSS %d MiB (%s, both fakes' fixtures included)", hwm>>20, what)
		}
		b.Logf("%d clusters, %d pods, %d distinct image references; %d repositories, %d images (%d indexes); client %d/s burst %d, concurrency %d",
			nClusters, pods, len(distinct), nRepos, images, indexes, clientRPS, clientBurst, concurrency)
		b.Logf("wall %s = %.2f× the fake's floor %.2fs (%s); the client's buckets allow %.2fs at the soonest",
			wall.Round(time.Millisecond), ratio, fakeFloor, strings.Join(floorOps, ", "), clientFloor)
		b.Logf("listing %s (%s CPU), then clusters %s (%s CPU), then the rest %s; %s CPU in all on %d cores (both fakes included)",
			imgs.took.Round(time.Millisecond), imgs.cpu.Round(time.Millisecond), collectTime.Round(time.Millisecond), collectCPU.Round(time.Millisecond),
			(wall - imgs.took - collectTime).Round(time.Millisecond), cpu.Round(time.Millisecond), runtime.GOMAXPROCS(0))
		b.Logf("calls made/minimum: %s; %d throttled", strings.Join(byOp, ", "), throttled)
		b.Logf("peak heap in use %d MiB; live heap %d MiB before the run (the fixtures), at most %d MiB more during it (the run's own; GOGC=100 alone would need about twice that); %s",
			pk.inuse>>20, baseLive>>20, runLive>>20, rssNote)
		b.Logf("plan: %d image decisions: %d delete, %d mark; %d kept in use; %d protected repositories",
			p.Len(), del, mark, inUse, prot)
		// The state as a store would write it (the ConfigMap store gzips it).
		st, _ := store.Load(context.Background())
		enc, _ := json.Marshal(st)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		saveStart := time.Now()
		_, _ = zw.Write(enc)
		_ = zw.Close()
		b.Logf("state: %d clocks, %d bytes of JSON, %d gzipped (%d ConfigMap chunks), encoded and gzipped in %s; the run saved it %d times whole, %d journal entries",
			st.Clocks(), len(enc), gz.Len(), (gz.Len()+chunk-1)/chunk, time.Since(saveStart).Round(time.Millisecond), store.Saves, store.Notes)
		b.ReportMetric(float64(gz.Len()), "state-gz-bytes")
		if hwm > 0 {
			b.ReportMetric(float64(hwm)/(1<<20), "test-process-rss-MiB")
		}

		// The same run as the pod runs it: the reclaim binary alone in its
		// process, reading the clusters over HTTP (kubeFront) and the
		// registry from the same fake, from the same state.
		for op, rl := range rates {
			srv.SetRate(op, rl)
		}
		podDir := b.TempDir()
		var kc strings.Builder
		kc.WriteString("apiVersion: v1\nkind: Config\nusers:\n  - name: bench\n    user: {}\nclusters:\n")
		fronts := make([]*kubeFront, len(cls))
		for i, c := range cls {
			fronts[i] = &kubeFront{cs: c.cs}
			ts := httptest.NewServer(fronts[i])
			defer ts.Close()
			fmt.Fprintf(&kc, "  - name: %s\n    cluster:\n      server: %s\n", c.name, ts.URL)
		}
		kc.WriteString("contexts:\n")
		for _, c := range cls {
			fmt.Fprintf(&kc, "  - name: %s\n    context:\n      cluster: %s\n      user: bench\n", c.name, c.name)
		}
		kubeconfig := filepath.Join(podDir, "kubeconfig")
		podState := &state.FileStore{Path: filepath.Join(podDir, "state.json")}
		if err := os.WriteFile(kubeconfig, []byte(kc.String()), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := podState.Save(context.Background(), prev); err != nil {
			b.Fatal(err)
		}
		podYAML := strings.Replace(y.String(), "clusters:\n", "", 1)
		var py strings.Builder
		py.WriteString("clusters:\n")
		for _, c := range cls {
			fmt.Fprintf(&py, "  - name: %s\n    kubeconfig: %s\n    context: %s\n", c.name, kubeconfig, c.name)
		}
		podYAML = py.String() + podYAML[strings.Index(podYAML, "ecr:"):]
		podYAML += fmt.Sprintf("fleet:\n  discover: false\nstate:\n  file: %s\naudit:\n  file: %s\n", podState.Path, filepath.Join(podDir, "audit.jsonl"))
		podCfg := filepath.Join(podDir, "reclaim.yaml")
		if err := os.WriteFile(podCfg, []byte(podYAML), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(podDir, "audit.jsonl"), nil, 0o600); err != nil {
			b.Fatal(err)
		}
		pod := runAsPod(b, podCfg, filepath.Join(podDir, "audit.jsonl"))
		for i, f := range fronts {
			if u := f.unknownPaths(); len(u) > 0 {
				b.Logf("cluster %s: requests the front could not answer: %v", cls[i].name, u)
			}
		}
		if pod.ExitCode != 0 || srv.MutatingCalls() != 0 {
			b.Fatalf("the binary's dry run: exit %d, %d BatchDeleteImage calls:\n%s", pod.ExitCode, srv.MutatingCalls(), pod.Report)
		}
		// The text report's summary names the image plan's counts.
		if want := fmt.Sprintf("images delete %d (", del); !bytes.Contains(pod.Stdout, []byte(want)) || !bytes.Contains(pod.Stdout, []byte(fmt.Sprintf("mark %d", mark))) {
			b.Fatalf("the binary's report does not say %q and mark %d as the in-process plan does:\n%s", want, mark, pod.Report)
		}
		b.ReportMetric(pod.CPU.Seconds()/pod.Wall.Seconds(), "pod-cpu/wall")
		pod.reportMemory(b, ecrRSSTarget, fmt.Sprintf("the same plan (%d deletes, %d marks)", del, mark))
	}
}

// timedImages times the registry listing of a run.
type timedImages struct {
	ecr.Provider
	took, cpu time.Duration
}

func (t *timedImages) List(ctx context.Context) []inventory.RegistryListing {
	start, cpu := time.Now(), cpuTime()
	defer func() { t.took, t.cpu = time.Since(start), cpuTime()-cpu }()
	return t.Provider.List(ctx)
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration { return testenv.CPUTime() }

// memPeaks are the highest heap in use and live heap sampled.
type memPeaks struct{ inuse, live uint64 }

// sampleMemory samples the heap every 10ms, from the given base, until the
// returned stop is called; onLive (if set) is called at each new live peak.
func sampleMemory(inuse, live uint64, onLive func()) (stop func() memPeaks) {
	done := make(chan struct{})
	out := make(chan memPeaks)
	go func() {
		var ms runtime.MemStats
		pk := memPeaks{inuse, live}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				runtime.ReadMemStats(&ms)
				pk.inuse = max(pk.inuse, ms.HeapInuse)
				if l := liveHeap(); l > pk.live {
					pk.live = l
					if onLive != nil {
						onLive()
					}
				}
			case <-done:
				pk.live = max(pk.live, liveHeap())
				out <- pk
				return
			}
		}
	}()
	return func() memPeaks { close(done); return <-out }
}

// liveHeap is the heap the last GC found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// resetPeakRSS resets the kernel's peak RSS (VmHWM) to the current RSS, which
// it returns; ok is false where /proc/self/clear_refs is not writable.
func resetPeakRSS() (rss uint64, ok bool) {
	rss = procStatus("VmRSS:")
	return rss, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is VmHWM in bytes, 0 where /proc is not available.
func peakRSS() uint64 { return procStatus("VmHWM:") }

func procStatus(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
