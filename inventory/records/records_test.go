package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/reconcile/state"
)

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

var recPlace = inventory.Place{Platform: inventory.EKS, Account: "123456789012", Location: "us-east-1"}

// put publishes a record of cluster prod-a at recPlace with n pods and a
// PV.
func (m memRecords) put(t *testing.T, n int, uid, ca string, at time.Time) {
	t.Helper()
	m.putPVs(t, n, 1, uid, ca, at)
}

// putPVs publishes a record of cluster prod-a at recPlace with n pods and
// pvs PVs.
func (m memRecords) putPVs(t *testing.T, n, pvs int, uid, ca string, at time.Time) {
	t.Helper()
	refs := inventory.ClusterRefs{Name: "agent-side-name", Complete: true, ImagesListed: true, WorkloadsListed: true,
		Projects: []string{"agent-chose-this"}}
	for i := range pvs {
		refs.PVs = append(refs.PVs, inventory.PVRef{Cluster: "agent-side-name", PV: fmt.Sprint("pv-", i), Disk: inventory.DiskKey{Project: "p", Zone: "z", Name: fmt.Sprint("d-", i)}})
	}
	for i := range n {
		refs.Pods = append(refs.Pods, inventory.Pod{Namespace: "a", Name: fmt.Sprint(i), Phase: "Running"})
	}
	m.putRefs(t, refs, uid, ca, at)
}

// recCA is the hash of prod-a's CA, which a record carries unless told.
var recCA = published.CAHash([]byte("the real CA"))

// putRefs publishes refs as cluster prod-a's record at recPlace, with the
// CA hash ca (recCA if "", none if "-").
func (m memRecords) putRefs(t *testing.T, refs inventory.ClusterRefs, uid, ca string, at time.Time) {
	t.Helper()
	switch ca {
	case "":
		ca = recCA
	case "-":
		ca = ""
	}
	var b bytes.Buffer
	if err := published.Encode(&b, published.Record{TakenAt: at, Refs: refs, Cluster: published.Identity{Name: "prod-a",
		Platform: recPlace.Platform, Account: recPlace.Account, Location: recPlace.Location, CA: ca, KubeSystemUID: uid}}); err != nil {
		t.Fatal(err)
	}
	m[published.Key("fleet", recPlace, "prod-a")] = b.Bytes()
}

func reader(m memRecords, now *time.Time, pins map[string]string) *Reader {
	return &Reader{Config: &config.Records{Bucket: "b", Prefix: "fleet", MaxAge: config.Duration(3 * time.Hour), MaxDrop: 0.5,
		DropSettle: config.Duration(24 * time.Hour), KubeSystemUIDs: pins}, Store: m, Now: func() time.Time { return *now }}
}

var recTarget = kube.Target{Name: "prod-a", Place: recPlace, CloudName: "prod-a", Projects: []string{"p"}, Subnets: []string{"subnet-1"}}

// pass reads prod-a once with what the state remembered, and returns the
// cluster and what the state remembers after.
func pass(rr *Reader, prev map[string]Seen) (inventory.ClusterRefs, map[string]Seen) {
	rr.Begin(prev)
	c := rr.Read(context.Background(), []kube.Target{recTarget})[0]
	return c, rr.Remembered()
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
	if got := seen[published.Key("fleet", recPlace, "prod-a")]; got.KubeSystemUID != "uid-1" || len(got.Sizes) != 1 || got.Sizes[0].Counts["pods"] != 20 || got.Sizes[0].Counts["pvs"] != 1 {
		t.Fatalf("remembered %+v", got)
	}
}

// A record of another kube-system UID than the one pinned (by the state,
// or the config, which wins) holds, and changes nothing remembered.
func TestRecordReaderHoldsAnotherClustersRecord(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-2", "", recT0)
	key := published.Key("fleet", recPlace, "prod-a")
	prev := map[string]Seen{key: {KubeSystemUID: "uid-1", Sizes: sized(recT0, 20, 1)}}
	c, seen := pass(reader(m, &now, nil), prev)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "kubeSystemUIDs.prod-a: uid-2") || !reflect.DeepEqual(seen[key], prev[key]) {
		t.Fatalf("complete %v, problems %v, remembered %+v", c.Complete, c.Problems, seen[key])
	}
	// The operator pins the new UID: the record is accepted and re-pinned.
	c, seen = pass(reader(m, &now, map[string]string{"prod-a": "uid-2"}), prev)
	if !c.Complete || seen[key].KubeSystemUID != "uid-2" {
		t.Fatalf("pinned: complete %v %v, remembered %+v", c.Complete, c.Problems, seen[key])
	}
}

// sized is what the state remembers of one accepted record of pods pods
// and pvs PVs at at.
func sized(at time.Time, pods, pvs int) []Sizes {
	return []Sizes{{At: at, Counts: map[string]int{"pods": pods, "pvs": pvs, "podIPs": 0, "nodes": 0, "images": 0, "pvcs": 0}}}
}

// A record much smaller than the last accepted holds until it has been
// published for dropSettle; a drop within maxDrop does not hold.
func TestRecordReaderHoldsASuddenDropUntilItSettles(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	key := published.Key("fleet", recPlace, "prod-a")
	prev := map[string]Seen{key: {KubeSystemUID: "uid-1", Sizes: sized(recT0, 100, 1)}}
	m.put(t, 60, "uid-1", "", recT0) // 60 of 100: within 50%
	if c, _ := pass(reader(m, &now, nil), prev); !c.Complete {
		t.Fatalf("a drop within maxDrop held: %v", c.Problems)
	}
	m.put(t, 9, "uid-1", "", recT0) // 9 of 100
	c, seen := pass(reader(m, &now, nil), prev)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "9 pods where it listed 100") || !reflect.DeepEqual(seen[key].Sizes, prev[key].Sizes) || !seen[key].Drops["pods"].Since.Equal(now) {
		t.Fatalf("complete %v, problems %v, remembered %+v", c.Complete, c.Problems, seen[key])
	}
	// Still small 23 hours later: still held, since the same moment.
	now = now.Add(23 * time.Hour)
	m.put(t, 9, "uid-1", "", now.Add(-time.Minute))
	c, seen2 := pass(reader(m, &now, nil), seen)
	if c.Complete || !seen2[key].Drops["pods"].Since.Equal(seen[key].Drops["pods"].Since) {
		t.Fatalf("23h on: complete %v, remembered %+v", c.Complete, seen2[key])
	}
	// A day after it began: believed, and the new size remembered alone.
	now = now.Add(2 * time.Hour)
	m.put(t, 9, "uid-1", "", now.Add(-time.Minute))
	c, seen3 := pass(reader(m, &now, nil), seen2)
	if !c.Complete || len(seen3[key].Sizes) != 1 || seen3[key].Sizes[0].Counts["pods"] != 9 || seen3[key].Drops["pods"].Since != seen[key].Drops["pods"].Since {
		t.Fatalf("settled: complete %v %v, remembered %+v", c.Complete, c.Problems, seen3[key])
	}
}

// Each class of evidence is judged on its own, small ones included: a
// record that keeps its pods but drops its only PV holds.
func TestRecordReaderHoldsARecordThatDropsOneClass(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	key := published.Key("fleet", recPlace, "prod-a")
	prev := map[string]Seen{key: {KubeSystemUID: "uid-1", Sizes: sized(recT0, 20, 1)}}
	m.putPVs(t, 20, 0, "uid-1", "", recT0.Add(30*time.Minute))
	c, seen := pass(reader(m, &now, nil), prev)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "0 pvs where it listed 1") || !seen[key].Drops["pvs"].Since.Equal(now) {
		t.Fatalf("complete %v, problems %v, remembered %+v", c.Complete, c.Problems, seen[key])
	}
}

// Halving every pass is judged against the largest accepted within
// dropSettle, not the last: the second halving holds.
func TestRecordReaderHoldsAStepwiseDrop(t *testing.T) {
	m, now := memRecords{}, recT0
	key := published.Key("fleet", recPlace, "prod-a")
	var seen map[string]Seen
	for i, pvs := range []int{40, 21, 11} {
		m.putPVs(t, 20, pvs, "uid-1", "", now.Add(-time.Minute))
		var c inventory.ClusterRefs
		c, seen = pass(reader(m, &now, nil), seen)
		if held := !c.Complete; held != (i == 2) {
			t.Fatalf("pass %d with %d PVs: held %v: %v", i, pvs, held, c.Problems)
		}
		now = now.Add(time.Hour)
	}
	if !strings.Contains(fmt.Sprint(seen[key].Drops["pvs"].Since), "2026") {
		t.Fatalf("remembered %+v", seen[key])
	}
}

// A cluster's first record that claims no pod addresses while EC2 shows
// interfaces in use that the VPC CNI made for the cluster holds, until it
// has been published for dropSettle; one that lists them is believed.
func TestRecordReaderHoldsAFirstRecordTheCloudsContradict(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	key := published.Key("fleet", recPlace, "prod-a")
	m.put(t, 20, "uid-1", "", recT0)
	// The pass's cloud reads: interfaces in use, by the cluster each was
	// made for (ec2-interface's MadeFor reads its tags).
	clouds := map[string]any{"ec2": map[string]string{"eni-0a1b": "prod-a", "eni-0c2d": "prod-b"}}
	madeFor := func(clouds map[string]any, t kube.Target, shown Shown) {
		ifs, _ := clouds["ec2"].(map[string]string)
		for _, id := range slices.Sorted(maps.Keys(ifs)) {
			if ifs[id] == t.CloudName {
				shown.Add("podIPs", "network interface "+id)
				shown.Add("nodes", "network interface "+id)
			}
		}
	}
	read := func(prev map[string]Seen) (inventory.ClusterRefs, map[string]Seen) {
		rr := reader(m, &now, nil)
		rr.Evidence = madeFor
		rr.Begin(prev)
		rr.WithClouds(clouds)
		c := rr.Read(context.Background(), []kube.Target{recTarget})[0]
		return c, rr.Remembered()
	}
	c, seen := read(nil)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "no podIPs, where the clouds show network interface eni-0a1b made for the cluster") ||
		len(seen[key].Sizes) != 0 || !seen[key].Drops["podIPs"].Since.Equal(now) {
		t.Fatalf("complete %v, problems %v, remembered %+v", c.Complete, c.Problems, seen[key])
	}
	// A day on, the same claim is believed: what the clouds show may be
	// leaked.
	now = now.Add(25 * time.Hour)
	m.put(t, 20, "uid-1", "", now.Add(-time.Minute))
	if c, seen := read(seen); !c.Complete || len(seen[key].Sizes) != 1 {
		t.Fatalf("settled: complete %v %v, remembered %+v", c.Complete, c.Problems, seen[key])
	}
	// A first record listing its addresses and nodes is believed at once.
	now = recT0.Add(time.Hour)
	m.putRefs(t, inventory.ClusterRefs{Complete: true, ImagesListed: true, WorkloadsListed: true,
		Pods:  []inventory.Pod{{Namespace: "a", Name: "p", Phase: "Running", IPs: []string{"10.0.0.9"}}},
		Nodes: []inventory.Node{{Name: "n", IPs: []string{"10.0.0.8"}}}}, "uid-1", "", recT0)
	if c, _ := read(nil); !c.Complete {
		t.Fatalf("a record listing its addresses: %v", c.Problems)
	}
}

// Two clusters' records claiming one kube-system UID hold both, and
// change nothing remembered; a record naming no CA holds.
func TestRecordReaderHoldsTwinsAndRecordsWithoutIdentity(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-1", "", recT0)
	keyA, keyB := published.Key("fleet", recPlace, "prod-a"), published.Key("fleet", recPlace, "prod-b")
	other := recTarget
	other.Name, other.CloudName = "prod-b", "prod-b"
	twin := func(uid string) {
		var b bytes.Buffer
		rec, err := published.Decode(bytes.NewReader(m[keyA]), nil)
		if err != nil {
			t.Fatal(err)
		}
		rec.Cluster.Name, rec.Cluster.KubeSystemUID = "prod-b", uid
		if err := published.Encode(&b, rec); err != nil {
			t.Fatal(err)
		}
		m[keyB] = b.Bytes()
	}
	read := func() ([]inventory.ClusterRefs, map[string]Seen) {
		rr := reader(m, &now, nil)
		rr.Begin(nil)
		got := rr.Read(context.Background(), []kube.Target{recTarget, other})
		rr.Twins(got)
		return got, rr.Remembered()
	}
	twin("uid-1")
	got, seen := read()
	for _, c := range got {
		if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "claims kube-system UID uid-1, as the records of prod-a, prod-b do") {
			t.Fatalf("%s: complete %v, %v", c.Name, c.Complete, c.Problems)
		}
	}
	if len(seen) != 0 {
		t.Fatalf("twins remembered: %+v", seen)
	}
	twin("uid-2")
	if got, seen := read(); !got[0].Complete || !got[1].Complete || len(seen) != 2 {
		t.Fatalf("distinct UIDs: %v %v, remembered %+v", got[0].Problems, got[1].Problems, seen)
	}
	m.put(t, 20, "uid-1", "-", recT0)
	if got, _ := read(); got[0].Complete || !strings.Contains(strings.Join(got[0].Problems, " "), "no API server CA") {
		t.Fatalf("no CA: complete %v, %v", got[0].Complete, got[0].Problems)
	}
}

// A configured cluster's record is compared with the CA discovery lists
// for it, when discovery joined it to a listed cluster.
func TestRecordReaderChecksAConfiguredClustersDiscoveredCA(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-1", "", recT0)
	fleet := &inventory.Fleet{Members: []inventory.FleetMember{
		{Name: "prod-a", Configured: true, Discovered: true, Cloud: inventory.FleetCluster{Name: "prod-a", CAData: []byte("another CA")}},
		{Name: "prod-z", Configured: true}}}
	rr := reader(m, &now, nil)
	rr.Begin(nil)
	rr.WithCAs(DiscoveredCAs(fleet))
	if c := rr.Read(context.Background(), []kube.Target{recTarget})[0]; c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "not the one discovery lists") {
		t.Fatalf("another CA: complete %v, %v", c.Complete, c.Problems)
	}
	fleet.Members[0].Cloud.CAData = []byte("the real CA")
	rr.WithCAs(DiscoveredCAs(fleet))
	if c := rr.Read(context.Background(), []kube.Target{recTarget})[0]; !c.Complete {
		t.Fatalf("the same CA: %v", c.Problems)
	}
}

// The report says which clusters' kube-system UIDs are trusted on first
// use, pass after pass, and not those the config pins ahead.
func TestRecordReaderSaysWhichPinsAreTrustedOnFirstUse(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-1", "", recT0)
	c, seen := pass(reader(m, &now, nil), nil)
	note := "kube-system UID uid-1 is trusted on first use"
	if !c.Complete || !strings.Contains(strings.Join(c.Problems, " "), note) {
		t.Fatalf("first use: complete %v, %v", c.Complete, c.Problems)
	}
	if c, _ := pass(reader(m, &now, nil), seen); !c.Complete || !strings.Contains(strings.Join(c.Problems, " "), note) {
		t.Fatalf("pinned by the state: complete %v, %v", c.Complete, c.Problems)
	}
	// Pinned ahead: no word of trust on first use, but a first record
	// settles all the same (a pin proves who wrote it, not that it is whole).
	if c, _ := pass(reader(m, &now, map[string]string{"prod-a": "uid-1"}), nil); !c.Complete || strings.Contains(strings.Join(c.Problems, " "), note) ||
		!c.Settles.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("pinned ahead: complete %v, settles %v, %v", c.Complete, c.Settles, c.Problems)
	}
}

// A configured cluster's CA can be pinned ahead of its first record, and
// a record must match the pin and what discovery lists both.
func TestRecordReaderChecksThePinnedCA(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-1", "", recT0)
	rr := reader(m, &now, nil)
	rr.Config.CASHA256s = config.Tags{"prod-a": published.CAHash([]byte("another CA"))}
	rr.Begin(nil)
	if c := rr.Read(context.Background(), []kube.Target{recTarget})[0]; c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "not the one fleet.records.caSHA256s.prod-a pins") {
		t.Fatalf("another CA than pinned: complete %v, %v", c.Complete, c.Problems)
	}
	rr.Config.CASHA256s = config.Tags{"prod-a": strings.ToUpper(recCA)}
	if c := rr.Read(context.Background(), []kube.Target{recTarget})[0]; !c.Complete {
		t.Fatalf("the pinned CA: %v", c.Problems)
	}
	rr.WithCAs(map[string][]byte{"prod-a": []byte("another CA")})
	if c := rr.Read(context.Background(), []kube.Target{recTarget})[0]; c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "not the one discovery lists") {
		t.Fatalf("the pinned CA, another listed: complete %v, %v", c.Complete, c.Problems)
	}
}

// A discovered cluster's record must carry the CA discovery lists.
func TestRecordReaderChecksTheDiscoveredCA(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-1", published.CAHash([]byte("the real CA")), recT0)
	rr := reader(m, &now, nil)
	rr.Begin(nil)
	tgt := recTarget
	tgt.CAData = []byte("another CA")
	if c := rr.Read(context.Background(), []kube.Target{tgt})[0]; c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "CA") {
		t.Fatalf("another CA: complete %v, %v", c.Complete, c.Problems)
	}
	tgt.CAData = []byte("the real CA")
	if c := rr.Read(context.Background(), []kube.Target{tgt})[0]; !c.Complete {
		t.Fatalf("the same CA: %v", c.Problems)
	}
}

// A record that decompresses to more than it may (a gzip bomb, at two
// keys) holds its cluster, saying which limit and how to raise it, and
// the deleter's heap grows by less than its memory target's share for
// records while it reads them: every byte allocated during the read
// counted (runtime.MemStats.TotalAlloc bounds the heap's growth).
func TestRecordReaderRefusesABombWithinItsMemory(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-1", "", recT0)
	good := m[published.Key("fleet", recPlace, "prod-a")]
	b := testenv.GzipBomb(t, 600)
	other := recTarget
	other.Name, other.CloudName = "prod-b", "prod-b"
	third := recTarget
	third.Name, third.CloudName = "prod-c", "prod-c"
	m[published.Key("fleet", recPlace, "prod-b")] = b
	m[published.Key("fleet", recPlace, "prod-c")] = b
	rr := reader(m, &now, nil)
	rr.Begin(nil)
	rr.bound()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := rr.Read(context.Background(), []kube.Target{recTarget, other, third})
	runtime.ReadMemStats(&after)
	if !got[0].Complete {
		t.Fatalf("the good record: %v", got[0].Problems)
	}
	for _, c := range got[1:] {
		if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "maxRecordSize") {
			t.Fatalf("%s: complete %v, %v", c.Name, c.Complete, c.Problems)
		}
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("read 3 records (%d KiB good, a %d KiB bomb of 600 MiB twice): %d KiB allocated; target %d MiB, records' share %d MiB",
		len(good)>>10, len(b)>>10, alloc>>10, rr.Bounds.Target>>20, rr.Bounds.Target>>21)
	if alloc > uint64(rr.Bounds.Target/2) {
		t.Fatalf("reading the records allocated %d MiB, more than half the memory target %d MiB", alloc>>20, rr.Bounds.Target>>20)
	}
	// The bomb's trailer claims a MiB; one that claims more than
	// maxRecordSize is refused before it is decompressed.
	big := bytes.Clone(b)
	binary.LittleEndian.PutUint32(big[len(big)-4:], 1<<30)
	m[published.Key("fleet", recPlace, "prod-b")] = big
	if c := rr.Read(context.Background(), []kube.Target{other})[0]; c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "says it decompresses to 1073741824 bytes") {
		t.Fatalf("a claim over maxRecordSize: complete %v, %v", c.Complete, c.Problems)
	}
}

// A record costs at most recordCost times its decompressed size to
// decode (the bound the reader sets aside for it): a large record of
// pods, nodes, PVs and images, every byte allocated counted.
func TestRecordDecodeCost(t *testing.T) {
	refs := inventory.ClusterRefs{Complete: true, ImagesListed: true, WorkloadsListed: true}
	for i := range 12000 {
		ns := fmt.Sprintf("ns-%d", i%20)
		refs.Pods = append(refs.Pods, inventory.Pod{Namespace: ns, Name: fmt.Sprintf("app-%08x-%05x", i%300, i), UID: fmt.Sprintf("%08x-0000-4000-8000-%012x", 1, i),
			Phase: "Running", Node: fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250%250, i%250), IPs: []string{fmt.Sprintf("10.1.%d.%d", i/250%250, i%250)},
			Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%300)}, Owner: &inventory.Owner{Kind: "ReplicaSet", Name: fmt.Sprintf("app-%08x", i%300)}})
		if i%10 == 0 {
			refs.PVs = append(refs.PVs, inventory.PVRef{PV: fmt.Sprintf("pvc-%d", i), Phase: "Bound", ClaimNamespace: ns, Claim: fmt.Sprintf("data-%d", i),
				Disk: inventory.DiskKey{Project: "p", Zone: "us-central1-a", Name: fmt.Sprintf("pvc-%d", i)}})
			refs.Images = append(refs.Images, inventory.ImageUse{Ref: inventory.ImageRef{Repo: inventory.RepoKey{Account: "123456789012", Region: "us-east-1",
				Name: fmt.Sprintf("svc/app-%d", i%300)}, Tag: "v1"}, Where: ns + "/app", Users: 1})
		}
	}
	var buf bytes.Buffer
	if err := published.Encode(&buf, published.Record{TakenAt: recT0, Refs: refs, Cluster: published.Identity{Name: "prod-a", KubeSystemUID: "uid-1"}}); err != nil {
		t.Fatal(err)
	}
	size, _ := published.Claimed(buf.Bytes())
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rec, err := published.DecodeLimit(bytes.NewReader(buf.Bytes()), size, nil)
	runtime.ReadMemStats(&after)
	if err != nil || len(rec.Refs.Pods) != len(refs.Pods) {
		t.Fatalf("%v, %d pods", err, len(rec.Refs.Pods))
	}
	cost := float64(after.TotalAlloc-before.TotalAlloc) / float64(size)
	t.Logf("a record of %d KiB (%d KiB gzipped) allocated %.2f times its size to decode", size>>10, buf.Len()>>10, cost)
	if cost > recordCost {
		t.Fatalf("decoding allocated %.2f times the record's size, more than recordCost %d", cost, recordCost)
	}
}

// countingRecords is a bucket of no records that counts the Gets in
// flight at once, each held a moment.
type countingRecords struct {
	mu            sync.Mutex
	inFlight, max int
}

func (s *countingRecords) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	s.inFlight++
	s.max = max(s.max, s.inFlight)
	s.mu.Unlock()
	time.Sleep(time.Millisecond)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	return nil, fmt.Errorf("get %s: %w", key, outcome.ErrNotFound)
}

func (s *countingRecords) Put(context.Context, string, []byte) error { return nil }

// The objects fetched at once, configured and discovered clusters read
// side by side, are as many as a quarter of the records' half of the
// memory target holds at maxRecordSize/4 each: 17 under 280MiB, not 64.
func TestRecordReaderBoundsTheObjectsInFlight(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(280 << 20))
	store, now := &countingRecords{}, recT0
	rr := reader(nil, &now, nil)
	rr.Store = store
	rr.Begin(nil)
	targets := make([]kube.Target, 200)
	for i := range targets {
		targets[i] = recTarget
		targets[i].Name, targets[i].CloudName = fmt.Sprint("c-", i), fmt.Sprint("c-", i)
	}
	var wg sync.WaitGroup
	wg.Go(func() { rr.Read(context.Background(), targets[:100]) })
	wg.Go(func() { rr.Read(context.Background(), targets[100:]) })
	wg.Wait()
	if rr.Bounds.Gets != 17 || store.max > rr.Bounds.Gets {
		t.Fatalf("%d Gets at once, bound %d (want 17)", store.max, rr.Bounds.Gets)
	}
}

// A cluster read from a record was read when the record says it was taken,
// whatever read time its refs carry: that is what the engine judges the
// record's freshness for deletes by (engine.Settings.FreshViews).
func TestRecordReaderReadsAtTheRecordsTakenAt(t *testing.T) {
	m, now := memRecords{}, recT0.Add(40*time.Minute)
	refs := inventory.ClusterRefs{Name: "agent-side-name", Complete: true, ImagesListed: true, WorkloadsListed: true, ReadAt: recT0.Add(30 * time.Minute)}
	m.putRefs(t, refs, "uid-1", "", recT0)
	c, _ := pass(reader(m, &now, nil), nil)
	if !c.ReadAt.Equal(recT0) {
		t.Fatalf("read at %s, want the record's TakenAt %s", c.ReadAt, recT0)
	}
}

// A state file written before the record pins moved out of the engine
// (engine.State.Records was a map of them) loads with its pins intact:
// the pinned UID still refuses another cluster's record, and the pins
// are saved back in the same shape.
func TestRecordPinsOfAnOlderStateFile(t *testing.T) {
	key := published.Key("fleet", recPlace, "prod-a")
	if key != "fleet/clusters/eks/123456789012/us-east-1/prod-a.json.gz" {
		t.Fatalf("key %s", key)
	}
	const records = `{"fleet/clusters/eks/123456789012/us-east-1/prod-a.json.gz":{"kubeSystemUID":"uid-1","sizes":[{"at":"2026-11-27T10:00:00Z","counts":{"pods":20,"pvs":1}}]}}`
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte(`{"version":2,"resources":{},"records":`+records+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := &state.FileStore{Path: path}
	st, err := fs.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	prev, err := ParseSeen(st.Records)
	if err != nil || prev[key].KubeSystemUID != "uid-1" || prev[key].Sizes[0].Counts["pods"] != 20 {
		t.Fatalf("pins %+v, %v", prev, err)
	}
	m, now := memRecords{}, recT0.Add(time.Hour)
	m.put(t, 20, "uid-2", "", recT0)
	c, seen := pass(reader(m, &now, nil), prev)
	if c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "kubeSystemUIDs.prod-a: uid-2") {
		t.Fatalf("another cluster's record: complete %v, problems %v", c.Complete, c.Problems)
	}
	if st.Records, err = SeenJSON(seen); err != nil {
		t.Fatal(err)
	}
	if err := fs.Save(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"records":`+records) {
		t.Fatalf("saved %s", b)
	}
}

// Each class of evidence keeps its own drop clock: pods that dropped a day
// ago have settled, but PVs that dropped an hour ago hold the record
// until they have stood for dropSettle too.
func TestRecordReaderKeepsADropClockPerClass(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	key := published.Key("fleet", recPlace, "prod-a")
	seen := map[string]Seen{key: {KubeSystemUID: "uid-1", Sizes: sized(recT0, 100, 10)}}
	step := func(pods, pvs int) inventory.ClusterRefs {
		t.Helper()
		m.putPVs(t, pods, pvs, "uid-1", "", now.Add(-time.Minute))
		var c inventory.ClusterRefs
		c, seen = pass(reader(m, &now, nil), seen)
		return c
	}
	if c := step(9, 10); c.Complete { // the scale-down
		t.Fatalf("a pod drop was believed at once")
	}
	now = now.Add(23 * time.Hour)
	if c := step(9, 1); c.Complete || !seen[key].Drops["pvs"].Since.Equal(now) || !seen[key].Drops["pods"].Since.Equal(recT0.Add(time.Hour)) {
		t.Fatalf("the PVs' drop: complete %v, remembered %+v", c.Complete, seen[key].Drops)
	}
	now = now.Add(2 * time.Hour) // the pods' drop is 25h old, the PVs' 2h
	c := step(9, 1)
	if c.Complete {
		t.Fatalf("a record whose PVs dropped 2h ago was believed because its pods dropped 25h ago")
	}
	if w := "1 pvs where it listed 10"; !strings.Contains(strings.Join(c.Problems, " "), w) || strings.Contains(strings.Join(c.Problems, " "), "9 pods where") {
		t.Errorf("the hold names only the unsettled class (%s): %v", w, c.Problems)
	}
	now = now.Add(22 * time.Hour) // the PVs' drop is 24h old
	if c := step(9, 1); !c.Complete {
		t.Fatalf("settled in every class: %v", c.Problems)
	}
}

// A drop that deepens by more than maxDrop below what it dropped to starts
// its class's clock again.
func TestRecordReaderRestartsADeeperDropsClock(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	key := published.Key("fleet", recPlace, "prod-a")
	seen := map[string]Seen{key: {KubeSystemUID: "uid-1", Sizes: sized(recT0, 100, 1)}}
	step := func(pods int) inventory.ClusterRefs {
		t.Helper()
		m.put(t, pods, "uid-1", "", now.Add(-time.Minute))
		var c inventory.ClusterRefs
		c, seen = pass(reader(m, &now, nil), seen)
		return c
	}
	step(40)
	first := now
	now = now.Add(6 * time.Hour)
	step(30) // deeper, within maxDrop of 40: the same drop
	if got := seen[key].Drops["pods"]; !got.Since.Equal(first) || got.To != 40 {
		t.Fatalf("a drop within maxDrop of the drop restarted the clock: %+v", got)
	}
	now = now.Add(6 * time.Hour)
	step(10) // more than maxDrop below 40: a new drop
	restarted := now
	if got := seen[key].Drops["pods"]; !got.Since.Equal(restarted) || got.To != 10 {
		t.Fatalf("a deeper drop kept the old clock: %+v", got)
	}
	now = first.Add(25 * time.Hour)
	if c := step(10); c.Complete {
		t.Fatalf("believed 25h after the first drop, 13h after the deeper one")
	}
	now = restarted.Add(24 * time.Hour)
	if c := step(10); !c.Complete {
		t.Fatalf("settled: %v", c.Problems)
	}
}

// A class of evidence new in a cluster's records (a tap the agents start
// publishing) settles on its own clock; the cluster's earlier classes do
// not vouch for it. A state an older reclaim wrote (sizes, no since)
// counts its classes from its oldest size.
func TestRecordReaderSettlesANewClass(t *testing.T) {
	m, now := memRecords{}, recT0.Add(30*time.Hour)
	key := published.Key("fleet", recPlace, "prod-a")
	old := map[string]Seen{key: {KubeSystemUID: "uid-1", Sizes: sized(recT0, 20, 1)}}
	m.put(t, 20, "uid-1", "", now.Add(-time.Minute))
	if c, _ := pass(reader(m, &now, nil), old); !c.Complete || !c.Settles.IsZero() {
		t.Fatalf("an older state's cluster, accepted since 30h: settles %v, %v", c.Settles, c.Problems)
	}
	rr := reader(m, &now, nil)
	rr.Taps = map[string]published.Decoder{"ebs-pvs": published.DecodeAs[map[string][]string]}
	refs := inventory.ClusterRefs{Complete: true, ImagesListed: true, WorkloadsListed: true, PVs: []inventory.PVRef{{PV: "pv-0"}},
		Taps: map[string]inventory.Tapped{"ebs-pvs": {Complete: true, Items: 1, Data: map[string][]string{"vol-0a": {"pv-0"}}}}}
	for i := range 20 {
		refs.Pods = append(refs.Pods, inventory.Pod{Namespace: "a", Name: fmt.Sprint(i), Phase: "Running"})
	}
	m.putRefs(t, refs, "uid-1", "", now.Add(-time.Minute))
	c, _ := pass(rr, old)
	if !c.Complete || !c.Settles.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("a new class: complete %v, settles %v, %v", c.Complete, c.Settles, c.Problems)
	}
}

// What a tap lists is judged by what its data holds, not by the count the
// record claims: a record whose EBS tap claims 5 items but holds no volume
// handle, after records that held 5, is a drop.
func TestRecordReaderCountsWhatATapHolds(t *testing.T) {
	m, now := memRecords{}, recT0.Add(time.Hour)
	key := published.Key("fleet", recPlace, "prod-a")
	refs := func(handles int) inventory.ClusterRefs {
		data := map[string][]string{}
		for i := range handles {
			data[fmt.Sprint("vol-", i)] = []string{fmt.Sprint("pv-", i)}
		}
		return inventory.ClusterRefs{Complete: true, ImagesListed: true, WorkloadsListed: true,
			Taps: map[string]inventory.Tapped{"ebs-pvs": {Complete: true, Items: 5, Data: data}}}
	}
	read := func(prev map[string]Seen) (inventory.ClusterRefs, map[string]Seen) {
		rr := reader(m, &now, nil)
		rr.Taps = map[string]published.Decoder{"ebs-pvs": published.DecodeAs[map[string][]string]}
		return pass(rr, prev)
	}
	m.putRefs(t, refs(5), "uid-1", "", recT0)
	_, seen := read(nil)
	if got := seen[key].Sizes[0].Counts["tap ebs-pvs"]; got != 5 {
		t.Fatalf("counted %d volume handles, want 5", got)
	}
	m.putRefs(t, refs(0), "uid-1", "", recT0.Add(30*time.Minute))
	if c, _ := read(seen); c.Complete || !strings.Contains(strings.Join(c.Problems, " "), "0 tap ebs-pvs where it listed 5") {
		t.Fatalf("a tap claiming 5 items with no handle: complete %v, %v", c.Complete, c.Problems)
	}
}
