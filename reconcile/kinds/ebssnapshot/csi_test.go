package ebssnapshot

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
)

// csiSnap is a completed snapshot the EBS CSI driver made, 40 days ago,
// tagged as the driver tags it with --k8s-tag-cluster-id a.
func csiSnap(id string, f ...func(*ebs.Snapshot)) ebs.Snapshot {
	s := ebs.Snapshot{ID: id, VolumeID: "vol-" + strings.TrimPrefix(id, "snap-"), State: "completed", Started: t0.Add(-40 * 24 * time.Hour),
		SizeGiB: 100, StorageTier: "standard", Description: "Created by AWS EBS CSI driver for volume vol-1",
		Tags: map[string]string{TagCSIName: "snapshot-uid-" + id, TagCSIDriver: "true", "kubernetes.io/cluster/a": "owned", TagCSIClusterName: "a"}}
	for _, g := range f {
		g(&s)
	}
	return s
}

func untagged(s *ebs.Snapshot) {
	delete(s.Tags, "kubernetes.io/cluster/a")
	delete(s.Tags, TagCSIClusterName)
}

// read is a cluster whose contents were read completely.
func read(name string, cs ...csisnapshot.Content) inventory.ClusterRefs {
	return inventory.ClusterRefs{Name: name, Complete: true,
		Taps: map[string]inventory.Tapped{csisnapshot.Tap: {Complete: true, Data: csisnapshot.Contents(cs)}}}
}

func csiSection() Section {
	s := testSection()
	s.CSI = csisnapshot.Policy{Delete: true, MinAge: config.Duration(7 * 24 * time.Hour)}
	return s
}

// Each rule of the CSI snapshots, one row each; removing a rule fails its
// row.
func TestPlanCSISnapshot(t *testing.T) {
	old := t0.Add(-2 * time.Hour)
	names := func(h string) csisnapshot.Content {
		return csisnapshot.Content{Name: "snapcontent-x", Driver: "ebs.csi.aws.com", Handle: h, DeletionPolicy: "Retain", VolumeSnapshot: "db/nightly"}
	}
	for _, c := range []struct {
		name     string
		snap     ebs.Snapshot
		users    map[string][]string
		clusters []inventory.ClusterRefs
		fleet    *inventory.Fleet
		sec      func(*Section)
		action   engine.Action
		class    string
		why      string
	}{
		{name: "orphaned, its cluster read", snap: csiSnap("snap-1"), clusters: []inventory.ClusterRefs{read("a"), read("b")},
			action: engine.Delete, class: ClassCSIOrphan, why: "orphaned CSI snapshot: made by the EBS CSI driver as snapshot-uid-snap-1, and no VolumeSnapshotContent in any read cluster names it (could own it: a)"},
		{name: "a content in its cluster names it", snap: csiSnap("snap-1"), clusters: []inventory.ClusterRefs{read("a", names("snap-1"))},
			action: engine.Keep, class: ClassCSIInUse, why: "in use by cluster a (VolumeSnapshotContent snapcontent-x of VolumeSnapshot db/nightly, deletionPolicy Retain)"},
		// A cluster restores from it with a pre-provisioned content.
		{name: "a content in another cluster names it", snap: csiSnap("snap-1"), clusters: []inventory.ClusterRefs{read("a"), read("b", names("snap-1"))},
			action: engine.Keep, class: ClassCSIInUse, why: "in use by cluster b"},
		{name: "its content is being made", snap: csiSnap("snap-1"),
			clusters: []inventory.ClusterRefs{read("a", csisnapshot.Content{Name: "snapcontent-uid-snap-1", SnapshotUID: "uid-snap-1"})},
			action:   engine.Keep, class: ClassCSIInUse, why: "being made"},
		// Fail closed: a cluster that could own it and was not read holds it.
		{name: "its cluster unread", snap: csiSnap("snap-1"), clusters: []inventory.ClusterRefs{read("b"), {Name: "a", Problems: []string{"connection refused"}}},
			action: engine.Mark, class: ClassCSIOrphan, why: "cluster a could own it and its VolumeSnapshotContents were not read"},
		{name: "its cluster's pass incomplete", snap: csiSnap("snap-1"), clusters: []inventory.ClusterRefs{{Name: "a", Complete: true,
			Taps: map[string]inventory.Tapped{csisnapshot.Tap: {Problem: "Forbidden", Data: csisnapshot.Contents{}}}}},
			action: engine.Mark, class: ClassCSIOrphan, why: "read incompletely (Forbidden)"},
		{name: "its tag names a cluster nobody read", snap: csiSnap("snap-1", func(s *ebs.Snapshot) {
			untagged(s)
			s.Tags["kubernetes.io/cluster/gone"] = "owned"
		}), clusters: []inventory.ClusterRefs{read("a")}, action: engine.Mark, class: ClassCSIOrphan, why: "gone"},
		// Only the cluster its tags name owns a tagged one: another unread
		// cluster does not hold it.
		{name: "another cluster unread", snap: csiSnap("snap-1"), clusters: []inventory.ClusterRefs{read("a"), {Name: "b", Problems: []string{"connection refused"}}},
			action: engine.Delete, class: ClassCSIOrphan},
		// Untagged (the driver runs without --k8s-tag-cluster-id): every
		// cluster of its account and region could own it.
		{name: "untagged, every cluster read", snap: csiSnap("snap-1", untagged), clusters: []inventory.ClusterRefs{read("a"), read("b")},
			action: engine.Delete, class: ClassCSIOrphan, why: "(could own it: a, b)"},
		{name: "untagged, a cluster unread", snap: csiSnap("snap-1", untagged), clusters: []inventory.ClusterRefs{read("a"), {Name: "b", Problems: []string{"connection refused"}}},
			action: engine.Mark, class: ClassCSIOrphan, why: "cluster b could own it"},
		{name: "untagged, an EKS cluster of the region unread", snap: csiSnap("snap-1", untagged), clusters: []inventory.ClusterRefs{read("a")},
			fleet: &inventory.Fleet{Discovery: true, Listings: []inventory.FleetListing{{Platform: inventory.EKS, Scope: acct + "/" + region, Complete: true}},
				Members: []inventory.FleetMember{{Name: "a", Configured: true, State: inventory.MemberRead},
					{Name: "unseen", Discovered: true, State: inventory.MemberExcluded, Cloud: inventory.FleetCluster{Name: "unseen", Platform: inventory.EKS, Account: acct, Location: region}}}},
			action: engine.Mark, class: ClassCSIOrphan, why: "unseen"},
		{name: "untagged, a failed discovery of the region", snap: csiSnap("snap-1", untagged), clusters: []inventory.ClusterRefs{read("a")},
			fleet: &inventory.Fleet{Discovery: true, Listings: []inventory.FleetListing{{Platform: inventory.EKS, Scope: acct + "/" + region, Problem: "AccessDenied"}},
				Members: []inventory.FleetMember{{Name: "a", Configured: true, State: inventory.MemberRead}}},
			action: engine.Mark, class: ClassCSIOrphan, why: "discovery eks " + acct + "/" + region},
		{name: "an AMI uses it", snap: csiSnap("snap-1"), users: map[string][]string{"snap-1": {"AMI ami-1"}}, clusters: []inventory.ClusterRefs{read("a")},
			action: engine.Keep, class: ClassInUse, why: "in use: AMI ami-1"},
		{name: "protect tag", snap: csiSnap("snap-1", func(s *ebs.Snapshot) { s.Tags["reclaim.dev/protect"] = "" }), clusters: []inventory.ClusterRefs{read("a")},
			action: engine.Keep, class: ClassProtected},
		{name: "AWS Backup's", snap: csiSnap("snap-1", func(s *ebs.Snapshot) { s.Tags[TagBackup] = "arn:aws:ec2:us-east-1:111122223333:volume/vol-1" }),
			clusters: []inventory.ClusterRefs{read("a")}, action: engine.Keep, class: ClassManaged},
		{name: "pending", snap: csiSnap("snap-1", func(s *ebs.Snapshot) { s.State = "pending" }), clusters: []inventory.ClusterRefs{read("a")},
			action: engine.Keep, class: ClassNotCompleted},
		{name: "archived", snap: csiSnap("snap-1", func(s *ebs.Snapshot) { s.StorageTier = "archive" }), clusters: []inventory.ClusterRefs{read("a")},
			action: engine.Report, class: ClassCSIOrphan, why: "archive tier"},
		{name: "csi.delete off (the default)", snap: csiSnap("snap-1"), clusters: []inventory.ClusterRefs{read("a")}, sec: func(s *Section) { s.CSI.Delete = false },
			action: engine.Report, class: ClassCSIOrphan, why: "ebsSnapshots.csi.delete is off"},
		{name: "younger than csi.minAge", snap: csiSnap("snap-1", func(s *ebs.Snapshot) { s.Started = t0.Add(-3 * 24 * time.Hour) }),
			clusters: []inventory.ClusterRefs{read("a")}, action: engine.Mark, class: ClassCSIOrphan, why: "younger than ebsSnapshots.csi.minAge 7 days"},
		// One tag of the two is not the driver's mark.
		{name: "CSIVolumeSnapshotName alone", snap: csiSnap("snap-1", func(s *ebs.Snapshot) { delete(s.Tags, TagCSIDriver) }), clusters: []inventory.ClusterRefs{read("a")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sec := csiSection()
			if c.sec != nil {
				c.sec(&sec)
			}
			s := snapOf([]ebs.Snapshot{c.snap}, c.users)
			s.Clusters, s.Fleet = c.clusters, c.fleet
			p := plan(s, sec, seen(old, "snap-1"))
			var got *engine.Decision
			for d := range p.All() {
				if d.Name == "snap-1" {
					dd := *d
					got = &dd
				}
			}
			if c.action == "" {
				if got != nil {
					t.Fatalf("a snapshot the driver did not mark was proposed: %+v", got)
				}
				return
			}
			if got == nil || got.Action != c.action || got.Class != c.class || !strings.Contains(got.Why(), c.why) {
				t.Fatalf("got %+v (why %q), want %s %s %q", got, got.Why(), c.action, c.class, c.why)
			}
		})
	}
}

// The defaults report orphaned CSI snapshots and wait a week.
func TestCSIDefaults(t *testing.T) {
	var s Section
	defaults(&s, func(string) bool { return false })
	if s.CSI.Delete || s.CSI.MinAge.Std() != 7*24*time.Hour {
		t.Fatalf("csi defaults %+v, want report only, a week", s.CSI)
	}
}

// The summary counts CSI snapshots apart from reclaim's backups.
func TestViewCSI(t *testing.T) {
	k := New(csiSection(), tag, nil)
	used := csiSnap("snap-2")
	s := snapOf([]ebs.Snapshot{backup("snap-1"), csiSnap("snap-3"), used}, nil)
	s.Clusters = []inventory.ClusterRefs{read("a", csisnapshot.Content{Name: "c", Handle: "snap-2"})}
	p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), "snap-1", "snap-3"), t0)
	v := k.View(p, &s)
	if len(v.Kept) != 1 || v.Kept[0].Count != 0 {
		t.Errorf("kept %+v: CSI snapshots are no backups of reclaim's", v.Kept)
	}
	for _, want := range []string{"CSI snapshots: 1 named by a VolumeSnapshotContent, 1 orphaned holding 100 GiB, about 5.00 a month"} {
		if !strings.Contains(v.Summary, want) {
			t.Errorf("summary lacks %q: %s", want, v.Summary)
		}
	}
}

// The cloud's CSI snapshots tagged for an EKS cluster are evidence its
// contents name some: a first record listing none is not believed at once.
func TestMadeFor(t *testing.T) {
	s := snapOf([]ebs.Snapshot{csiSnap("snap-1"), csiSnap("snap-2", untagged), backup("snap-3")}, nil)
	shown := records.Shown{}
	tg := kube.Target{CloudName: "a", Place: inventory.Place{Platform: inventory.EKS, Account: acct, Location: region}}
	MadeFor(s.Clouds, tg, shown)
	if got := shown[csisnapshot.Class]; len(got) != 1 || got[0] != "EBS snapshot snap-1" {
		t.Fatalf("shown %v", shown)
	}
	tg.Place.Account = "999999999999"
	shown = records.Shown{}
	if MadeFor(s.Clouds, tg, shown); len(shown) != 0 {
		t.Fatalf("another account's: %v", shown)
	}
}

// lister is one region's listing, counting the snapshot ids it is asked
// what uses.
type lister struct {
	l     ebs.SnapshotListing
	asked []string
}

func (f *lister) ListSnapshots(context.Context) []ebs.SnapshotListing {
	return []ebs.SnapshotListing{f.l}
}
func (f *lister) SnapshotUsers(_ context.Context, _, _ string, ids []string) (map[string][]string, error) {
	f.asked = append(f.asked, ids...)
	return map[string][]string{}, nil
}

// The read asks what uses reclaim's snapshots and the CSI driver's (an AMI
// or a volume being made keeps either), and no others: of 10,000
// snapshots, 500 reclaim's and 2,000 the driver's, 2,500 ids, which the
// provider asks about 200 to a call (13 DescribeImages, 13
// DescribeVolumes).
func TestReaderAsksWhatUsesCSISnapshots(t *testing.T) {
	f := &lister{l: ebs.SnapshotListing{Account: acct, Region: region, Complete: true}}
	for i := range 10000 {
		id := fmt.Sprintf("snap-%017d", i)
		var s ebs.Snapshot
		switch {
		case i%20 == 0:
			s = backup(id)
		case i%5 == 1:
			s = csiSnap(id)
		default:
			s = ebs.Snapshot{ID: id, VolumeID: "vol-1", State: "completed", Tags: map[string]string{"team": "x"}}
		}
		f.l.Snapshots = append(f.l.Snapshots, s)
	}
	cfg, err := config.Parse([]byte("clusters: [{name: a, context: a}]\nebs: {regions: [{account: \"123456789012\", region: us-east-1}]}\nebsSnapshots: {}\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	read := Reader(cfg, f)(context.Background()).(Read)
	if len(read.Regions) != 1 || len(f.asked) != 2500 {
		t.Fatalf("asked what uses %d snapshots, want 2,500 (500 reclaim's, 2,000 the CSI driver's)", len(f.asked))
	}
	t.Logf("10,000 snapshots, 500 reclaim's, 2,000 the CSI driver's: what uses %d is asked, %d DescribeImages and %d DescribeVolumes calls at 200 ids a call",
		len(f.asked), (len(f.asked)+199)/200, (len(f.asked)+199)/200)
}

// The re-read before an orphaned CSI snapshot's delete: unchanged, it is
// deleted; without the driver's tags, or made under another name, it is
// skipped (the re-read is of a snapshot the plan did not judge).
func TestApplyCSI(t *testing.T) {
	for _, c := range []struct {
		name    string
		change  func(s *ebs.Snapshot)
		result  string
		deleted bool
	}{
		{"deleted", nil, audit.Deleted, true},
		{"the driver's tag removed", func(s *ebs.Snapshot) { delete(s.Tags, TagCSIDriver) }, audit.Skipped, false},
		{"another CSIVolumeSnapshotName", func(s *ebs.Snapshot) { s.Tags[TagCSIName] = "snapshot-other" }, audit.Skipped, false},
		{"protected since the plan", func(s *ebs.Snapshot) { s.Tags["reclaim.dev/protect"] = "" }, audit.Skipped, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &memEBS{snaps: map[string]ebs.Snapshot{"snap-1": csiSnap("snap-1")}, users: map[string][]string{}, inUse: map[string]bool{}}
			s := snapOf([]ebs.Snapshot{csiSnap("snap-1")}, nil)
			s.Clusters = []inventory.ClusterRefs{read("a")}
			k := New(csiSection(), tag, m)
			p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), "snap-1"), t0)
			if c.change != nil {
				sn := m.snaps["snap-1"]
				sn.Tags = maps.Clone(sn.Tags)
				c.change(&sn)
				m.snaps["snap-1"] = sn
			}
			a, _, _ := enginetest.Applier(t0, 3, k)
			out, err := a.Apply(context.Background(), p, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != 1 || out.Results[0].Result != c.result {
				t.Fatalf("%+v", out.Results)
			}
			if _, left := m.snaps["snap-1"]; left == c.deleted {
				t.Fatalf("deleted=%v, calls %v", !left, m.calls)
			}
		})
	}
}
