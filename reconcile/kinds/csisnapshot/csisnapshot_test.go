package csisnapshot

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/published"
)

func content(name string, spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshotContent",
		"metadata": map[string]any{"name": name}, "spec": spec}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

// The sink keeps each content's name, driver, handle (status's, else a
// pre-provisioned one's spec.source's) and deletion policy.
func TestSinkReadsContents(t *testing.T) {
	s := tap.New("c")
	ref := map[string]any{"namespace": "db", "name": "nightly", "uid": "0f1e2d3c-aaaa-bbbb-cccc-000000000001"}
	for _, u := range []*unstructured.Unstructured{
		content("snapcontent-1", map[string]any{"driver": "ebs.csi.aws.com", "deletionPolicy": "Delete", "volumeSnapshotRef": ref,
			"source": map[string]any{"volumeHandle": "vol-1"}}, map[string]any{"snapshotHandle": "snap-1", "readyToUse": true}),
		content("restore-from", map[string]any{"driver": "ebs.csi.aws.com", "deletionPolicy": "Retain",
			"source": map[string]any{"snapshotHandle": "snap-2"}}, nil),
		content("snapcontent-3", map[string]any{"driver": "ebs.csi.aws.com", "deletionPolicy": "Delete", "volumeSnapshotRef": ref,
			"source": map[string]any{"volumeHandle": "vol-3"}}, nil),
	} {
		if err := s.Add(u); err != nil {
			t.Fatal(err)
		}
	}
	want := Contents{
		{Name: "snapcontent-1", Driver: "ebs.csi.aws.com", Handle: "snap-1", DeletionPolicy: "Delete", SnapshotUID: ref["uid"].(string), VolumeSnapshot: "db/nightly"},
		{Name: "restore-from", Driver: "ebs.csi.aws.com", Handle: "snap-2", DeletionPolicy: "Retain"},
		{Name: "snapcontent-3", Driver: "ebs.csi.aws.com", DeletionPolicy: "Delete", SnapshotUID: ref["uid"].(string), VolumeSnapshot: "db/nightly"},
	}
	if got := s.Result(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if !tap.Optional {
		t.Fatal("a cluster without the CRD must have none, not fail its pass")
	}
}

// What the tap read travels in an agent's record and reads back as the
// type Lookup looks for.
func TestContentsTravelInARecord(t *testing.T) {
	read := Contents{{Name: "snapcontent-1", Driver: "ebs.csi.aws.com", Handle: "snap-1", DeletionPolicy: "Retain"}}
	rec := published.Record{Cluster: published.Identity{Name: "c", KubeSystemUID: "u"}, Refs: inventory.ClusterRefs{Name: "c", Complete: true,
		Taps: map[string]inventory.Tapped{Tap: {Complete: true, Items: 1, Data: read}}}}
	var b bytes.Buffer
	if err := published.Encode(&b, rec); err != nil {
		t.Fatal(err)
	}
	dec := map[string]published.Decoder{}
	for _, tp := range Taps(nil) {
		dec[tp.Name] = tp.Decode
	}
	out, err := published.Decode(&b, dec)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := out.Refs.Taps[Tap].Data.(Contents); !ok || !reflect.DeepEqual(got, read) {
		t.Fatalf("read back %#v", out.Refs.Taps[Tap].Data)
	}
}

func view(clusters ...inventory.ClusterRefs) *inventory.View {
	return &inventory.View{Clusters: clusters}
}

func cluster(name string, complete bool, cs ...Content) inventory.ClusterRefs {
	t := inventory.Tapped{Complete: complete, Data: Contents(cs)}
	if !complete {
		t.Problem = "list volumesnapshotcontents: the server was unable to return a response"
	}
	return inventory.ClusterRefs{Name: name, Complete: complete, Taps: map[string]inventory.Tapped{Tap: t}}
}

// Each answer Lookup gives, one row each.
func TestLookup(t *testing.T) {
	uid := "0f1e2d3c-aaaa-bbbb-cccc-000000000001"
	ix := IndexOf(view(
		cluster("a", true, Content{Name: "snapcontent-1", Handle: "snap-1", DeletionPolicy: "Retain", VolumeSnapshot: "db/nightly"}),
		cluster("b", false, Content{Name: "snapcontent-2", Handle: "snap-2"}),
		cluster("c", true, Content{Name: "snapcontent-3", SnapshotUID: uid}),
		inventory.ClusterRefs{Name: "d", Complete: true}, // a record without the tap
	))
	for _, c := range []struct {
		name, handle, csiName string
		owners                []string
		inUse                 bool
		want                  string
	}{
		{name: "a content names it", handle: "snap-1", owners: []string{"x"}, inUse: true,
			want: "in use by cluster a (VolumeSnapshotContent snapcontent-1 of VolumeSnapshot db/nightly, deletionPolicy Retain)"},
		{name: "named in an incomplete pass", handle: "snap-2", inUse: true, want: "in use by cluster b"},
		{name: "its content is being made", handle: "snap-3", csiName: "snapshot-" + uid, inUse: true, want: "snapcontent-3, being made"},
		{name: "owner never read", handle: "snap-9", owners: []string{"a", "x"}, want: "held: cluster x could own it and its VolumeSnapshotContents were not read"},
		{name: "owner read incompletely", handle: "snap-9", owners: []string{"b"}, want: "held: cluster b could own it and its VolumeSnapshotContents were read incompletely (list volumesnapshotcontents"},
		{name: "owner's record lacks the tap", handle: "snap-9", owners: []string{"d"}, want: "held: cluster d"},
		{name: "no content names it", handle: "snap-9", csiName: "snapshot-other", owners: []string{"a", "c"}, want: "no VolumeSnapshotContent names it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := ix.Lookup(c.handle, c.csiName, c.owners)
			if (len(a.InUse) > 0) != c.inUse || !strings.Contains(a.Say(), c.want) {
				t.Fatalf("got %+v: %q, want in use %v, %q", a, a.Say(), c.inUse, c.want)
			}
		})
	}
}
