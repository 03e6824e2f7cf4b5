package main

import (
	"context"
	"io"
	"testing"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// Only a report some target sent announces its candidates: a failed or
// skipped delivery leaves them unannounced, so requireNotice keeps waiting.
func TestAnnounceOnlyWhenSent(t *testing.T) {
	srv := gcefake.New(gcefake.Options{})
	defer srv.Close()
	key := srv.AddDisk("proj-one", gcefake.Disk{Zone: "asia-northeast1-a", Name: "orphan", SizeGB: 10, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": ""}, Created: time.Now().Add(-30 * 24 * time.Hour), LastDetach: time.Now().Add(-10 * 24 * time.Hour)})
	store := state.NewMemoryStore(engine.NewState())
	clusters := func(context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{{Name: "a", Complete: true, Projects: []string{"proj-one"}}}
	}
	r, err := app.New(context.Background(), enginetest.DiskConfig(t, srv.URL()), app.Deps{Clusters: clusters, Store: store, Audit: audit.New(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := r.Once(context.Background(), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	announced := func() bool {
		st, _ := store.Load(context.Background())
		return !st.Resources[key].Announced.IsZero()
	}
	announce(context.Background(), r, rep, []notify.Result{{Target: "ops", Result: notify.Failed}, {Target: "mail", Result: notify.Skipped}}, zap.NewNop())
	if announced() {
		t.Fatal("announced without a delivery")
	}
	announce(context.Background(), r, rep, []notify.Result{{Target: "ops", Result: notify.Failed}, {Target: "mail", Result: notify.Sent}}, zap.NewNop())
	if !announced() {
		t.Fatal("a report one target sent must announce its candidates")
	}
}
