package gce_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/providers/gce/gcefake"
)

// snapshots.list pages at maxResults, follows nextPageToken, and reads
// every field the kind relies on; a failed page keeps what was seen and
// says the listing is incomplete.
func TestListSnapshots(t *testing.T) {
	f := newFake(t, gcefake.Options{})
	for i := range 7 {
		f.AddSnapshot("p1", gcefake.Snapshot{Name: fmt.Sprintf("s-%d", i), SourceDisk: "projects/p1/zones/us-east1-b/disks/d", SizeGB: 10})
	}
	f.AddSnapshot("p1", gcefake.Snapshot{Name: "z-archived", Type: "ARCHIVE", SizeGB: 20, StorageBytes: 1 << 30,
		Labels: map[string]string{"a": "b"}, Description: "by hand", SchedulePolicy: "projects/p1/regions/us-east1/resourcePolicies/daily"})
	f.AddSnapshot("p2", gcefake.Snapshot{Name: "other-project"})
	c := newClient(t, f.URL(), func(o *gce.Options) { o.PageSize = 3 })
	f.ResetCalls()
	l := c.ListSnapshots(ctx, "p1")
	if !l.Complete || len(l.Snapshots) != 8 || f.Calls(gcefake.MethodSnapshotsList) != 3 {
		t.Fatalf("listing: complete %v, %d snapshots, %d calls: %s", l.Complete, len(l.Snapshots), f.Calls(gcefake.MethodSnapshotsList), l.Problem)
	}
	a := l.Snapshots[7]
	if a.Name != "z-archived" || a.Type != "ARCHIVE" || a.DiskSizeGB != 20 || a.StorageBytes != 1<<30 || a.Labels["a"] != "b" ||
		a.Description != "by hand" || a.SchedulePolicy != gcefake.BaseURL+"projects/p1/regions/us-east1/resourcePolicies/daily" || a.Created.IsZero() || a.ID == "" {
		t.Fatalf("archived: %+v", a)
	}
	if s := l.Snapshots[0]; s.SourceDisk != gcefake.BaseURL+"projects/p1/zones/us-east1-b/disks/d" || s.Status != "READY" || s.Type != "STANDARD" {
		t.Fatalf("first: %+v", s)
	}
	f.FailNext(gcefake.MethodSnapshotsList, 1, 403, "forbidden")
	l = c.ListSnapshots(ctx, "p1")
	if l.Complete || len(l.Snapshots) != 0 || l.Problem == "" {
		t.Fatalf("failed page: %+v", l)
	}
}

// What was made from a snapshot: disks (any project's, by path) and
// images. A failed read of either is an error, never "none".
func TestSnapshotUsers(t *testing.T) {
	f := newFake(t, gcefake.Options{})
	f.AddSnapshot("p1", gcefake.Snapshot{Name: "s1"})
	f.AddDisk("p1", gcefake.Disk{Zone: "us-east1-b", Name: "restored", SizeGB: 10, SourceSnapshot: "projects/p1/global/snapshots/s1"})
	f.AddDisk("p1", gcefake.Disk{Zone: "us-east1-b", Name: "plain", SizeGB: 10})
	f.AddImage("p1", gcefake.Image{Name: "golden", SourceSnapshot: "projects/p1/global/snapshots/s1"})
	f.AddImage("p1", gcefake.Image{Name: "from-other", SourceSnapshot: "projects/p0/global/snapshots/s9"})
	c := newClient(t, f.URL())
	users, err := c.SnapshotUsers(ctx, "p1")
	want := map[string][]string{
		"projects/p1/global/snapshots/s1": {"disk projects/p1/zones/us-east1-b/disks/restored", "image golden"},
		"projects/p0/global/snapshots/s9": {"image from-other"},
	}
	if err != nil || !reflect.DeepEqual(users, want) {
		t.Fatalf("users %v %v", users, err)
	}
	for _, m := range []string{gcefake.MethodImagesList, gcefake.MethodDisksAggregatedList} {
		f.FailNext(m, 1, 403, "forbidden")
		if u, err := c.SnapshotUsers(ctx, "p1"); err == nil {
			t.Fatalf("%s failed, users %v", m, u)
		}
	}
	f.SetScopeWarning("p1", "zones/us-east1-c", "UNREACHABLE", "zone down")
	if u, err := c.SnapshotUsers(ctx, "p1"); err == nil {
		t.Fatalf("a scope unknown, users %v", u)
	}
}

// snapshots.delete waits for its global operation; a gone one is
// outcome.ErrNotFound; a failed operation is refused and the snapshot stays.
func TestDeleteSnapshot(t *testing.T) {
	f := newFake(t, gcefake.Options{OpPolls: 2})
	f.AddSnapshot("p1", gcefake.Snapshot{Name: "s1"})
	f.AddSnapshot("p1", gcefake.Snapshot{Name: "s2"})
	c := newClient(t, f.URL())
	if err := c.DeleteSnapshot(ctx, "p1", "s1"); err != nil || f.HasSnapshot("p1", "s1") {
		t.Fatalf("delete: %v, still there %v", err, f.HasSnapshot("p1", "s1"))
	}
	if err := c.DeleteSnapshot(ctx, "p1", "s1"); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("delete of a gone one: %v", err)
	}
	if _, err := c.GetSnapshot(ctx, "p1", "s1"); !errors.Is(err, outcome.ErrNotFound) {
		t.Fatalf("get of a gone one: %v", err)
	}
	f.FailNextOp(gcefake.MethodSnapshotsDelete, 1, "RESOURCE_OPERATION_RATE_EXCEEDED", "slow down")
	err := c.DeleteSnapshot(ctx, "p1", "s2")
	if outcome.Of(err) != outcome.Refused || !f.HasSnapshot("p1", "s2") {
		t.Fatalf("failed operation: %v (%v), still there %v", err, outcome.Of(err), f.HasSnapshot("p1", "s2"))
	}
	if s, err := c.GetSnapshot(ctx, "p1", "s2"); err != nil || s.Status != "READY" {
		t.Fatalf("after a failed delete: %+v %v", s, err)
	}
}

// The calls a pass makes for 10,000 snapshots: the listing at
// snapshots.list's largest page (500: 20 calls), and what was made from
// them, one disks.aggregatedList and one images.list per project (a page
// each here: 300 disks, 40 images).
func TestCallsForTenThousandSnapshots(t *testing.T) {
	f := newFake(t, gcefake.Options{})
	for i := range 10000 {
		f.AddSnapshot("p1", gcefake.Snapshot{Name: fmt.Sprintf("snap-%05d", i)})
	}
	for i := range 300 {
		f.AddDisk("p1", gcefake.Disk{Zone: "us-east1-b", Name: fmt.Sprintf("d-%d", i), SizeGB: 10})
	}
	for i := range 40 {
		f.AddImage("p1", gcefake.Image{Name: fmt.Sprintf("im-%d", i), SourceSnapshot: fmt.Sprintf("projects/p1/global/snapshots/snap-%05d", i)})
	}
	c := newClient(t, f.URL())
	f.ResetCalls()
	if l := c.ListSnapshots(ctx, "p1"); !l.Complete || len(l.Snapshots) != 10000 {
		t.Fatalf("listing: %v %d", l.Complete, len(l.Snapshots))
	}
	if u, err := c.SnapshotUsers(ctx, "p1"); err != nil || len(u) != 40 {
		t.Fatal(len(u), err)
	}
	got := map[string]int{}
	for _, m := range []string{gcefake.MethodSnapshotsList, gcefake.MethodDisksAggregatedList, gcefake.MethodImagesList} {
		got[m] = f.Calls(m)
	}
	want := map[string]int{gcefake.MethodSnapshotsList: 20, gcefake.MethodDisksAggregatedList: 1, gcefake.MethodImagesList: 1}
	if !reflect.DeepEqual(got, want) || f.TotalCalls() != 22 {
		t.Fatalf("calls %v (%d in all), want %v", got, f.TotalCalls(), want)
	}
	t.Logf("10,000 snapshots: %v", got)
}
