package fleetsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
	"reclaim.dev/reclaim/reconcile/state"
)

// Stats add up what fleets did, so a run of the test shows what it covered.
type Stats struct {
	Fleets, Runs, DryRuns int
	// Faults counts each injected fault (and world event that races the plan) by type.
	Faults map[string]int
	// Deleted counts, by kind, objects reclaim deleted; each was checked at its call.
	Deleted map[string]int
	// Breakers counts applied runs of a kind whose breaker had to hold.
	Breakers int
	// Calls counts mutating calls checked.
	Calls int
	// Races are deletions the truth shows unsafe that no re-read can see (a
	// reference made after the snapshot): the design's window, counted only.
	Races map[string]int
	// Blind counts deletions whose object was referenced, in the truth, at a
	// run that could not see it (its source was incomplete): the engine keeps
	// a held clock, as documented. Counted, not failed.
	Blind int
	// Confirmed counts deletes a killed run left pending that a later run
	// settled from its listing (each audited once: by the killed run, or by
	// the confirmation when the killed run had not).
	Confirmed int
	// Declared counts deletions of what only a cluster or puller declared
	// out of scope used: allowed, the user accepted it.
	Declared map[string]int
	// Covered counts deletions where the new situations are: reclaim is
	// not merely holding there.
	Covered map[string]int
}

// NewStats returns empty stats.
func NewStats() *Stats {
	return &Stats{Faults: map[string]int{}, Deleted: map[string]int{}, Races: map[string]int{},
		Declared: map[string]int{}, Covered: map[string]int{}}
}

// String is a one-line-per-group summary.
func (s *Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fleets %d, runs %d (dry-run %d), mutating calls checked %d, deletions checked %s\n",
		s.Fleets, s.Runs, s.DryRuns, s.Calls, counts(s.Deleted))
	fmt.Fprintf(&b, "faults: %s\n", counts(s.Faults))
	fmt.Fprintf(&b, "breaker held a kind's run %d times\n", s.Breakers)
	fmt.Fprintf(&b, "races reclaim cannot see (allowed): %s; deletions across a blind run (held clock kept): %d; "+
		"pending deletes settled by a later run: %d\n", counts(s.Races), s.Blind, s.Confirmed)
	fmt.Fprintf(&b, "deletions of what only a declaration gave up (allowed): %s; deletions where the fleet's identity or pullers are at stake: %s",
		counts(s.Declared), counts(s.Covered))
	return b.String()
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

var errKilled = errors.New("process killed")

// prefixed are scopes as discovery keys name them: "eks 1111/us-east-1".
func prefixed(platform string, scopes []string) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = platform + " " + s
	}
	return out
}

// runFaults are the faults of one run's collection and calls.
type runFaults struct {
	clusters   map[string]string // cluster -> how it failed: unreachable, forbidden, page
	zoneWarn   map[string]string // project -> zone that answered with a warning
	gcePage    map[string]bool   // project -> a failed page of disks
	repos      map[inventory.RepoKey]bool
	registries map[string]bool // account -> repositories not all listed
	manifests  bool
	ec2        map[string]bool // account -> its EC2 listing incomplete
	listings   map[string]bool // discovery scope ("eks 1111/us-east-1") -> its listing incomplete
	consumers  map[string]bool // foreign account -> its consumer's listing incomplete
	regions    map[string]bool // registry account -> its regions could not be listed
	regPolicy  map[string]bool // account -> its registry policy unreadable
	ec2Races   bool            // interfaces change between re-read and delete
	failP      float64         // a delete call fails
	loseP      float64         // a delete call's response is lost
}

// fleet is one simulated fleet: its truth, reclaim's kinds over fakes of its
// APIs, and what the checks need.
type fleet struct {
	mu    sync.Mutex // the workload reactors: called from parallel deletes
	seed  uint64
	rng   *rand.Rand
	w     *world
	now   time.Time
	run   int
	stats *Stats
	errs  []string
	// trace is what happened, run by run, for a failing seed (RECLAIM_FLEET_TRACE=1).
	trace []string

	diskPol  gcepd.Disks
	pvcPol   k8spvc.Policy
	imgPol   *ecrimage.Policy
	jobPol   k8sjob.Policy
	podPol   k8spod.Policy
	netPol   ec2interface.Policy
	kinds    []engine.Kind
	store    *killStore
	auditLog bytes.Buffer

	// This run.
	rf       runFaults
	apply    bool
	calls    int // mutating calls
	killAt   int // kill after this many mutating calls (0: never)
	killed   bool
	cancel   context.CancelFunc
	attempts map[string]int // objects passed to delete calls, by kind
	// membership is the run's fleet as the config makes it (nil: fleetNil).
	membership *inventory.Fleet

	goneDisks []inventory.DiskKey // names reclaim deleted, for recreation
	byReclaim map[string]int      // decision id -> objects reclaim deleted under it
	// byOthers counts objects removed by someone else (Kubernetes, a
	// person, a retried workflow) under a decision id.
	byOthers map[string]int
	// snaps are the disk snapshots reclaim started, by project/name (the
	// snapshot step runs before the deletes, one call at a time).
	snaps map[string]gce.Snapshot
}

// RunFleet simulates one fleet from seed and returns what broke, if anything.
func RunFleet(seed uint64, stats *Stats) error {
	f := &fleet{seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), w: &world{}, stats: stats,
		now: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), byReclaim: map[string]int{}, byOthers: map[string]int{}}
	stats.Fleets++
	f.policies()
	f.store = &killStore{f: f, m: state.NewMemoryStore(engine.NewState())}
	f.setup()
	runs := 5 + f.rng.IntN(3)
	for i := range runs + 2 {
		f.runOnce(i >= runs) // the last two runs are calm: no faults, apply
	}
	f.final()
	if len(f.errs) == 0 {
		return nil
	}
	msg := f.errs
	if len(msg) > 8 {
		msg = append(msg[:8:8], fmt.Sprintf("... and %d more", len(f.errs)-8))
	}
	if traceOn {
		msg = append(append(msg, "trace:"), f.trace...)
	}
	return fmt.Errorf("fleet seed %d:\n  %s", seed, strings.Join(msg, "\n  "))
}

func (f *fleet) tracef(format string, args ...any) {
	if traceOn {
		f.trace = append(f.trace, fmt.Sprintf("run %d: ", f.run)+fmt.Sprintf(format, args...))
	}
}

var traceOn = os.Getenv("RECLAIM_FLEET_TRACE") != ""

func (f *fleet) violate(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf("run %d (%s): ", f.run, f.now.Format("Jan 2 15:04"))+fmt.Sprintf(format, args...))
}

var everything = regexp.MustCompile(`^.*$`)
var latestTag = regexp.MustCompile(`^latest$`)

func (f *fleet) durOf(hours ...int) time.Duration { return time.Duration(pick(f, hours)) * time.Hour }

// safety is a section's safety block of the drawn values.
func safety(minAge, grace time.Duration, maxDeletes int, percent float64, breaker int) config.Safety {
	return config.Safety{MinAge: config.Duration(minAge), Grace: config.Duration(grace),
		Caps: config.Caps{MaxDeletesPerRun: maxDeletes, MaxDeletePercent: config.Percent(percent), BreakerCandidates: breaker}}
}

// policies draws the fleet's policy: small caps and breakers so they bite.
func (f *fleet) policies() {
	minAge, grace, minDetached, snap := f.durOf(0, 1, 4), f.durOf(2, 3, 4, 6), f.durOf(0, 1), f.chance(0.3)
	f.diskPol = gcepd.Disks{MinDetached: config.Duration(minDetached), ProtectLabel: protectLabel, Ownership: gcepd.Ownership{LabelKeys: []string{ownerLabel}}, SnapshotBeforeDelete: snap,
		SnapshotLabel: "reclaim-snapshot-of", Safety: safety(minAge, grace, 1+f.rng.IntN(5), pick(f, []float64{0, 0.5, 1}), pick(f, []int{0, 3 + f.rng.IntN(6)}))}
	del, grace := f.chance(0.9), f.durOf(2, 3, 4, 6)
	f.pvcPol = k8spvc.Policy{Delete: del, ProtectLabel: protectLabel,
		Safety: safety(0, grace, 1+f.rng.IntN(4), pick(f, []float64{0, 0.5}), pick(f, []int{0, 2 + f.rng.IntN(4)}))}
	rule := ecrimage.RepoRule{Name: "**", Match: everything, Limit: 20, HighWater: 4 + f.rng.IntN(6), KeepNewest: f.rng.IntN(3),
		KeepPulledWithin: f.durOf(0, 0, 3), UntaggedOlderThan: f.durOf(0, 0, 6)}
	rule.Target = max(1, rule.HighWater-1-f.rng.IntN(3))
	if f.chance(0.5) {
		rule.KeepTags = []*regexp.Regexp{latestTag}
	}
	f.imgPol = &ecrimage.Policy{Repos: []ecrimage.RepoRule{rule},
		Safety: safety(f.durOf(0, 1, 2), f.durOf(2, 3, 4, 6), 2+f.rng.IntN(8), pick(f, []float64{0, 0.5}), pick(f, []int{0, 5 + f.rng.IntN(10)}))}
	finishedPol := func() finished.Policy {
		return finished.Policy{Succeeded: f.durOf(1, 2, 4), Failed: f.durOf(2, 6), Exclude: []*regexp.Regexp{regexp.MustCompile("^" + systemNS + "$")},
			Annotation: retentionAnn, ProtectLabel: protectLabel,
			Safety: safety(0, f.durOf(2, 3, 4), 1+f.rng.IntN(6), pick(f, []float64{0, 0.5}), pick(f, []int{0, 4 + f.rng.IntN(8)}))}
	}
	f.jobPol = k8sjob.Policy{Policy: finishedPol(), KeepCronJobHistory: f.chance(0.8), TTLGrace: f.durOf(0, 1, 2)}
	f.podPol = k8spod.Policy{Policy: finishedPol()}
	f.netPol = ec2interface.Policy{Delete: f.chance(0.9), Ownership: pick(f, [][]string{{ec2interface.EvidenceVPCCNI, ec2interface.EvidenceBranch},
		{ec2interface.EvidenceVPCCNI}, {ec2interface.EvidenceBranch}}),
		Safety: safety(0, f.durOf(2, 3, 4, 6), 1+f.rng.IntN(4), pick(f, []float64{0, 0.5}), pick(f, []int{0, 2 + f.rng.IntN(5)}))}
	clients := map[string]kubernetes.Interface{}
	client := func(name string) (kubernetes.Interface, error) {
		if cs, ok := clients[name]; ok {
			return cs, nil
		}
		c := f.w.clusterNamed(name)
		if c == nil {
			return nil, fmt.Errorf("no cluster %s", name)
		}
		clients[name] = f.clientset(c)
		return clients[name], nil
	}
	f.kinds = []engine.Kind{
		&gcedisk.Kind{Disks: f.diskPol, API: gceAPI{f}, Now: func() time.Time { return f.now }},
		&k8spvc.Kind{Policy: f.pvcPol, Client: client},
		&ecrimage.Kind{Policy: f.imgPol, API: ecrAPI{f}},
		k8sjob.New(f.jobPol, client),
		k8spod.New(f.podPol, client),
		&ec2interface.Kind{Policy: f.netPol, API: ec2API{f}},
	}
}

func (f *fleet) limits(kind string) engine.Limits {
	for _, k := range f.kinds {
		if k.Name() == kind {
			return k.Limits()
		}
	}
	panic(kind)
}

// runOnce is one hourly run: the world moves, reclaim collects (with
// faults), plans, the world may move again, and reclaim applies.
func (f *fleet) runOnce(calm bool) {
	f.run++
	f.stats.Runs++
	f.now = f.now.Add(time.Duration(60+f.rng.IntN(121)) * time.Minute)
	f.mutate()
	f.drawFaults(calm)
	f.assemble()
	snap := f.snapshot()
	f.observe(&snap)
	prev, err := f.store.m.Load(context.Background())
	if err != nil {
		f.violate("load state: %v", err)
		return
	}
	plan := engine.Build(&snap, f.kinds, prev, f.now)
	report.Show(plan, f.kinds, &snap)
	due := map[string]int{}
	for _, k := range f.kinds {
		due[k.Name()] = dueCount(plan, k, f.now)
	}
	if !calm && f.chance(0.5) {
		f.raceWindow(plan)
	}
	f.apply = calm || !f.chance(0.2)
	if !f.apply {
		f.stats.DryRuns++
	}
	f.calls, f.killAt, f.killed, f.attempts = 0, 0, false, map[string]int{}
	if !calm && f.apply && f.chance(0.15) {
		f.killAt = 1 + f.rng.IntN(4)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	a := &engine.Applier{Kinds: f.kinds, Store: f.store, Audit: audit.NewReadable(auditWriter{f}, func() io.Reader { return bytes.NewReader(f.auditLog.Bytes()) }), Log: zap.NewNop(),
		Now: func() time.Time { return f.now }, RunID: fmt.Sprint(f.run), MaxConsecutiveFailures: 3}
	out, err := a.Apply(ctx, plan, f.apply)
	f.stats.Confirmed += len(out.Confirmed)
	if traceOn {
		f.tracef("faults %+v apply=%v killAt=%d", f.rf, f.apply, f.killAt)
		for _, r := range out.Results {
			f.tracef("  %s %s: %s %s %s", r.Kind, r.ID, r.Result, r.Reason, r.Error)
		}
	}
	cancel()
	if err != nil && !f.killed {
		f.violate("apply: %v", err)
	}
	f.killed = false
	f.checkRun(&snap, due)
}

// drawFaults picks this run's faults; a calm run has none.
func (f *fleet) drawFaults(calm bool) {
	f.rf = runFaults{clusters: map[string]string{}, zoneWarn: map[string]string{}, gcePage: map[string]bool{},
		repos: map[inventory.RepoKey]bool{}, registries: map[string]bool{}, ec2: map[string]bool{},
		listings: map[string]bool{}, consumers: map[string]bool{}, regPolicy: map[string]bool{}, regions: map[string]bool{}}
	if calm {
		return
	}
	count := func(name string) { f.stats.Faults[name]++ }
	for _, c := range f.w.clusters {
		switch x := f.rng.Float64(); {
		case x < 0.10:
			f.rf.clusters[c.name] = "unreachable"
			count("cluster unreachable")
		case x < 0.15:
			f.rf.clusters[c.name] = "forbidden"
			count("cluster forbidden")
		case x < 0.25:
			f.rf.clusters[c.name] = "page"
			count("cluster failed page")
		case x < 0.32:
			f.rf.clusters[c.name] = "workloads"
			count("cluster workload lists failed")
		}
	}
	for _, p := range f.w.projects {
		if f.chance(0.15) {
			f.rf.zoneWarn[p] = pick(f, f.w.zones)
			count("gce zone warning")
		}
		if f.chance(0.08) {
			f.rf.gcePage[p] = true
			count("gce failed page")
		}
	}
	for _, r := range f.w.repos {
		if f.chance(0.12) {
			f.rf.repos[r.key] = true
			count("ecr throttled repository")
		}
	}
	for _, a := range f.w.accounts {
		if f.chance(0.06) {
			f.rf.registries[a] = true
			count("ecr registry partial")
		}
	}
	for _, a := range f.w.accounts {
		if f.chance(0.1) {
			f.rf.ec2[a] = true
			count("ec2 listing incomplete")
		}
	}
	for _, key := range slices.Concat(prefixed(inventory.EKS, f.w.eksScopes), prefixed(inventory.GKE, f.w.gkeScopes)) {
		if f.chance(0.06) {
			f.rf.listings[key] = true
			count("discovery listing incomplete")
		}
	}
	for _, fa := range f.w.foreign {
		if fa.read && f.chance(0.08) {
			f.rf.consumers[fa.account] = true
			count("ecr consumer incomplete")
		}
	}
	for _, a := range f.w.accounts { // in order: a seed replays its fleet
		if _, ok := f.w.enabled[a]; ok && f.chance(0.05) {
			f.rf.regions[a] = true
			count("region listing failed")
		}
	}
	for _, a := range f.w.accounts {
		if f.chance(0.03) {
			f.rf.regPolicy[a] = true
			count("ecr registry policy unreadable")
		}
	}
	f.rf.ec2Races = f.chance(0.3)
	if len(f.w.manifests) > 0 && f.chance(0.1) {
		f.rf.manifests = true
		count("manifests incomplete")
	}
	if f.chance(0.3) {
		f.rf.failP = 0.25
	}
	if f.chance(0.3) {
		f.rf.loseP = 0.25
	}
}

// raceWindow changes the world between plan and apply, aimed at what the
// plan deletes: the re-read must catch what it can see.
func (f *fleet) raceWindow(p *engine.Plan) {
	var due []*engine.Decision
	for d := range p.All() {
		if d.Action == engine.Delete {
			due = append(due, d)
		}
	}
	if len(due) == 0 {
		return
	}
	var d *engine.Decision
	event := func(name string) {
		f.stats.Faults["window: "+name]++
		f.tracef("window: %s: %s", name, d.ID)
	}
	for range 1 + f.rng.IntN(2) {
		d = pick(f, due)
		switch d.Kind {
		case gcedisk.Name:
			key, _ := inventory.ParseDiskKey(d.ID)
			dk := f.w.diskAt(key)
			if dk == nil {
				continue
			}
			switch f.rng.IntN(4) {
			case 0:
				dk.users = []string{f.instance(key)}
				event("disk attached")
			case 1:
				var can []*cluster
				for _, c := range f.w.clusters {
					if c.couldReference(key.Project) {
						can = append(can, c)
					}
				}
				if len(can) > 0 {
					c := pick(f, can)
					c.pvs = append(c.pvs, &pv{name: fmt.Sprintf("pv-late-%d", f.w.next()), disk: key, retain: true, late: true})
					event("PV made for disk")
				}
			case 2:
				f.w.removeDisk(dk)
				f.byOthers[key.String()]++
				f.newDisk(key, f.now)
				event("disk recreated")
			case 3:
				dk.labels[protectLabel] = "keep"
				event("disk protected")
			}
		case k8spvc.Name:
			det := d.Detail.(*k8spvc.Detail)
			c := f.w.clusterNamed(det.Cluster)
			pc := c.pvcNamed(d.Name)
			if pc == nil {
				continue
			}
			switch f.rng.IntN(3) {
			case 0:
				f.removePVC(c, pc)
				f.startWorkflow(c, pc.name, pc.wf.Name)
				event("PVC recreated")
			case 1:
				pc.protected = true
				event("PVC protected")
			case 2:
				c.pods = append(c.pods, &pod{name: fmt.Sprintf("late-%d", f.w.next()), claim: pc.name, phase: "Running", late: true})
				event("pod mounts PVC")
			}
		case ecrimage.Name:
			rk, digest, _ := ecrimage.ParseID(d.ID)
			r := f.w.repoOf(rk)
			img := r.image(digest)
			if img == nil {
				continue
			}
			if f.chance(0.5) {
				f.retag(img)
				event("image re-tagged")
				continue
			}
			for _, c := range f.w.clusters {
				if c.couldPull(rk.Account) {
					c.refs = append(c.refs, &imgRef{repo: rk, digest: digest, late: true})
					img.lastPull = f.now.Add(time.Minute)
					event("image pulled")
					break
				}
			}
		case k8sjob.Name, k8spod.Name, ec2interface.Name:
			f.raceNew(d, event)
		}
	}
}

// killStore is the state store of a process that can be killed: once
// killed, nothing it saves survives.
type killStore struct {
	f *fleet
	m *state.MemoryStore
}

func (s *killStore) Load(ctx context.Context) (engine.State, error) { return s.m.Load(ctx) }

func (s *killStore) Save(ctx context.Context, st engine.State) error {
	if s.f.killed {
		return errKilled
	}
	return s.m.Save(ctx, st)
}

func (s *killStore) Note(ctx context.Context, j engine.Journal) error {
	if s.f.killed {
		return errKilled
	}
	return s.m.Note(ctx, j)
}

func (s *killStore) String() string { return "killable memory" }

// auditWriter is the audit log of a process that can be killed.
type auditWriter struct{ f *fleet }

func (a auditWriter) Write(b []byte) (int, error) {
	if a.f.killed {
		return 0, errKilled
	}
	return a.f.auditLog.Write(b)
}
