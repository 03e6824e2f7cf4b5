package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// The kinds and gauges the disk, PVC and image kinds declare.
var (
	testKinds = []string{"gce-disk", "k8s-pvc", "ecr-image"}
	quota     = []string{"project", "region", "metric"}
	repo      = []string{"registry", "repository"}

	testGauges = []layout.GaugeDef{
		{Name: "reclaim_gce_quota_limit", Labels: quota,
			Help: "Limit of a regional GCE quota (GB for the disk quotas), as read by the last run. No series while the quota is unknown."},
		{Name: "reclaim_gce_quota_usage", Labels: quota,
			Help: "Usage of a regional GCE quota (GB for the disk quotas), as read by the last run. No series while the quota is unknown."},
		{Name: "reclaim_gce_quota_used_ratio", Labels: quota,
			Help: "Usage divided by limit of a regional GCE quota (1 is full), as read by the last run. No series while the quota is unknown or its limit is 0."},
		{Name: "reclaim_gce_quota_plan_frees_bytes", Labels: quota,
			Help: "GB of a regional GCE quota that the last run's planned deletions free (disks, and PVCs whose disks go with them)."},
		{Name: "reclaim_gce_orphan_disks_bytes", Labels: quota,
			Help: "GB of a regional GCE quota held by orphan disks, due for deletion or not yet, in the last run."},
		{Name: "reclaim_gce_finished_workflow_pvcs_bytes", Labels: quota,
			Help: "GB of a regional GCE quota held by PVCs of finished Argo Workflows that no running pod mounts, in the last run."},
		{Name: "reclaim_gce_quota_growth_per_second", Labels: quota,
			Help: "Usage trend of a regional GCE quota over the last week of runs (GB a day). No series until there are three samples over three hours."},
		{Name: "reclaim_gce_quota_runs_out_timestamp_seconds", Labels: quota,
			Help: "Unix time a regional GCE quota reaches its limit at the current growth. No series while usage is flat or shrinking."},
		{Name: "reclaim_ecr_repository_images", Labels: repo,
			Help: "Images in an ECR repository (manifests and indexes, as ECR counts them against the limit), as listed by the last run."},
		{Name: "reclaim_ecr_repository_image_limit", Labels: repo,
			Help: "The image limit of an ECR repository, from the policy that applies to it. No series for repositories no policy covers."},
		{Name: "reclaim_ecr_repository_images_after_plan", Labels: repo,
			Help: "Images an ECR repository would hold after the last run's planned deletions."},
		{Name: "reclaim_ecr_repository_plan_deletes", Labels: repo,
			Help: "Images of an ECR repository the last run's plan deletes now (not counting those waiting for their grace period or held)."},
	}
)

// Gauge names the tests look at.
const (
	quotaLimit     = "reclaim_gce_quota_limit"
	quotaUsage     = "reclaim_gce_quota_usage"
	quotaUsedRatio = "reclaim_gce_quota_used_ratio"
	quotaPlanFrees = "reclaim_gce_quota_plan_frees_bytes"
	orphanDisksGB  = "reclaim_gce_orphan_disks_bytes"
	finishedPVCsGB = "reclaim_gce_finished_workflow_pvcs_bytes"
	growthPerDay   = "reclaim_gce_quota_growth_per_second"
	runsOut        = "reclaim_gce_quota_runs_out_timestamp_seconds"
)

func newTestMetrics(reg prometheus.Registerer) *Metrics {
	return NewMetrics(reg, testKinds, testGauges)
}

// gauge returns m's declared gauge name.
func (m *Metrics) gauge(t *testing.T, name string) *gaugeSet {
	t.Helper()
	g, ok := m.gauges[name]
	if !ok {
		t.Fatalf("gauge %s not declared", name)
	}
	return g
}

// g is one sample of the gauge name.
func g(name string, value float64, labels ...string) layout.Gauge {
	return layout.Gauge{Name: name, Labels: labels, Value: value}
}

// run1 is an apply run: one known SSD quota, one unknown disks quota, one
// incomplete cluster, two deletes (one failed).
func run1() *report.Report {
	disks := []string{"proj-a", "europe-west1", "DISKS_TOTAL_GB"}
	ssd := []string{"proj-a", "europe-west1", "SSD_TOTAL_GB"}
	p := &engine.Plan{
		Version:     engine.SchemaVersion,
		GeneratedAt: t0,
		Sources: []engine.Source{
			{Kind: "cluster", Name: "argo-prod", Complete: false, Problems: []string{"list pods: forbidden"}},
			{Kind: "gce-project", Name: "proj-a", Complete: true, Items: 4},
		},
		Decisions: []engine.Decision{
			{Kind: "gce-disk", ID: "projects/proj-a/zones/europe-west1-b/disks/pvc-1", Name: "pvc-1", Frees: amount.Free(100, gcepd.GB), Action: engine.Delete},
			{Kind: "gce-disk", ID: "projects/proj-a/zones/europe-west1-b/disks/pvc-2", Name: "pvc-2", Frees: amount.Free(50, gcepd.GB), Action: engine.Delete},
			{Kind: "gce-disk", ID: "projects/proj-a/zones/europe-west1-b/disks/pvc-3", Name: "pvc-3", Frees: amount.Free(200, gcepd.GB), Action: engine.Mark, Held: true},
			{Kind: "gce-disk", ID: "projects/proj-a/zones/europe-west1-b/disks/boot", Name: "boot", Frees: amount.Free(10, gcepd.GB), Action: engine.Keep},
			{Kind: "k8s-pvc", ID: "argo-prod/wf/pvc-x", Name: "pvc-x", Frees: amount.Free(20, gcepd.GB), Action: engine.Report},
		},
		// The DISKS quota is unknown: only the GB the listed disks and PVCs
		// hold, no limit, usage or ratio.
		Gauges: []layout.Gauge{
			g(quotaPlanFrees, 0, disks...), g(orphanDisksGB, 0, disks...), g(finishedPVCsGB, 0, disks...),
			g(quotaPlanFrees, 150, ssd...), g(orphanDisksGB, 350, ssd...), g(finishedPVCsGB, 20, ssd...),
			g(quotaLimit, 2000, ssd...), g(quotaUsage, 1500, ssd...), g(quotaUsedRatio, 0.75, ssd...),
		},
		BreakerTripped: false,
		Incomplete:     true,
	}
	o := &engine.Outcome{
		Results: []engine.Result{
			{Kind: "gce-disk", ID: "projects/proj-a/zones/europe-west1-b/disks/pvc-1", Result: "deleted", SizeGB: 100},
			{Kind: "gce-disk", ID: "projects/proj-a/zones/europe-west1-b/disks/pvc-2", Result: "failed", Error: "boom", SizeGB: 50},
		},
		Deleted: 1, Failed: 1, FreedGB: 100,
	}
	return report.New(p, o, true)
}

// run2 is a clean dry run: no quotas read, only kept disks.
func run2() *report.Report {
	ssd := []string{"proj-a", "europe-west1", "SSD_TOTAL_GB"}
	p := &engine.Plan{
		Version:     engine.SchemaVersion,
		GeneratedAt: t0.Add(time.Hour),
		Sources: []engine.Source{
			{Kind: "gce-project", Name: "proj-a", Complete: true, Items: 1},
		},
		Decisions: []engine.Decision{
			{Kind: "gce-disk", ID: "projects/proj-a/zones/europe-west1-b/disks/boot", Name: "boot", Frees: amount.Free(10, gcepd.GB), Action: engine.Keep},
		},
		// The SSD quota is unknown now.
		Gauges: []layout.Gauge{g(quotaPlanFrees, 0, ssd...), g(orphanDisksGB, 0, ssd...), g(finishedPVCsGB, 0, ssd...)},
	}
	return report.New(p, nil, false)
}

func TestObserveExactOutput(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := newTestMetrics(reg)
	r := run1()
	if r.ExitCode != report.ExitFailed {
		t.Fatalf("exit code %d, want %d", r.ExitCode, report.ExitFailed)
	}
	for i := range r.Plan.Sources {
		if r.Plan.Sources[i].Name == "argo-prod" {
			r.Plan.Sources[i].ReadAt = t0.Add(-10 * time.Minute) // its record's read time
		}
	}
	m.Observe(r, 90*time.Second, t0)

	want := `
# HELP reclaim_source_read_timestamp_seconds Unix time a cluster's view of the last run was read: its record's read time when read from an agent's record (time() minus it is the record's age), the read's start otherwise.
# TYPE reclaim_source_read_timestamp_seconds gauge
reclaim_source_read_timestamp_seconds{kind="cluster",name="argo-prod"} 1.7723658e+09
# HELP reclaim_gce_quota_limit Limit of a regional GCE quota (GB for the disk quotas), as read by the last run. No series while the quota is unknown.
# TYPE reclaim_gce_quota_limit gauge
reclaim_gce_quota_limit{metric="SSD_TOTAL_GB",project="proj-a",region="europe-west1"} 2000
# HELP reclaim_gce_quota_usage Usage of a regional GCE quota (GB for the disk quotas), as read by the last run. No series while the quota is unknown.
# TYPE reclaim_gce_quota_usage gauge
reclaim_gce_quota_usage{metric="SSD_TOTAL_GB",project="proj-a",region="europe-west1"} 1500
# HELP reclaim_gce_quota_used_ratio Usage divided by limit of a regional GCE quota (1 is full), as read by the last run. No series while the quota is unknown or its limit is 0.
# TYPE reclaim_gce_quota_used_ratio gauge
reclaim_gce_quota_used_ratio{metric="SSD_TOTAL_GB",project="proj-a",region="europe-west1"} 0.75
# HELP reclaim_gce_quota_plan_frees_bytes GB of a regional GCE quota that the last run's planned deletions free (disks, and PVCs whose disks go with them).
# TYPE reclaim_gce_quota_plan_frees_bytes gauge
reclaim_gce_quota_plan_frees_bytes{metric="DISKS_TOTAL_GB",project="proj-a",region="europe-west1"} 0
reclaim_gce_quota_plan_frees_bytes{metric="SSD_TOTAL_GB",project="proj-a",region="europe-west1"} 150
# HELP reclaim_gce_orphan_disks_bytes GB of a regional GCE quota held by orphan disks, due for deletion or not yet, in the last run.
# TYPE reclaim_gce_orphan_disks_bytes gauge
reclaim_gce_orphan_disks_bytes{metric="DISKS_TOTAL_GB",project="proj-a",region="europe-west1"} 0
reclaim_gce_orphan_disks_bytes{metric="SSD_TOTAL_GB",project="proj-a",region="europe-west1"} 350
# HELP reclaim_gce_finished_workflow_pvcs_bytes GB of a regional GCE quota held by PVCs of finished Argo Workflows that no running pod mounts, in the last run.
# TYPE reclaim_gce_finished_workflow_pvcs_bytes gauge
reclaim_gce_finished_workflow_pvcs_bytes{metric="DISKS_TOTAL_GB",project="proj-a",region="europe-west1"} 0
reclaim_gce_finished_workflow_pvcs_bytes{metric="SSD_TOTAL_GB",project="proj-a",region="europe-west1"} 20
# HELP reclaim_plan_decisions Decisions of the last run's plan by resource kind and action (keep, report, mark, delete). Label sets with no decision have no series.
# TYPE reclaim_plan_decisions gauge
reclaim_plan_decisions{action="delete",kind="gce-disk"} 2
reclaim_plan_decisions{action="keep",kind="gce-disk"} 1
reclaim_plan_decisions{action="mark",kind="gce-disk"} 1
reclaim_plan_decisions{action="report",kind="k8s-pvc"} 1
# HELP reclaim_plan_held Deletions that were due but held back in the last run's plan (caps, breaker, incomplete sources), by resource kind.
# TYPE reclaim_plan_held gauge
reclaim_plan_held{kind="ecr-image"} 0
reclaim_plan_held{kind="gce-disk"} 1
reclaim_plan_held{kind="k8s-pvc"} 0
# HELP reclaim_plan_breaker_tripped 1 if the last run's plan tripped the circuit breaker (too many resources due at once), 0 if not.
# TYPE reclaim_plan_breaker_tripped gauge
reclaim_plan_breaker_tripped 0
# HELP reclaim_run_incomplete_sources Sources the last run could not read completely.
# TYPE reclaim_run_incomplete_sources gauge
reclaim_run_incomplete_sources 1
# HELP reclaim_source_complete 1 if a source (a cluster, a GCE project, an ECR registry, an EC2 network, a manifest directory...) was read completely in the last run, 0 if not.
# TYPE reclaim_source_complete gauge
reclaim_source_complete{kind="cluster",name="argo-prod"} 0
reclaim_source_complete{kind="gce-project",name="proj-a"} 1
# HELP reclaim_apply_deletes_total Deletes attempted by apply, by resource kind and result (deleted, already-gone, skipped, failed, deferred, not-attempted).
# TYPE reclaim_apply_deletes_total counter
reclaim_apply_deletes_total{kind="ecr-image",result="already-gone"} 0
reclaim_apply_deletes_total{kind="ecr-image",result="deferred"} 0
reclaim_apply_deletes_total{kind="ecr-image",result="deleted"} 0
reclaim_apply_deletes_total{kind="ecr-image",result="failed"} 0
reclaim_apply_deletes_total{kind="ecr-image",result="not-attempted"} 0
reclaim_apply_deletes_total{kind="ecr-image",result="skipped"} 0
reclaim_apply_deletes_total{kind="gce-disk",result="already-gone"} 0
reclaim_apply_deletes_total{kind="gce-disk",result="deferred"} 0
reclaim_apply_deletes_total{kind="gce-disk",result="deleted"} 1
reclaim_apply_deletes_total{kind="gce-disk",result="failed"} 1
reclaim_apply_deletes_total{kind="gce-disk",result="not-attempted"} 0
reclaim_apply_deletes_total{kind="gce-disk",result="skipped"} 0
reclaim_apply_deletes_total{kind="k8s-pvc",result="already-gone"} 0
reclaim_apply_deletes_total{kind="k8s-pvc",result="deferred"} 0
reclaim_apply_deletes_total{kind="k8s-pvc",result="deleted"} 0
reclaim_apply_deletes_total{kind="k8s-pvc",result="failed"} 0
reclaim_apply_deletes_total{kind="k8s-pvc",result="not-attempted"} 0
reclaim_apply_deletes_total{kind="k8s-pvc",result="skipped"} 0
# HELP reclaim_apply_freed_bytes_total Bytes freed by apply, by resource kind: the disks (GCE's GB are GiB) and images (as ECR reports their sizes) deleted or found already gone.
# TYPE reclaim_apply_freed_bytes_total counter
reclaim_apply_freed_bytes_total{kind="ecr-image"} 0
reclaim_apply_freed_bytes_total{kind="gce-disk"} 1.073741824e+11
reclaim_apply_freed_bytes_total{kind="k8s-pvc"} 0
# HELP reclaim_run_last_success_timestamp_seconds Unix time the last run with exit code 0 finished, as remembered in the state store; 0 if none did.
# TYPE reclaim_run_last_success_timestamp_seconds gauge
reclaim_run_last_success_timestamp_seconds 0
# HELP reclaim_run_last_run_timestamp_seconds Unix time the last run finished, whatever its exit code.
# TYPE reclaim_run_last_run_timestamp_seconds gauge
reclaim_run_last_run_timestamp_seconds 1.7723664e+09
# HELP reclaim_run_duration_seconds How long the last run took.
# TYPE reclaim_run_duration_seconds gauge
reclaim_run_duration_seconds 90
# HELP reclaim_runs_total Runs by mode (dry-run, apply) and exit code (0 ok, 1 error, 3 incomplete sources, 4 failed deletes, 5 a notify target delivered nothing).
# TYPE reclaim_runs_total counter
reclaim_runs_total{exit_code="4",mode="apply"} 1
`
	// No metric names: every metric the registry has must be listed above,
	// so a metric added without updating this test (and docs/operations.md) fails it.
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func TestQuotaGauges(t *testing.T) {
	m := newTestMetrics(prometheus.NewRegistry())
	m.Observe(run1(), time.Second, t0)

	if got := testutil.ToFloat64(m.gauge(t, quotaLimit).vec.WithLabelValues("proj-a", "europe-west1", "SSD_TOTAL_GB")); got != 2000 {
		t.Errorf("limit %v", got)
	}
	if got := testutil.ToFloat64(m.gauge(t, quotaUsedRatio).vec.WithLabelValues("proj-a", "europe-west1", "SSD_TOTAL_GB")); got != 0.75 {
		t.Errorf("used ratio %v", got)
	}
	// Unknown quota: no limit, usage or ratio series at all.
	for _, name := range []string{quotaLimit, quotaUsage, quotaUsedRatio} {
		if n := testutil.CollectAndCount(m.gauge(t, name).vec); n != 1 {
			t.Errorf("%s: %d series, want only the known quota", name, n)
		}
	}

	// Run 2: the SSD quota became unknown. Its quota series vanish instead of
	// keeping run 1's value or reading 0; the DISKS label set, gone from the
	// plan, vanishes from the GB gauges.
	m.Observe(run2(), time.Second, t0.Add(time.Hour))
	for _, name := range []string{quotaLimit, quotaUsage, quotaUsedRatio} {
		if n := testutil.CollectAndCount(m.gauge(t, name).vec); n != 0 {
			t.Errorf("%s after quota became unknown: %d series, want 0", name, n)
		}
	}
	want := `
# HELP reclaim_gce_orphan_disks_bytes GB of a regional GCE quota held by orphan disks, due for deletion or not yet, in the last run.
# TYPE reclaim_gce_orphan_disks_bytes gauge
reclaim_gce_orphan_disks_bytes{metric="SSD_TOTAL_GB",project="proj-a",region="europe-west1"} 0
`
	if err := testutil.CollectAndCompare(m.gauge(t, orphanDisksGB).vec, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// A declared gauge with no sample in the plan has no series, but stays
// registered with its help.
func TestDeclaredGaugeWithoutSamples(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := newTestMetrics(reg)
	m.Observe(run1(), time.Second, t0)
	for _, d := range testGauges {
		gs := m.gauge(t, d.Name)
		if d.Name == quotaLimit || d.Name == quotaUsage || d.Name == quotaUsedRatio ||
			d.Name == quotaPlanFrees || d.Name == orphanDisksGB || d.Name == finishedPVCsGB {
			continue
		}
		if n := testutil.CollectAndCount(gs.vec); n != 0 {
			t.Errorf("%s: %d series without a sample, want 0", d.Name, n)
		}
		if got := describe(t, gs.vec); !strings.Contains(got, `fqName: "`+d.Name+`"`) || !strings.Contains(got, `help: "`+d.Help+`"`) {
			t.Errorf("%s: described as %s, want its declared help", d.Name, got)
		}
	}
	// Samples of a gauge nobody declared, or with the wrong labels, are ignored.
	r := run2()
	r.Plan.Gauges = append(r.Plan.Gauges, g("reclaim_undeclared", 1, "x"), g(quotaLimit, 1, "too", "few"))
	m.Observe(r, time.Second, t0.Add(time.Hour))
	if n := testutil.CollectAndCount(m.gauge(t, quotaLimit).vec); n != 0 {
		t.Errorf("limit with a malformed sample: %d series, want 0", n)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(""), "reclaim_undeclared"); err != nil {
		t.Error(err)
	}
}

func describe(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	ch := make(chan *prometheus.Desc, 1)
	go func() { c.Describe(ch); close(ch) }()
	var descs []string
	for d := range ch {
		descs = append(descs, d.String())
	}
	if len(descs) != 1 {
		t.Fatalf("%d descriptions, want 1: %v", len(descs), descs)
	}
	return descs[0]
}

func TestQuotaZeroLimitHasNoRatio(t *testing.T) {
	m := newTestMetrics(prometheus.NewRegistry())
	r := run2()
	// A known quota with limit 0: limit and usage, but no ratio.
	l := []string{"p", "r", "SSD_TOTAL_GB"}
	r.Plan.Gauges = []layout.Gauge{g(quotaPlanFrees, 0, l...), g(orphanDisksGB, 0, l...), g(finishedPVCsGB, 0, l...),
		g(quotaLimit, 0, l...), g(quotaUsage, 0, l...)}
	m.Observe(r, time.Second, t0)
	if n := testutil.CollectAndCount(m.gauge(t, quotaUsedRatio).vec); n != 0 {
		t.Errorf("ratio with limit 0: %d series, want 0", n)
	}
	if n := testutil.CollectAndCount(m.gauge(t, quotaLimit).vec); n != 1 {
		t.Errorf("limit 0 is a known limit: %d series, want 1", n)
	}
}

func TestDecisionsResetBetweenRuns(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newTestMetrics(reg)
	m.Observe(run1(), time.Second, t0)
	if got := testutil.ToFloat64(m.decisions.vec.WithLabelValues("gce-disk", "delete")); got != 2 {
		t.Fatalf("run 1 delete decisions %v", got)
	}
	m.Observe(run2(), time.Second, t0.Add(time.Hour))

	want := `
# HELP reclaim_plan_decisions Decisions of the last run's plan by resource kind and action (keep, report, mark, delete). Label sets with no decision have no series.
# TYPE reclaim_plan_decisions gauge
reclaim_plan_decisions{action="keep",kind="gce-disk"} 1
# HELP reclaim_plan_held Deletions that were due but held back in the last run's plan (caps, breaker, incomplete sources), by resource kind.
# TYPE reclaim_plan_held gauge
reclaim_plan_held{kind="ecr-image"} 0
reclaim_plan_held{kind="gce-disk"} 0
reclaim_plan_held{kind="k8s-pvc"} 0
# HELP reclaim_plan_breaker_tripped 1 if the last run's plan tripped the circuit breaker (too many resources due at once), 0 if not.
# TYPE reclaim_plan_breaker_tripped gauge
reclaim_plan_breaker_tripped 0
# HELP reclaim_run_incomplete_sources Sources the last run could not read completely.
# TYPE reclaim_run_incomplete_sources gauge
reclaim_run_incomplete_sources 0
# HELP reclaim_source_complete 1 if a source (a cluster, a GCE project, an ECR registry, an EC2 network, a manifest directory...) was read completely in the last run, 0 if not.
# TYPE reclaim_source_complete gauge
reclaim_source_complete{kind="gce-project",name="proj-a"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"reclaim_plan_decisions", "reclaim_plan_held", "reclaim_plan_breaker_tripped",
		"reclaim_run_incomplete_sources", "reclaim_source_complete"); err != nil {
		t.Fatal(err)
	}
}

func TestLastSuccessOnlyOnExitZero(t *testing.T) {
	m := newTestMetrics(prometheus.NewRegistry())
	ts := func(t time.Time) float64 { return float64(t.Unix()) }

	m.Observe(run1(), time.Second, t0) // exit 4
	if got := testutil.ToFloat64(m.lastSuccess); got != 0 {
		t.Errorf("last success after a failed run: %v, want 0", got)
	}
	if got := testutil.ToFloat64(m.lastRun); got != ts(t0) {
		t.Errorf("last run %v, want %v", got, ts(t0))
	}

	ok := t0.Add(time.Hour)
	m.Observe(run2(), 2500*time.Millisecond, ok) // exit 0
	if got := testutil.ToFloat64(m.lastSuccess); got != ts(ok) {
		t.Errorf("last success %v, want %v", got, ts(ok))
	}
	if got := testutil.ToFloat64(m.duration); got != 2.5 {
		t.Errorf("duration %v, want 2.5", got)
	}

	later := ok.Add(time.Hour)
	m.Observe(&report.Report{Mode: "apply", ExitCode: report.ExitError}, time.Second, later) // failed before planning
	if got := testutil.ToFloat64(m.lastSuccess); got != ts(ok) {
		t.Errorf("last success moved on a failed run: %v, want %v", got, ts(ok))
	}
	if got := testutil.ToFloat64(m.lastRun); got != ts(later) {
		t.Errorf("last run %v, want %v", got, ts(later))
	}
	// A run without a plan leaves the last plan's gauges alone.
	if got := testutil.ToFloat64(m.decisions.vec.WithLabelValues("gce-disk", "keep")); got != 1 {
		t.Errorf("kept disks after a run without plan: %v, want run 2's 1", got)
	}
}

// A CronJob process sees only its own run: a failed run exports the last
// success the state store remembers, not 0.
func TestLastSuccessFromStateStore(t *testing.T) {
	m := newTestMetrics(prometheus.NewRegistry())
	remembered := t0.Add(-3 * time.Hour)
	r := run1() // exit 4
	r.LastSuccess = remembered
	m.Observe(r, time.Second, t0)
	if got := testutil.ToFloat64(m.lastSuccess); got != float64(remembered.Unix()) {
		t.Fatalf("last success %v, want the remembered %v", got, remembered.Unix())
	}
}

func TestCountersAccumulate(t *testing.T) {
	m := newTestMetrics(prometheus.NewRegistry())
	m.Observe(run1(), time.Second, t0)
	m.Observe(run2(), time.Second, t0.Add(time.Hour)) // dry run: no outcome
	m.Observe(run1(), time.Second, t0.Add(2*time.Hour))

	for _, c := range []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"deleted", m.deletes.WithLabelValues("gce-disk", "deleted"), 2},
		{"failed", m.deletes.WithLabelValues("gce-disk", "failed"), 2},
		{"pvc failed", m.deletes.WithLabelValues("k8s-pvc", "failed"), 0},
		{"freed", m.freedBytes.WithLabelValues("gce-disk"), 200 * amount.GiB},
		{"pvc freed", m.freedBytes.WithLabelValues("k8s-pvc"), 0},
		{"apply runs exit 4", m.runs.WithLabelValues("apply", "4"), 2},
		{"dry runs exit 0", m.runs.WithLabelValues("dry-run", "0"), 1},
	} {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestWriteTextfile(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newTestMetrics(reg)
	m.Observe(run1(), time.Second, t0)

	dir := t.TempDir()
	path := filepath.Join(dir, "reclaim.prom")
	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteTextfile(path, reg); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("textfile does not parse: %v", err)
	}
	if got := gaugeValue(t, mfs["reclaim_gce_quota_limit"]); got != 2000 {
		t.Errorf("quota limit in textfile: %v", got)
	}
	if got := counterValue(mfs["reclaim_apply_freed_bytes_total"], "kind", "gce-disk"); got != 100*amount.GiB {
		t.Errorf("freed bytes in textfile: %v", got)
	}
	if len(mfs) != 17 {
		t.Errorf("textfile has %d metric families, want 17", len(mfs))
	}

	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("textfile mode %v, want 0644", st.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("temporary file left behind: %v", entries)
	}
}

func TestWriteTextfileMissingDir(t *testing.T) {
	reg := prometheus.NewRegistry()
	newTestMetrics(reg)
	if err := WriteTextfile(filepath.Join(t.TempDir(), "nope", "reclaim.prom"), reg); err == nil {
		t.Fatal("no error for a missing directory")
	}
}

func gaugeValue(t *testing.T, mf *dto.MetricFamily) float64 {
	t.Helper()
	if mf == nil || mf.GetType() != dto.MetricType_GAUGE || len(mf.GetMetric()) != 1 {
		t.Fatalf("want one gauge, got %v", mf)
	}
	return mf.GetMetric()[0].GetGauge().GetValue()
}

func TestPush(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newTestMetrics(reg)
	m.Observe(run1(), time.Second, t0)

	type request struct {
		method, path string
		mfs          map[string]*dto.MetricFamily
		err          error
	}
	got := make(chan request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := request{method: r.Method, path: r.URL.Path, mfs: map[string]*dto.MetricFamily{}}
		dec := expfmt.NewDecoder(r.Body, expfmt.ResponseFormat(r.Header))
		for {
			mf := &dto.MetricFamily{}
			if err := dec.Decode(mf); err != nil {
				if err != io.EOF {
					req.err = err
				}
				break
			}
			req.mfs[mf.GetName()] = mf
		}
		got <- req
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	if err := Push(context.Background(), srv.URL, "reclaim", reg); err != nil {
		t.Fatal(err)
	}
	req := <-got
	if req.err != nil {
		t.Fatalf("decode pushed body: %v", req.err)
	}
	if req.method != http.MethodPut {
		t.Errorf("method %s, want PUT", req.method)
	}
	if req.path != "/metrics/job/reclaim" {
		t.Errorf("path %s, want /metrics/job/reclaim", req.path)
	}
	if got := gaugeValue(t, req.mfs["reclaim_run_incomplete_sources"]); got != 1 {
		t.Errorf("pushed incomplete sources %v", got)
	}
	if len(req.mfs) != 17 {
		t.Errorf("pushed %d metric families, want 17", len(req.mfs))
	}
}

func TestPushError(t *testing.T) {
	reg := prometheus.NewRegistry()
	newTestMetrics(reg)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusBadRequest)
	}))
	defer srv.Close()
	if err := Push(context.Background(), srv.URL, "reclaim", reg); err == nil {
		t.Fatal("no error for a 400 from the Pushgateway")
	}
}

func TestQuotaProjectionGauges(t *testing.T) {
	m := newTestMetrics(prometheus.NewRegistry())
	full := t0.Add(7 * 24 * time.Hour)
	ssd := []string{"p", "r", "SSD_TOTAL_GB"}
	disks := []string{"p", "r", "DISKS_TOTAL_GB"}
	// SSD grows and runs out; DISKS is known but flat: no growth, no runs-out.
	p := &engine.Plan{Gauges: []layout.Gauge{
		g(quotaPlanFrees, 0, ssd...), g(orphanDisksGB, 0, ssd...), g(finishedPVCsGB, 0, ssd...),
		g(growthPerDay, 40, ssd...), g(runsOut, float64(full.Unix()), ssd...),
		g(quotaLimit, 1500, ssd...), g(quotaUsage, 1220, ssd...), g(quotaUsedRatio, 1220.0/1500, ssd...),
		g(quotaPlanFrees, 0, disks...), g(orphanDisksGB, 0, disks...), g(finishedPVCsGB, 0, disks...),
		g(quotaLimit, 4096, disks...), g(quotaUsage, 100, disks...), g(quotaUsedRatio, 100.0/4096, disks...),
	}}
	m.Observe(report.New(p, nil, false), time.Second, t0)
	if got := testutil.ToFloat64(m.gauge(t, runsOut).vec.WithLabelValues("p", "r", "SSD_TOTAL_GB")); got != float64(full.Unix()) {
		t.Fatalf("runs out %v", got)
	}
	if got := testutil.ToFloat64(m.gauge(t, growthPerDay).vec.WithLabelValues("p", "r", "SSD_TOTAL_GB")); got != 40 {
		t.Fatalf("growth %v", got)
	}
	if n := testutil.CollectAndCount(m.gauge(t, runsOut).vec); n != 1 {
		t.Fatalf("%d runs-out series; a quota that is not growing must have none", n)
	}
}

func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(BuildInfo("v1.2.3", "0123abcd"))
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetName() != "reclaim_build_info" || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("%v %v", mfs, err)
	}
	m := mfs[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if m.GetGauge().GetValue() != 1 || labels["version"] != "v1.2.3" || !strings.HasPrefix(labels["goversion"], "go") {
		t.Fatalf("reclaim_build_info %v = %v", labels, m.GetGauge().GetValue())
	}
	if _, ok := labels["revision"]; !ok {
		t.Fatal("no revision label")
	}
}

// counterValue is the counter of mf whose label name has value; -1 if none.
func counterValue(mf *dto.MetricFamily, name, value string) float64 {
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == name && l.GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

// The plan's waste and savings a month, per kind, in the plan's currency;
// no series when nothing is priced.
func TestWasteAndSavings(t *testing.T) {
	m := newTestMetrics(prometheus.NewRegistry())
	p := &engine.Plan{GeneratedAt: t0, Currency: "EUR", Decisions: []engine.Decision{
		{Kind: "gce-disk", ID: "a", Action: engine.Delete, Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 100, Unit: gcepd.GB}}, Cost: 10}},
		{Kind: "gce-disk", ID: "b", Action: engine.Mark, Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 50, Unit: gcepd.GB}}, Cost: 5}},
		{Kind: "k8s-pvc", ID: "c", Action: engine.Report, Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 20, Unit: gcepd.GB}}, Cost: 2}},
		{Kind: "gce-disk", ID: "d", Action: engine.Keep, Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 10, Unit: gcepd.GB}}, Cost: 1}},
	}}
	m.Observe(report.New(p, nil, false), time.Second, t0)
	for _, c := range []struct {
		g     *gaugeSet
		kind  string
		want  float64
		label string
	}{
		{m.waste, "gce-disk", 15, "waste"}, {m.savings, "gce-disk", 10, "savings"},
		{m.waste, "k8s-pvc", 2, "pvc waste"}, {m.savings, "k8s-pvc", 0, "pvc savings"},
	} {
		if got := testutil.ToFloat64(c.g.vec.WithLabelValues(c.kind, "EUR")); got != c.want {
			t.Errorf("%s: %v, want %v", c.label, got, c.want)
		}
	}
	p.Currency = ""
	m.Observe(report.New(p, nil, false), time.Second, t0)
	if n := testutil.CollectAndCount(m.waste.vec); n != 0 {
		t.Errorf("%d waste series without prices", n)
	}
}

// With owners, the waste a month per owner ("" for none); no series without.
func TestWastePerOwner(t *testing.T) {
	m := newTestMetrics(prometheus.NewRegistry())
	p := &engine.Plan{GeneratedAt: t0, Currency: "USD", Decisions: []engine.Decision{
		{Kind: "gce-disk", ID: "a", Action: engine.Delete, Owner: "etl", Frees: amount.Frees{Cost: 10}},
		{Kind: "gce-disk", ID: "b", Action: engine.Mark, Owner: "etl", Frees: amount.Frees{Cost: 5}},
		{Kind: "gce-disk", ID: "c", Action: engine.Mark, Frees: amount.Frees{Cost: 2}},
	}}
	m.Observe(report.New(p, nil, false), time.Second, t0)
	if got := testutil.ToFloat64(m.ownerWaste.vec.WithLabelValues("etl", "USD")); got != 15 {
		t.Errorf("etl: %v, want 15", got)
	}
	if got := testutil.ToFloat64(m.ownerWaste.vec.WithLabelValues("", "USD")); got != 2 {
		t.Errorf("no owner: %v, want 2", got)
	}
	for i := range p.Decisions {
		p.Decisions[i].Owner = ""
	}
	m.Observe(report.New(p, nil, false), time.Second, t0)
	if n := testutil.CollectAndCount(m.ownerWaste.vec); n != 0 {
		t.Errorf("%d owner series without owners", n)
	}
}
