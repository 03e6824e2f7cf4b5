package app

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
	"reclaim.dev/reclaim/reconcile/state"
)

// withModule replaces the registered module named name for the test.
func withModule(t *testing.T, name string, change func(m *kind.Module)) {
	t.Helper()
	saved := Registered
	t.Cleanup(func() { Registered = saved })
	Registered = slices.Clone(saved)
	i := slices.IndexFunc(Registered, func(m kind.Module) bool { return m.Name == name })
	if i < 0 {
		t.Fatalf("no kind %s", name)
	}
	change(&Registered[i])
}

// Whether a kind is on is asked once per runner: its clusters' reads, its
// taps, its clouds and its making follow from that one answer, pass after
// pass.
func TestAKindIsAskedWhetherItIsOnOnce(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	_, srv, _ := orphanWorld(t, &now, nil)
	asked := 0
	withModule(t, gcedisk.Name, func(m *kind.Module) {
		on := m.IsOn
		m.On = func(cfg *config.Config) bool { asked++; return on(cfg) }
	})
	clusters := func(context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{{Name: "a", Complete: true, Projects: []string{"proj-one"}}}
	}
	r, err := New(context.Background(), enginetest.DiskConfig(t, srv.URL()), Deps{Clusters: clusters,
		Store: state.NewMemoryStore(engine.NewState()), Audit: audit.New(io.Discard), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 2 {
		if _, err := r.Once(context.Background(), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if asked != 1 {
		t.Fatalf("asked whether %s is on %d times, want once", gcedisk.Name, asked)
	}
	if !slices.ContainsFunc(r.Kinds(), func(k engine.Kind) bool { return k.Name() == gcedisk.Name }) {
		t.Fatalf("%s is not planned", gcedisk.Name)
	}
}

// A kind its On turns on but its New makes nothing of is refused when the
// runner is built: what the config asks of it would be skipped silently.
func TestAKindOnThatMakesNothingIsRefused(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	_, srv, _ := orphanWorld(t, &now, nil)
	withModule(t, gcedisk.Name, func(m *kind.Module) {
		m.New = func(*config.Config, *kind.Clients) engine.Kind { return nil }
	})
	_, err := New(context.Background(), enginetest.DiskConfig(t, srv.URL()), Deps{Store: state.NewMemoryStore(engine.NewState()), Audit: audit.New(io.Discard)})
	if err == nil || !strings.Contains(err.Error(), gcedisk.Name) {
		t.Fatalf("error %v, want one naming %s", err, gcedisk.Name)
	}
}

// The collector's reads of Jobs and Pods (their retention annotation, the
// labels a selector needs) come from the kinds that are on, not from a
// section app names.
func TestTheCollectorReadsWhatTheKindsThatAreOnAsk(t *testing.T) {
	cfg := parse(t, "clusters:\n  - name: a\n    context: a\npods:\n  retentionAnnotation: example.com/keep\n  selector: team=batch\n")
	o := KubeOptions(cfg)
	if o.RetentionAnnotation != "example.com/keep" || !o.Labels {
		t.Fatalf("annotation %q, labels %v; want the pods section's", o.RetentionAnnotation, o.Labels)
	}
	if o := KubeOptions(parse(t, "clusters:\n  - name: a\n    context: a\n")); o.RetentionAnnotation != "" || o.Labels {
		t.Fatalf("annotation %q, labels %v with neither jobs nor pods on", o.RetentionAnnotation, o.Labels)
	}
}

// Two kinds that stand on one base register its tap each; the clusters
// are read for it once.
func TestATapTwoKindsShareIsReadOnce(t *testing.T) {
	tap := kube.Tap{Name: "shared", Resource: schema.GroupVersionResource{Group: "example.dev", Version: "v1", Resource: "things"}}
	taps := func(*config.Config) []kube.Tap { return []kube.Tap{tap} }
	ms := Modules{{Name: "a", Taps: taps}, {Name: "b", Taps: taps}}
	if got := ms.Taps(nil); len(got) != 1 || got[0].Name != "shared" {
		t.Fatalf("taps %+v, want the shared one once", got)
	}
}
