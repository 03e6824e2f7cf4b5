package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/daemon"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/state"
)

// countingDisks counts the deletes one replica makes.
type countingDisks struct {
	*gce.Client
	deletes atomic.Int32
}

func (c *countingDisks) DeleteDisk(ctx context.Context, key inventory.DiskKey) error {
	c.deletes.Add(1)
	return c.Client.DeleteDisk(ctx, key)
}

// every fires every d.
type every time.Duration

func (e every) Next(t time.Time) time.Time { return t.Add(time.Duration(e)) }

// cutTransport fails every request once cut.
type cutTransport struct {
	rt  http.RoundTripper
	cut atomic.Bool
}

func (c *cutTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		return nil, errors.New("cut off from the API server (test)")
	}
	return c.rt.RoundTrip(r)
}

type replica struct {
	lease  *cutTransport
	name   string
	disks  *countingDisks
	d      *daemon.Daemon
	passes atomic.Int32
	stop   func() error
}

// Two daemons against one real kube-apiserver: exactly one holds the Lease
// and only it deletes; the other stands by, ready. When the leader stops,
// the other takes the Lease within the lease duration and carries on; each
// disk is deleted once and audited once.
func TestDaemonLeaderElection(t *testing.T) {
	w := newWorld(t)
	var keys []string
	for i := range 6 {
		keys = append(keys, w.orphan(zoneA, fmt.Sprintf("lease-%d", i)))
	}
	w.seen(w.now.Add(-7*time.Hour), keys...)
	cfg, err := config.Parse(fmt.Appendf(nil, `clusters:
  - name: prod-a
    kubeconfig: unused
gce:
  projects: [%s]
  endpoint: %s
  withoutAuthentication: true
disks:
  grace: 6h
  maxDeletesPerRun: 2
  maxDeletePercent: 100%%
daemon:
  leaderElection:
    enabled: true
    namespace: default
    name: %s
    kubeconfig: %s
    context: admin
    leaseDuration: 2s
    renewDeadline: 1.5s
    retryPeriod: 0.3s
`, project, w.gce.URL(), w.name("lease"), prodA.Kubeconfig), "daemon.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clusters := func(context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{{Name: "prod-a", Complete: true, Projects: []string{project}}}
	}
	var auditMu sync.Mutex
	var auditBuf bytes.Buffer
	store := &state.FileStore{Path: w.statePath()}
	newReplica := func(name string) *replica {
		rp := &replica{name: name, lease: &cutTransport{}}
		// The Lease's own client, through a transport the test can cut: a
		// replica cut off from the API server (a partition, a hung or
		// killed process) can neither renew nor release its Lease.
		lc := rest.CopyConfig(prodA.Admin)
		lc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { rp.lease.rt = rt; return rp.lease }
		leaseClient, err := kubernetes.NewForConfig(lc)
		if err != nil {
			t.Fatal(err)
		}
		c, err := gce.New(context.Background(), gce.Options{Endpoint: w.gce.URL(), WithoutAuthentication: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		rp.disks = &countingDisks{Client: c}
		r, err := app.New(context.Background(), cfg, app.Deps{Clients: map[string]any{gcepd.Read: rp.disks}, Clusters: clusters, Store: store,
			Audit: audit.New(enginetest.LockedWriter{Mu: &auditMu, W: &auditBuf})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := passer(func(ctx context.Context, opt app.Options) (*report.Report, error) {
			rp.passes.Add(1)
			return r.Once(ctx, opt)
		})
		rp.d, err = daemon.New(p, *cfg.Daemon, daemon.Options{Apply: true, Kinds: app.KindNames(), Gauges: app.Gauges(),
			Listener: ln, Schedule: every(500 * time.Millisecond), Identity: name, LeaseClient: leaseClient})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- rp.d.Run(ctx) }()
		var once sync.Once
		var runErr error
		rp.stop = func() error {
			once.Do(func() {
				cancel()
				select {
				case runErr = <-done:
				case <-time.After(time.Minute):
					runErr = fmt.Errorf("%s: Run did not return", name)
				}
			})
			return runErr
		}
		t.Cleanup(func() { _ = rp.stop() })
		return rp
	}
	a, b := newReplica("daemon-a"), newReplica("daemon-b")
	leading := func(rp *replica) bool { return gaugeValue(t, rp, "reclaim_daemon_leader") == 1 }

	waitUntil(t, "a leader that deleted", func() bool {
		return (leading(a) || leading(b)) && a.disks.deletes.Load()+b.disks.deletes.Load() >= 2
	})
	leader, standby := a, b
	if leading(b) {
		leader, standby = b, a
	}
	holder := leaseHolder(t, w.name("lease"))
	if holder != leader.name {
		t.Fatalf("the Lease is held by %q, but %s runs passes", holder, leader.name)
	}
	if leading(standby) || standby.passes.Load() != 0 || standby.disks.deletes.Load() != 0 {
		t.Fatalf("%s is not the leader yet leads=%v, ran %d passes, deleted %d disks", standby.name, leading(standby),
			standby.passes.Load(), standby.disks.deletes.Load())
	}
	waitUntil(t, "the standby ready", func() bool { return httpStatus(t, standby.d, "/readyz") == http.StatusOK })

	// Stop the leader; the standby takes over within the lease duration.
	if err := leader.stop(); err != nil {
		t.Fatalf("stopping %s: %v", leader.name, err)
	}
	stopped := time.Now()
	byLeader := leader.disks.deletes.Load()
	waitUntil(t, "the standby to lead", func() bool { return leading(standby) })
	if took := time.Since(stopped); took > 2*time.Second {
		t.Errorf("handover took %s, more than the 2s lease duration", took)
	}
	t.Logf("%s deleted %d disks, then handed over to %s in %s", leader.name, byLeader, standby.name, time.Since(stopped).Round(time.Millisecond))
	waitUntil(t, "every disk deleted", func() bool {
		for _, k := range keys {
			if w.gce.HasDisk(k) {
				return false
			}
		}
		return true
	})
	if got := leader.disks.deletes.Load(); got != byLeader {
		t.Errorf("%s deleted %d disks after it stopped", leader.name, got-byLeader)
	}
	if got := standby.disks.deletes.Load(); got == 0 || int(got+byLeader) != len(keys) {
		t.Errorf("deletes: %s %d, %s %d; want %d in all, some by each", leader.name, byLeader, standby.name, got, len(keys))
	}

	// Cut the new leader off from the API server without letting it release
	// the Lease: it stops leading (and passing) once it cannot renew, and a
	// third replica takes the Lease when it expires.
	c := newReplica("daemon-c")
	waitUntil(t, "daemon-c to stand by", func() bool { return httpStatus(t, c.d, "/readyz") == http.StatusOK })
	standby.lease.cut.Store(true)
	cut := time.Now()
	waitUntil(t, standby.name+" to stop leading", func() bool { return !leading(standby) })
	passesAtLoss := standby.passes.Load()
	waitUntil(t, "daemon-c to lead", func() bool { return leading(c) })
	// The Lease expires leaseDuration (2s) after the candidate last saw it
	// renewed, and the candidate retries every retryPeriod (0.3s, jittered):
	// about 2.5-3.5s here; 3x the lease duration is a ceiling that a busy
	// machine does not reach, not a speed target.
	if took := time.Since(cut); took > 6*time.Second {
		t.Errorf("handover from a cut-off leader took %s, want about the 2s lease duration", took)
	}
	if h := leaseHolder(t, w.name("lease")); h != c.name {
		t.Errorf("the Lease is held by %q after the cut, want %s", h, c.name)
	}
	time.Sleep(time.Second) // a few schedule ticks
	if got := standby.passes.Load(); got != passesAtLoss {
		t.Errorf("%s ran %d passes after it lost the Lease", standby.name, got-passesAtLoss)
	}
	t.Logf("%s, cut off, stopped leading; %s led %s after the cut", standby.name, c.name, time.Since(cut).Round(time.Millisecond))
	if err := standby.stop(); err != nil {
		t.Logf("stopping the cut-off %s: %v", standby.name, err)
	}
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
	if h := leaseHolder(t, w.name("lease")); h != "" {
		t.Errorf("the Lease is still held by %q after both stopped (ReleaseOnCancel)", h)
	}
	auditMu.Lock()
	recs := auditRecords(t, auditBuf.Bytes())
	auditMu.Unlock()
	deleted := map[string]int{}
	for _, r := range recs {
		if r.Action == "delete" {
			deleted[r.ID]++
			if r.Result != audit.Deleted {
				t.Errorf("audit: %s %s", r.ID, r.Result)
			}
		}
	}
	for _, k := range keys {
		if deleted[k] != 1 {
			t.Errorf("%s audited %d times, want once", k, deleted[k])
		}
	}
}

type passer func(ctx context.Context, opt app.Options) (*report.Report, error)

func (f passer) Once(ctx context.Context, opt app.Options) (*report.Report, error) {
	return f(ctx, opt)
}

func gaugeValue(t *testing.T, rp *replica, name string) float64 {
	t.Helper()
	mfs, err := rp.d.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

func leaseHolder(t *testing.T, name string) string {
	t.Helper()
	l, err := prodA.Client.CoordinationV1().Leases("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease: %v", err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func httpStatus(t *testing.T, d *daemon.Daemon, path string) int {
	t.Helper()
	resp, err := http.Get("http://" + d.Addr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func auditRecords(t *testing.T, b []byte) []audit.Record {
	t.Helper()
	var out []audit.Record
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}
