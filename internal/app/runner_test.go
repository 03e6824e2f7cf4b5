package app

import (
	"context"
	"io"
	"testing"
	"time"

	"reclaim.dev/reclaim/audit"
	"reclaim.dev/reclaim/engine"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/kinds/gcedisk"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/state"
)

// One runner, several passes: the GCE client is built once by New (its
// requests all reach the same fake), and the grace clock started by the
// first pass lets the third pass delete.
func TestRunnerPassesShareClientsAndState(t *testing.T) {
	srv := gcefake.New(gcefake.Options{})
	defer srv.Close()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	key := srv.AddDisk("proj-one", gcefake.Disk{Zone: "asia-northeast1-a", Name: "orphan", SizeGB: 10, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": ""}, Created: t0.Add(-30 * 24 * time.Hour), LastDetach: t0.Add(-10 * 24 * time.Hour)})
	cfg := enginetest.DiskConfig(t, srv.URL())
	now := t0
	clusters := func(context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{{Name: "a", Complete: true, Projects: []string{"proj-one"}}}
	}
	r, err := New(context.Background(), cfg, Deps{Clusters: clusters, Store: state.NewMemoryStore(engine.NewState()),
		Audit: audit.New(io.Discard), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
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
