package main

import (
	"context"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// Only a report some target sent announces its candidates: a failed or
// skipped delivery leaves them unannounced, so requireNotice keeps waiting.
// orphanDisk adds a Kubernetes-made disk of proj-one, detached long ago.
func orphanDisk(srv *gcefake.Server, name string, labels map[string]string) string {
	labels["goog-gke-volume"] = ""
	return srv.AddDisk("proj-one", gcefake.Disk{Zone: "asia-northeast1-a", Name: name, SizeGB: 10, Type: "pd-balanced",
		Labels: labels, Created: time.Now().Add(-30 * 24 * time.Hour), LastDetach: time.Now().Add(-10 * 24 * time.Hour)})
}

// dryRun runs one dry pass of cfg over cluster "a" with state in store.
func dryRun(t *testing.T, cfg *config.Config, store engine.Store) (*app.Runner, *report.Report) {
	t.Helper()
	clusters := func(context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{{Name: "a", Complete: true, Projects: []string{"proj-one"}}}
	}
	r, err := app.New(context.Background(), cfg, app.Deps{Clusters: clusters, Store: store, Audit: audit.New(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	rep, err := r.Once(context.Background(), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r, rep
}

func TestAnnounceOnlyWhenSent(t *testing.T) {
	srv := gcefake.New(gcefake.Options{})
	defer srv.Close()
	key := orphanDisk(srv, "orphan", map[string]string{})
	store := state.NewMemoryStore(engine.NewState())
	r, rep := dryRun(t, enginetest.DiskConfig(t, srv.URL()), store)
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

// With routes, a team's target is sent its own candidates only, and only its
// delivery announces them: from config to the Slack post to the state's
// notice, a routed owner's candidate is never announced because someone
// else (the fleet's target) was told.
func TestRoutedDeliveryAnnouncesOnlyTheOwnersCandidates(t *testing.T) {
	srv := gcefake.New(gcefake.Options{})
	defer srv.Close()
	etlDisk := orphanDisk(srv, "etl-scratch", map[string]string{"team": "etl"})
	webDisk := orphanDisk(srv, "web-cache", map[string]string{"owner": "web"})
	plain := orphanDisk(srv, "nobodys", map[string]string{})
	// run delivers one dry run's report with the fleet's and etl's webhooks
	// answering as told, and says what got announced.
	run := func(fleetStatus, etlStatus int) (announced map[string]bool, etlPost string) {
		fleetURL, _ := webhook(t, fleetStatus, "ok")
		etlURL, etlPosts := webhook(t, etlStatus, "ok")
		t.Setenv("RECLAIM_TEST_FLEET", fleetURL)
		t.Setenv("RECLAIM_TEST_ETL", etlURL)
		cfg := enginetest.DiskConfig(t, srv.URL(), `state:
  file: `+filepath.Join(t.TempDir(), "state.json")+`
notify:
  fleet: prod
  ownerLabel: owner
  slack:
    - name: platform
      webhookURL: {env: RECLAIM_TEST_FLEET}
    - name: etl
      webhookURL: {env: RECLAIM_TEST_ETL}
  routes:
    - owner: etl
      targets: [etl]
      labels: {team: etl}
    - owner: ml
      targets: [etl]
`)
		store := state.NewMemoryStore(engine.NewState())
		r, rep := dryRun(t, cfg, store)
		owners := map[string]string{}
		for d := range rep.Plan.All() {
			owners[d.ID] = d.Owner
		}
		if owners[etlDisk] != "etl" || owners[webDisk] != "web" || owners[plain] != "" {
			t.Fatalf("owners %v", owners)
		}
		rs := deliver(context.Background(), cfg, rep, zap.NewNop())
		announce(context.Background(), r, rep, rs, zap.NewNop())
		st, _ := store.Load(context.Background())
		announced = map[string]bool{}
		for _, id := range []string{etlDisk, webDisk, plain} {
			announced[id] = !st.Resources[id].Announced.IsZero()
		}
		if p := etlPosts(); len(p) == 1 {
			etlPost = p[0]
		}
		return announced, etlPost
	}
	got, post := run(http.StatusNotFound, http.StatusOK) // the fleet's target is down
	// One disk of three: marked (in its grace), priced alone; the header names the owners.
	if !strings.Contains(post, "1 more marked") || !strings.Contains(post, "Waste*\\n1.00 USD a month (gce-disk 1.00)") || !strings.Contains(post, "prod · etl, ml") {
		t.Fatalf("etl's post is not etl's alone:\n%s", post)
	}
	if want := map[string]bool{etlDisk: true, webDisk: false, plain: false}; !maps.Equal(got, want) {
		t.Errorf("only etl's target told: announced %v, want %v", got, want)
	}
	// etl's target is down: the fleet's report lists etl's disk, but is not
	// its notice; web (no route) and the unowned disk are the fleet's.
	if got, _ := run(http.StatusOK, http.StatusNotFound); !maps.Equal(got, map[string]bool{etlDisk: false, webDisk: true, plain: true}) {
		t.Errorf("only the fleet's target told: announced %v", got)
	}
}
