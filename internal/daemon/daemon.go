// Package daemon runs reclaim as a long-lived process: passes of one Runner
// on a cron schedule, behind a Kubernetes Lease when several replicas run,
// with /metrics, /healthz, /readyz and /report over HTTP.
//
// Contexts, from the outside in: the process context is cancelled on
// SIGTERM (shutdown); a leader's term ends when the lease is lost or after
// shutdown, once the pass in flight has returned. A pass stops starting new
// delete batches as soon as either shutdown begins or the lease is lost
// (app.Options.Stop); its calls are cut short only when the lease is lost
// or the shutdown overruns daemon.shutdownTimeout. The lease is released
// (ReleaseOnCancel) only after the pass has returned, so every delete made
// under the lease finishes before another replica may take it.
package daemon

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/robfig/cron/v3"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"reclaim.dev/reclaim/base/layout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/notify/metrics"
	"reclaim.dev/reclaim/notify/report"
)

// Passer runs one pass; *app.Runner is one.
type Passer interface {
	Once(ctx context.Context, opt app.Options) (*report.Report, error)
}

// Options are what New needs besides the config section.
type Options struct {
	// Apply makes the leader's passes delete; without it every pass is a dry-run.
	Apply bool
	// Kinds and Gauges declare the metrics (app.KindNames, app.Gauges).
	Kinds  []string
	Gauges []layout.GaugeDef
	Log    *zap.Logger
	// Listener serves the endpoints; nil listens on daemon.listen.
	Listener net.Listener
	// Schedule replaces daemon.schedule (tests fire faster than cron's minute).
	Schedule cron.Schedule
	// LeaseClient reaches the Lease's cluster; nil builds one from
	// daemon.leaderElection. Only used with leader election enabled.
	LeaseClient kubernetes.Interface
	// Identity names this replica in the Lease; empty: hostname and a random suffix.
	Identity string
	// HTML, if set, renders the last report for /report?format=html (the
	// report email's HTML body).
	HTML func(rep *report.Report) (string, error)
	// Deliver, if set, sends a pass's report to the notify targets before
	// its metrics are observed; it may raise the report's exit code.
	Deliver func(ctx context.Context, rep *report.Report, m *metrics.Metrics)
	// Watch, if set, runs passes on change instead of on the schedule
	// (reclaim daemon --agent): it watches what a pass reads until its
	// context ends, calling changed on each change. A change runs a pass
	// Debounce after it (a burst makes one pass), and a quiet term runs one
	// every Heartbeat; the first runs at the start of each term.
	Watch     func(ctx context.Context, changed func()) error
	Debounce  time.Duration
	Heartbeat time.Duration
}

// DefaultDebounce is how long a watching daemon waits after a change
// before its pass, so that a burst (a rollout, a CronJob's Jobs) makes one
// pass and one publish: a change reaches the record within this, a
// collect and a put.
const DefaultDebounce = 15 * time.Second

// Daemon runs passes on a schedule. Build it with New, then call Run once.
type Daemon struct {
	cfg      config.Daemon
	passer   Passer
	opt      Options
	log      *zap.Logger
	loc      *time.Location
	schedule cron.Schedule
	ln       net.Listener
	lease    resourcelock.Interface // nil without leader election

	reg     *prometheus.Registry
	metrics *metrics.Metrics
	panics  prometheus.Counter
	skipped prometheus.Counter
	leader  prometheus.Gauge

	mu      sync.Mutex
	last    *report.Report
	lastErr error
	ready   bool
}

// New checks the section, builds the lease client (its own clientset, so the
// Runner's rate limits never delay a renewal) and the metrics, and listens.
func New(p Passer, cfg config.Daemon, o Options) (*Daemon, error) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	d := &Daemon{cfg: cfg, passer: p, opt: o, log: o.Log, schedule: o.Schedule}
	var err error
	if d.loc, err = time.LoadLocation(cfg.TimeZone); err != nil {
		return nil, fmt.Errorf("daemon.timeZone: %w", err)
	}
	if d.schedule == nil {
		if d.schedule, err = config.ParseSchedule(cfg.Schedule); err != nil {
			return nil, fmt.Errorf("daemon.schedule: %w", err)
		}
	}
	if o.Identity == "" {
		d.opt.Identity = identity()
	}
	if cfg.LeaderElection.Enabled {
		if d.lease, err = d.leaseLock(); err != nil {
			return nil, err
		}
	}

	d.reg = prometheus.NewRegistry()
	d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	d.metrics = metrics.NewMetrics(d.reg, o.Kinds, o.Gauges)
	rev, _ := app.Revision()
	d.reg.MustRegister(metrics.BuildInfo(app.Version, rev))
	d.panics = prometheus.NewCounter(prometheus.CounterOpts{Name: "reclaim_daemon_pass_panics_total",
		Help: "Passes that panicked; each is also counted in reclaim_runs_total with exit_code 1, and the next pass runs as scheduled."})
	d.skipped = prometheus.NewCounter(prometheus.CounterOpts{Name: "reclaim_daemon_passes_skipped_total",
		Help: "Scheduled passes skipped because the previous pass was still running."})
	d.leader = prometheus.NewGauge(prometheus.GaugeOpts{Name: "reclaim_daemon_leader",
		Help: "1 while this replica holds the Lease (always 1 without leader election), 0 otherwise."})
	d.reg.MustRegister(d.panics, d.skipped, d.leader)

	d.ln = o.Listener
	if d.ln == nil {
		if d.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return nil, fmt.Errorf("daemon.listen: %w", err)
		}
	}
	return d, nil
}

// Addr is where the endpoints are served.
func (d *Daemon) Addr() net.Addr { return d.ln.Addr() }

// Registry is the daemon's metrics registry, served on /metrics.
func (d *Daemon) Registry() *prometheus.Registry { return d.reg }

// Run serves the endpoints and runs passes until ctx is cancelled, then
// shuts down gracefully within daemon.shutdownTimeout. It returns nil after
// a clean shutdown.
func (d *Daemon) Run(ctx context.Context) error {
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(d.ln) }()
	d.log.Info("daemon started", zap.String("listen", d.ln.Addr().String()), zap.String("schedule", d.cfg.Schedule),
		zap.String("time_zone", d.loc.String()), zap.Bool("dry_run", !d.opt.Apply), zap.Bool("leader_election", d.lease != nil),
		zap.String("identity", d.opt.Identity))

	// hard is cancelled only when a shutdown overruns its timeout: then the
	// pass in flight is cut short (its pending marks make the next pass converge).
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	finished := make(chan struct{})
	var overran bool
	go func() {
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		t := time.NewTimer(d.cfg.ShutdownTimeout.Std())
		defer t.Stop()
		select {
		case <-t.C:
			overran = true
			d.log.Warn("shutdown timeout reached: cancelling the pass in flight", zap.Duration("timeout", d.cfg.ShutdownTimeout.Std()))
			cancelHard()
		case <-finished:
		}
	}()

	if d.lease == nil {
		d.leader.Set(1)
		d.term(hard, ctx)
		d.leader.Set(0)
	} else {
		d.elect(ctx, hard)
	}

	sctx, cancel := context.WithTimeout(hard, d.cfg.ShutdownTimeout.Std())
	defer cancel()
	shutErr := srv.Shutdown(sctx)
	close(finished)
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	if shutErr != nil {
		return fmt.Errorf("http server shutdown: %w", shutErr)
	}
	if hard.Err() != nil && overran {
		return fmt.Errorf("shutdown took longer than daemon.shutdownTimeout (%s): the pass in flight was cancelled", d.cfg.ShutdownTimeout)
	}
	d.log.Info("daemon stopped")
	return nil
}

// elect takes part in the election until shutdown. Each time this replica
// becomes leader it runs a term; when it loses the lease it waits for the
// term's pass to return and stands for election again.
func (d *Daemon) elect(shutdown, hard context.Context) {
	for shutdown.Err() == nil {
		var (
			mu       sync.Mutex
			termDone chan struct{}
		)
		elect, cancelElect := context.WithCancel(hard)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            d.lease,
			LeaseDuration:   d.cfg.LeaderElection.LeaseDuration.Std(),
			RenewDeadline:   d.cfg.LeaderElection.RenewDeadline.Std(),
			RetryPeriod:     d.cfg.LeaderElection.RetryPeriod.Std(),
			ReleaseOnCancel: true,
			Name:            d.cfg.LeaderElection.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(leading context.Context) {
					mu.Lock()
					if shutdown.Err() != nil {
						mu.Unlock()
						return
					}
					ch := make(chan struct{})
					termDone = ch
					mu.Unlock()
					defer close(ch)
					d.log.Info("became leader", zap.String("identity", d.opt.Identity))
					d.leader.Set(1)
					defer d.leader.Set(0)
					d.term(leading, shutdown)
				},
				OnStoppedLeading: func() {
					d.log.Info("not leading", zap.String("identity", d.opt.Identity))
				},
				OnNewLeader: func(id string) {
					if id != d.opt.Identity {
						d.log.Info("standing by", zap.String("leader", id))
						d.setReady("standing by behind leader " + id)
					}
				},
			},
		})
		if err != nil { // checked by config; only a programming error gets here
			cancelElect()
			d.log.Error("leader election", zap.Error(err))
			<-shutdown.Done()
			return
		}
		ran := make(chan struct{})
		go func() { le.Run(elect); close(ran) }()
		waitTerm := func() {
			mu.Lock()
			ch := termDone
			mu.Unlock()
			if ch != nil {
				<-ch
			}
		}
		select {
		case <-shutdown.Done():
			// Let the pass in flight return, then release the lease.
			waitTerm()
			cancelElect()
			<-ran
		case <-ran:
			// The lease was lost: the term's contexts are cancelled.
			waitTerm()
			cancelElect()
		}
	}
}

// term runs passes while leading: until leading is cancelled (the lease is
// lost) or shutdown begins. It returns once no pass is running.
func (d *Daemon) term(leading, shutdown context.Context) {
	stop, cancelStop := context.WithCancel(leading)
	defer cancelStop()
	defer context.AfterFunc(shutdown, cancelStop)()

	if d.opt.Watch != nil {
		d.watch(leading, stop)
		return
	}
	cl := cronLogger{log: d.log, skipped: d.skipped}
	c := cron.New(cron.WithLocation(d.loc), cron.WithLogger(cl), cron.WithChain(wrappers(cl)...))
	// The first pass of a term (runOnStart) goes through the same wrapped
	// job as the scheduled ones, so it never overlaps them; it skips jitter.
	var first atomic.Bool
	first.Store(d.cfg.RunOnStart)
	id := c.Schedule(d.schedule, cron.FuncJob(func() { d.pass(leading, stop, !first.Swap(false)) }))
	wrapped := c.Entry(id).WrappedJob
	c.Start()
	var firstDone sync.WaitGroup
	if d.cfg.RunOnStart {
		firstDone.Add(1)
		go func() {
			defer firstDone.Done()
			wrapped.Run()
		}()
	}
	<-stop.Done()
	<-c.Stop().Done()
	firstDone.Wait()
}

// watch runs a term's passes on change: one at its start, one Debounce
// after a change (changes during a pass run another after it), and one
// every Heartbeat when nothing changed, until stop. Passes run one at a
// time, in this goroutine. A watch that fails is restarted after a
// heartbeat's wait at most, meanwhile the heartbeat goes on.
func (d *Daemon) watch(leading, stop context.Context) {
	debounce, heartbeat := d.opt.Debounce, d.opt.Heartbeat
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	if heartbeat <= 0 {
		heartbeat = 5 * time.Minute
	}
	changes := make(chan struct{}, 1)
	changed := func() {
		select {
		case changes <- struct{}{}:
		default:
		}
	}
	wctx, cancel := context.WithCancel(stop)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		for wctx.Err() == nil {
			err := d.opt.Watch(wctx, changed)
			if wctx.Err() != nil {
				return
			}
			d.log.Error("watching the cluster failed: passes run on the heartbeat only until it is back", zap.Error(err), zap.Duration("heartbeat", heartbeat))
			t := time.NewTimer(min(heartbeat, time.Minute))
			select {
			case <-wctx.Done():
			case <-t.C:
			}
			t.Stop()
			changed() // what changed meanwhile is unseen: read it
		}
	})
	beat := time.NewTimer(0) // the term's first pass
	defer beat.Stop()
	var settle <-chan time.Time
	run := func(why string) {
		d.log.Info("pass on "+why, zap.Duration("debounce", debounce), zap.Duration("heartbeat", heartbeat))
		d.safePass(leading, stop)
		beat.Reset(heartbeat)
	}
	for {
		select {
		case <-stop.Done():
			return
		case <-changes:
			if settle == nil {
				settle = time.After(debounce)
			}
		case <-settle:
			settle = nil
			run("change")
		case <-beat.C:
			run("heartbeat")
		}
	}
}

// safePass is pass for the watch loop: a panic is recorded by pass and
// recovered here, so the next pass runs.
func (d *Daemon) safePass(ctx, stop context.Context) {
	defer func() { _ = recover() }()
	d.pass(ctx, stop, false)
}

// pass is one scheduled pass: jitter, then Once, then metrics and report.
// A panic is recorded and re-raised for cron.Recover, so the next pass runs.
func (d *Daemon) pass(ctx, stop context.Context, jitter bool) {
	if j := d.cfg.Jitter.Std(); j > 0 && jitter {
		wait := time.Duration(rand.Int64N(int64(j)))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stop.Done():
			t.Stop()
			d.log.Info("pass not started: stopping during jitter")
			return
		}
	}
	if stop.Err() != nil {
		return
	}
	start := time.Now()
	mode := "dry-run"
	if d.opt.Apply {
		mode = "apply"
	}
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("pass panicked; the next pass runs as scheduled", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			d.panics.Inc()
			d.metrics.Observe(&report.Report{Mode: mode, ExitCode: report.ExitError}, time.Since(start), time.Now())
			d.mu.Lock()
			d.lastErr = fmt.Errorf("pass panicked: %v", p)
			d.mu.Unlock()
			panic(p)
		}
	}()
	rep, err := d.passer.Once(ctx, app.Options{Apply: d.opt.Apply, Stop: stop})
	took := time.Since(start)
	mrep := rep
	if mrep == nil {
		mrep = &report.Report{Mode: mode, ExitCode: report.ExitError}
	}
	if d.opt.Deliver != nil && rep != nil {
		d.opt.Deliver(ctx, rep, d.metrics)
	}
	d.metrics.Observe(mrep, took, time.Now())
	d.mu.Lock()
	d.lastErr = err
	if rep != nil {
		d.last = rep
	}
	d.mu.Unlock()
	if err != nil {
		d.log.Error("pass failed", zap.Error(err), zap.Duration("took", took))
		return
	}
	d.setReady("first pass planned")
	d.log.Info("pass done", zap.Int("exit_code", rep.ExitCode), zap.Duration("took", took), zap.Bool("dry_run", !d.opt.Apply))
}

func (d *Daemon) setReady(why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.ready {
		d.ready = true
		d.log.Info("ready", zap.String("because", why))
	}
}

// Handler serves the report page at /, and /metrics, /healthz, /readyz
// and /report.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.page)
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{Registry: d.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		d.mu.Lock()
		ready := d.ready
		d.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: no pass has planned yet")
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /report", func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		rep, lastErr := d.last, d.lastErr
		d.mu.Unlock()
		if rep == nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "no report yet: no pass has planned on this replica")
			if lastErr != nil {
				fmt.Fprintln(w, "last pass:", lastErr)
			}
			return
		}
		if lastErr != nil {
			w.Header().Set("X-Reclaim-Last-Pass-Error", strings.ToValidUTF8(strings.ReplaceAll(lastErr.Error(), "\n", " "), "?"))
		}
		switch f := r.URL.Query().Get("format"); f {
		case "", "json":
			w.Header().Set("Content-Type", "application/json")
			_ = rep.JSON(w)
		case "text":
			max := 3
			if r.URL.Query().Has("verbose") {
				max = -1
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_ = rep.Text(w, report.TextOptions{MaxKept: max})
		case "html":
			if d.opt.HTML == nil {
				http.Error(w, "format html: not available", http.StatusNotFound)
				return
			}
			page, err := d.opt.HTML(rep)
			if err != nil {
				http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
			_, _ = io.WriteString(w, page)
		default:
			http.Error(w, fmt.Sprintf("format %q: use json, text or html", f), http.StatusBadRequest)
		}
	})
	return mux
}

// leaseLock builds the Lease lock with its own client: a copy of the rest
// config with its own rate limit, and a request timeout under renewDeadline
// so one hung request cannot cost the lease.
func (d *Daemon) leaseLock() (resourcelock.Interface, error) {
	le := d.cfg.LeaderElection
	ns := le.Namespace
	if ns == "" {
		ns = podNamespace()
		if ns == "" {
			return nil, errors.New("daemon.leaderElection.namespace: not set, and the pod's namespace is unknown (no POD_NAMESPACE and no service account namespace file) — set it")
		}
	}
	client := d.opt.LeaseClient
	if client == nil {
		rc, err := kube.RESTConfig(kube.Target{Name: "leader-election", Kubeconfig: le.Kubeconfig, Context: le.Context, InCluster: le.Kubeconfig == ""})
		if err != nil {
			return nil, fmt.Errorf("daemon.leaderElection: %w", err)
		}
		c := *rc
		c.QPS, c.Burst = 5, 10
		c.Timeout = max(time.Second, le.RenewDeadline.Std()/2)
		c.UserAgent = "reclaim/" + app.Version + " leader-election"
		cs, err := kubernetes.NewForConfig(&c)
		if err != nil {
			return nil, fmt.Errorf("daemon.leaderElection: %w", err)
		}
		client = cs
	}
	return &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: le.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: d.opt.Identity},
	}, nil
}

const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

func podNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}

func identity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "reclaim"
	}
	b := make([]byte, 4)
	_, _ = crand.Read(b)
	return host + "_" + hex.EncodeToString(b)
}

// wrappers are the job wrappers of the schedule, outermost first. Order
// matters with robfig/cron v3.0.1: Recover is not on by default, and it must
// be inside SkipIfStillRunning, or a panic loses the token and every later
// pass is skipped.
func wrappers(l cron.Logger) []cron.JobWrapper {
	return []cron.JobWrapper{cron.SkipIfStillRunning(l), cron.Recover(l)}
}

// cronLogger writes cron's messages to zap and counts skipped passes.
type cronLogger struct {
	log     *zap.Logger
	skipped prometheus.Counter
}

func (l cronLogger) Info(msg string, kv ...any) {
	if msg == "skip" {
		l.skipped.Inc()
		l.log.Warn("scheduled pass skipped: the previous pass is still running")
		return
	}
	l.log.Debug("cron: "+msg, zap.Any("detail", kv))
}

func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, zap.Error(err), zap.Any("detail", kv))
}
