package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
	"reclaim.dev/reclaim/reconcile/state"
)

// The rules of trust for records are tested with their reader
// (inventory/records); these are the wiring's part: the roles' checks,
// and a runner reading records across passes.

// memRecords is a bucket in memory.
type memRecords map[string][]byte

func (m memRecords) Get(_ context.Context, key string) ([]byte, error) {
	b, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", key, outcome.ErrNotFound)
	}
	return b, nil
}

func (m memRecords) Put(_ context.Context, key string, body []byte) error {
	m[key] = body
	return nil
}

var recT0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// recCA is the hash of a cluster's CA, which its record carries.
var recCA = published.CAHash([]byte("the real CA"))

// An agent reads exactly one cluster; a deleter reading records dials
// none, and says so rather than loading a kubeconfig.
func TestRolesRefuseTheWrongClusters(t *testing.T) {
	two := parse(t, recordsYAML+"  - name: b\n    platform: eks\n    account: \"123456789012\"\n    location: us-west-2\n")
	if err := checkRole(two, true, false); err == nil || !strings.Contains(err.Error(), "exactly its own cluster") {
		t.Fatalf("agent of two clusters: %v", err)
	}
	dialled := parse(t, recordsYAML+"    kubeconfig: /k\n")
	if err := checkRole(dialled, false, false); err == nil || !strings.Contains(err.Error(), "dials none") {
		t.Fatalf("deleter with a kubeconfig: %v", err)
	}
	// An agent reads the cluster it runs in: a kubeconfig only when its
	// command line says so, never its config alone.
	if err := checkRole(dialled, true, false); err == nil || !strings.Contains(err.Error(), "inCluster: true") || !strings.Contains(err.Error(), "--outside-cluster") {
		t.Fatalf("agent with a kubeconfig: %v", err)
	}
	if err := checkRole(dialled, true, true); err != nil {
		t.Fatalf("agent with a kubeconfig, --outside-cluster: %v", err)
	}
	inCluster := parse(t, recordsYAML+"    inCluster: true\n")
	if err := checkRole(inCluster, true, false); err != nil {
		t.Fatalf("agent in its cluster: %v", err)
	}
	noRecords := parse(t, "clusters:\n  - name: a\n    context: a\nfleet: {discover: false}\n")
	if _, err := New(context.Background(), noRecords, Deps{Agent: true}); err == nil || !strings.Contains(err.Error(), "fleet.records") {
		t.Fatalf("agent without fleet.records: %v", err)
	}
}

const recordsYAML = `fleet:
  discover: false
  records: {bucket: b, account: "123456789012", region: us-east-1}
clusters:
  - name: a
    platform: eks
    account: "123456789012"
    location: us-east-1
`

// An agent opens no cloud, even when its config has a cloud section: its
// identity holds no cloud grant (deploy/ gives it none).
func TestAnAgentOpensNoCloud(t *testing.T) {
	cfg := parse(t, recordsYAML+"gce:\n  projects: [acme-prod]\n  withoutAuthentication: true\n  endpoint: http://127.0.0.1:1\n")
	cfg.Clusters[0].Context = "a"
	r, err := New(context.Background(), cfg, Deps{Agent: true, OutsideCluster: true, Records: memRecords{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.d.Clients) != 0 || len(r.cloudReads()) != 0 {
		t.Fatalf("the agent opened %v and reads %v", r.d.Clients, r.cloudReads())
	}
	for _, k := range r.Kinds() {
		if reg := registration(k.Name()); !reg.InCluster {
			t.Fatalf("the agent plans %s", k.Name())
		}
	}
}

func registration(name string) kind.Module {
	for _, m := range Registered {
		if m.Name == name {
			return m
		}
	}
	return kind.Module{}
}

// A maxRecordSize the memory target cannot decode is refused by run and
// config check alike (CheckRole), saying what to raise.
func TestMaxRecordSizeMustFitTheMemoryTarget(t *testing.T) {
	cfg := parse(t, strings.Replace(recordsYAML, "region: us-east-1}", "region: us-east-1, maxRecordSize: 64Mi}", 1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(280 << 20))
	if err := CheckRole(cfg, false, false); err == nil || !strings.Contains(err.Error(), "raise GOMEMLIMIT") {
		t.Fatalf("64Mi records under a 280MiB target: %v", err)
	}
	debug.SetMemoryLimit(2 << 30)
	if err := CheckRole(cfg, false, false); err != nil {
		t.Fatalf("64Mi records under a 2GiB target: %v", err)
	}
}

// The runner a daemon passes with keeps its reader, and what the reader
// read, from one pass to the next: the second pass of an unchanged fleet
// lists and reads nothing else.
func TestRunnerReadsOnlyChangedRecordsAcrossPasses(t *testing.T) {
	cfg := parse(t, recordsYAML)
	place := inventory.Place{Platform: inventory.EKS, Account: "123456789012", Location: "us-east-1"}
	l, now := newRecStore(0), recT0.Add(time.Hour)
	var b bytes.Buffer
	if err := published.Encode(&b, published.Record{TakenAt: recT0, Refs: inventory.ClusterRefs{Complete: true},
		Cluster: published.Identity{Name: "a", Platform: place.Platform, Account: place.Account, Location: place.Location, CA: recCA, KubeSystemUID: "uid-a"}}); err != nil {
		t.Fatal(err)
	}
	l.put(published.Key(cfg.Fleet.Records.Prefix, place, "a"), b.Bytes())
	r, err := New(context.Background(), cfg, Deps{Records: l, Store: state.NewMemoryStore(engine.NewState()), Audit: audit.New(io.Discard),
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, want := range []int64{1, 0} {
		rep, err := r.Once(context.Background(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		lists, gets := l.lists.Swap(0), l.gets.Swap(0)
		for _, s := range rep.Plan.Sources {
			if s.Kind == inventory.SourceCluster && !s.Complete {
				t.Fatalf("pass %d: cluster %s incomplete: %v", i, s.Name, s.Problems)
			}
		}
		if lists != 1 || gets != want {
			t.Fatalf("pass %d: %d lists, %d gets; want 1 and %d", i, lists, gets, want)
		}
		now = now.Add(10 * time.Minute)
	}
}

// The reader the wiring makes believes a first record against what every
// registered kind's cloud read shows made for the cluster (kind.Module's
// Evidence): ec2-interface's interfaces tagged for it.
func TestTheRecordsReaderHasEveryKindsEvidence(t *testing.T) {
	w, err := wire(parse(t, recordsYAML), false, false)
	if err != nil {
		t.Fatal(err)
	}
	place := inventory.Place{Platform: inventory.EKS, Account: "123456789012", Location: "us-east-1"}
	clouds := map[string]any{ec2interface.Read: []inventory.NetworkListing{{Account: place.Account, Region: place.Location, Complete: true,
		Interfaces: []inventory.NetInterface{{ID: "eni-0a1b", Status: "in-use", Tags: map[string]string{inventory.InterfaceClusterTag: "a"}},
			{ID: "eni-0c2d", Status: "in-use", Tags: map[string]string{inventory.InterfaceClusterTag: "b"}}}}}}
	shown := records.Shown{}
	w.records.Evidence(clouds, kube.Target{Name: "a", CloudName: "a", Place: place}, shown)
	if got := fmt.Sprint(shown); got != "map[nodes:[network interface eni-0a1b] podIPs:[network interface eni-0a1b]]" {
		t.Fatalf("shown %s", got)
	}
}
