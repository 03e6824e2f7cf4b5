package app

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/state"
)

// The backlog benchmarks run the reclaim binary as the deployed CronJob runs
// it (GOMEMLIMIT and GOGC from deploy/, see runAsPod) on a registry already
// full: every repository at 10,000 images, each policy keeping the newest 10,
// nothing in use. The ECR fake answers each API at 50 requests a second
// with 20 ms latency, as the side-by-side run with ecrm did; reclaim
// is set as an operator who knows those limits would set it (48 calls a
// second per API action, 8 repositories at once). They report the run's wall time
// against the floor the fake's rates set, its peak RSS, CPU and wall time
// each as a ratio to its target (podTargets: ≤ 1 meets it), its CPU against
// its wall time, and the state it saves.
const (
	backlogAccount = "123456789012"
	backlogRegion  = "us-east-1"
	backlogPerRepo = 10000
	backlogKeep    = 10
	backlogRate    = 50
	backlogLatency = 20 * time.Millisecond
	backlogRSS     = 256 << 20
)

// podTargets are what a backlog run must stay within: peak RSS (bytes),
// CPU (cpu, or else cpuShare of the wall time) and wall time as a multiple
// of the rates' floor.
type podTargets struct {
	rss      uint64
	cpu      time.Duration
	cpuShare float64
	wall     float64
}

// trimTargets are the heavy trim's (issue 52): the footprint of ecrm, the
// peer measured side by side on the same fleet (148 MiB, 14 s of CPU):
// peak RSS 150 MiB, CPU 1.5× ecrm's, wall 1.05× the floor.
var trimTargets = podTargets{rss: 150 << 20, cpu: 21 * time.Second, wall: 1.05}

// dryRunTargets are the dry run's: the pod's 256 MiB, a quarter of the
// wall time in CPU, 1.2× the floor.
var dryRunTargets = podTargets{rss: backlogRSS, cpuShare: 0.25, wall: 1.2}

// backlog is one benchmark's registry, cluster and files.
type backlog struct {
	srv   *ecrfake.Server
	repos int
	now   time.Time
	dir   string
	cfg   string // the config file
	audit string
	state string
}

// newBacklog seeds repos full repositories; rps is the ECR client's
// requestsPerSecond, caps more of the ecr section.
func newBacklog(b *testing.B, repos, rps int, caps string) *backlog {
	bl := &backlog{repos: repos, now: time.Now().Truncate(time.Second), dir: b.TempDir()}
	rl := ecrfake.RateLimit{PerSecond: backlogRate, Burst: backlogRate}
	bl.srv = ecrfake.New(ecrfake.Options{Region: backlogRegion, Latency: backlogLatency, PullTimeExcluded: true, Logf: func(string, ...any) {},
		Rates: map[string]ecrfake.RateLimit{ecrfake.OpDescribeRepositories: rl, ecrfake.OpDescribeImages: rl, ecrfake.OpBatchGetImage: rl,
			ecrfake.OpBatchDeleteImage: rl, ecrfake.OpListTagsForResource: rl, ecrfake.OpGetRepositoryPolicy: rl, ecrfake.OpGetRegistryPolicy: rl}})
	bl.srv.Start()
	b.Cleanup(bl.srv.Close)
	for r := range repos {
		seedFullRepo(bl.srv, backlogAccount, bl.repo(r), backlogPerRepo, bl.now)
	}
	// One cluster, running nothing from the registry, over HTTP.
	front := httptest.NewServer(&kubeFront{cs: fake.NewSimpleClientset()})
	b.Cleanup(front.Close)
	kubeconfig := filepath.Join(bl.dir, "kubeconfig")
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nusers:\n  - name: bench\n    user: {}\nclusters:\n  - name: c0\n    cluster:\n      server: %s\ncontexts:\n  - name: c0\n    context:\n      cluster: c0\n      user: bench\n", front.URL)
	bl.audit, bl.state = filepath.Join(bl.dir, "audit.jsonl"), filepath.Join(bl.dir, "state.json")
	y := fmt.Sprintf(`clusters:
  - name: c0
    kubeconfig: %s
    context: c0
fleet:
  discover: false
ecr:
  consumers: []
  registries:
    - account: %q
      region: %s
  endpoint: %s
  requestsPerSecond: %d
  burst: 10
  concurrency: 8
  repositories:
    - match: "**"
      limit: %d
      highWater: 90%%
      target: 0.1%%
      keepNewest: %d
  grace: 2h
%sstate:
  file: %s
audit:
  file: %s
`, kubeconfig, backlogAccount, backlogRegion, bl.srv.URL(), rps, backlogPerRepo, backlogKeep, caps, bl.state, bl.audit)
	bl.cfg = filepath.Join(bl.dir, "reclaim.yaml")
	for path, body := range map[string]string{kubeconfig: kc, bl.cfg: y, bl.audit: ""} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return bl
}

func (bl *backlog) repo(r int) string { return fmt.Sprintf("ci/svc-%03d", r) }

func (bl *backlog) digest(r, i int) string { return fullRepoDigest(bl.repo(r), i) }

// seedFullRepo adds repository name with n images of 50 MiB, a day apart,
// the newest pushed two days before now, each with a build tag.
func seedFullRepo(srv *ecrfake.Server, account, name string, n int, now time.Time) {
	srv.AddRepository(account, name, now.Add(-400*24*time.Hour), nil)
	imgs := make([]ecrfake.Image, n)
	for i := range imgs {
		imgs[i] = ecrfake.Image{Digest: fullRepoDigest(name, i), Tags: []string{fmt.Sprintf("build-%05d", i)},
			PushedAt: now.Add(-time.Duration(n-i+1) * 24 * time.Hour), SizeBytes: 50 << 20, MediaType: ecrfake.MediaTypeOCIManifest}
	}
	srv.AddImages(account, name, imgs)
}

// fullRepoDigest is image i's digest in a repository seedFullRepo seeded.
func fullRepoDigest(name string, i int) string { return ecrfake.Digest(fmt.Sprintf("%s/%d", name, i)) }

// seedClocks writes a state in which every image but the newest kept ones
// has been a candidate for three hours (its grace, 2h, elapsed).
func (bl *backlog) seedClocks(b *testing.B) int {
	st := engine.NewState()
	n := 0
	for r := range bl.repos {
		key := inventory.RepoKey{Account: backlogAccount, Region: backlogRegion, Name: bl.repo(r)}
		for i := range backlogPerRepo - backlogKeep {
			st.Seen(ecrimage.ID(key, bl.digest(r, i)), "", bl.now.Add(-3*time.Hour))
			n++
		}
	}
	if err := (&state.FileStore{Path: bl.state}).Save(context.Background(), st); err != nil {
		b.Fatal(err)
	}
	return n
}

// stateSize is the saved state's size, and gzipped as the ConfigMap store
// writes it, with its clocks.
func (bl *backlog) stateSize(b *testing.B) (raw, gz, clocks int) {
	data, err := os.ReadFile(bl.state)
	if err != nil {
		b.Fatal(err)
	}
	var st engine.State
	if err := json.Unmarshal(data, &st); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(data)
	w.Close()
	return len(data), buf.Len(), st.Clocks()
}

// report reports a pod run's ratios against the targets.
func (bl *backlog) report(b *testing.B, pod podRun, floor float64, t podTargets, did string) {
	b.Helper()
	raw, gz, clocks := bl.stateSize(b)
	const stock = 16 * (1<<20 - 64<<10)
	cpuTarget := t.cpu
	if cpuTarget == 0 {
		cpuTarget = time.Duration(t.cpuShare * float64(pod.Wall))
	}
	b.ReportMetric(pod.Wall.Seconds(), "wall-s")
	b.ReportMetric(pod.Wall.Seconds()/floor, "wall/floor")
	b.ReportMetric(pod.Wall.Seconds()/floor/t.wall, "wall/target")
	b.ReportMetric(pod.CPU.Seconds(), "cpu-s")
	b.ReportMetric(pod.CPU.Seconds()/cpuTarget.Seconds(), "cpu/target")
	b.ReportMetric(pod.CPU.Seconds()/pod.Wall.Seconds(), "cpu/wall")
	b.ReportMetric(float64(gz), "state-gz-bytes")
	pod.reportMemory(b, t.rss, did)
	b.Logf("wall %s = %.2f× the rates' floor %.1fs (target ≤ %.2f×); CPU %s = %.0f%% of wall (target ≤ %s)",
		pod.Wall.Round(time.Millisecond), pod.Wall.Seconds()/floor, floor, t.wall, pod.CPU.Round(time.Millisecond), 100*pod.CPU.Seconds()/pod.Wall.Seconds(), cpuTarget.Round(time.Millisecond))
	b.Logf("state: %d clocks, %d bytes, %d gzipped = %.0f%% of the stock ConfigMap store (16 × 960 KiB)", clocks, raw, gz, 100*float64(gz)/stock)
	calls := bl.srv.CallCounts()
	var byOp []string
	for _, op := range []string{ecrfake.OpDescribeRepositories, ecrfake.OpListTagsForResource, ecrfake.OpGetRepositoryPolicy, ecrfake.OpDescribeImages, ecrfake.OpBatchDeleteImage} {
		byOp = append(byOp, fmt.Sprintf("%s %d", op, calls[op]))
	}
	b.Logf("calls: %s; %d answered ThrottlingException", strings.Join(byOp, ", "), bl.srv.Throttled())
}

// BenchmarkECRBacklogTrim is the first --apply on a neglected registry of
// 50 repositories × 10,000 images (the larger side-by-side run):
// every image but the newest 10 past its grace, the caps lifted so that
// the run trims all 499,500 at once.
//
// Run it with: go test ./internal/app -run '^$' -bench ECRBacklogTrim -benchtime 1x
func BenchmarkECRBacklogTrim(b *testing.B) {
	const repos = 50
	for range b.N {
		b.StopTimer()
		// A re-read and a delete per batch, each API at 48 a second: under
		// the fake's 50.
		bl := newBacklog(b, repos, 48, "  maxDeletesPerRun: 1000000\n  maxDeletePercent: 100%\n  breakerCandidates: 1000000\n")
		want := bl.seedClocks(b)
		// The busiest API: DescribeImages (the listing's pages, a re-read per
		// batch), at the fake's rate.
		batches := repos * ceilDiv(backlogPerRepo-backlogKeep, ecrimage.MaxBatch)
		floor := float64(batches+repos*ceilDiv(backlogPerRepo, ecr.MaxPageSize)) / backlogRate
		b.StartTimer()
		pod := runAsPod(b, bl.cfg, bl.audit, "--apply")
		b.StopTimer()
		if pod.ExitCode != 0 || pod.Deleted != want || pod.Failed != 0 {
			b.Fatalf("exit %d, %d deleted, %d failed; want %d deleted:\n%s", pod.ExitCode, pod.Deleted, pod.Failed, want, pod.Report)
		}
		bl.report(b, pod, floor, trimTargets, fmt.Sprintf("%d deleted", pod.Deleted))
	}
}

// BenchmarkECRBacklogDryRun is a dry run with the default caps (5,000 a
// run, 10%, breaker 20,000) on 100 repositories × 10,000 images: 999,000
// candidates, each seen by an earlier run past its grace, so the run loads
// a million clocks, finds them all due and holds all but 5,000 at the cap.
//
// Run it with: go test ./internal/app -run '^$' -bench ECRBacklogDryRun -benchtime 1x
func BenchmarkECRBacklogDryRun(b *testing.B) {
	const repos = 100
	for range b.N {
		b.StopTimer()
		// The client at 48 calls a second per API stays under the fake's 50.
		bl := newBacklog(b, repos, 48, "")
		n := bl.seedClocks(b)
		floor := float64(repos*ceilDiv(backlogPerRepo, ecr.MaxPageSize)) / backlogRate
		b.StartTimer()
		pod := runAsPod(b, bl.cfg, bl.audit)
		b.StopTimer()
		if pod.ExitCode != 0 || bl.srv.MutatingCalls() != 0 {
			b.Fatalf("exit %d, %d BatchDeleteImage calls:\n%s", pod.ExitCode, bl.srv.MutatingCalls(), pod.Report)
		}
		if want := "images delete 5000 ("; !bytes.Contains(pod.Stdout, []byte(want)) || !bytes.Contains(pod.Stdout, []byte(fmt.Sprintf("mark %d", n-5000))) {
			b.Fatalf("the report does not say %q and mark %d:\n%s", want, n-5000, pod.Report)
		}
		bl.report(b, pod, floor, dryRunTargets, fmt.Sprintf("a dry run of %d candidates", n))
	}
}
