// Package metrics exports Prometheus metrics of reclaim runs: the generic
// ones of every plan and apply, and the gauges kinds declare.
package metrics

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/common/expfmt"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Metrics are the Prometheus metrics of reclaim runs. Labels are bounded: kinds,
// actions, results, modes and exit codes are fixed sets; source names and the
// labels of the kinds' gauges come from the configuration. No label ever holds
// a resource's name or id.
//
// The gauges describe the last observed run. The counters accumulate over the
// runs observed by this process only: a process that runs once and exits (a
// CronJob writing a textfile or pushing) exports one run's counts.
type Metrics struct {
	mu sync.Mutex

	// kinds are the kind names, in the order given; gauges are the kinds'
	// declared gauges by name, and gaugeOrder their declared names.
	kinds      []string
	gauges     map[string]*gaugeSet
	gaugeOrder []string

	decisions      *gaugeSet
	held           *gaugeSet
	waste          *gaugeSet
	ownerWaste     *gaugeSet
	savings        *gaugeSet
	sourceComplete *gaugeSet
	sourceRead     *gaugeSet
	breakerTripped prometheus.Gauge
	incomplete     prometheus.Gauge
	deletes        *prometheus.CounterVec
	freedBytes     *prometheus.CounterVec
	lastSuccess    prometheus.Gauge
	lastRun        prometheus.Gauge
	duration       prometheus.Gauge
	runs           *prometheus.CounterVec
	deliveries     *prometheus.CounterVec
}

// NewMetrics makes the metrics and registers them with reg: the generic ones,
// with the apply counters of each of kinds at 0 for every result, and one
// gauge for each of gauges. It panics if one is already registered (or two
// share a name), like prometheus.MustRegister.
func NewMetrics(reg prometheus.Registerer, kinds []string, gauges []layout.GaugeDef) *Metrics {
	m := &Metrics{
		kinds:  append([]string(nil), kinds...),
		gauges: make(map[string]*gaugeSet, len(gauges)),
		decisions: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_plan_decisions",
			Help: "Decisions of the last run's plan by resource kind and action (keep, report, mark, delete). Label sets with no decision have no series."}, []string{"kind", "action"}),
		waste: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_plan_waste_monthly_cost",
			Help: "What the last run's candidates (due, marked or only reported) cost a month, by resource kind, at the configured prices (prices section)."}, []string{"kind", "currency"}),
		ownerWaste: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_plan_owner_waste_monthly_cost",
			Help: "What the last run's candidates cost a month by owner (notify.ownerLabel and notify.routes; \"\" for none), at the configured prices. No series without owners."}, []string{"owner", "currency"}),
		savings: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_plan_savings_monthly_cost",
			Help: "What the last run's due deletions save a month, by resource kind, at the configured prices."}, []string{"kind", "currency"}),
		held: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_plan_held",
			Help: "Deletions that were due but held back in the last run's plan (caps, breaker, incomplete sources), by resource kind."}, []string{"kind"}),
		sourceComplete: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_source_complete",
			Help: "1 if a source (a cluster, a GCE project, an ECR registry, an EC2 network, a manifest directory...) was read completely in the last run, 0 if not."}, []string{"kind", "name"}),
		sourceRead: newGaugeSet(prometheus.GaugeOpts{Name: "reclaim_source_read_timestamp_seconds",
			Help: "Unix time a cluster's view of the last run was read: its record's read time when read from an agent's record (time() minus it is the record's age), the read's start otherwise."}, []string{"kind", "name"}),
		breakerTripped: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_plan_breaker_tripped",
			Help: "1 if the last run's plan tripped the circuit breaker (too many resources due at once), 0 if not."}),
		incomplete: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_run_incomplete_sources",
			Help: "Sources the last run could not read completely."}),
		deletes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reclaim_apply_deletes_total",
			Help: "Deletes attempted by apply, by resource kind and result (deleted, already-gone, skipped, failed, deferred, not-attempted)."}, []string{"kind", "result"}),
		freedBytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reclaim_apply_freed_bytes_total",
			Help: "Bytes freed by apply, by resource kind: the disks (GCE's GB are GiB) and images (as ECR reports their sizes) deleted or found already gone."}, []string{"kind"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_run_last_success_timestamp_seconds",
			Help: "Unix time the last run with exit code 0 finished, as remembered in the state store; 0 if none did."}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_run_last_run_timestamp_seconds",
			Help: "Unix time the last run finished, whatever its exit code."}),
		duration: prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_run_duration_seconds",
			Help: "How long the last run took."}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reclaim_runs_total",
			Help: "Runs by mode (dry-run, apply) and exit code (0 ok, 1 error, 3 incomplete sources, 4 failed deletes, 5 a notify target delivered nothing)."}, []string{"mode", "exit_code"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reclaim_notify_deliveries_total",
			Help: "Reports delivered to notify targets, by target (its configured name) and result (sent, skipped: nothing to send under its when policy, failed)."}, []string{"target", "result"}),
	}
	for _, k := range m.kinds {
		for _, r := range audit.Results {
			m.deletes.WithLabelValues(k, r)
		}
		m.freedBytes.WithLabelValues(k)
	}
	for _, d := range gauges {
		if _, dup := m.gauges[d.Name]; dup {
			panic(fmt.Sprintf("metrics: gauge %s declared twice", d.Name))
		}
		g := newGaugeSet(prometheus.GaugeOpts{Name: d.Name, Help: d.Help}, d.Labels)
		m.gauges[d.Name] = g
		m.gaugeOrder = append(m.gaugeOrder, d.Name)
		reg.MustRegister(g.vec)
	}
	reg.MustRegister(
		m.decisions.vec, m.held.vec, m.waste.vec, m.ownerWaste.vec, m.savings.vec, m.breakerTripped,
		m.incomplete, m.sourceComplete.vec, m.sourceRead.vec, apiCalls{},
		m.deletes, m.freedBytes,
		m.lastSuccess, m.lastRun, m.duration, m.runs, m.deliveries,
	)
	return m
}

// NotifyTargets starts reclaim_notify_deliveries_total at 0 for every
// target and result, so a rate over it has series before the first failure.
func (m *Metrics) NotifyTargets(targets []string, results []string) {
	for _, t := range targets {
		for _, r := range results {
			m.deliveries.WithLabelValues(t, r)
		}
	}
}

// ObserveDelivery counts one delivery to a notify target with its result.
func (m *Metrics) ObserveDelivery(target, result string) {
	m.deliveries.WithLabelValues(target, result).Inc()
}

// Observe records one run that took duration and finished at now. r.Plan may
// be nil (the run failed before planning): then only the run metrics change
// and the plan, source and kind gauges keep the last planned run's values.
// r.Outcome is nil in a dry run.
//
// Each declared gauge gets exactly the plan's samples of its name: series of
// the last plan with no sample now vanish. Samples of gauges nobody declared,
// or with the wrong number of labels, are ignored.
func (m *Metrics) Observe(r *report.Report, duration time.Duration, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()

	if p := r.Plan; p != nil {
		m.observePlan(p)
	}
	if o := r.Outcome; o != nil {
		for _, res := range o.Results {
			m.deletes.WithLabelValues(res.Kind, res.Result).Inc()
			if res.Result == audit.Deleted || res.Result == audit.AlreadyGone {
				if b := float64(res.SizeGB)*amount.GiB + float64(res.Bytes); b > 0 {
					m.freedBytes.WithLabelValues(res.Kind).Add(b)
				}
			}
		}
		for _, u := range o.Unlisted { // counted, not listed
			m.deletes.WithLabelValues(u.Kind, u.Result).Add(float64(u.Count))
			if b := float64(u.SizeGB)*amount.GiB + float64(u.Bytes); b > 0 {
				m.freedBytes.WithLabelValues(u.Kind).Add(b)
			}
		}
	}

	ts := float64(now.UnixNano()) / 1e9
	m.lastRun.Set(ts)
	switch {
	case r.ExitCode == report.ExitOK:
		m.lastSuccess.Set(ts)
	case !r.LastSuccess.IsZero():
		// A CronJob process knows only its own run; the state store remembers.
		m.lastSuccess.Set(float64(r.LastSuccess.UnixNano()) / 1e9)
	}
	m.duration.Set(duration.Seconds())
	m.runs.WithLabelValues(r.Mode, strconv.Itoa(r.ExitCode)).Inc()
}

func (m *Metrics) observePlan(p *engine.Plan) {
	byName := make(map[string][]sample, len(m.gauges))
	for _, g := range p.Gauges {
		if gs, ok := m.gauges[g.Name]; ok && len(g.Labels) == gs.labels {
			byName[g.Name] = append(byName[g.Name], sample{g.Labels, g.Value})
		}
	}
	for _, name := range m.gaugeOrder {
		m.gauges[name].replace(byName[name])
	}

	type kindAction struct{ kind, action string }
	counts := map[kindAction]int{}
	var order []kindAction
	held := map[string]int{}
	for _, k := range m.kinds {
		held[k] = 0
	}
	heldOrder := append([]string(nil), m.kinds...)
	for d := range p.All() {
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
	var waste, savings []sample
	if p.Currency != "" {
		for _, t := range report.Totals(p) {
			if t.Waste > 0 {
				waste = append(waste, sample{[]string{t.Kind, p.Currency}, t.Waste})
				savings = append(savings, sample{[]string{t.Kind, p.Currency}, t.Saves()})
			}
		}
	}
	m.waste.replace(waste)
	m.savings.replace(savings)
	var owners []sample
	if p.Currency != "" {
		for _, o := range report.OwnerTotals(p) {
			owners = append(owners, sample{[]string{o.Owner, p.Currency}, o.Waste})
		}
	}
	m.ownerWaste.replace(owners)
	m.breakerTripped.Set(boolFloat(p.BreakerTripped))

	incomplete := 0
	srcs := make([]sample, 0, len(p.Sources))
	var reads []sample
	for _, s := range p.Sources {
		if !s.Complete {
			incomplete++
		}
		srcs = append(srcs, sample{[]string{s.Kind, s.Name}, boolFloat(s.Complete)})
		if !s.ReadAt.IsZero() {
			reads = append(reads, sample{[]string{s.Kind, s.Name}, float64(s.ReadAt.UnixNano()) / 1e9})
		}
	}
	m.sourceComplete.replace(srcs)
	m.sourceRead.replace(reads)
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
	vec    *prometheus.GaugeVec
	labels int // how many labels a series has
	live   map[string][]string
}

func newGaugeSet(opts prometheus.GaugeOpts, labels []string) *gaugeSet {
	return &gaugeSet{vec: prometheus.NewGaugeVec(opts, labels), labels: len(labels), live: map[string][]string{}}
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

// BuildInfo is reclaim_build_info: 1, labelled with the release, the commit
// it was built from ("" when unknown) and the Go version, so a dashboard can
// tell which build wrote a series.
func BuildInfo(version, revision string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_build_info",
		Help:        "Always 1; its labels say which build of reclaim runs: version (the release), revision (the commit) and goversion.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()}})
	g.Set(1)
	return g
}

var (
	apiAttempts = prometheus.NewDesc("reclaim_cloud_api_attempts_total",
		"Attempts at cloud API calls by the process (retries included), by service and operation: AWS's, as the clients' rate limiters meter them.",
		[]string{"service", "operation"}, nil)
	apiThrottled = prometheus.NewDesc("reclaim_cloud_api_throttled_total",
		"Attempts the cloud API answered with a throttle code (each retried by the adaptive retryer), by service and operation.",
		[]string{"service", "operation"}, nil)
)

// apiCalls exports awsclient.Totals at each scrape.
type apiCalls struct{}

func (apiCalls) Describe(ch chan<- *prometheus.Desc) { ch <- apiAttempts; ch <- apiThrottled }

func (apiCalls) Collect(ch chan<- prometheus.Metric) {
	for _, t := range awsclient.Totals() {
		ch <- prometheus.MustNewConstMetric(apiAttempts, prometheus.CounterValue, float64(t.Attempts), t.Service, t.Operation)
		ch <- prometheus.MustNewConstMetric(apiThrottled, prometheus.CounterValue, float64(t.Throttled), t.Service, t.Operation)
	}
}
