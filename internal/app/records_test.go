package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/reconcile/engine"
)

// memRecords is a bucket in memory.
type memRecords map[string][]byte

func (m memRecords) Get(_ context.Context, key string) ([]byte, error) {
	b, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", key, inventory.ErrNotFound)
	}
	return b, nil
}

func (m memRecords) Put(_ context.Context, key string, body []byte) error {
	m[key] = body
	return nil
}

var recT0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

var recPlace = inventory.Place{Platform: inventory.EKS, Account: "123456789012", Location: "us-east-1"}

// put publishes a record of cluster prod-a at recPlace with n pods.
func (m memRecords) put(t *testing.T, n int, uid, ca string, at time.Time) {
	t.Helper()
	refs := inventory.ClusterRefs{Name: "agent-side-name", Complete: true, ImagesListed: true, WorkloadsListed: true,
		Projects: []string{"agent-chose-this"},
		PVs:      []inventory.PVRef{{Cluster: "agent-side-name", PV: "pv-1", Disk: inventory.DiskKey{Project: "p", Zone: "z", Name: "d"}}}}
	for i := range n {
		refs.Pods = append(refs.Pods, inventory.Pod{Namespace: "a", Name: fmt.Sprint(i), Phase: "Running"})
	}
	var b bytes.Buffer
	if err := published.Encode(&b, published.Record{TakenAt: at, Refs: refs, Cluster: published.Identity{Name: "prod-a",
		Platform: recPlace.Platform, Account: recPlace.Account, Location: recPlace.Location, CA: ca, KubeSystemUID: uid}}); err != nil {
		t.Fatal(err)
	}
	m[published.Key("fleet", recPlace, "prod-a")] = b.Bytes()
}

func reader(m memRecords, now *time.Time, pins map[string]string) *recordReader {
	return &recordReader{cfg: &config.Snapshots{Bucket: "b", Prefix: "fleet", MaxAge: config.Duration(3 * time.Hour), MaxDrop: 0.5,
		DropSettle: config.Duration(24 * time.Hour), KubeSystemUIDs: pins}, store: m, now: func() time.Time { return *now }}
}

var recTarget = kube.Target{Name: "prod-a", Place: recPlace, CloudName: "prod-a", Projects: []string{"p"}, Subnets: []string{"subnet-1"}}

// pass reads prod-a once with what the state remembered, and returns the
// cluster and what the state remembers after.
func pass(rr *recordReader, prev map[string]engine.RecordSeen) (inventory.ClusterRefs, map[string]engine.RecordSeen) {
	rr.begin(prev)
	c := rr.read(context.Background(), []kube.Target{recTarget})[0]
	return c, rr.remembered()
}

// A record stands for the cluster under the deleter's name and limits,
// whatever the agent chose; the first accepted record pins its UID.
func TestRecordReaderTakesTheDeletersNameAndLimits(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-1", "", recT0)
	c, seen := pass(reader(m, &now, nil), nil)
	if !c.Complete || c.Name != "prod-a" || strings.Join(c.Projects, ",") != "p" || strings.Join(c.Subnets, ",") != "subnet-1" || c.PVs[0].Cluster != "prod-a" {
		t.Fatalf("cluster %+v", c)
	}
	if got := seen[published.Key("fleet", recPlace, "prod-a")]; got.KubeSystemUID != "uid-1" || got.Items != 21 {
		t.Fatalf("remembered %+v", got)
	}
}

// A record of another kube-system UID than the one pinned (by the state,
// or the config, which wins) holds, and changes nothing remembered.
func TestRecordReaderHoldsAnotherClustersRecord(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-2", "", recT0)
	key := published.Key("fleet", recPlace, "prod-a")
	prev := map[string]engine.RecordSeen{key: {KubeSystemUID: "uid-1", Items: 21}}
	c, seen := pass(reader(m, &now, nil), prev)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "kubeSystemUIDs.prod-a: uid-2") || seen[key] != prev[key] {
		t.Fatalf("complete %v, problems %v, remembered %+v", c.Complete, c.Problems, seen[key])
	}
	// The operator pins the new UID: the record is accepted and re-pinned.
	c, seen = pass(reader(m, &now, map[string]string{"prod-a": "uid-2"}), prev)
	if !c.Complete || seen[key].KubeSystemUID != "uid-2" {
		t.Fatalf("pinned: complete %v %v, remembered %+v", c.Complete, c.Problems, seen[key])
	}
}

// A record much smaller than the last accepted holds until it has been
// published for dropSettle; a drop within maxDrop, or from a small
// cluster, does not hold.
func TestRecordReaderHoldsASuddenDropUntilItSettles(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	key := published.Key("fleet", recPlace, "prod-a")
	prev := map[string]engine.RecordSeen{key: {KubeSystemUID: "uid-1", Items: 101}}
	m.put(t, 60, "uid-1", "", recT0) // 61 of 101: within 50%
	if c, _ := pass(reader(m, &now, nil), prev); !c.Complete {
		t.Fatalf("a drop within maxDrop held: %v", c.Problems)
	}
	m.put(t, 9, "uid-1", "", recT0) // 10 of 101
	c, seen := pass(reader(m, &now, nil), prev)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "maxDrop") || seen[key].Items != 101 || !seen[key].DropSince.Equal(now) {
		t.Fatalf("complete %v, problems %v, remembered %+v", c.Complete, c.Problems, seen[key])
	}
	// Still small 23 hours later: still held, since the same moment.
	now = now.Add(23 * time.Hour)
	m.put(t, 9, "uid-1", "", now.Add(-time.Minute))
	c, seen2 := pass(reader(m, &now, nil), seen)
	if c.Complete || !seen2[key].DropSince.Equal(seen[key].DropSince) {
		t.Fatalf("23h on: complete %v, remembered %+v", c.Complete, seen2[key])
	}
	// A day after it began: believed, and the new size remembered.
	now = now.Add(2 * time.Hour)
	m.put(t, 9, "uid-1", "", now.Add(-time.Minute))
	c, seen3 := pass(reader(m, &now, nil), seen2)
	if !c.Complete || seen3[key].Items != 10 || !seen3[key].DropSince.IsZero() {
		t.Fatalf("settled: complete %v %v, remembered %+v", c.Complete, c.Problems, seen3[key])
	}
	// A small cluster's swings are not drops.
	small := map[string]engine.RecordSeen{key: {KubeSystemUID: "uid-1", Items: 8}}
	m.put(t, 0, "uid-1", "", now.Add(-time.Minute))
	if c, _ := pass(reader(m, &now, nil), small); !c.Complete {
		t.Fatalf("a small cluster's drop held: %v", c.Problems)
	}
}

// A discovered cluster's record must carry the CA discovery lists.
func TestRecordReaderChecksTheDiscoveredCA(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-1", published.CAHash([]byte("the real CA")), recT0)
	rr := reader(m, &now, nil)
	rr.begin(nil)
	tgt := recTarget
	tgt.CAData = []byte("another CA")
	if c := rr.read(context.Background(), []kube.Target{tgt})[0]; c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "CA") {
		t.Fatalf("another CA: complete %v, %v", c.Complete, c.Problems)
	}
	tgt.CAData = []byte("the real CA")
	if c := rr.read(context.Background(), []kube.Target{tgt})[0]; !c.Complete {
		t.Fatalf("the same CA: %v", c.Problems)
	}
}

// An agent reads exactly one cluster; a deleter reading records dials
// none, and says so rather than loading a kubeconfig.
func TestRolesRefuseTheWrongClusters(t *testing.T) {
	two := parse(t, snapshotsYAML+"  - name: b\n    platform: eks\n    account: \"123456789012\"\n    location: us-west-2\n")
	if err := checkRole(two, true); err == nil || !strings.Contains(err.Error(), "exactly its own cluster") {
		t.Fatalf("agent of two clusters: %v", err)
	}
	dialled := parse(t, snapshotsYAML+"    kubeconfig: /k\n")
	if err := checkRole(dialled, false); err == nil || !strings.Contains(err.Error(), "dials none") {
		t.Fatalf("deleter with a kubeconfig: %v", err)
	}
	if err := checkRole(dialled, true); err != nil {
		t.Fatalf("agent with a kubeconfig: %v", err)
	}
	noSnapshots := parse(t, "clusters:\n  - name: a\n    context: a\nfleet: {discover: false}\n")
	if _, err := New(context.Background(), noSnapshots, Deps{Agent: true}); err == nil || !strings.Contains(err.Error(), "fleet.snapshots") {
		t.Fatalf("agent without fleet.snapshots: %v", err)
	}
}

const snapshotsYAML = `fleet:
  discover: false
  snapshots: {bucket: b, account: "123456789012", region: us-east-1}
clusters:
  - name: a
    platform: eks
    account: "123456789012"
    location: us-east-1
`

// An agent opens no cloud, even when its config has a cloud section: its
// identity holds no cloud grant (deploy/ gives it none).
func TestAnAgentOpensNoCloud(t *testing.T) {
	cfg := parse(t, snapshotsYAML+"gce:\n  projects: [acme-prod]\n  withoutAuthentication: true\n  endpoint: http://127.0.0.1:1\n")
	cfg.Clusters[0].Context = "a"
	r, err := New(context.Background(), cfg, Deps{Agent: true, Records: memRecords{}})
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

func registration(name string) Registration {
	for _, r := range Registered {
		if r.Name == name {
			return r
		}
	}
	return Registration{}
}
