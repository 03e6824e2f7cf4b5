package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// A cluster's first record that lists no PV (a static PV of an existing
// disk carries no cluster label for the clouds to contradict it) keeps
// what it shows but releases nothing until its records have stood for
// dropSettle, pinned identity and all: the disk its PV binds, past its
// grace, is not deleted on the first record's pass, and is once the
// records have settled. Without the settle, the first pass deletes it.
func TestAFirstRecordReleasesNothingUntilItSettles(t *testing.T) {
	srv := gcefake.New(gcefake.Options{})
	defer srv.Close()
	t0 := time.Now().UTC().Truncate(time.Second)
	key := srv.AddDisk("acme-prod", gcefake.Disk{Zone: "us-central1-a", Name: "restored-pv", SizeGB: 100,
		Description: `{"kubernetes.io/created-for/pv/name":"pvc-1","kubernetes.io/created-for/pvc/name":"data","kubernetes.io/created-for/pvc/namespace":"db"}`,
		Created:     t0.Add(-60 * 24 * time.Hour), LastDetach: t0.Add(-30 * 24 * time.Hour)})
	place := inventory.Place{Platform: inventory.GKE, Project: "acme-prod", Location: "us-central1"}
	cfg := parse(t, fmt.Sprintf(`fleet:
  discover: false
  records:
    bucket: b
    account: "123456789012"
    region: us-east-1
    kubeSystemUIDs: {a: uid-a}
clusters:
  - name: a
    platform: gke
    project: acme-prod
    location: us-central1
gce:
  projects: [acme-prod]
  endpoint: %s
  withoutAuthentication: true
disks:
  minAge: 24h
  grace: 6h
  minDetached: 1h
  maxDeletePercent: 100%%
`, srv.URL()))
	records := memRecords{}
	publish := func(at time.Time) {
		var b bytes.Buffer
		if err := published.Encode(&b, published.Record{TakenAt: at, Refs: inventory.ClusterRefs{Complete: true, ImagesListed: true, WorkloadsListed: true},
			Cluster: published.Identity{Name: "a", Platform: place.Platform, Project: place.Project, Location: place.Location, CA: recCA, KubeSystemUID: "uid-a"}}); err != nil {
			t.Fatal(err)
		}
		records[published.Key(cfg.Fleet.Records.Prefix, place, "a")] = b.Bytes()
	}
	store := state.NewMemoryStore(engine.NewState())
	now := t0
	r, err := New(context.Background(), cfg, Deps{Records: records, Store: store, Audit: audit.New(io.Discard), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	once := func() *engine.Plan {
		t.Helper()
		publish(now.Add(-time.Minute))
		rep, err := r.Once(context.Background(), Options{Apply: true})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Plan
	}
	// The disk's clock starts; then the deleter forgets the cluster's
	// records (a deleter new to the cluster) while the clock runs on.
	once()
	st, _ := store.Load(context.Background())
	st.Records = nil
	if err := store.Save(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(7 * time.Hour) // past the disk's grace
	p := once()
	if !srv.HasDisk(key) {
		t.Fatalf("the cluster's first record deleted the disk its PV binds: %q", p.Blocked)
	}
	if !strings.Contains(strings.Join(p.Blocked, " "), "cluster a could object to is made before "+now.Add(24*time.Hour).Format(time.RFC3339)) {
		t.Errorf("the report does not say when the cluster's records settle: %q", p.Blocked)
	}
	now = now.Add(24*time.Hour + time.Minute)
	if p := once(); srv.HasDisk(key) {
		t.Fatalf("settled records did not release the disk: %q", p.Blocked)
	}
}
