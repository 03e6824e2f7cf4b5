package published_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/published"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

type refs map[string][]string

func record() published.Record {
	disk := inventory.DiskKey{Project: "p1", Zone: "us-central1-a", Name: "pvc-1"}
	return published.Record{
		Cluster: published.Identity{Name: "prod-a", Platform: inventory.EKS, Account: "123456789012", Location: "us-east-1",
			CA: "ab12", KubeSystemUID: "uid-1"},
		TakenAt: t0, Agent: "test",
		Refs: inventory.ClusterRefs{Name: "prod-a", Complete: true,
			PVs:          []inventory.PVRef{{Cluster: "prod-a", Disk: disk, PV: "pv-1", Phase: "Bound", Pods: []inventory.PodRef{{Namespace: "a", Name: "p", Phase: "Running"}}}},
			PVCs:         []inventory.PVCRef{{Cluster: "prod-a", Namespace: "a", Name: "c", Disk: &disk, Created: t0, Workflow: &inventory.WorkflowRef{Name: "wf", Phase: "Running"}}},
			ImagesListed: true, Images: []inventory.ImageUse{{Ref: inventory.ImageRef{Repo: inventory.RepoKey{Account: "123456789012", Region: "us-east-1", Name: "app"}, Digest: "sha256:" + strings.Repeat("a", 64)}, Where: "a/Pod/p", Users: 1}},
			WorkloadsListed: true, PodsVersion: "42",
			Pods: []inventory.Pod{{Namespace: "a", Name: "p", Phase: "Running", IPs: []string{"10.0.0.5"}}},
			Taps: map[string]inventory.Tapped{
				"volumes": {Complete: true, Items: 2, Version: "7", Data: refs{"vol-1": {"pv-1"}}},
				"other":   {Complete: true, Items: 1, Data: map[string]int{"x": 1}},
			}},
	}
}

// A record reads back as written; a tap the reader has no decoder for is
// left out, as if not read.
func TestRecordRoundTrip(t *testing.T) {
	var b bytes.Buffer
	in := record()
	if err := published.Encode(&b, in); err != nil {
		t.Fatal(err)
	}
	out, err := published.Decode(bytes.NewReader(b.Bytes()), map[string]published.Decoder{"volumes": published.DecodeAs[refs]})
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.Version = published.Version
	want.Refs.Taps = map[string]inventory.Tapped{"volumes": in.Refs.Taps["volumes"]}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", out, want)
	}
	if out.Items() != 1+1+1+1+2 {
		t.Fatalf("items %d", out.Items())
	}
}

// What cannot be read whole is an error, never a smaller record: a
// truncated object, a corrupt one, one of an unknown version.
func TestUnreadableRecords(t *testing.T) {
	var b bytes.Buffer
	if err := published.Encode(&b, record()); err != nil {
		t.Fatal(err)
	}
	whole := b.Bytes()
	for _, n := range []int{0, 10, len(whole) / 2, len(whole) - 4, len(whole) - 1} {
		if _, err := published.Decode(bytes.NewReader(whole[:n]), nil); err == nil {
			t.Errorf("truncated to %d of %d bytes: read", n, len(whole))
		}
	}
	bad := bytes.Clone(whole)
	bad[len(bad)/2] ^= 0xff
	if _, err := published.Decode(bytes.NewReader(bad), nil); err == nil {
		t.Error("a corrupt record was read")
	}
	future := record()
	b.Reset()
	if err := published.Encode(&b, future); err != nil {
		t.Fatal(err)
	}
	raw := bytes.Replace(gunzip(t, b.Bytes()), []byte(`"version":1`), []byte(`"version":2`), 1)
	if _, err := published.Decode(bytes.NewReader(gzipped(t, raw)), nil); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("a version-2 record: %v", err)
	}
}

// Check refuses a record that is stale, from the future, of another
// cluster (name, place, CA, kube-system UID) or that says nothing of who
// wrote it.
func TestCheck(t *testing.T) {
	expect := published.Expect{Name: "prod-a", Place: inventory.Place{Platform: inventory.EKS, Account: "123456789012", Location: "us-east-1"},
		CA: "ab12", KubeSystemUID: "uid-1", MaxAge: 2 * time.Hour, Now: t0.Add(time.Hour)}
	r := record()
	if p := r.Check(expect); len(p) != 0 {
		t.Fatalf("a good record: %v", p)
	}
	for name, tc := range map[string]struct {
		edit func(*published.Record, *published.Expect)
		want string
	}{
		"stale":            {func(_ *published.Record, e *published.Expect) { e.Now = t0.Add(3 * time.Hour) }, "maxAge"},
		"written long ago": {func(_ *published.Record, e *published.Expect) { e.Written = t0.Add(-2 * time.Hour) }, "the store wrote the record 3h0m0s ago"},
		"future":           {func(_ *published.Record, e *published.Expect) { e.Now = t0.Add(-time.Hour) }, "in the future"},
		"no time":          {func(r *published.Record, _ *published.Expect) { r.TakenAt = time.Time{} }, "no read time"},
		"another name":     {func(r *published.Record, _ *published.Expect) { r.Cluster.Name = "prod-b" }, "another cluster"},
		"another account":  {func(r *published.Record, _ *published.Expect) { r.Cluster.Account = "210987654321" }, "another cluster"},
		"another region":   {func(r *published.Record, _ *published.Expect) { r.Cluster.Location = "us-west-2" }, "another cluster"},
		"another CA":       {func(r *published.Record, _ *published.Expect) { r.Cluster.CA = "cd34" }, "CA"},
		"another UID":      {func(r *published.Record, _ *published.Expect) { r.Cluster.KubeSystemUID = "uid-2" }, "kube-system"},
		"no UID":           {func(r *published.Record, e *published.Expect) { r.Cluster.KubeSystemUID, e.KubeSystemUID = "", "" }, "no kube-system"},
		"no CA":            {func(r *published.Record, e *published.Expect) { r.Cluster.CA, e.CA = "", "" }, "no API server CA"},
	} {
		r, e := record(), expect
		tc.edit(&r, &e)
		p := r.Check(e)
		if len(p) == 0 || !strings.Contains(strings.Join(p, "; "), tc.want) {
			t.Errorf("%s: problems %v, want one saying %q", name, p, tc.want)
		}
	}
	// What the deleter does not know is not a mismatch.
	r, e := record(), expect
	e.CA, e.KubeSystemUID, e.Place.Location = "", "", ""
	if p := r.Check(e); len(p) != 0 {
		t.Fatalf("unknowns: %v", p)
	}
}

func TestKeySeparatesSameNameClusters(t *testing.T) {
	a := published.Key("fleet", inventory.Place{Platform: inventory.EKS, Account: "111122223333", Location: "us-east-1"}, "prod")
	b := published.Key("fleet", inventory.Place{Platform: inventory.EKS, Account: "444455556666", Location: "us-east-1"}, "prod")
	g := published.Key("fleet", inventory.Place{Platform: inventory.GKE, Project: "p", Location: "us-central1"}, "prod")
	if a == b || a != "fleet/clusters/eks/111122223333/us-east-1/prod.json.gz" || g != "fleet/clusters/gke/p/us-central1/prod.json.gz" {
		t.Fatalf("keys %s %s %s", a, b, g)
	}
}
