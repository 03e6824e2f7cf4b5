package app

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"go.uber.org/zap"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/state"
)

// BenchmarkECRHeavyTrim is the first --apply on a neglected registry: 10
// repositories of 10,000 images each, every policy keeping the newest 10,
// nothing in use, the caps lifted, every image seen by earlier runs past
// its grace (99,900 clocks in a state file). The fake answers each API at
// 50 requests/s with 20 ms latency; reclaim's client is set as an operator
// who knows those limits would set it: 48 calls a second per API action (a
// re-read of the repository's tags and images, and a delete, per batch), 8
// repositories at once. It reports wall time against two
// floors: the fake's rates alone (the slowest API's calls / 50 per second),
// and the latency of the calls the applier makes one after another (the
// tags and images re-read and a delete per batch of 100); CPU; and what the state's whole
// saves and journal entries cost.
//
// Run it with: go test ./internal/app -run '^$' -bench ECRHeavyTrim -benchtime 1x
func BenchmarkECRHeavyTrim(b *testing.B) {
	const (
		account = "123456789012"
		region  = "us-east-1"
		repos   = 10
		perRepo = 10000
		keep    = 10
		rate    = 50
		latency = 20 * time.Millisecond
	)
	now := time.Now().Truncate(time.Second)
	rl := ecrfake.RateLimit{PerSecond: rate, Burst: rate}
	srv := ecrfake.New(ecrfake.Options{Region: region, Latency: latency, PullTimeExcluded: true, Rates: map[string]ecrfake.RateLimit{
		ecrfake.OpDescribeRepositories: rl, ecrfake.OpDescribeImages: rl, ecrfake.OpBatchGetImage: rl,
		ecrfake.OpBatchDeleteImage: rl, ecrfake.OpListTagsForResource: rl}})
	srv.Start()
	defer srv.Close()
	seed := func() {
		for r := range repos {
			seedFullRepo(srv, account, fmt.Sprintf("ci/svc-%02d", r), perRepo, now)
		}
	}
	y := fmt.Sprintf(`clusters:
  - name: c0
    context: c0
ecr:
  consumers: []
  registries:
    - account: %q
      region: %s
  endpoint: %s
  requestsPerSecond: 48
  burst: 10
  concurrency: 8
  repositories:
    - match: "**"
      limit: 100
      highWater: 10%%
      target: 10%%
      keepNewest: %d
  grace: 2h
  maxDeletesPerRun: 1000000
  maxDeletePercent: 100%%
  breakerCandidates: 1000000
`, account, region, srv.URL(), keep)
	cfg, err := config.Parse([]byte(y), "ecr-trim-bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	deletions := repos * (perRepo - keep)
	batches := repos * ceilDiv(perRepo-keep, ecrimage.MaxBatch)
	listCalls := 1 + repos + repos*ceilDiv(perRepo, ecr.MaxPageSize)
	// The rates alone: the busiest API (DescribeImages: the listing's pages
	// and a re-read per batch; BatchDeleteImage: a call per batch).
	rateFloor := float64(max(batches+repos*ceilDiv(perRepo, ecr.MaxPageSize), batches)-rate) / rate
	// The re-read (the repository's tags, then its images) and the delete,
	// one after the other, per batch.
	seqFloor := float64(3*batches) * latency.Seconds()

	for range b.N {
		b.StopTimer()
		for r := range repos {
			srv.RemoveRepository(account, fmt.Sprintf("ci/svc-%02d", r))
		}
		seed()
		srv.ResetCalls()
		prev := engine.NewState()
		for r := range repos {
			name := fmt.Sprintf("ci/svc-%02d", r)
			for i := range perRepo - keep {
				prev.Seen(ecrimage.ID(inventory.RepoKey{Account: account, Region: region, Name: name}, fullRepoDigest(name, i)), "", now.Add(-3*time.Hour))
			}
		}
		fs := &state.FileStore{Path: filepath.Join(b.TempDir(), "state.json")}
		if err := fs.Save(context.Background(), prev); err != nil {
			b.Fatal(err)
		}
		store := &timedStore{Store: fs}
		opts := ecrimage.RegistryOptions(cfg, zap.NewNop(), "reclaim/bench")
		for i := range opts {
			opts[i].Credentials = credentials.NewStaticCredentialsProvider("AKIDBENCH", "bench-secret", "")
		}
		fl, err := ecr.NewFleet(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		cs := fake.NewSimpleClientset()
		dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{kube.WorkflowGVR: "WorkflowList"})
		collect := func(ctx context.Context) []inventory.ClusterRefs {
			return []inventory.ClusterRefs{kube.Collect(ctx, "c0", cs, dyn, kube.Options{Images: true, Timeout: time.Minute})}
		}
		b.StartTimer()
		start, cpu := time.Now(), cpuTime()
		rep, err := Run(context.Background(), cfg, Deps{Clients: map[string]any{ecrimage.Read: fl}, Clusters: collect, Store: store, Audit: audit.New(io.Discard),
			Now: func() time.Time { return now.Add(time.Minute) }}, Options{Apply: true})
		wall, cpu := time.Since(start), cpuTime()-cpu
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if rep.Outcome == nil || rep.Outcome.Deleted != deletions || rep.Outcome.Failed > 0 {
			b.Fatalf("outcome %+v, want %d deleted", rep.Outcome, deletions)
		}
		calls := srv.CallCounts()
		b.ReportMetric(wall.Seconds(), "wall-s/op")
		b.ReportMetric(wall.Seconds()/rateFloor, "wall/rate-floor")
		b.ReportMetric(wall.Seconds()/seqFloor, "wall/sequential-floor")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu/wall")
		b.ReportMetric(store.saveTime.Seconds()+store.noteTime.Seconds(), "state-save-s")
		var byOp []string
		for _, op := range []string{ecrfake.OpDescribeRepositories, ecrfake.OpListTagsForResource, ecrfake.OpDescribeImages, ecrfake.OpBatchGetImage, ecrfake.OpBatchDeleteImage} {
			byOp = append(byOp, fmt.Sprintf("%s %d", op, calls[op]))
		}
		b.Logf("%d repositories × %d images, keep the newest %d: %d deleted in %d batches; the fake at %d/s per API, %s latency",
			repos, perRepo, keep, deletions, batches, rate, latency)
		b.Logf("wall %s = %.2f× the rates' floor %.1fs, %.2f× the sequential calls' latency %.1fs; CPU %s (%.0f%% of wall, fakes included)",
			wall.Round(time.Millisecond), wall.Seconds()/rateFloor, rateFloor, wall.Seconds()/seqFloor, seqFloor, cpu.Round(time.Millisecond), 100*cpu.Seconds()/wall.Seconds())
		b.Logf("calls: %s (the listing's minimum %d); %d answered ThrottlingException", strings.Join(byOp, ", "), listCalls, srv.Throttled())
		b.Logf("state: %d whole saves %s, %d journal entries %s (%.2f ms each)", store.saves, store.saveTime.Round(time.Millisecond),
			store.notes, store.noteTime.Round(time.Millisecond), store.noteTime.Seconds()*1000/float64(max(1, store.notes)))
	}
}
