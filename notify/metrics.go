package notify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/common/expfmt"

	"reclaim.dev/reclaim/reconcile"
)

// Results of one attempted delete, as reconcile.Result.Result spells them.
// The apply counters start at 0 for each of these, so increase() and rate()
// see the first delete, failure, ... of a kind.
var applyResults = []string{"deleted", "already-gone", "skipped", "failed", "not-attempted"}

var kinds = []string{reconcile.KindDisk, reconcile.KindPVC, reconcile.KindImage}

// Metrics are the Prometheus metrics of reclaim runs. Labels are bounded: kinds,
// actions, results, modes and exit codes are fixed sets; project, region,
// quota metric, cluster and source names come from the configuration. No label
// ever holds a disk or PVC name or id.
//
// The gauges describe the last observed run. The counters accumulate over the
// runs observed by this process only: a process that runs once and exits (a
// CronJob writing a textfile or pushing) exports one run's counts.
type Metrics struct {
	mu sync.Mutex

	quotaLimit     *gaugeSet
	quotaUsage     *gaugeSet
	quotaUsedRatio *gaugeSet
	quotaPlanFrees *gaugeSet
	orphanDisksGB  *gaugeSet
	finishedPVCsGB *gaugeSet
	growthPerDay   *gaugeSet
	runsOut        *gaugeSet
	repoImages     *gaugeSet
	repoLimit      *gaugeSet
	repoAfter      *gaugeSet
	repoDeletes    *gaugeSet
	decisions      *gaugeSet
	held           *gaugeSet
	sourceComplete *gaugeSet
	breakerTripped prometheus.Gauge
	incomplete     prometheus.Gauge
	deletes        *prometheus.CounterVec
	failedDeletes  *prometheus.CounterVec
	freedGB        prometheus.Counter
	freedBytes     prometheus.Counter
	lastSuccess    prometheus.Gauge
	lastRun        prometheus.Gauge
	duration       prometheus.Gauge
	runs           *prometheus.CounterVec
}

// NewMetrics makes the metrics and registers them with reg. It panics if one
// is already registered, like prometheus.MustRegister.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	quota := []string{"project", "region", "metric"}
	repo := []string{"registry", "repository"}
	m := &Metrics{
		quotaLimit: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_gce_quota_limit",
			Help: "Limit of a regional GCE quota (GB for the disk quotas), as read by the last run. No series while the quota is unknown."}, quota),
		quotaUsage: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_gce_quota_usage",
			Help: "Usage of a regional GCE quota (GB for the disk quotas), as read by the last run. No series while the quota is unknown."}, quota),
		quotaUsedRatio: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_gce_quota_used_ratio",
			Help: "Usage divided by limit of a regional GCE quota (1 is full), as read by the last run. No series while the quota is unknown or its limit is 0."}, quota),
		quotaPlanFrees: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_gce_quota_plan_frees_gigabytes",
			Help: "GB of a regional GCE quota that the last run's planned deletions free (disks, and PVCs whose disks go with them)."}, quota),
		orphanDisksGB: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_gce_orphan_disks_gigabytes",
			Help: "GB of a regional GCE quota held by orphan disks, due for deletion or not yet, in the last run."}, quota),
		finishedPVCsGB: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_gce_finished_workflow_pvcs_gigabytes",
			Help: "GB of a regional GCE quota held by PVCs of finished Argo Workflows that no running pod mounts, in the last run."}, quota),
		growthPerDay: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_gce_quota_growth_gigabytes_per_day",
			Help: "Usage trend of a regional GCE quota over the last week of runs (GB a day). No series until there are three samples over three hours."}, quota),
		runsOut: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_gce_quota_runs_out_timestamp_seconds",
			Help: "Unix time a regional GCE quota reaches its limit at the current growth. No series while usage is flat or shrinking."}, quota),
		repoImages: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_ecr_repository_images",
			Help: "Images in an ECR repository (manifests and indexes, as ECR counts them against the limit), as listed by the last run."}, repo),
		repoLimit: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_ecr_repository_image_limit",
			Help: "The image limit of an ECR repository, from the policy that applies to it. No series for repositories no policy covers."}, repo),
		repoAfter: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_ecr_repository_images_after_plan",
			Help: "Images an ECR repository would hold after the last run's planned deletions."}, repo),
		repoDeletes: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_ecr_repository_plan_deletes",
			Help: "Images of an ECR repository the last run's plan deletes now (not counting those waiting for their grace period or held)."}, repo),
		decisions: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_plan_decisions",
			Help: "Decisions of the last run's plan by resource kind (gce-disk, k8s-pvc) and action (keep, report, mark, delete). Label sets with no decision have no series."}, []string{"kind", "action"}),
		held: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_plan_held",
			Help: "Deletions that were due but held back in the last run's plan (caps, breaker, incomplete sources), by resource kind."}, []string{"kind"}),
		sourceComplete: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_source_complete",
			Help: "1 if a source (kind cluster or gce-project) was read completely in the last run, 0 if not."}, []string{"kind", "name"}),
		breakerTripped: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_plan_breaker_tripped",
			Help: "1 if the last run's plan tripped the circuit breaker (too many resources due at once), 0 if not."}),
		incomplete: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_run_incomplete_sources",
			Help: "Sources (clusters, GCE projects) the last run could not read completely."}),
		deletes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reclaim_apply_deletes_total",
			Help: "Deletes attempted by apply, by resource kind and result (deleted, already-gone, skipped, failed, not-attempted)."}, []string{"kind", "result"}),
		failedDeletes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reclaim_apply_failed_deletes_total",
			Help: "Deletes by apply that failed, by resource kind."}, []string{"kind"}),
		freedGB: prometheus.NewCounter(prometheus.CounterOpts{Name: "reclaim_apply_freed_gigabytes_total",
			Help: "GB freed by apply: the size of resources deleted or found already gone."}),
		freedBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "reclaim_apply_freed_image_bytes_total",
			Help: "Bytes of ECR images deleted (or found already gone) by apply, as ECR reports image sizes."}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_run_last_success_timestamp_seconds",
			Help: "Unix time the last run with exit code 0 finished, as remembered in the state store; 0 if none did."}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_run_last_run_timestamp_seconds",
			Help: "Unix time the last run finished, whatever its exit code."}),
		duration: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_run_duration_seconds",
			Help: "How long the last run took."}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reclaim_runs_total",
			Help: "Runs by mode (dry-run, apply) and exit code (0 ok, 1 error, 3 incomplete sources, 4 failed deletes)."}, []string{"mode", "exit_code"}),
	}
	for _, k := range kinds {
		for _, r := range applyResults {
			m.deletes.WithLabelValues(k, r)
		}
		m.failedDeletes.WithLabelValues(k)
	}
	reg.MustRegister(
		m.quotaLimit.vec, m.quotaUsage.vec, m.quotaUsedRatio.vec, m.quotaPlanFrees.vec, m.orphanDisksGB.vec, m.finishedPVCsGB.vec,
		m.growthPerDay.vec, m.runsOut.vec,
		m.repoImages.vec, m.repoLimit.vec, m.repoAfter.vec, m.repoDeletes.vec,
		m.decisions.vec, m.held.vec, m.breakerTripped,
		m.incomplete, m.sourceComplete.vec,
		m.deletes, m.failedDeletes, m.freedGB, m.freedBytes,
		m.lastSuccess, m.lastRun, m.duration, m.runs,
	)
	return m
}

// Observe records one run that took duration and finished at now. r.Plan may
// be nil (the run failed before planning): then only the run metrics change
// and the plan, quota and source gauges keep the last planned run's values.
// r.Outcome is nil in a dry run.
func (m *Metrics) Observe(r *Report, duration time.Duration, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()

	if p := r.Plan; p != nil {
		m.observePlan(p)
	}
	if o := r.Outcome; o != nil {
		for _, res := range o.Results {
			m.deletes.WithLabelValues(res.Kind, res.Result).Inc()
			if res.Result == "failed" {
				m.failedDeletes.WithLabelValues(res.Kind).Inc()
			}
		}
		if o.FreedGB > 0 {
			m.freedGB.Add(float64(o.FreedGB))
		}
		if o.FreedBytes > 0 {
			m.freedBytes.Add(float64(o.FreedBytes))
		}
	}

	ts := float64(now.UnixNano()) / 1e9
	m.lastRun.Set(ts)
	switch {
	case r.ExitCode == ExitOK:
		m.lastSuccess.Set(ts)
	case !r.LastSuccess.IsZero():
		// A CronJob process knows only its own run; the state store remembers.
		m.lastSuccess.Set(float64(r.LastSuccess.UnixNano()) / 1e9)
	}
	m.duration.Set(duration.Seconds())
	m.runs.WithLabelValues(r.Mode, strconv.Itoa(r.ExitCode)).Inc()
}

func (m *Metrics) observePlan(p *reconcile.Plan) {
	var limit, usage, ratio, frees, orphan, finished, growth, runsOut []sample
	for _, h := range p.Headroom {
		l := []string{h.Project, h.Region, h.Metric}
		// Plan frees, orphan and workflow GB come from the listed disks and
		// PVCs, not from the quota, so they are known even when the quota is not.
		frees = append(frees, sample{l, h.PlanFrees})
		orphan = append(orphan, sample{l, h.OrphanGB})
		finished = append(finished, sample{l, h.FinishedWorkflowGB})
		if !h.Known {
			// No series: 0 would read as plenty of headroom.
			continue
		}
		if h.GrowthPerDay != 0 {
			growth = append(growth, sample{l, h.GrowthPerDay})
		}
		if h.RunsOutAt != nil {
			runsOut = append(runsOut, sample{l, float64(h.RunsOutAt.Unix())})
		}
		limit = append(limit, sample{l, h.Limit})
		usage = append(usage, sample{l, h.Usage})
		if h.Limit > 0 {
			ratio = append(ratio, sample{l, h.Usage / h.Limit})
		}
	}
	m.quotaLimit.replace(limit)
	m.quotaUsage.replace(usage)
	m.quotaUsedRatio.replace(ratio)
	m.quotaPlanFrees.replace(frees)
	m.orphanDisksGB.replace(orphan)
	m.finishedPVCsGB.replace(finished)
	m.growthPerDay.replace(growth)
	m.runsOut.replace(runsOut)

	var images, limits, after, deletes []sample
	for _, r := range p.Repositories {
		l := []string{r.Account + "/" + r.Region, r.Name}
		images = append(images, sample{l, float64(r.Images)})
		after = append(after, sample{l, float64(r.After)})
		deletes = append(deletes, sample{l, float64(r.Delete)})
		if r.Limit > 0 {
			limits = append(limits, sample{l, float64(r.Limit)})
		}
	}
	m.repoImages.replace(images)
	m.repoLimit.replace(limits)
	m.repoAfter.replace(after)
	m.repoDeletes.replace(deletes)

	type kindAction struct{ kind, action string }
	counts := map[kindAction]int{}
	var order []kindAction
	held := map[string]int{}
	for _, k := range kinds {
		held[k] = 0
	}
	heldOrder := append([]string(nil), kinds...)
	for _, d := range p.Decisions {
		ka := kindAction{d.Kind, string(d.Action)}
		if _, ok := counts[ka]; !ok {
			order = append(order, ka)
		}
		counts[ka]++
		if _, ok := held[d.Kind]; !ok {
			heldOrder = append(heldOrder, d.Kind)
			held[d.Kind] = 0
		}
		if d.Held {
			held[d.Kind]++
		}
	}
	dec := make([]sample, 0, len(order))
	for _, ka := range order {
		dec = append(dec, sample{[]string{ka.kind, ka.action}, float64(counts[ka])})
	}
	m.decisions.replace(dec)
	hs := make([]sample, 0, len(heldOrder))
	for _, k := range heldOrder {
		hs = append(hs, sample{[]string{k}, float64(held[k])})
	}
	m.held.replace(hs)
	m.breakerTripped.Set(boolFloat(p.BreakerTripped))

	incomplete := 0
	srcs := make([]sample, 0, len(p.Sources))
	for _, s := range p.Sources {
		if !s.Complete {
			incomplete++
		}
		srcs = append(srcs, sample{[]string{s.Kind, s.Name}, boolFloat(s.Complete)})
	}
	m.sourceComplete.replace(srcs)
	m.incomplete.Set(float64(incomplete))
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

type sample struct {
	labels []string
	value  float64
}

// gaugeSet is a GaugeVec whose series are replaced as a whole each run: label
// sets of the previous run that are absent now are deleted after the new values
// are set, so a scrape in between never sees the vector empty.
type gaugeSet struct {
	vec  *prometheus.GaugeVec
	live map[string][]string
}

func newGaugeSet(opts prometheus.GaugeOpts, labels []string) *gaugeSet {
	return &gaugeSet{vec: prometheus.NewGaugeVec(opts, labels), live: map[string][]string{}}
}

func (g *gaugeSet) replace(samples []sample) {
	next := make(map[string][]string, len(samples))
	for _, s := range samples {
		g.vec.WithLabelValues(s.labels...).Set(s.value)
		next[strings.Join(s.labels, "\xff")] = s.labels
	}
	for k, labels := range g.live {
		if _, ok := next[k]; !ok {
			g.vec.DeleteLabelValues(labels...)
		}
	}
	g.live = next
}

// WriteTextfile writes what g gathers to path in the Prometheus text format, for
// node-exporter's textfile collector (which reads only files named *.prom). It
// writes a temporary file in the same directory and renames it over path, so the
// collector never reads a partial file.
func WriteTextfile(path string, g prometheus.Gatherer) error {
	mfs, err := g.Gather()
	if err != nil {
		return fmt.Errorf("gather metrics: %w", err)
	}
	// A leading dot and a random suffix: the collector ignores the temporary file.
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename this fails harmlessly
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(tmp, mf); err != nil {
			tmp.Close()
			return fmt.Errorf("write metrics textfile %s: %w", tmp.Name(), err)
		}
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write metrics textfile %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write metrics textfile %s: %w", tmp.Name(), err)
	}
	// CreateTemp makes the file 0600; node-exporter may run as another user.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	return nil
}

// Push sends what g gathers to the Pushgateway at url (e.g.
// http://pushgateway:9091) under job, with HTTP PUT: it replaces every metric
// previously pushed for that job. No instance grouping label is set, so each
// run of a CronJob replaces the last one's metrics.
func Push(ctx context.Context, url, job string, g prometheus.Gatherer) error {
	if err := push.New(url, job).Gatherer(g).PushContext(ctx); err != nil {
		return fmt.Errorf("push metrics to %s: %w", url, err)
	}
	return nil
}
