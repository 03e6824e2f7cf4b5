package ebs_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
)

// 2,345 snapshots in pages of 1000 are three DescribeSnapshots calls, and
// every field the kind reads comes through the real SDK's parser; another
// account's snapshots are not listed.
func TestListSnapshotsPagesAndParses(t *testing.T) {
	f := newFake(t)
	started := time.Date(2025, 7, 8, 9, 10, 11, 0, time.UTC)
	for i := range 2345 {
		f.AddSnapshot("", ebsfake.Snapshot{ID: fmt.Sprintf("snap-%017d", i), VolumeID: "vol-0123456789abcdef0", SizeGiB: 200, Started: started,
			Description: "reclaim: vol-0123456789abcdef0 before its delete", Tags: map[string]string{"reclaim.dev/snapshot-of": "vol-0123456789abcdef0"},
			StorageTier: map[bool]string{true: "archive"}[i == 7]})
	}
	f.AddSnapshot(acct2, ebsfake.Snapshot{ID: "snap-0000000000000other"})
	c := newClient(t, f.URL())
	l := c.ListSnapshots(ctx)
	if !l.Complete || len(l.Snapshots) != 2345 || f.Calls(ebsfake.OpDescribeSnapshots) != 3 {
		t.Fatalf("complete %v, %d snapshots in %d calls; %s", l.Complete, len(l.Snapshots), f.Calls(ebsfake.OpDescribeSnapshots), l.Problem)
	}
	want := ebs.Snapshot{ID: fmt.Sprintf("snap-%017d", 7), VolumeID: "vol-0123456789abcdef0", State: "completed", Started: started,
		Description: "reclaim: vol-0123456789abcdef0 before its delete", SizeGiB: 200, StorageTier: "archive",
		Tags: map[string]string{"reclaim.dev/snapshot-of": "vol-0123456789abcdef0"}}
	if got := l.Snapshots[7]; !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed\n%+v\nwant\n%+v", got, want)
	}
	// A failed page: incomplete, with what to grant, and what came before.
	f.FailPage(ebsfake.OpDescribeSnapshots, 2, ebsfake.CodeUnauthorizedOperation, 1)
	l = c.ListSnapshots(ctx)
	if l.Complete || len(l.Snapshots) != 1000 || !strings.Contains(l.Problem, "grant ec2:DescribeSnapshots") {
		t.Fatalf("failed page: complete %v, %d, %q", l.Complete, len(l.Snapshots), l.Problem)
	}
}

// What depends on a snapshot: an AMI registered from it (a disabled one
// too) and a volume being created from it; a volume made from it before,
// now available, does not.
func TestSnapshotUsers(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	var ids []string
	for i := range 250 { // two chunks of filter values
		ids = append(ids, f.AddSnapshot("", ebsfake.Snapshot{ID: fmt.Sprintf("snap-%017d", i)}))
	}
	ami := f.AddImage("", ebsfake.Image{Snapshots: []string{ids[3]}})
	off := f.AddImage("", ebsfake.Image{State: "disabled", Snapshots: []string{ids[220]}})
	f.AddImage(acct2, ebsfake.Image{Snapshots: []string{ids[5]}}) // another account's
	vol := f.AddVolume("", ebsfake.Volume{State: "creating", SnapshotID: ids[4]})
	f.AddVolume("", ebsfake.Volume{SnapshotID: ids[6]})
	got, err := c.SnapshotUsers(ctx, ids)
	want := map[string][]string{ids[3]: {"AMI " + ami}, ids[220]: {"AMI " + off}, ids[4]: {"volume " + vol + " being created from it"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("SnapshotUsers = %v, %v; want %v", got, err, want)
	}
	if n := f.Calls(ebsfake.OpDescribeImages); n != 2 {
		t.Errorf("%d DescribeImages calls for 250 ids, want 2", n)
	}
	f.FailNext(ebsfake.OpDescribeImages, ebsfake.CodeUnauthorizedOperation, 1)
	if _, err := c.SnapshotUsers(ctx, ids); err == nil || !strings.Contains(err.Error(), "grant ec2:DescribeImages") {
		t.Fatalf("denied: %v", err)
	}
}

// DeleteSnapshot's outcomes: deleted, gone (also after a lost answer),
// in use (an AMI), refused.
func TestDeleteSnapshotOutcomes(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	a := f.AddSnapshot("", ebsfake.Snapshot{})
	used := f.AddSnapshot("", ebsfake.Snapshot{})
	f.AddImage("", ebsfake.Image{Snapshots: []string{used}})
	if err := c.DeleteSnapshot(ctx, a); err != nil || f.HasSnapshot(a) {
		t.Fatalf("delete: %v", err)
	}
	if err := c.DeleteSnapshot(ctx, a); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("again: %v, want not found", err)
	}
	if err := c.DeleteSnapshot(ctx, used); outcome.Of(err) != outcome.Changed || !errors.Is(err, outcome.ErrInUse) || !strings.Contains(err.Error(), "InvalidSnapshot.InUse") {
		t.Fatalf("in use: %v", err)
	}
	f.FailNext(ebsfake.OpDeleteSnapshot, ebsfake.CodeUnauthorizedOperation, 1)
	if err := c.DeleteSnapshot(ctx, used); outcome.Of(err) != outcome.Refused || !strings.Contains(err.Error(), "grant ec2:DeleteSnapshot") {
		t.Fatalf("denied: %v", err)
	}
	b := f.AddSnapshot("", ebsfake.Snapshot{})
	f.LoseDeleteResponses(1)
	if err := c.DeleteSnapshot(ctx, b); err != nil && !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("lost answer, retried: %v", err)
	}
	if f.HasSnapshot(b) {
		t.Fatal("still there")
	}
	// The re-read: found, then gone.
	if s, err := c.SnapshotByID(ctx, used); err != nil || s.ID != used {
		t.Fatalf("re-read: %+v %v", s, err)
	}
	if _, err := c.SnapshotByID(ctx, b); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("re-read of a gone one: %v", err)
	}
}

// The calls a pass makes for 10,000 snapshots, 500 of them reclaim's: the
// listing at DescribeSnapshots' largest page (10 calls), and what uses
// reclaim's, 200 ids to a call (3 DescribeImages, 3 DescribeVolumes).
func TestCallsForTenThousandSnapshots(t *testing.T) {
	f := newFake(t)
	var ours []string
	for i := range 10000 {
		id := f.AddSnapshot("", ebsfake.Snapshot{ID: fmt.Sprintf("snap-%017d", i)})
		if i%20 == 0 {
			ours = append(ours, id)
		}
	}
	c := newClient(t, f.URL())
	f.ResetCalls()
	if l := c.ListSnapshots(ctx); !l.Complete || len(l.Snapshots) != 10000 {
		t.Fatalf("listing: %v %d", l.Complete, len(l.Snapshots))
	}
	if _, err := c.SnapshotUsers(ctx, ours); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, op := range []string{ebsfake.OpDescribeSnapshots, ebsfake.OpDescribeImages, ebsfake.OpDescribeVolumes} {
		got[op] = f.Calls(op)
	}
	want := map[string]int{ebsfake.OpDescribeSnapshots: 10, ebsfake.OpDescribeImages: 3, ebsfake.OpDescribeVolumes: 3}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	t.Logf("10,000 snapshots, %d reclaim's: %v", len(ours), got)
}

// A snapshot deleted under a Recycle Bin rule is no longer listed, but
// reported from the bin with when it leaves; a failed read of the bin is
// a problem of its own, not an incomplete listing.
func TestRecycleBin(t *testing.T) {
	f := ebsfake.New(ebsfake.Options{Account: acct, RecycleBin: 7 * 24 * time.Hour, Logf: t.Logf})
	f.Start()
	t.Cleanup(f.Close)
	c := newClient(t, f.URL())
	id := f.AddSnapshot("", ebsfake.Snapshot{VolumeID: "vol-0123456789abcdef0", Description: "reclaim: vol-0123456789abcdef0 before its delete"})
	if err := c.DeleteSnapshot(ctx, id); err != nil || !f.InRecycleBin(id) {
		t.Fatalf("delete under a rule: %v", err)
	}
	l := c.ListSnapshots(ctx)
	if !l.Complete || len(l.Snapshots) != 0 || len(l.Recycled) != 1 {
		t.Fatalf("listing: %+v", l)
	}
	r := l.Recycled[0]
	if r.ID != id || r.VolumeID != "vol-0123456789abcdef0" || r.Exits.Sub(r.Entered) != 7*24*time.Hour || r.Description == "" {
		t.Fatalf("recycled: %+v", r)
	}
	f.FailNext(ebsfake.OpListRecycleBin, ebsfake.CodeUnauthorizedOperation, 1)
	if l := c.ListSnapshots(ctx); !l.Complete || !strings.Contains(l.RecycleProblem, "grant ec2:ListSnapshotsInRecycleBin") {
		t.Fatalf("denied: %+v", l)
	}
}
