package gcesnapshot

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

const csiSnapName = "snapshot-0f1e2d3c-aaaa-bbbb-cccc-000000000001"

// csiSnap is a READY snapshot the PD CSI driver made, 40 days ago, its
// description the driver's JSON tags.
func csiSnap(f ...func(*gce.Snapshot)) gce.Snapshot {
	s := gce.Snapshot{Name: csiSnapName, ID: "200", Status: "READY", Created: t0.Add(-40 * 24 * time.Hour),
		SourceDisk: "https://www.googleapis.com/compute/v1/projects/" + proj + "/zones/" + zone + "/disks/pvc-9", DiskSizeGB: 100,
		StorageBytes: 10 << 30, Type: "STANDARD", Labels: map[string]string{},
		Description: `{"kubernetes.io/created-for/volumesnapshot/name":"nightly","kubernetes.io/created-for/volumesnapshot/namespace":"db","kubernetes.io/created-for/volumesnapshotcontent/name":"snapcontent-1","storage.gke.io/created-by":"pd.csi.storage.gke.io"}`}
	for _, g := range f {
		g(&s)
	}
	return s
}

// read is a cluster whose contents were read completely.
func read(name string, cs ...csisnapshot.Content) inventory.ClusterRefs {
	return inventory.ClusterRefs{Name: name, Complete: true,
		Taps: map[string]inventory.Tapped{csisnapshot.Tap: {Complete: true, Data: csisnapshot.Contents(cs)}}}
}

func unread(name string) inventory.ClusterRefs {
	return inventory.ClusterRefs{Name: name, Problems: []string{"connection refused"}}
}

func csiSection() Section {
	s := testSection()
	s.CSI = csisnapshot.Policy{Delete: true, MinAge: config.Duration(7 * 24 * time.Hour)}
	return s
}

func gkeMember(name, project, location string) inventory.FleetMember {
	return inventory.FleetMember{Name: name, Discovered: true, State: inventory.MemberExcluded,
		Cloud: inventory.FleetCluster{Name: name, Platform: inventory.GKE, Project: project, Location: location}}
}

// Each rule of the CSI snapshots, one row each; removing a rule fails its
// row.
func TestPlanCSISnapshot(t *testing.T) {
	old := t0.Add(-2 * time.Hour)
	names := func(h string) csisnapshot.Content {
		return csisnapshot.Content{Name: "snapcontent-x", Driver: csiDriver, Handle: h, DeletionPolicy: "Retain", VolumeSnapshot: "db/nightly"}
	}
	handle := Handle(proj, csiSnapName)
	for _, c := range []struct {
		name     string
		snap     gce.Snapshot
		users    map[string][]string
		clusters []inventory.ClusterRefs
		fleet    *inventory.Fleet
		sec      func(*Section)
		action   engine.Action
		class    string
		why      string
	}{
		{name: "orphaned, every cluster read", snap: csiSnap(), clusters: []inventory.ClusterRefs{read("a"), read("b")},
			action: engine.Delete, class: ClassCSIOrphan, why: "orphaned CSI snapshot: made by the GCE PD CSI driver for VolumeSnapshotContent snapcontent-1, and no VolumeSnapshotContent in any read cluster names it (could own it: a, b)"},
		{name: "a content names its handle", snap: csiSnap(), clusters: []inventory.ClusterRefs{read("a", names(handle)), read("b")},
			action: engine.Keep, class: ClassCSIInUse, why: "in use by cluster a (VolumeSnapshotContent snapcontent-x of VolumeSnapshot db/nightly, deletionPolicy Retain)"},
		// The handle is the project's path, not the bare name.
		{name: "a content names another project's snapshot of the name", snap: csiSnap(),
			clusters: []inventory.ClusterRefs{read("a", names(Handle("proj-two", csiSnapName)))},
			action:   engine.Delete, class: ClassCSIOrphan},
		{name: "its content is being made", snap: csiSnap(),
			clusters: []inventory.ClusterRefs{read("a", csisnapshot.Content{Name: "snapcontent-y", SnapshotUID: "0f1e2d3c-aaaa-bbbb-cccc-000000000001"})},
			action:   engine.Keep, class: ClassCSIInUse, why: "being made"},
		// Fail closed: a cluster that could own it and was not read holds it.
		{name: "a cluster unread", snap: csiSnap(), clusters: []inventory.ClusterRefs{read("a"), unread("b")},
			action: engine.Mark, class: ClassCSIOrphan, why: "cluster b could own it and its VolumeSnapshotContents were not read"},
		{name: "a cluster's pass incomplete", snap: csiSnap(), clusters: []inventory.ClusterRefs{{Name: "a", Complete: true,
			Taps: map[string]inventory.Tapped{csisnapshot.Tap: {Problem: "Forbidden", Data: csisnapshot.Contents{}}}}},
			action: engine.Mark, class: ClassCSIOrphan, why: "read incompletely (Forbidden)"},
		// A GKE cluster of the project, of any region, could own it.
		{name: "a GKE cluster of the project, another region, unread", snap: csiSnap(), clusters: []inventory.ClusterRefs{read("a")},
			fleet:  &inventory.Fleet{Members: []inventory.FleetMember{{Name: "a", Configured: true, State: inventory.MemberRead}, gkeMember("far", proj, "europe-west1")}},
			action: engine.Mark, class: ClassCSIOrphan, why: "cluster far could own it"},
		{name: "a GKE cluster of another project is not an owner", snap: csiSnap(), clusters: []inventory.ClusterRefs{read("a")},
			fleet:  &inventory.Fleet{Members: []inventory.FleetMember{{Name: "a", Configured: true, State: inventory.MemberRead}, gkeMember("other", "proj-two", zone)}},
			action: engine.Delete, class: ClassCSIOrphan},
		{name: "an EKS cluster is not an owner", snap: csiSnap(), clusters: []inventory.ClusterRefs{read("a"), unread("eks")},
			fleet: &inventory.Fleet{Members: []inventory.FleetMember{{Name: "a", Configured: true, State: inventory.MemberRead},
				{Name: "eks", Configured: true, Cloud: inventory.FleetCluster{Name: "eks", Platform: inventory.EKS, Account: "123456789012", Location: "us-east-1"}}}},
			action: engine.Delete, class: ClassCSIOrphan},
		// Its cluster label narrows the owners to the cluster it names.
		{name: "labelled: another cluster unread", snap: csiSnap(func(s *gce.Snapshot) { s.Labels[gcepd.ClusterLabel] = "a" }),
			clusters: []inventory.ClusterRefs{read("a"), unread("b")}, action: engine.Delete, class: ClassCSIOrphan, why: "(could own it: a)"},
		{name: "labelled: its cluster unread", snap: csiSnap(func(s *gce.Snapshot) { s.Labels[gcepd.ClusterLabel] = "gone" }),
			clusters: []inventory.ClusterRefs{read("a")}, action: engine.Mark, class: ClassCSIOrphan, why: "cluster gone could own it"},
		{name: "a disk was made from it", snap: csiSnap(), users: map[string][]string{path(csiSnapName): {"disk projects/proj-one/zones/us-east1-b/disks/restored"}},
			clusters: []inventory.ClusterRefs{read("a")}, action: engine.Keep, class: ClassInUse, why: "made into disk"},
		{name: "protect label", snap: csiSnap(func(s *gce.Snapshot) { s.Labels["reclaim-protect"] = "" }), clusters: []inventory.ClusterRefs{read("a")},
			action: engine.Keep, class: ClassProtected},
		{name: "a schedule's", snap: csiSnap(func(s *gce.Snapshot) { s.SchedulePolicy = "projects/proj-one/regions/us-east1/resourcePolicies/daily" }),
			clusters: []inventory.ClusterRefs{read("a")}, action: engine.Keep, class: ClassScheduled},
		{name: "creating", snap: csiSnap(func(s *gce.Snapshot) { s.Status = "CREATING" }), clusters: []inventory.ClusterRefs{read("a")},
			action: engine.Keep, class: ClassCSI, why: "CREATING"},
		{name: "archive", snap: csiSnap(func(s *gce.Snapshot) { s.Type = "ARCHIVE" }), clusters: []inventory.ClusterRefs{read("a")},
			action: engine.Report, class: ClassCSIOrphan, why: "an archive snapshot: reported, not deleted"},
		// Its name alone is weak evidence: reported, never deleted.
		{name: "known by name only", snap: csiSnap(func(s *gce.Snapshot) { s.Description = "" }), clusters: []inventory.ClusterRefs{read("a")},
			action: engine.Report, class: ClassCSIOrphan, why: "known by its name alone"},
		{name: "csi.delete off (the default)", snap: csiSnap(), clusters: []inventory.ClusterRefs{read("a")}, sec: func(s *Section) { s.CSI.Delete = false },
			action: engine.Report, class: ClassCSIOrphan, why: "gceSnapshots.csi.delete is off"},
		{name: "younger than csi.minAge", snap: csiSnap(func(s *gce.Snapshot) { s.Created = t0.Add(-3 * 24 * time.Hour) }),
			clusters: []inventory.ClusterRefs{read("a")}, action: engine.Mark, class: ClassCSIOrphan, why: "younger than gceSnapshots.csi.minAge 7 days"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sec := csiSection()
			if c.sec != nil {
				c.sec(&sec)
			}
			s := snapOf([]gce.Snapshot{c.snap}, c.users)
			s.Clusters, s.Fleet = c.clusters, c.fleet
			p := plan(s, sec, seen(old, c.snap))
			d := enginetest.DecisionFor(t, p, c.snap.Name)
			if d.Action != c.action || d.Class != c.class || !strings.Contains(d.Why(), c.why) {
				t.Fatalf("got %s %s %q, want %s %s %q", d.Action, d.Class, d.Why(), c.action, c.class, c.why)
			}
		})
	}
}

// The re-read before a CSI orphan's delete: still the driver's, as it was,
// and the same snapshot, or a skip.
func TestApplyCSI(t *testing.T) {
	b := csiSnap()
	for _, c := range []struct {
		name    string
		change  func(m *memGCE, s *gce.Snapshot)
		result  string
		deleted bool
	}{
		{"deleted", nil, audit.Deleted, true},
		{"made again under its name", func(_ *memGCE, s *gce.Snapshot) { s.ID = "777" }, audit.Skipped, false},
		{"its description no longer the driver's", func(_ *memGCE, s *gce.Snapshot) { s.Description = "kept by hand" }, audit.Skipped, false},
		{"made for another content", func(_ *memGCE, s *gce.Snapshot) {
			s.Description = strings.Replace(s.Description, "snapcontent-1", "snapcontent-2", 1)
		}, audit.Skipped, false},
		{"a disk made from it since the plan", func(m *memGCE, _ *gce.Snapshot) { m.users[path(b.Name)] = []string{"disk restored"} }, audit.Skipped, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &memGCE{snaps: map[string]gce.Snapshot{b.Name: csiSnap()}, users: map[string][]string{}}
			s := snapOf([]gce.Snapshot{b}, nil)
			s.Clusters = []inventory.ClusterRefs{read("a")}
			k := New(csiSection(), label, []string{proj}, m)
			p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), b), t0)
			if c.change != nil {
				sn := m.snaps[b.Name]
				sn.Labels = maps.Clone(sn.Labels)
				c.change(m, &sn)
				m.snaps[b.Name] = sn
			}
			a, _, _ := enginetest.Applier(t0, 3, k)
			out, err := a.Apply(context.Background(), p, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != 1 || out.Results[0].Result != c.result {
				t.Fatalf("%+v", out.Results)
			}
			if _, left := m.snaps[b.Name]; left == c.deleted || (!c.deleted && slices.Contains(m.calls, "delete "+b.Name)) {
				t.Fatalf("deleted=%v, calls %v", !left, m.calls)
			}
		})
	}
}

// The Reader asks what was made from snapshots when one is the CSI
// driver's: a disk made from it keeps it.
func TestReaderAsksUsersForCSI(t *testing.T) {
	m := &memGCE{snaps: map[string]gce.Snapshot{csiSnapName: csiSnap()}, users: map[string][]string{}}
	cfg, err := config.Parse([]byte("clusters: [{name: a, context: a, gceProjects: [proj-one]}]\ngce: {projects: [proj-one]}\ngceSnapshots: {}\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r := Reader(cfg, m)(context.Background()).(Read); !r.Projects[0].UsersRead || m.usersCalls != 1 {
		t.Fatalf("a CSI snapshot: %+v, %d users calls", r, m.usersCalls)
	}
}

// MadeFor records a CSI snapshot labelled with a GKE cluster's name as
// evidence that its contents are to be shown, and nothing for others.
func TestMadeFor(t *testing.T) {
	labelled := csiSnap(func(s *gce.Snapshot) { s.Labels[gcepd.ClusterLabel] = "a" })
	other := csiSnap(func(s *gce.Snapshot) { s.Name = "snapshot-0f1e2d3c-aaaa-bbbb-cccc-000000000002" })
	clouds := map[string]any{Name: Read{Projects: []Project{{Listing: gce.SnapshotListing{Project: proj, Snapshots: []gce.Snapshot{labelled, other}}}}}}
	got := records.Shown{}
	MadeFor(clouds, kube.Target{CloudName: "a", Place: inventory.Place{Platform: inventory.GKE, Project: proj, Location: zone}}, got)
	if fmt.Sprint(got) != fmt.Sprint(records.Shown{csisnapshot.Class: {"GCE snapshot " + csiSnapName}}) {
		t.Fatalf("shown %v", got)
	}
}
