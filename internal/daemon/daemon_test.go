package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/metrics"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/state"
)

// wait is how long a test waits for an event before it fails: generous, so
// a loaded machine is slow but never wrong.
const wait = 30 * time.Second

// every fires every d: faster than cron's one-second granularity.
type every time.Duration

func (e every) Next(t time.Time) time.Time { return t.Add(time.Duration(e)) }

// never never fires: only runOnStart passes run.
type never struct{}

func (never) Next(time.Time) time.Time { return time.Time{} }

type passFunc func(ctx context.Context, opt app.Options) (*report.Report, error)

func (f passFunc) Once(ctx context.Context, opt app.Options) (*report.Report, error) {
	return f(ctx, opt)
}

func emptyReport(apply bool) *report.Report {
	return report.New(&engine.Plan{State: engine.NewState()}, nil, apply)
}

// start builds and runs a daemon; stop (also a cleanup) cancels it and
// returns Run's error.
func start(t *testing.T, p Passer, cfg config.Daemon, o Options) (d *Daemon, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Listener = ln
	if o.Kinds == nil {
		o.Kinds, o.Gauges = app.KindNames(), app.Gauges()
	}
	d, err = New(p, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(wait):
				runErr = errors.New("Run did not return after cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return d, stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func get(t *testing.T, d *Daemon, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + d.Addr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The schedule fires again and again while a pass blocks: no second pass
// starts until the first returns, and the skips are counted.
func TestPassesNeverOverlap(t *testing.T) {
	var running, maxRunning, calls atomic.Int32
	release := make(chan struct{})
	p := passFunc(func(ctx context.Context, opt app.Options) (*report.Report, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		if calls.Add(1) == 1 {
			<-release
		}
		return emptyReport(false), nil
	})
	cfg := config.DefaultDaemon()
	d, stop := start(t, p, cfg, Options{Schedule: every(10 * time.Millisecond)})
	waitFor(t, "the first pass", func() bool { return calls.Load() == 1 })
	waitFor(t, "five skipped triggers", func() bool { return testutil.ToFloat64(d.skipped) >= 5 })
	if got := calls.Load(); got != 1 {
		t.Fatalf("%d passes started while the first was running", got)
	}
	close(release)
	waitFor(t, "passes after the first returned", func() bool { return calls.Load() >= 3 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := maxRunning.Load(); got != 1 {
		t.Fatalf("%d passes ran at once, want 1", got)
	}
}

// A panicking pass is recovered, counted, and does not stop later passes:
// the robfig/cron v3.0.1 trap (SkipIfStillRunning loses its token when a
// job panics unless Recover is inside it) would stop every later pass.
func TestPanickingPassDoesNotStopTheNext(t *testing.T) {
	var calls atomic.Int32
	p := passFunc(func(ctx context.Context, opt app.Options) (*report.Report, error) {
		if n := calls.Add(1); n <= 2 {
			panic(fmt.Sprintf("boom %d", n))
		}
		return emptyReport(false), nil
	})
	d, stop := start(t, p, config.DefaultDaemon(), Options{Schedule: every(10 * time.Millisecond)})
	waitFor(t, "passes after two panics", func() bool { return calls.Load() >= 4 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(d.panics); got != 2 {
		t.Errorf("reclaim_daemon_pass_panics_total = %v, want 2", got)
	}
	runs := metricValues(t, d, "reclaim_runs_total")
	if got := runs[`exit_code="1",mode="dry-run"`]; got != 2 {
		t.Errorf("reclaim_runs_total{exit_code=1} = %v, want 2 (all: %v)", got, runs)
	}
	if got := runs[`exit_code="0",mode="dry-run"`]; got < 2 {
		t.Errorf("reclaim_runs_total{exit_code=0} = %v, want >= 2 (all: %v)", got, runs)
	}
}

// The chain alone, with a job that panics outright: the next run still
// happens. Swapping the wrappers makes this fail (the token is lost).
func TestChainRecoversInsideSkip(t *testing.T) {
	var calls atomic.Int32
	cl := cronLogger{log: zap.NewNop(), skipped: prometheus.NewCounter(prometheus.CounterOpts{Name: "skipped"})}
	job := cron.NewChain(wrappers(cl)...).Then(jobFunc(func() { calls.Add(1); panic("raw") }))
	job.Run()
	job.Run()
	if got := calls.Load(); got != 2 {
		t.Fatalf("the job ran %d times after a panic, want 2", got)
	}
}

type jobFunc func()

func (f jobFunc) Run() { f() }

// metricValues gathers name from the daemon's registry: label string -> value.
func metricValues(t *testing.T, d *Daemon, name string) map[string]float64 {
	t.Helper()
	mfs, err := d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[labelString(m.GetLabel())] = value(m)
		}
	}
	return out
}

func labelString(ls []*dto.LabelPair) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
	}
	return strings.Join(parts, ",")
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	}
	return 0
}

// fleet is a GCE fake with orphan disks and a Runner over it; every disk
// has been an orphan for longer than the grace.
type fleet struct {
	srv    *gcefake.Server
	keys   []string
	runner *app.Runner
	store  *state.FileStore
	audit  *bytes.Buffer
	mu     *sync.Mutex
}

func newFleet(t *testing.T, disks int, o gcefake.Options) *fleet {
	t.Helper()
	srv := gcefake.New(o)
	t.Cleanup(srv.Close)
	now := time.Now().UTC()
	f := &fleet{srv: srv, store: &state.FileStore{Path: filepath.Join(t.TempDir(), "state.json")}, audit: &bytes.Buffer{}, mu: &sync.Mutex{}}
	st := engine.NewState()
	for i := range disks {
		key := srv.AddDisk("proj-one", gcefake.Disk{Zone: "asia-northeast1-a", Name: fmt.Sprintf("orphan-%d", i), SizeGB: 10, Type: "pd-balanced",
			Labels: map[string]string{"goog-gke-volume": ""}, Created: now.Add(-30 * 24 * time.Hour), LastDetach: now.Add(-10 * 24 * time.Hour)})
		disk, _ := srv.Disk(key)
		st.Seen(key, disk.ID, now.Add(-7*time.Hour))
		f.keys = append(f.keys, key)
	}
	if err := f.store.Save(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	cfg := enginetest.DiskConfig(t, srv.URL())
	clusters := func(context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{{Name: "a", Complete: true, Projects: []string{"proj-one"}}}
	}
	var err error
	f.runner, err = app.New(context.Background(), cfg, app.Deps{Clusters: clusters, Store: f.store,
		Audit: audit.New(enginetest.LockedWriter{Mu: f.mu, W: f.audit})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.runner.Close)
	return f
}

// deletes lists the audit log's delete records as id -> results.
func (f *fleet) deletes(t *testing.T) map[string][]string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(f.audit.Bytes()))
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Action == "delete" {
			out[r.ID] = append(out[r.ID], r.Result)
		}
	}
	return out
}

// /readyz is 503 until the first pass has planned, then 200; /metrics then
// holds the report's plan decisions and the kinds' gauges, value for value;
// /report serves the same report as JSON and as text.
func TestReadyzMetricsAndReport(t *testing.T) {
	f := newFleet(t, 2, gcefake.Options{})
	f.srv.SetQuota("proj-one", "asia-northeast1", "SSD_TOTAL_GB", 500, 400)
	gate := make(chan struct{})
	var last atomic.Pointer[report.Report]
	p := passFunc(func(ctx context.Context, opt app.Options) (*report.Report, error) {
		<-gate
		rep, err := f.runner.Once(ctx, opt)
		last.Store(rep)
		return rep, err
	})
	html := func(rep *report.Report) (string, error) {
		return fmt.Sprintf("<p>%d decisions</p>", len(rep.Plan.Decisions)), nil
	}
	d, stop := start(t, p, config.DefaultDaemon(), Options{Schedule: never{}, HTML: html})
	if code, body := get(t, d, "/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before the first pass: %d %s, want 503", code, body)
	}
	if code, _ := get(t, d, "/report"); code != http.StatusServiceUnavailable {
		t.Fatalf("/report before the first pass: %d, want 503", code)
	}
	if code, body := get(t, d, "/"); code != http.StatusServiceUnavailable || !strings.Contains(body, "No report yet") {
		t.Fatalf("/ before the first pass: %d %s, want 503 saying so", code, body)
	}
	if code, _ := get(t, d, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d", code)
	}
	close(gate)
	waitFor(t, "/readyz 200", func() bool { code, _ := get(t, d, "/readyz"); return code == http.StatusOK })
	rep := last.Load()
	if rep == nil || rep.Plan == nil {
		t.Fatal("no report")
	}

	code, body := get(t, d, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	dec := mfs["reclaim_plan_decisions"]
	if dec == nil {
		t.Fatal("/metrics has no reclaim_plan_decisions")
	}
	seen := 0
	for _, m := range dec.GetMetric() {
		var kind, action string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "kind":
				kind = l.GetValue()
			case "action":
				action = l.GetValue()
			}
		}
		if want := rep.Plan.Count(kind, engine.Action(action)); float64(want) != m.GetGauge().GetValue() {
			t.Errorf("reclaim_plan_decisions{kind=%s,action=%s} = %v, report says %d", kind, action, m.GetGauge().GetValue(), want)
		}
		seen++
	}
	if want := rep.Plan.Count(gcedisk.Name, engine.Mark) + rep.Plan.Count(gcedisk.Name, engine.Delete); want == 0 || seen == 0 {
		t.Fatalf("the plan has no disk decisions (%d) or /metrics no series (%d)", want, seen)
	}
	if len(rep.Plan.Gauges) == 0 {
		t.Fatal("the plan has no kind gauges")
	}
	for _, g := range rep.Plan.Gauges {
		mf := mfs[g.Name]
		if mf == nil {
			t.Errorf("/metrics has no %s", g.Name)
			continue
		}
		found := false
		for _, m := range mf.GetMetric() {
			vals := make([]string, len(m.GetLabel()))
			got := map[string]string{}
			for i, l := range m.GetLabel() {
				vals[i] = l.GetValue()
				got[l.GetValue()] = l.GetName()
			}
			if len(vals) != len(g.Labels) {
				continue
			}
			match := true
			for _, v := range g.Labels {
				if _, ok := got[v]; !ok {
					match = false
				}
			}
			if match {
				found = true
				if m.GetGauge().GetValue() != g.Value {
					t.Errorf("%s%v = %v, report says %v", g.Name, g.Labels, m.GetGauge().GetValue(), g.Value)
				}
			}
		}
		if !found {
			t.Errorf("/metrics has no %s%v", g.Name, g.Labels)
		}
	}

	code, body = get(t, d, "/report")
	var got report.Report
	if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil {
		t.Fatalf("/report: %d %v", code, err)
	}
	if got.Version != rep.Version || len(got.Plan.Decisions) != len(rep.Plan.Decisions) {
		t.Errorf("/report differs from the pass's report: %d decisions, want %d", len(got.Plan.Decisions), len(rep.Plan.Decisions))
	}
	var text strings.Builder
	_ = rep.Text(&text, report.TextOptions{MaxKept: 3})
	if code, body := get(t, d, "/report?format=text"); code != http.StatusOK || body != text.String() {
		t.Errorf("/report?format=text: %d\n%s\nwant\n%s", code, body, text.String())
	}
	if code, body := get(t, d, "/report?format=html"); code != http.StatusOK || body != fmt.Sprintf("<p>%d decisions</p>", len(rep.Plan.Decisions)) {
		t.Errorf("/report?format=html: %d %q", code, body)
	}
	// The page: the same HTML under a bar naming the pass and linking the
	// other forms; nothing but GET.
	if code, body := get(t, d, "/"); code != http.StatusOK || !strings.Contains(body, fmt.Sprintf("<p>%d decisions</p>", len(rep.Plan.Decisions))) ||
		!strings.Contains(body, `<a href="report">JSON</a>`) || !strings.Contains(body, rep.Plan.GeneratedAt.UTC().Format(time.RFC3339)) {
		t.Errorf("/: %d %q", code, body)
	}
	if resp, err := http.Post("http://"+d.Addr().String()+"/", "text/plain", strings.NewReader("x")); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %v %v, want 405", resp, err)
	} else {
		resp.Body.Close()
	}
	if code, _ := get(t, d, "/nothing-here"); code != http.StatusNotFound {
		t.Errorf("/nothing-here: %d, want 404", code)
	}
	if code, _ := get(t, d, "/report?format=xml"); code != http.StatusBadRequest {
		t.Errorf("/report?format=xml: %d, want 400", code)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// SIGTERM while a delete call is in flight: that delete finishes (it is
// not cut short), no further batch starts, state is saved with no pending
// mark, and Run returns nil. The next pass deletes the rest; every disk is
// audited as deleted exactly once.
func TestShutdownMidApplyConverges(t *testing.T) {
	var stopDaemon atomic.Pointer[func() error]
	shutdownAsked := make(chan struct{})
	var once sync.Once
	f := newFleet(t, 4, gcefake.Options{})
	f.srv.SetOnRequest(func(method string) *gcefake.Fault {
		if method != gcefake.MethodDisksDelete {
			return nil
		}
		once.Do(func() {
			// SIGTERM arrives during the first delete call; give a wrong
			// implementation time to cut the call short.
			go func() { _ = (*stopDaemon.Load())() }()
			close(shutdownAsked)
			time.Sleep(200 * time.Millisecond)
		})
		return nil
	})
	var reps []*report.Report
	var mu sync.Mutex
	p := passFunc(func(ctx context.Context, opt app.Options) (*report.Report, error) {
		rep, err := f.runner.Once(ctx, opt)
		mu.Lock()
		reps = append(reps, rep)
		mu.Unlock()
		return rep, err
	})
	cfg := config.DefaultDaemon()
	_, stop := start(t, p, cfg, Options{Apply: true, Schedule: never{}})
	stopDaemon.Store(&stop)
	select {
	case <-shutdownAsked:
	case <-time.After(wait):
		t.Fatal("no delete call")
	}
	if err := stop(); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	mu.Lock()
	if len(reps) != 1 || reps[0] == nil || reps[0].Outcome == nil {
		t.Fatalf("passes: %+v", reps)
	}
	out := reps[0].Outcome
	mu.Unlock()
	counts := map[string]int{}
	for _, r := range out.Results {
		counts[r.Result]++
	}
	if counts[audit.Deleted] != 1 || counts[audit.NotAttempted] != 3 || len(out.Results) != 4 {
		t.Fatalf("first pass results %v, want 1 deleted and 3 not-attempted", counts)
	}
	st, err := f.store.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pending) != 0 {
		t.Fatalf("state saved with pending marks after a graceful shutdown: %v", st.Pending)
	}
	gone := 0
	for _, k := range f.keys {
		if !f.srv.HasDisk(k) {
			gone++
		}
	}
	if gone != 1 {
		t.Fatalf("%d disks gone after the first pass, want 1", gone)
	}

	// The next daemon's first pass converges.
	_, stop2 := start(t, p, cfg, Options{Apply: true, Schedule: never{}})
	waitFor(t, "the second pass", func() bool { mu.Lock(); defer mu.Unlock(); return len(reps) == 2 })
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	for _, k := range f.keys {
		if f.srv.HasDisk(k) {
			t.Errorf("%s not deleted by the second pass", k)
		}
	}
	del := f.deletes(t)
	for _, k := range f.keys {
		if got := del[k]; len(got) != 1 || got[0] != audit.Deleted {
			t.Errorf("audit for %s: %v, want exactly one deleted", k, got)
		}
	}
}

// Jitter waits before a scheduled pass, and shutdown interrupts the wait.
func TestJitterIsInterruptedByShutdown(t *testing.T) {
	var calls atomic.Int32
	p := passFunc(func(context.Context, app.Options) (*report.Report, error) {
		calls.Add(1)
		return emptyReport(false), nil
	})
	cfg := config.DefaultDaemon()
	cfg.RunOnStart = false
	cfg.Jitter = config.Duration(time.Hour)
	cfg.ShutdownTimeout = config.Duration(time.Minute)
	d, stop := start(t, p, cfg, Options{Schedule: every(10 * time.Millisecond)})
	waitFor(t, "a skipped trigger (a pass is waiting out its jitter)", func() bool { return testutil.ToFloat64(d.skipped) >= 1 })
	begin := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > 20*time.Second {
		t.Errorf("shutdown took %s: the jitter wait was not interrupted", took)
	}
	if got := calls.Load(); got != 0 {
		t.Errorf("%d passes ran, want none (every one is still in its jitter)", got)
	}
}

// Every pass's report goes to Deliver before its metrics are observed, so a
// failed delivery's exit code and counter show on /metrics.
func TestPassReportIsDelivered(t *testing.T) {
	var delivered atomic.Int32
	p := passFunc(func(ctx context.Context, opt app.Options) (*report.Report, error) { return emptyReport(false), nil })
	deliver := func(_ context.Context, rep *report.Report, m *metrics.Metrics) {
		delivered.Add(1)
		m.ObserveDelivery("ops", "failed")
		rep.ExitCode = report.NotifyFailed(rep.ExitCode)
	}
	d, stop := start(t, p, config.DefaultDaemon(), Options{Schedule: every(10 * time.Millisecond), Deliver: deliver})
	waitFor(t, "two delivered passes", func() bool { return delivered.Load() >= 2 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	runs := metricValues(t, d, "reclaim_runs_total")
	if runs[`exit_code="5",mode="dry-run"`] < 2 || runs[`exit_code="0",mode="dry-run"`] != 0 {
		t.Errorf("reclaim_runs_total = %v, want every pass at exit 5", runs)
	}
	if got := metricValues(t, d, "reclaim_notify_deliveries_total")[`result="failed",target="ops"`]; got < 2 {
		t.Errorf("reclaim_notify_deliveries_total{target=ops,result=failed} = %v, want >= 2", got)
	}
}

// POD_NAMESPACE (the daemon Deployment's fieldRef) names the Lease's
// namespace when the config does not; without it, the service account's
// namespace file; without either, leader election says what to set.
func TestPodNamespaceFromTheEnvironment(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "ops")
	if ns := podNamespace(); ns != "ops" {
		t.Errorf("POD_NAMESPACE=ops: %q", ns)
	}
	if _, err := os.Stat(serviceAccountNamespace); err == nil {
		t.Skip("this machine has a service account namespace file")
	}
	t.Setenv("POD_NAMESPACE", "")
	if ns := podNamespace(); ns != "" {
		t.Errorf("no POD_NAMESPACE: %q", ns)
	}
}

// A watching daemon runs a pass at the start of its term, one debounce
// after a burst of changes (one pass for the burst), and one every
// heartbeat when nothing changes; the schedule is not used.
func TestWatchPassesOnChangeAndHeartbeat(t *testing.T) {
	var mu sync.Mutex
	var passes []time.Time
	p := passFunc(func(context.Context, app.Options) (*report.Report, error) {
		mu.Lock()
		passes = append(passes, time.Now())
		mu.Unlock()
		return emptyReport(false), nil
	})
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(passes) }
	kick := make(chan func(), 1)
	watch := func(ctx context.Context, changed func()) error {
		kick <- changed
		<-ctx.Done()
		return ctx.Err()
	}
	debounce := 200 * time.Millisecond
	_, stop := start(t, p, config.DefaultDaemon(), Options{Schedule: every(time.Millisecond), Watch: watch, Debounce: debounce, Heartbeat: time.Hour})
	changed := <-kick
	waitFor(t, "the term's first pass", func() bool { return count() == 1 })
	time.Sleep(50 * time.Millisecond)
	if got := count(); got != 1 {
		t.Fatalf("%d passes before any change, want 1 (the schedule is not used, the heartbeat is an hour)", got)
	}
	burst := time.Now()
	for range 20 {
		changed()
	}
	waitFor(t, "a pass after the burst", func() bool { return count() == 2 })
	mu.Lock()
	after := passes[1].Sub(burst)
	mu.Unlock()
	if after < debounce || after > debounce+5*time.Second {
		t.Fatalf("the pass ran %s after the burst, want within the debounce %s (and a little)", after, debounce)
	}
	time.Sleep(2 * debounce)
	if got := count(); got != 2 {
		t.Fatalf("%d passes after a burst of 20 changes, want one pass for it", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Quiet: heartbeats only.
	passes = nil
	quiet := func(ctx context.Context, _ func()) error { <-ctx.Done(); return ctx.Err() }
	_, stop = start(t, p, config.DefaultDaemon(), Options{Schedule: never{}, Watch: quiet, Debounce: time.Hour, Heartbeat: 100 * time.Millisecond})
	waitFor(t, "three heartbeat passes", func() bool { return count() >= 3 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(passes); i++ {
		if gap := passes[i].Sub(passes[i-1]); gap < 100*time.Millisecond {
			t.Errorf("heartbeat passes %s apart, want at least the heartbeat 100ms", gap)
		}
	}
}
