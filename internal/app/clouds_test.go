package app

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
	"reclaim.dev/reclaim/reconcile/state"
)

// countingNetworks is an EC2 read that counts its listings.
type countingNetworks struct{ lists atomic.Int32 }

func (c *countingNetworks) List(context.Context) []inventory.NetworkListing {
	c.lists.Add(1)
	return nil
}

// A cloud read runs when a kind the run plans relies on it, and only then:
// the gce read for the disk kinds, never the ec2 read a harness offers
// when no ec2Interfaces section turns the interface kind on.
func TestCloudReadsFollowTheKindsThatRelyOnThem(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	_, srv, _ := orphanWorld(t, &now, nil)
	cfg := enginetest.DiskConfig(t, srv.URL())
	nets := &countingNetworks{}
	clusters := func(context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{{Name: "a", Complete: true, Projects: []string{"proj-one"}}}
	}
	r, err := New(context.Background(), cfg, Deps{Clients: map[string]any{ec2interface.Read: nets}, Clusters: clusters,
		Store: state.NewMemoryStore(engine.NewState()), Audit: audit.New(io.Discard), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var names []string
	for _, c := range r.cloudReads() {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != gcepd.Read {
		t.Fatalf("reads %v, want only %s", names, gcepd.Read)
	}
	rep, err := r.Once(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, s := range rep.Plan.Sources {
		if s.Kind == "gce-project" && s.Complete {
			listed++
		}
	}
	if listed != 1 || nets.lists.Load() != 0 {
		t.Fatalf("%d gce listings, %d ec2 listings; want 1 and 0", listed, nets.lists.Load())
	}
}

// A kind that relies on a read no line registers is refused when the
// runner is built: its kind would see an empty cloud, as if nothing were
// in it.
func TestAKindRelyingOnAnUnregisteredReadIsRefused(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	_, srv, _ := orphanWorld(t, &now, nil)
	saved := Registered
	t.Cleanup(func() { Registered = saved })
	Registered = append(Registered[:len(Registered):len(Registered)], kind.Module{Name: "typo-kind", Clouds: []string{"gec"},
		Section: saved[0].Section, On: saved[0].On, New: saved[0].New})
	_, err := New(context.Background(), enginetest.DiskConfig(t, srv.URL()), Deps{Store: state.NewMemoryStore(engine.NewState()), Audit: audit.New(io.Discard)})
	if err == nil || !strings.Contains(err.Error(), `"gec"`) {
		t.Fatalf("error %v, want one naming the read", err)
	}
}
