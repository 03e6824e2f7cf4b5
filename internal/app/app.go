// Package app wires reclaim: a Runner builds every client once from the
// config, then each pass collects, plans, applies and reports. The CLI, the
// demo and the end-to-end tests all go through it.
package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/fleet"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
	"reclaim.dev/reclaim/reconcile/state"
)

// Deps are the parts of a run. Anything left nil is built from the config.
type Deps struct {
	// Clients are the clients of cloud reads by read name (Clouds,
	// kind.Module.Cloud): a harness's fakes. A read's client that is not
	// here is opened from its section.
	Clients  map[string]any
	Clusters func(ctx context.Context) []inventory.ClusterRefs
	// Discovery lists the fleet's clusters; nil with fleet.discover builds
	// one discoverer per GKE project and EKS account and region, unless
	// Clusters is given (a harness that fakes the clusters fakes the fleet).
	Discovery []fleet.Discoverer
	// Kube returns a cluster's client for deletes; nil uses the clients the
	// collector built from the config.
	Kube  func(cluster string) (kubernetes.Interface, error)
	Store engine.Store
	Audit *audit.Log
	Log   *zap.Logger
	Now   func() time.Time
	// Records is where the clusters' records are (fleet.records); nil
	// opens the section's bucket.
	Records records.Store
	// Agent makes the runner its cluster's agent (reclaim agent): it reads
	// the one configured cluster, publishes what it uses to
	// fleet.records, and plans only the kinds that need no other
	// cluster's view.
	Agent bool
	// OutsideCluster lets an agent read its cluster through its config's
	// kubeconfig rather than from inside it (reclaim agent
	// --outside-cluster): never set by a config, so that a copied agent
	// config cannot publish another cluster's view under its own name.
	OutsideCluster bool
}

// Options are the run's switches.
type Options struct {
	// Apply deletes what the plan marks for deletion. Without it nothing is deleted.
	Apply bool
	// Stop, once done, ends the pass early without cutting anything short:
	// collection is abandoned, and no new delete batch starts, while the
	// batch in flight and the state saves finish under Once's ctx (a
	// daemon's graceful shutdown). Nil never stops.
	Stop context.Context
	// Only narrows what this pass deletes to some kinds and clusters (run
	// --kind, --cluster); the rest is planned and reported as usual, its
	// due deletions held. A name the run does not know is an error.
	Only engine.Filter
}

// Runner runs passes with clients built once.
type Runner struct {
	cfg  *config.Config
	apis map[string]fleet.APIServer
	// read reads clusters, configured or discovered: from their records
	// (records) or their API servers.
	read func(ctx context.Context, targets []kube.Target) []inventory.ClusterRefs
	// discovers: discovery is on and lists the fleet. A harness that
	// fakes the clusters and no discovery fakes the fleet: the config's.
	discovers bool
	d         Deps
	// on are the kinds the config turns on, asked once; planned those of
	// them the runner plans, and kinds what planned made.
	on      Modules
	planned Modules
	kinds   []engine.Kind
	closers []func()
	routes  []engine.Route
	// agent: the runner is its cluster's agent (Deps.Agent). records reads
	// the clusters from their records (a deleter with fleet.records);
	// pub publishes the agent's cluster's record.
	agent   bool
	records *records.Reader
	pub     *records.Publisher
}

// plans says whether the runner plans a registered kind: an agent only the
// kinds that need no other cluster's view, a deleter reading records only
// the others (it holds no kube credential to delete with).
func (r *Runner) plans(m kind.Module) bool {
	switch {
	case r.agent:
		return m.InCluster
	case r.records != nil:
		return !m.InCluster
	}
	return true
}

// New builds every client the config needs and the kinds it enables: it
// derives the run's wiring from the config once (wire), then opens what
// the wiring calls for.
func New(ctx context.Context, cfg *config.Config, d Deps) (*Runner, error) {
	w, err := wire(cfg, d.Agent, d.OutsideCluster)
	if err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, agent: d.Agent, on: w.on, routes: w.routes, records: w.records}
	if d.Log == nil {
		d.Log = zap.NewNop()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	for _, w := range cfg.Warnings {
		d.Log.Warn("config: " + w)
	}
	if err := r.openRecords(ctx, w, &d); err != nil {
		return nil, err
	}
	for _, m := range r.on {
		if r.plans(m) {
			r.planned = append(r.planned, m)
		}
	}
	for _, open := range []func(context.Context, wiring, *Deps) error{r.openClouds, r.openDiscovery, r.openClusters, r.openStore, r.openKinds} {
		if err := open(ctx, w, &d); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// openRecords opens the store of the agents' records, when the wiring
// reads or publishes them and none was given.
func (r *Runner) openRecords(ctx context.Context, w wiring, d *Deps) error {
	if r.records != nil {
		r.records.Now = d.Now
	}
	if w.recordCfg != nil && d.Records == nil {
		rs, err := records.Open(ctx, w.recordCfg, w.bounds, "reclaim/"+Version, d.Log)
		if err != nil {
			return err
		}
		d.Records = rs
	}
	if r.records != nil {
		r.records.Store = d.Records
	}
	return nil
}

// openClouds opens the clients of the clouds the planned kinds read.
func (r *Runner) openClouds(ctx context.Context, _ wiring, d *Deps) error {
	// An agent reads its cluster and nothing else: its kinds need no
	// cloud (k8s-pvc's quota pools are the deleter's business), and its
	// identity holds no cloud grant.
	opens := r.planned
	if r.agent {
		opens = nil
	}
	return openClouds(ctx, r.cfg, d, &r.closers, opens)
}

// openDiscovery makes the fleet's discoverers, unless given.
func (r *Runner) openDiscovery(ctx context.Context, _ wiring, d *Deps) error {
	cfg := r.cfg
	r.discovers = !d.Agent && cfg.Fleet.Discover && (d.Discovery != nil || d.Clusters == nil)
	if d.Discovery == nil && d.Clusters == nil && cfg.Fleet.Discover && !d.Agent {
		ds, err := Discoverers(ctx, cfg, d.Log)
		if err != nil {
			return fmt.Errorf("fleet discovery: %w", err)
		}
		d.Discovery = ds
	}
	return nil
}

// openClusters sets how this runner reads clusters, configured or
// discovered: a deleter with fleet.records from their records, else from
// their API servers, with the pool's clients; and an agent's publisher.
func (r *Runner) openClusters(_ context.Context, w wiring, d *Deps) error {
	pool := kube.NewPool(w.targets)
	if r.records != nil {
		r.read = r.records.Read
	} else {
		// A deleter reading records loads no kubeconfig, not even the
		// default one: it joins clusters by where they live.
		r.apis = fleet.ConfiguredAPIs(w.targets)
		r.read = apiReader{pool: pool, opts: w.kube}.read
	}
	if d.Clusters == nil {
		// Only the configured clusters: the pool also holds the
		// discovered ones an earlier pass read.
		d.Clusters = func(ctx context.Context) []inventory.ClusterRefs { return r.read(ctx, w.targets) }
	}
	if d.Kube == nil {
		d.Kube = pool.Client
	}
	if d.Agent {
		r.pub = &records.Publisher{Config: w.recordCfg, Store: d.Records, Target: w.targets[0], Client: d.Kube, Log: d.Log, Agent: Version}
	}
	return nil
}

// openStore opens the state store and the audit log, unless given.
func (r *Runner) openStore(_ context.Context, _ wiring, d *Deps) error {
	if d.Store == nil {
		s, err := StoreFrom(r.cfg)
		if err != nil {
			return err
		}
		d.Store = s
	}
	if d.Audit == nil {
		a, err := audit.Open(r.cfg.Audit.File)
		if err != nil {
			return err
		}
		r.closers = append(r.closers, func() { a.Close() })
		d.Audit = a
	}
	return nil
}

// openKinds makes the planned kinds, with the clients opened.
func (r *Runner) openKinds(_ context.Context, _ wiring, d *Deps) error {
	r.d = *d
	c := &kind.Clients{Kube: d.Kube, Clouds: d.Clients}
	for _, m := range r.planned {
		k := m.New(r.cfg, c)
		if k == nil {
			// Its On and its New disagree: what the config asks of it
			// would be silently skipped.
			return fmt.Errorf("kind %s is on, but made nothing from the config", m.Name)
		}
		r.kinds = append(r.kinds, k)
	}
	return nil
}

// apiReader reads clusters from their API servers, with the pool's
// clients and what every cluster's collection reads (opts).
type apiReader struct {
	pool *kube.Pool
	opts kube.Options
}

func (a apiReader) read(ctx context.Context, targets []kube.Target) []inventory.ClusterRefs {
	return a.pool.CollectTargets(ctx, targets, a.opts, 8)
}

// Kinds are the kinds this runner plans, in registration order.
func (r *Runner) Kinds() []engine.Kind { return r.kinds }

// Close releases the clients.
func (r *Runner) Close() {
	for _, c := range r.closers {
		c()
	}
	r.closers = nil
}

// Run builds a runner, runs one pass and closes it.
func Run(ctx context.Context, cfg *config.Config, d Deps, opt Options) (*report.Report, error) {
	r, err := New(ctx, cfg, d)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Once(ctx, opt)
}

// Once performs one pass. The error is for a pass that could not happen; a
// pass with incomplete sources or failed deletes returns a report whose
// ExitCode says so.
func (r *Runner) Once(ctx context.Context, opt Options) (*report.Report, error) {
	d := r.d
	if err := r.checkKinds(opt.Only.Kinds); err != nil {
		return nil, err
	}
	id := runID(d.Now())
	unlock, err := lock(ctx, d.Store, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	prev, err := r.load(ctx)
	if err != nil {
		return nil, err
	}
	start := d.Now()
	snap, err := r.collect(ctx, opt)
	if err != nil {
		return nil, err
	}
	var publishErr error
	if r.pub != nil {
		if publishErr = r.pub.Publish(ctx, &snap); publishErr != nil {
			d.Log.Error("the cluster's record was not published: the deleters hold what this cluster could use once the last one is older than fleet.records.maxAge", zap.Error(publishErr))
		}
	}
	plan, err := r.plan(&snap, prev, opt)
	if err != nil {
		return nil, err
	}
	due := 0
	for _, k := range r.kinds {
		due += plan.Count(k.Name(), engine.Delete)
	}
	d.Log.Info("planned", zap.Bool("dry_run", !opt.Apply), zap.Duration("collect", d.Now().Sub(start)),
		zap.Int("delete", due), zap.Bool("incomplete", plan.Incomplete), zap.Bool("breaker", plan.BreakerTripped))

	ap := &engine.Applier{Kinds: r.kinds, Store: d.Store, Audit: d.Audit, Log: d.Log, Now: d.Now, RunID: id, MaxConsecutiveFailures: 5, Stop: opt.Stop}
	out, err := ap.Apply(ctx, plan, opt.Apply)
	if err != nil {
		return nil, err
	}
	return r.finish(ctx, plan, out, opt, publishErr), nil
}

// lock holds the state store for run id, when it is one that locks.
func lock(ctx context.Context, st engine.Store, id string) (unlock func(), err error) {
	l, ok := st.(engine.Locker)
	if !ok {
		return func() {}, nil
	}
	return l.Lock(ctx, "run "+id)
}

// load loads the state, and the records' pins it keeps.
func (r *Runner) load(ctx context.Context) (engine.State, error) {
	prev, err := r.d.Store.Load(ctx)
	if err != nil {
		return prev, err
	}
	if r.records != nil {
		seen, err := records.ParseSeen(prev.Records)
		if err != nil {
			return prev, err
		}
		r.records.Begin(seen)
	}
	return prev, nil
}

// collect reads the clouds, the fleet and the clusters, stopped by
// opt.Stop.
func (r *Runner) collect(ctx context.Context, opt Options) (inventory.View, error) {
	d := r.d
	co := inventory.CollectOptions{Clusters: d.Clusters, Now: d.Now}
	co.Clouds = r.cloudReads()
	// The discoverers of this pass: the runner's, and those their
	// listings called for (an account's regions).
	ds := d.Discovery
	co.FleetClusters = func(ctx context.Context, listings []inventory.FleetListing, clouds map[string]any) (*inventory.Fleet, []inventory.ClusterRefs) {
		return r.fleetClusters(ctx, ds, listings, clouds)
	}
	if r.discovers {
		co.Discover = func(ctx context.Context) []inventory.FleetListing {
			var ls []inventory.FleetListing
			ds, ls = fleet.Discover(ctx, d.Discovery)
			return ls
		}
	}
	cctx := ctx
	if opt.Stop != nil {
		var cancel context.CancelFunc
		cctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(opt.Stop, cancel)()
	}
	// One DescribeRegions per account and pass, whoever asks first; one
	// GetCallerIdentity per discovery identity and pass.
	cctx = eks.WithIdentityMemo(ec2.WithRegionsMemo(cctx))
	snap := inventory.Collect(cctx, co)
	if cctx.Err() != nil {
		return snap, fmt.Errorf("run cancelled while collecting: %w", context.Cause(cctx))
	}
	return snap, checkClusters(opt.Only.Clusters, &snap)
}

// plan builds the pass's plan with its settings, and keeps the records'
// pins in its state.
func (r *Runner) plan(snap *inventory.View, prev engine.State, opt Options) (*engine.Plan, error) {
	cfg := r.cfg
	set := engine.Settings{Only: opt.Only, Currency: cfg.Prices.Currency, OwnerLabel: OwnerLabel(cfg), Routes: r.routes,
		RequireNotice: cfg.Notify != nil && cfg.Notify.RequireNotice, Notices: cfg.Warnings}
	if r.records != nil {
		// A record up to maxAge old still reports; only one newer than
		// deleteMaxAge, and taken since a candidate's grace began, may
		// delete what its cluster could use.
		set.FreshViews, set.FreshWithin, set.FreshWithinName = true, r.records.Config.DeleteMaxAge.Std(), "fleet.records.deleteMaxAge"
		set.FreshHint = "is its agent running in watch mode, reclaim daemon --agent, publishing within a minute of a change?"
		set.SettleHint = "fleet.records.dropSettle " + r.records.Config.DropSettle.String() + ": a cluster's first records, and a class of evidence new in them, are believed for what they show in use at once, and whole once they have stood that long"
	}
	plan := set.Build(snap, r.kinds, prev, r.d.Now())
	report.Show(plan, r.kinds, snap)
	if r.records != nil {
		var err error
		if plan.State.Records, err = records.SeenJSON(r.records.Remembered()); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// finish makes the pass's report; a pass that went well is recorded as the
// last success.
func (r *Runner) finish(ctx context.Context, plan *engine.Plan, out *engine.Outcome, opt Options, publishErr error) *report.Report {
	d := r.d
	var o *engine.Outcome
	if opt.Apply {
		o = out
	}
	rep := report.New(plan, o, opt.Apply)
	if publishErr != nil {
		rep.ExitCode = report.ExitError
	}
	rep.LastSuccess = plan.State.LastSuccess
	if rep.ExitCode == report.ExitOK {
		rep.LastSuccess = d.Now()
		if err := markSuccess(ctx, d.Store, out.Saved, rep.LastSuccess); err != nil {
			d.Log.Warn("could not record the successful run in the state store", zap.Error(err))
		}
	}
	// The packed clocks are saved, and nothing after reads them (Announce
	// loads the state again): a trim's half a million, 8 MB, would
	// otherwise stay while the report is rendered and delivered.
	plan.State.Digests, out.Saved.Digests = nil, nil
	return rep
}

// checkKinds refuses a --kind this runner does not plan: a typo would
// otherwise hold every deletion and look like a quiet run.
func (r *Runner) checkKinds(names []string) error {
	var known []string
	for _, k := range r.kinds {
		known = append(known, k.Name())
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return fmt.Errorf("--kind %s: not a kind this config enables; use one of %s", n, strings.Join(known, ", "))
		}
	}
	return nil
}

// checkClusters refuses a --cluster the run did not read, before anything
// is planned or deleted.
func checkClusters(names []string, snap *inventory.View) error {
	var read []string
	for _, c := range snap.Clusters {
		read = append(read, c.Name)
	}
	for _, n := range names {
		if !slices.Contains(read, n) {
			return fmt.Errorf("--cluster %s: not a cluster of this run; its clusters are %s", n, strings.Join(read, ", "))
		}
	}
	return nil
}

// fleetClusters assembles the run's fleet from the config and the
// discovery listings, and collects the configured clusters and the
// discovered ones it reads, side by side.
func (r *Runner) fleetClusters(ctx context.Context, ds []fleet.Discoverer, listings []inventory.FleetListing, clouds map[string]any) (*inventory.Fleet, []inventory.ClusterRefs) {
	nets, _ := clouds[networksRead].([]inventory.NetworkListing)
	fp := fleet.Assemble(r.cfg, r.on.Reads(), r.discovers, ds, listings, r.apis, nets, r.d.Now())
	if r.records != nil {
		r.records.WithClouds(clouds)
		r.records.WithCAs(records.DiscoveredCAs(&fp.Fleet))
	}
	var configured, discovered []inventory.ClusterRefs
	var wg sync.WaitGroup
	wg.Go(func() { configured = r.d.Clusters(ctx) })
	if len(fp.Read) > 0 {
		wg.Go(func() {
			discovered = r.read(ctx, fp.Read)
		})
	}
	wg.Wait()
	holdConflicts(configured, fp.Conflicts)
	all := append(configured, discovered...)
	if r.records != nil {
		r.records.Twins(all)
	}
	return &fp.Fleet, all
}

// holdConflicts makes each configured cluster whose name collides with a
// discovered one it cannot be told apart from incomplete: it was read, but
// what the other could use must not look unused through it, so nothing
// either could use is deleted, and the cluster's problem says why.
func holdConflicts(clusters []inventory.ClusterRefs, conflicts map[string]string) {
	for i := range clusters {
		if why, ok := conflicts[clusters[i].Name]; ok {
			clusters[i].Complete = false
			clusters[i].Problems = append(clusters[i].Problems, why)
		}
	}
}

// Announced is a report delivered to some notify target, and the owners it
// was cut to (none: the whole report).
type Announced struct {
	Report *report.Report
	Owners []string
}

// Announce records, after reports were delivered to notify targets, that
// their candidates were announced at t (notify.requireNotice counts the
// notice from then): one load and one save of the state for them all.
func (r *Runner) Announce(ctx context.Context, t time.Time, as ...Announced) error {
	if len(as) == 0 {
		return nil
	}
	st, err := r.d.Store.Load(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, a := range as {
		if a.Report != nil && a.Report.Plan != nil {
			n += st.Announce(a.Report.Plan, t, a.Owners...)
		}
	}
	if n == 0 {
		return nil
	}
	return r.d.Store.Save(ctx, st)
}

// Targets lists the clusters of the config for the collector.
func Targets(cfg *config.Config) []kube.Target { return targets(cfg, On(cfg)) }

// targets lists the clusters of the config, read for the kinds that are on.
func targets(cfg *config.Config, on Modules) []kube.Target {
	out := make([]kube.Target, 0, len(cfg.Clusters))
	reads := on.Reads()
	for _, c := range cfg.Clusters {
		out = append(out, kube.Target{Name: c.Name, Kubeconfig: c.Kubeconfig, Context: c.Context, InCluster: c.InCluster,
			Projects: c.GCEProjects, Accounts: c.AWSAccounts, Images: reads[inventory.ReadImages], Timeout: c.Timeout.Std(), QPS: c.QPS, Burst: c.Burst, PageSize: c.PageSize,
			Subnets: c.AWSSubnets, Workloads: reads[inventory.ReadWorkloads], Place: fleet.PlaceOf(c), CloudName: cmp.Or(c.CloudName, c.Name)})
	}
	return out
}

// KubeOptions are what every cluster's collection reads, configured or
// discovered: the global settings, and what the kinds the config turns on
// ask of it (their taps, the retention annotation, labels).
func KubeOptions(cfg *config.Config) kube.Options { return kubeOptions(cfg, On(cfg)) }

func kubeOptions(cfg *config.Config, on Modules) kube.Options {
	c := on.Collect(cfg)
	return kube.Options{ProtectLabel: cfg.Kubernetes.ProtectLabel, RetentionAnnotation: c.RetentionAnnotation,
		Labels: c.Labels, OwnerLabel: OwnerLabel(cfg), Taps: on.Taps(cfg)}
}

// StoreFrom opens the state store the config names.
func StoreFrom(cfg *config.Config) (engine.Store, error) {
	if cm := cfg.State.ConfigMap; cm != nil {
		rc, err := kube.RESTConfig(kube.Target{Name: "state", Kubeconfig: cm.Kubeconfig, Context: cm.Context, InCluster: cm.Kubeconfig == ""})
		if err != nil {
			return nil, fmt.Errorf("state.configMap: %w", err)
		}
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("state.configMap: %w", err)
		}
		return &state.ConfigMapStore{Client: cs, Namespace: cm.Namespace, Name: cm.Name}, nil
	}
	return &state.FileStore{Path: cfg.State.File}, nil
}

// markSuccess saves the state Apply saved (st) with the run's success. It
// does not read the store again: a state of a million clocks would be held
// twice, and a save of another run since this one's is refused, not
// overwritten.
func markSuccess(ctx context.Context, s engine.Store, st engine.State, t time.Time) error {
	st.LastSuccess = t
	return s.Save(ctx, st)
}

func runID(now time.Time) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// Version is set at build time with -ldflags "-X reclaim.dev/reclaim/internal/app.Version=...".
var Version = "dev"

// Revision is the commit the binary was built from ("" when not built from
// a git checkout), and whether the work tree had changes.
func Revision() (rev string, dirty bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty
}
