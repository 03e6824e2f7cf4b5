package e2e

import (
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/gcesnapshot"
)

// The snapshot reclaim made before deleting a disk is kept through its
// retention, then deleted through the engine (grace, audit); look-alikes
// (reclaim's name without its label, its label on another disk's
// snapshot), one an image was made from and the CSI driver's stay.
func TestGCESnapshotsReclaimMadeExpire(t *testing.T) {
	w := newWorld(t)
	key := w.orphan(zoneA, "snap-me")
	w.seen(w.now.Add(-48*time.Hour), key)
	w.disksYAML = "  maxDeletePercent: 100%\n  snapshotBeforeDelete: true\ngceSnapshots:\n  maxDeletePercent: 100%\n"
	start := w.now
	if rep := w.run(true); rep.Outcome == nil || rep.Outcome.Deleted != 1 || w.gce.HasDisk(key) {
		t.Fatalf("the orphan disk was not deleted: %+v\n%s", rep.Outcome, text(rep))
	}
	snaps := w.gce.Snapshots()
	if len(snaps) != 1 || snaps[0].SourceDisk != key {
		t.Fatalf("snapshots before delete: %+v", snaps)
	}
	backup := snaps[0].Name
	id := func(name string) string { return gcesnapshot.ID(project, name) }
	disk := func(name string) inventory.DiskKey {
		return inventory.DiskKey{Project: project, Zone: zoneA, Name: w.name(name)}
	}
	// Reclaim's name and source disk, no label; reclaim's label, name and
	// location naming another disk than its source; all three, with an
	// image made from it; the CSI driver's.
	a, b, u := disk("a"), disk("b"), disk("u")
	noLabel := w.gce.AddSnapshot(project, gcefake.Snapshot{Name: gcepd.SnapshotName(a.Name, start), SourceDisk: a.String(), SizeGB: 50, Created: start})
	otherDisk := w.gce.AddSnapshot(project, gcefake.Snapshot{Name: gcepd.SnapshotName(b.Name, start), SourceDisk: a.String(), SizeGB: 50, Created: start,
		Labels: gcepd.SnapshotLabels("reclaim-snapshot-of", b)})
	used := w.gce.AddSnapshot(project, gcefake.Snapshot{Name: gcepd.SnapshotName(u.Name, start), SourceDisk: u.String(), SizeGB: 50, Created: start,
		Labels: gcepd.SnapshotLabels("reclaim-snapshot-of", u)})
	w.gce.AddImage(project, gcefake.Image{Name: w.name("golden"), SourceSnapshot: used})
	csi := w.gce.AddSnapshot(project, gcefake.Snapshot{Name: "snapshot-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", SourceDisk: a.String(), SizeGB: 50, Created: start,
		Description: "Snapshot created by GCE-PD CSI Driver"})
	name := func(path string) string { return inventory.LastSegment(path) }

	// Within retention: kept, and said so.
	w.now = start.Add(10 * 24 * time.Hour)
	rep := w.run(true)
	want(t, rep, id(backup), engine.Keep, gcesnapshot.ClassRetained)
	if !w.gce.HasSnapshot(project, backup) {
		t.Fatal("deleted within retention")
	}

	// Past retention: first seen, its grace starts.
	w.now = start.Add(31 * 24 * time.Hour)
	rep = w.run(true)
	want(t, rep, id(backup), engine.Mark, gcesnapshot.ClassExpired)
	if !w.gce.HasSnapshot(project, backup) {
		t.Fatal("deleted on first sight past retention")
	}

	// Past its grace: deleted; the others kept with their reasons.
	w.now = w.now.Add(25 * time.Hour)
	rep = w.run(true)
	if d := want(t, rep, id(backup), engine.Delete, gcesnapshot.ClassExpired); !strings.Contains(d.Why(), "past its retention of 30 days") {
		t.Fatalf("backup: %s", d.Why())
	}
	for _, c := range []struct{ snap, class, why string }{
		{noLabel, gcesnapshot.ClassNotReclaims, "its name looks like reclaim's, but it has no reclaim-snapshot-of label"},
		{otherDisk, gcesnapshot.ClassNotReclaims, "not the disk it was made from"},
		{used, gcesnapshot.ClassInUse, "made into image " + w.name("golden")},
		{csi, gcesnapshot.ClassCSI, "made by the GCE PD CSI driver"},
	} {
		if d := want(t, rep, id(name(c.snap)), engine.Keep, c.class); !strings.Contains(d.Why(), c.why) {
			t.Fatalf("%s: %s", name(c.snap), d.Why())
		}
		if !w.gce.HasSnapshot(project, name(c.snap)) {
			t.Fatalf("%s was deleted", name(c.snap))
		}
	}
	deletes := 0
	for _, r := range w.audit() {
		if r.ID == id(backup) && r.Action == "delete" && r.Result == "deleted" {
			deletes++
		}
	}
	if w.gce.HasSnapshot(project, backup) || deletes != 1 {
		t.Fatalf("backup still there %v, audit deletes %d: %+v", w.gce.HasSnapshot(project, backup), deletes, w.audit())
	}
	if out := text(rep); !strings.Contains(out, "GCE SNAPSHOTS") || !strings.Contains(out, "21.5 GB") {
		t.Fatalf("report:\n%s", out)
	}
}
