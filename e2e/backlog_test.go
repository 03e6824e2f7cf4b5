package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
)

// backlogJobs is the backlog the story starts with.
const backlogJobs = 100000

// The backlog reclaim exists to clear, on the stock install: the kustomize
// CronJob with the workload-deleter component (its ServiceAccount, RBAC and
// config, the state in ConfigMaps), against a real API server holding
// 100,000 finished Jobs. Run after run the backlog shrinks by the per-run
// cap (jobs.maxDeletesPerRun, set to 20,000 at 100% here: the default 10,000
// and 50% would take some twenty runs) to zero; the state stays small
// (finished Jobs keep no clocks) and every delete is audited once.
func TestStockCronJobClearsABacklogOfFinishedJobs(t *testing.T) {
	testenv.Scale(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// 100,000 Jobs written twice (created, then finished) need more than
	// the test clusters' 256 MiB etcd quota (a real cluster has 2-8 GiB).
	si := newStockInstall(t, ctx, "backlog", testenv.Options{ExtraEtcdArgs: []string{"--quota-backend-bytes=" + fmt.Sprint(2<<30)}})
	c := si.c

	// The backlog: finished two days ago, in one namespace.
	start := time.Now()
	seedFinishedJobs(t, ctx, c, "batch", backlogJobs, time.Now().Add(-48*time.Hour))
	t.Logf("seeded %d finished Jobs in %s", backlogJobs, time.Since(start).Round(time.Second))

	// The stock config, reaching the cluster as the install's ServiceAccount;
	// the Jobs section as the ConfigMap's comment gives it, and a client
	// and caps fast enough to finish in a test.
	ecr := ecrfake.New(ecrfake.Options{Region: ecrRegion})
	ecr.Start()
	t.Cleanup(ecr.Close)
	cfg := si.config(t, ecr, func(doc map[string]any) {
		doc["jobs"] = map[string]any{"succeeded": "6h", "failed": "3d", "deletesPerSecond": 1000, "maxDeletesPerRun": 20000, "maxDeletePercent": "100%"}
		for _, cl := range doc["clusters"].([]any) {
			cl.(map[string]any)["qps"], cl.(map[string]any)["burst"] = 2000, 2000
		}
	})
	limit := k8sjob.SectionOf(cfg).MaxDeletesPerRun

	// Hourly runs with --apply, as the CronJob would make them.
	now := time.Now().UTC()
	left := backlogJobs
	for run := 1; left > 0; run++ {
		if run > backlogJobs/limit+3 {
			t.Fatalf("run %d: %d Jobs left", run, left)
		}
		began := time.Now()
		rep, deleted := applyRun(t, ctx, cfg, run, now)
		n := countJobs(t, ctx, c, "batch")
		want := 0
		if run > 1 { // the first run starts the grace period
			want = min(limit, left)
		}
		if deleted != want || n != left-want || rep.Plan.Count(k8sjob.Name, engine.Delete) > limit {
			t.Fatalf("run %d: deleted %d (plan %d), %d Jobs left; want %d deleted of %d within the cap %d",
				run, deleted, rep.Plan.Count(k8sjob.Name, engine.Delete), n, want, left, limit)
		}
		size := stateSize(t, ctx, c)
		t.Logf("run %d: deleted %d in %s, %d Jobs left, state %d bytes", run, deleted, time.Since(began).Round(time.Second), n, size)
		if size > 256<<10 {
			t.Fatalf("run %d: the state is %d bytes: finished Jobs must not hold clocks", run, size)
		}
		left = n
		now = now.Add(time.Hour)
	}
	si.auditedEachOnce(t, backlogJobs)
}

// applyRun is one hourly run with --apply at now, as the CronJob makes it:
// its report and how many it deleted; a failed run or delete fails t.
func applyRun(t *testing.T, ctx context.Context, cfg *config.Config, run int, now time.Time) (*report.Report, int) {
	t.Helper()
	rep, err := app.Run(ctx, cfg, app.Deps{Now: func() time.Time { return now }}, app.Options{Apply: true})
	if err != nil {
		t.Fatalf("run %d: %v", run, err)
	}
	if rep.Outcome == nil {
		return rep, 0
	}
	if rep.Outcome.Failed > 0 {
		t.Fatalf("run %d: %d deletes failed", run, rep.Outcome.Failed)
	}
	return rep, rep.Outcome.Deleted
}

// seedFinishedJobs creates n Jobs in ns that completed at finished.
func seedFinishedJobs(t *testing.T, ctx context.Context, c *testenv.Cluster, ns string, n int, finished time.Time) {
	t.Helper()
	rc := rest.CopyConfig(c.Admin)
	rc.QPS, rc.Burst = -1, 0 // no client-side limit: the API server sets the pace
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	end := metav1.NewTime(finished)
	begin := metav1.NewTime(finished.Add(-10 * time.Minute))
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("etl-%06d", i)},
					Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: jobPodSpec()}}}
				j, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{})
				if err == nil {
					j.Status = batchv1.JobStatus{StartTime: &begin, CompletionTime: &end, Succeeded: 1,
						Conditions: []batchv1.JobCondition{
							{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: end, Reason: "CompletionsReached"},
							{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: end, Reason: "CompletionsReached"},
						}}
					_, err = cs.BatchV1().Jobs(ns).UpdateStatus(ctx, j, metav1.UpdateOptions{})
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("seeding Jobs: %v", firstErr)
	}
}

func countJobs(t *testing.T, ctx context.Context, c *testenv.Cluster, ns string) int {
	t.Helper()
	n := 0
	opts := metav1.ListOptions{Limit: 5000}
	for {
		l, err := c.Client.BatchV1().Jobs(ns).List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		n += len(l.Items)
		if l.Continue == "" {
			return n
		}
		opts.Continue = l.Continue
	}
}

// stateSize is what the state ConfigMaps hold, in bytes.
func stateSize(t *testing.T, ctx context.Context, c *testenv.Cluster) int {
	t.Helper()
	l, err := c.Client.CoreV1().ConfigMaps("reclaim").List(ctx, metav1.ListOptions{LabelSelector: "reclaim.dev/state-of=reclaim-state"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cm := range l.Items {
		for _, v := range cm.Data {
			n += len(v)
		}
		for _, v := range cm.BinaryData {
			n += len(v)
		}
	}
	if n == 0 {
		t.Fatal("no state ConfigMap")
	}
	return n
}

// The first trim of a full registry, on the stock install: the kustomize
// CronJob's config with its state in ConfigMaps on a real API server, and
// a registry of 11 repositories at ECR's 10,000-image limit whose policy
// keeps the newest 10 (109,890 to delete, nothing in use). Run after run
// the trim deletes what the per-run cap allows (ecr.maxDeletesPerRun,
// 20,000 at 100% here: the default 5,000 would take 22 runs), the breaker
// lets the quota trim through, the state's clocks of 110,000 candidates
// fit the store, and every delete is audited once.
func TestStockCronJobTrimsAFullRegistry(t *testing.T) {
	testenv.Scale(t)
	const (
		repos   = 11
		perRepo = 10000
		keep    = 10
		limit   = 20000
	)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	si := newStockInstall(t, ctx, "registry", testenv.Options{})
	c := si.c
	reg := ecrfake.New(ecrfake.Options{Region: ecrRegion, PullTimeExcluded: true})
	reg.Start()
	t.Cleanup(reg.Close)
	now := time.Now().UTC().Truncate(time.Second)
	for r := range repos {
		name := fmt.Sprintf("ci/full-%02d", r)
		reg.AddRepository(account, name, now.Add(-400*24*time.Hour), nil)
		imgs := make([]ecrfake.Image, perRepo)
		for i := range imgs {
			imgs[i] = ecrfake.NewManifest(fmt.Sprintf("%s/%d", name, i), now.Add(-time.Duration(perRepo-i)*time.Hour-48*time.Hour), fmt.Sprintf("build-%05d", i))
		}
		reg.AddImages(account, name, imgs)
	}
	cfg := si.config(t, reg, func(doc map[string]any) {
		e := doc["ecr"].(map[string]any)
		e["repositories"] = []any{map[string]any{"match": "ci/**", "limit": perRepo, "highWater": "90%", "target": "0.1%", "keepNewest": keep}}
		e["maxDeletesPerRun"], e["maxDeletePercent"], e["requestsPerSecond"], e["burst"] = limit, "100%", 1000, 100
	})
	images := func() int {
		n := 0
		for r := range repos {
			n += len(reg.Images(account, fmt.Sprintf("ci/full-%02d", r)))
		}
		return n
	}
	want := repos * (perRepo - keep)
	left := want
	for run := 1; left > 0; run++ {
		if run > want/limit+3 {
			t.Fatalf("run %d: %d images above the target", run, left)
		}
		began := time.Now()
		rep, deleted := applyRun(t, ctx, cfg, run, now)
		if rep.Plan.BreakerTripped {
			t.Fatalf("run %d: the breaker tripped: %v", run, rep.Plan.Blocked)
		}
		exp := 0
		if run > 1 { // the first run starts the grace period
			exp = min(limit, left)
		}
		n := images() - repos*keep
		if deleted != exp || n != left-exp || rep.Plan.Count(ecrimage.Name, engine.Delete) > limit {
			t.Fatalf("run %d: deleted %d (plan %d), %d above the target; want %d deleted of %d within the cap %d\n%v",
				run, deleted, rep.Plan.Count(ecrimage.Name, engine.Delete), n, exp, left, limit, rep.Plan.Blocked)
		}
		size := stateSize(t, ctx, c)
		t.Logf("run %d: deleted %d in %s, %d images above the target, state %d bytes", run, deleted, time.Since(began).Round(time.Second), n, size)
		if size > 2<<20 {
			t.Fatalf("run %d: the state is %d bytes for %d clocks", run, size, left)
		}
		left = n
		now = now.Add(3 * time.Hour) // past the grace (2h) of what the run saw
	}
	si.auditedEachOnce(t, want)
	for r := range repos {
		if got := len(reg.Images(account, fmt.Sprintf("ci/full-%02d", r))); got != keep {
			t.Fatalf("repository %d holds %d images, want its newest %d", r, got, keep)
		}
	}
}

// stockInstall is the kustomize install with every component applied to a
// real API server, reached as the install's ServiceAccount.
type stockInstall struct {
	c          *testenv.Cluster
	cm         *unstructured.Unstructured // the rendered reclaim-config
	dir        string
	kubeconfig string // the ServiceAccount's token
	gce        *gcefake.Server
}

func newStockInstall(t *testing.T, ctx context.Context, name string, opts testenv.Options) *stockInstall {
	t.Helper()
	if renderBin == "" {
		renderBin = buildRenderTool(t)
	}
	objs := renderDeploy(t, "kustomize", "testdata/kustomize-all")
	si := &stockInstall{cm: findObject(objs, "ConfigMap", "reclaim-config"), dir: t.TempDir()}
	if si.cm == nil {
		t.Fatal("no reclaim-config rendered")
	}
	c, err := testenv.StartCluster(ctx, name, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	si.c = c
	if err := c.InstallWorkflowCRD(ctx); err != nil {
		t.Fatal(err)
	}
	// The variant ships its alerts as a PrometheusRule: the operator's CRD first.
	applyObjects(t, ctx, c, []*unstructured.Unstructured{prometheusRuleCRD()})
	waitServed(t, ctx, c, schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"})
	applyObjects(t, ctx, c, objs)
	tr, err := c.Client.CoreV1().ServiceAccounts("reclaim").CreateToken(ctx, "reclaim", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	si.kubeconfig = filepath.Join(si.dir, "kubeconfig")
	writeTokenKubeconfig(t, si.kubeconfig, c, tr.Status.Token)
	si.gce = gcefake.New(gcefake.Options{})
	t.Cleanup(si.gce.Close)
	return si
}

// config writes the stock config for the fakes, with edit's changes and an
// audit file of its own, and loads it.
func (si *stockInstall) config(t *testing.T, ecr *ecrfake.Server, edit func(doc map[string]any)) *config.Config {
	t.Helper()
	cfgPath := filepath.Join(si.dir, "reclaim.yaml")
	writeDeployedConfig(t, si.cm, cfgPath, si.kubeconfig, si.gce, ecr)
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	doc["audit"] = map[string]any{"file": si.auditFile()}
	out, _ := yaml.Marshal(doc)
	if err := os.WriteFile(cfgPath, out, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (si *stockInstall) auditFile() string { return filepath.Join(si.dir, "audit.jsonl") }

// auditedEachOnce fails unless the audit log records want deletes done,
// each once.
func (si *stockInstall) auditedEachOnce(t *testing.T, want int) {
	t.Helper()
	count := map[string]int{}
	for _, r := range readAudit(t, si.auditFile()) {
		if r.Done() {
			count[r.ID]++
		}
	}
	if len(count) != want {
		t.Fatalf("the audit log records %d deletes, want %d", len(count), want)
	}
	for id, n := range count {
		if n != 1 {
			t.Fatalf("%s audited %d times", id, n)
		}
	}
}
