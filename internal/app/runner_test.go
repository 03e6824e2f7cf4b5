package app

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/state"
)

// One runner, several passes: the GCE client is built once by New (its
// requests all reach the same fake), and the grace clock started by the
// first pass lets the third pass delete.
func TestRunnerPassesShareClientsAndState(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	r, srv, key := orphanWorld(t, &now, nil)
	if got := len(r.Kinds()); got != 2 { // gce-disk and k8s-pvc; no ecr section
		t.Fatalf("%d kinds", got)
	}
	for i, want := range []engine.Action{engine.Mark, engine.Mark, engine.Delete} {
		rep, err := r.Once(context.Background(), Options{Apply: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Plan.Count(gcedisk.Name, want); got != 1 {
			t.Fatalf("pass %d: %d disks %s, want 1: %+v", i+1, got, want, rep.Plan.Decisions)
		}
		now = now.Add(4 * time.Hour)
	}
	if srv.HasDisk(key) {
		t.Fatal("the orphan was not deleted after its grace")
	}
}

// notify.requireNotice through the runner: an orphan past its grace waits
// until a delivered report announced it (Announce), and then a grace period
// more; without a delivery it is never deleted.
func TestRunnerRequireNotice(t *testing.T) {
	for _, delivered := range []bool{true, false} {
		t.Run(fmt.Sprintf("delivered=%v", delivered), func(t *testing.T) {
			t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
			now := t0
			r, srv, key := orphanWorld(t, &now, func(cfg *config.Config) { cfg.Notify = &config.Notify{RequireNotice: true} })
			// Passes 4 hours apart (pass n at t0+4(n-1)h): the clock starts
			// at t0 and its grace (6h) ends before pass 3 (t0+8h), after
			// which the report is delivered; the notice then ends at t0+14h,
			// so pass 5 (t0+16h) deletes, and never without the delivery.
			for pass := 1; pass <= 6; pass++ {
				rep, err := r.Once(context.Background(), Options{Apply: true})
				if err != nil {
					t.Fatal(err)
				}
				if pass == 3 && delivered {
					if err := r.Announce(context.Background(), now, Announced{Report: rep}); err != nil {
						t.Fatal(err)
					}
				}
				gone := !srv.HasDisk(key)
				if want := delivered && pass >= 5; gone != want {
					t.Fatalf("pass %d at +%s: deleted %v, want %v: %+v", pass, now.Sub(t0), gone, want, rep.Plan.Decisions)
				}
				now = now.Add(4 * time.Hour)
			}
		})
	}
}

// Two runs at once on one state: the second is refused before it reads
// anything (it would delete what the first deletes, and audit it twice).
func TestRunnerRefusesAnOverlappingRun(t *testing.T) {
	srv := gcefake.New(gcefake.Options{})
	defer srv.Close()
	cfg := enginetest.DiskConfig(t, srv.URL())
	store := &state.FileStore{Path: t.TempDir() + "/state.json"}
	collected := 0
	clusters := func(context.Context) []inventory.ClusterRefs {
		collected++
		return []inventory.ClusterRefs{{Name: "a", Complete: true, Projects: []string{"proj-one"}}}
	}
	r, err := New(context.Background(), cfg, Deps{Clusters: clusters, Store: store, Audit: audit.New(io.Discard), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	unlock, err := (&state.FileStore{Path: store.Path}).Lock(context.Background(), "run other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Once(context.Background(), Options{Apply: true}); err == nil || collected != 0 {
		t.Fatalf("overlapping run: %v (collected %d times)", err, collected)
	}
	unlock()
	if _, err := r.Once(context.Background(), Options{Apply: true}); err != nil || collected != 1 {
		t.Fatalf("after the other run: %v (collected %d times)", err, collected)
	}
}

// run --kind/--cluster through the runner: an unknown kind or cluster is an
// error before anything is deleted; --cluster leaves a disk (a cloud
// resource) held; --kind gce-disk deletes it.
func TestRunnerFilter(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	r, srv, key := orphanWorld(t, &now, nil)
	for _, c := range []struct {
		only engine.Filter
		err  string
	}{
		{engine.Filter{Kinds: []string{"k8s-jobs"}}, "--kind k8s-jobs: not a kind this config enables; use one of gce-disk, k8s-pvc"},
		{engine.Filter{Clusters: []string{"b"}}, "--cluster b: not a cluster of this run; its clusters are a"},
	} {
		if _, err := r.Once(context.Background(), Options{Apply: true, Only: c.only}); err == nil || err.Error() != c.err {
			t.Errorf("%+v: err %v, want %q", c.only, err, c.err)
		}
	}
	// The refused runs planned nothing: the clock starts here.
	if _, err := r.Once(context.Background(), Options{}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(12 * time.Hour)
	rep, err := r.Once(context.Background(), Options{Apply: true, Only: engine.Filter{Clusters: []string{"a"}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := enginetest.DecisionFor(t, rep.Plan, "orphan"); d.Action != engine.Mark || !d.Held {
		t.Fatalf("--cluster a: the disk is %s held=%v (%s), want held", d.Action, d.Held, d.Why())
	}
	if !srv.HasDisk(key) || rep.ExitCode != 0 {
		t.Fatalf("--cluster a deleted the disk, or exited %d", rep.ExitCode)
	}
	if _, err := r.Once(context.Background(), Options{Apply: true, Only: engine.Filter{Kinds: []string{gcedisk.Name}}}); err != nil {
		t.Fatal(err)
	}
	if srv.HasDisk(key) {
		t.Fatal("--kind gce-disk did not delete the orphan past its grace")
	}
}

// orphanWorld is a GCE fake holding one orphan disk (detached ten days) and
// a runner over it whose clock is *now; cfgFn may change the config first.
func orphanWorld(t *testing.T, now *time.Time, cfgFn func(*config.Config)) (*Runner, *gcefake.Server, string) {
	t.Helper()
	srv := gcefake.New(gcefake.Options{})
	t.Cleanup(srv.Close)
	key := srv.AddDisk("proj-one", gcefake.Disk{Zone: "asia-northeast1-a", Name: "orphan", SizeGB: 10, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": ""}, Created: now.Add(-30 * 24 * time.Hour), LastDetach: now.Add(-10 * 24 * time.Hour)})
	cfg := enginetest.DiskConfig(t, srv.URL())
	if cfgFn != nil {
		cfgFn(cfg)
	}
	clusters := func(context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{{Name: "a", Complete: true, Projects: []string{"proj-one"}}}
	}
	r, err := New(context.Background(), cfg, Deps{Clusters: clusters, Store: state.NewMemoryStore(engine.NewState()),
		Audit: audit.New(io.Discard), Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r, srv, key
}

// A successful pass records its success in the state it saved, with that
// pass's clocks (markSuccess saves Apply's state, not one read back), in a
// dry run and with --apply alike.
func TestRunnerRecordsSuccessWithTheSavedState(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	r, _, _ := orphanWorld(t, &now, nil)
	for i, apply := range []bool{false, true} {
		rep, err := r.Once(context.Background(), Options{Apply: apply})
		if err != nil {
			t.Fatal(err)
		}
		st, err := r.d.Store.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !st.LastSuccess.Equal(now) || !rep.LastSuccess.Equal(now) {
			t.Fatalf("pass %d: the state's last success %s, the report's %s; want %s", i+1, st.LastSuccess, rep.LastSuccess, now)
		}
		if st.Clocks() != 1 {
			t.Fatalf("pass %d: %d clocks saved, want the orphan's", i+1, st.Clocks())
		}
		now = now.Add(time.Hour)
	}
}
