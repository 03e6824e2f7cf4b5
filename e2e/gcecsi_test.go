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

// The GCE PD CSI driver's snapshots on real apiservers, the CRD installed
// in prod-a only: one a VolumeSnapshotContent in prod-a names by its
// handle (projects/P/global/snapshots/NAME) stays; an orphan goes past its
// grace with csi.delete; one known by its name alone is only reported;
// one labelled for a cluster nobody reads is held.
func TestGCECSISnapshots(t *testing.T) {
	w := newWorld(t)
	withContentCRD(t, prodA)
	w.disksYAML = "  maxDeletePercent: 100%\ngceSnapshots:\n  maxDeletePercent: 100%\n  csi:\n    delete: true\n"
	start := w.now
	made := start.Add(-30 * 24 * time.Hour)
	src := inventory.DiskKey{Project: project, Zone: zoneA, Name: w.name("pvc")}.String()
	snap := func(uid string, f func(*gcefake.Snapshot)) string {
		s := gcefake.Snapshot{Name: "snapshot-0f1e2d3c-4b5a-6978-8a9b-" + uid, SourceDisk: src, SizeGB: 20, Created: made,
			Description: "Snapshot created by GCE-PD CSI Driver"}
		if f != nil {
			f(&s)
		}
		return inventory.LastSegment(w.gce.AddSnapshot(project, s))
	}
	used, orphan := snap("00000000c5c1", nil), snap("00000000c5c2", nil)
	nameOnly := snap("00000000c5c3", func(s *gcefake.Snapshot) { s.Description = "" })
	ghost := snap("00000000c5c4", func(s *gcefake.Snapshot) { s.Labels = map[string]string{gcepd.ClusterLabel: "ghost"} })
	csiContent(t, prodA, w.prefix, "db", "nightly", gcesnapshot.Handle(project, used), false)
	id := func(name string) string { return gcesnapshot.ID(project, name) }

	rep := w.run(true)
	want(t, rep, id(orphan), engine.Mark, gcesnapshot.ClassCSIOrphan)
	w.now = start.Add(25 * time.Hour)
	rep = w.run(true)
	if d := want(t, rep, id(used), engine.Keep, gcesnapshot.ClassCSIInUse); !strings.Contains(d.Why(), "in use by cluster prod-a (VolumeSnapshotContent "+w.prefix+"-nightly of VolumeSnapshot db/nightly") {
		t.Fatalf("used: %s", d.Why())
	}
	if d := want(t, rep, id(orphan), engine.Delete, gcesnapshot.ClassCSIOrphan); !strings.Contains(d.Why(), "(could own it: prod-a, prod-b)") {
		t.Fatalf("orphan: %s", d.Why())
	}
	if d := want(t, rep, id(nameOnly), engine.Report, gcesnapshot.ClassCSIOrphan); !strings.Contains(d.Why(), "known by its name alone") {
		t.Fatalf("name only: %s", d.Why())
	}
	if d := want(t, rep, id(ghost), engine.Mark, gcesnapshot.ClassCSIOrphan); !d.Held || !strings.Contains(d.Why(), "ghost") {
		t.Fatalf("a snapshot labelled for a cluster nobody read is not held: %+v (%s)", d, d.Why())
	}
	for name, kept := range map[string]bool{used: true, nameOnly: true, ghost: true, orphan: false} {
		if w.gce.HasSnapshot(project, name) != kept {
			t.Fatalf("%s: kept %v, want %v; audit %+v\n%s", name, !kept, kept, w.audit(), text(rep))
		}
	}
}
