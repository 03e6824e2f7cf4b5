package ebssnapshot

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
)

const (
	acct   = "111122223333"
	region = "us-east-1"
	tag    = "reclaim.dev/snapshot-of"
	month  = 30 * 24 * time.Hour
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func testSection() Section {
	return Section{Retention: config.Duration(month), Delete: true, PricePerGBMonth: 0.05,
		Safety: config.Safety{ProtectTag: "reclaim.dev/protect", Grace: config.Duration(time.Hour), MinAge: config.Duration(24 * time.Hour),
			Caps: config.Caps{MaxDeletesPerRun: 10, MaxDeletePercent: 1, BreakerCandidates: 50}}}
}

// backup is a completed snapshot reclaim made of vol-ID, 40 days ago.
func backup(id string, f ...func(*ebs.Snapshot)) ebs.Snapshot {
	vol := "vol-" + strings.TrimPrefix(id, "snap-")
	s := ebs.Snapshot{ID: id, VolumeID: vol, State: "completed", Started: t0.Add(-40 * 24 * time.Hour), SizeGiB: 200,
		StorageTier: "standard", Description: ebsbase.SnapshotDescription(vol, "PVC wf/claim (PV pvc-1)"), Tags: map[string]string{tag: vol}}
	for _, g := range f {
		g(&s)
	}
	return s
}

func snapOf(snaps []ebs.Snapshot, users map[string][]string) inventory.View {
	return inventory.View{TakenAt: t0, Clouds: map[string]any{Name: Read{Regions: []Region{{
		Listing: ebs.SnapshotListing{Account: acct, Region: region, Complete: true, Snapshots: snaps}, Users: users}}}}}
}

func seen(t time.Time, ids ...string) engine.State {
	s := engine.NewState()
	for _, id := range ids {
		s.Seen(ID(acct, region, id), id, t)
	}
	return s
}

func plan(s inventory.View, sec Section, st engine.State) *engine.Plan {
	return enginetest.Build(&s, []engine.Kind{New(sec, tag, nil)}, st, t0)
}

// Each rule of the kind, one row each; removing a rule fails its row.
func TestPlanSnapshot(t *testing.T) {
	old := t0.Add(-2 * time.Hour) // past the 1h grace
	for _, c := range []struct {
		name   string
		snap   ebs.Snapshot
		users  map[string][]string
		sec    func(*Section)
		action engine.Action
		class  string
		why    string
	}{
		{name: "reclaim's, past retention", snap: backup("snap-1"), action: engine.Delete, class: ClassExpired,
			why: "reclaim's backup of vol-1, 40 days old, past its retention of 30 days"},
		{name: "reclaim's, within retention", snap: backup("snap-1", func(s *ebs.Snapshot) { s.Started = t0.Add(-10 * 24 * time.Hour) }),
			action: engine.Keep, class: ClassRetained, why: "kept until 2026-12-16 (retention 30 days)"},
		// All three, or it is not reclaim's.
		{name: "reclaim's tag, another description", snap: backup("snap-1", func(s *ebs.Snapshot) { s.Description = "nightly backup of vol-1" }),
			action: engine.Keep, class: ClassNotReclaims, why: `its description "nightly backup of vol-1" is not reclaim's`},
		{name: "reclaim's description, no tag", snap: backup("snap-1", func(s *ebs.Snapshot) { s.Tags = map[string]string{"team": "x"} }),
			action: engine.Keep, class: ClassNotReclaims, why: "its description is reclaim's, but it has no reclaim.dev/snapshot-of tag"},
		{name: "tag names another volume", snap: backup("snap-1", func(s *ebs.Snapshot) { s.Tags[tag] = "vol-9" }),
			action: engine.Keep, class: ClassNotReclaims, why: `names "vol-9", not the volume it was made from`},
		{name: "made from another volume", snap: backup("snap-1", func(s *ebs.Snapshot) { s.VolumeID = "vol-9" }),
			action: engine.Keep, class: ClassNotReclaims, why: "not a snapshot reclaim made"},
		{name: "description of another volume", snap: backup("snap-1", func(s *ebs.Snapshot) { s.Description = ebsbase.SnapshotDescription("vol-9", "") }),
			action: engine.Keep, class: ClassNotReclaims, why: "is not reclaim's"},
		{name: "protect tag, any value", snap: backup("snap-1", func(s *ebs.Snapshot) { s.Tags["reclaim.dev/protect"] = "false" }),
			action: engine.Keep, class: ClassProtected, why: "protected by tag reclaim.dev/protect=false"},
		{name: "an AMI uses it", snap: backup("snap-1"), users: map[string][]string{"snap-1": {"AMI ami-1"}},
			action: engine.Keep, class: ClassInUse, why: "in use: AMI ami-1"},
		{name: "a volume is being created from it", snap: backup("snap-1"), users: map[string][]string{"snap-1": {"volume vol-7 being created from it"}},
			action: engine.Keep, class: ClassInUse, why: "vol-7 being created"},
		{name: "AWS Backup's", snap: backup("snap-1", func(s *ebs.Snapshot) { s.Tags[TagBackup] = "arn:aws:ec2:us-east-1:111122223333:volume/vol-1" }),
			action: engine.Keep, class: ClassManaged, why: "AWS Backup recovery point"},
		{name: "Data Lifecycle Manager's", snap: backup("snap-1", func(s *ebs.Snapshot) { s.Tags[TagDLM] = "policy-1" }),
			action: engine.Keep, class: ClassManaged, why: "Data Lifecycle Manager policy policy-1"},
		{name: "pending", snap: backup("snap-1", func(s *ebs.Snapshot) { s.State = "pending" }),
			action: engine.Keep, class: ClassNotCompleted, why: "pending"},
		{name: "archived", snap: backup("snap-1", func(s *ebs.Snapshot) { s.StorageTier = "archive" }),
			action: engine.Report, class: ClassArchived, why: "archive tier: reported, not deleted"},
		{name: "delete off", snap: backup("snap-1"), sec: func(s *Section) { s.Delete = false },
			action: engine.Report, class: ClassExpired, why: "ebsSnapshots.delete is off"},
		{name: "retention set longer", snap: backup("snap-1"), sec: func(s *Section) { s.Retention = config.Duration(2 * month) },
			action: engine.Keep, class: ClassRetained},
	} {
		t.Run(c.name, func(t *testing.T) {
			sec := testSection()
			if c.sec != nil {
				c.sec(&sec)
			}
			p := plan(snapOf([]ebs.Snapshot{c.snap}, c.users), sec, seen(old, "snap-1"))
			d := enginetest.DecisionFor(t, p, "snap-1")
			if d.Action != c.action || d.Class != c.class || !strings.Contains(d.Why(), c.why) {
				t.Fatalf("got %s %s %q, want %s %s %q", d.Action, d.Class, d.Why(), c.action, c.class, c.why)
			}
		})
	}
}

// A snapshot that neither carries the tag nor has reclaim's description is
// none of the kind's: not in the plan at all.
func TestOtherSnapshotsAreLeftOut(t *testing.T) {
	other := backup("snap-2", func(s *ebs.Snapshot) { s.Tags, s.Description = map[string]string{"team": "x"}, "by hand" })
	p := plan(snapOf([]ebs.Snapshot{backup("snap-1"), other}, nil), testSection(), seen(t0.Add(-2*time.Hour), "snap-1", "snap-2"))
	for d := range p.All() {
		if d.Name == "snap-2" {
			t.Fatalf("a snapshot reclaim did not make is in the plan: %+v", d)
		}
	}
}

// Fail closed: a listing or a read of what uses the snapshots that failed
// holds every candidate of the region.
func TestIncompleteReadsHold(t *testing.T) {
	for name, break_ := range map[string]func(*Region){
		"listing": func(r *Region) { r.Listing.Complete, r.Listing.Problem = false, "page 2 failed" },
		"users":   func(r *Region) { r.Users, r.UsersProblem = nil, "DescribeImages: UnauthorizedOperation" },
	} {
		t.Run(name, func(t *testing.T) {
			s := snapOf([]ebs.Snapshot{backup("snap-1")}, nil)
			r := s.Clouds[Name].(Read)
			break_(&r.Regions[0])
			p := plan(s, testSection(), seen(t0.Add(-2*time.Hour), "snap-1"))
			if d := enginetest.DecisionFor(t, p, "snap-1"); d.Action == engine.Delete || !p.Incomplete {
				t.Fatalf("incomplete %s: %+v", name, d)
			}
		})
	}
}

// The first run past retention starts the grace clock: a snapshot is not
// deleted on first sight.
func TestGraceAfterRetention(t *testing.T) {
	p := plan(snapOf([]ebs.Snapshot{backup("snap-1")}, nil), testSection(), engine.NewState())
	if d := enginetest.DecisionFor(t, p, "snap-1"); d.Action != engine.Mark {
		t.Fatalf("first sight: %s %q", d.Action, d.Why())
	}
}

// The report shows size, age and cost.
func TestViewAndCost(t *testing.T) {
	k := New(testSection(), tag, nil)
	s := snapOf([]ebs.Snapshot{backup("snap-1"), backup("snap-2", func(s *ebs.Snapshot) { s.Started = t0.Add(-5 * 24 * time.Hour); s.SizeGiB = 100 })}, nil)
	p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), "snap-1"), t0)
	d := enginetest.DecisionFor(t, p, "snap-1")
	if c := k.MonthlyCost(&d); c != 10 {
		t.Fatalf("cost %v, want 200 GiB at 0.05 = 10", c)
	}
	v := k.View(p, &s)
	text := fmt.Sprintf("%+v", v)
	for _, want := range []string{"snap-1", "200 GiB", "40 days", "10.00", "snap-2", "5 days", "5.00"} {
		if !strings.Contains(text, want) {
			t.Errorf("view lacks %q: %s", want, text)
		}
	}
	// Only snap-2, retained, stays: snap-1 is due.
	want := layout.Kept{Group: layout.Backups, Noun: "EBS snapshots", Count: 1, Bytes: 100 * amount.GiB, Cost: 5}
	if len(v.Kept) != 1 || v.Kept[0] != want {
		t.Errorf("kept %+v, want %+v", v.Kept, want)
	}
}

// memEBS is an in-memory account: snapshots and what uses them.
type memEBS struct {
	snaps map[string]ebs.Snapshot
	users map[string][]string
	// inUse: DeleteSnapshot answers InvalidSnapshot.InUse (an AMI
	// registered between the re-read and the delete).
	inUse map[string]bool
	calls []string
}

func (m *memEBS) SnapshotByID(_ context.Context, _, _, id string) (ebs.Snapshot, error) {
	m.calls = append(m.calls, "get "+id)
	s, ok := m.snaps[id]
	if !ok {
		return s, fmt.Errorf("InvalidSnapshot.NotFound: %w", outcome.ErrNotFound)
	}
	return s, nil
}

func (m *memEBS) SnapshotUsers(_ context.Context, _, _ string, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, id := range ids {
		if u := m.users[id]; len(u) > 0 {
			out[id] = u
		}
	}
	return out, nil
}

func (m *memEBS) DeleteSnapshot(_ context.Context, _, _, id string) error {
	m.calls = append(m.calls, "delete "+id)
	if _, ok := m.snaps[id]; !ok {
		return fmt.Errorf("InvalidSnapshot.NotFound: %w", outcome.ErrNotFound)
	}
	if m.inUse[id] {
		return fmt.Errorf("InvalidSnapshot.InUse: %w", outcome.ErrInUse)
	}
	delete(m.snaps, id)
	return nil
}

func TestApply(t *testing.T) {
	for _, c := range []struct {
		name    string
		change  func(m *memEBS, s *ebs.Snapshot)
		result  string
		deleted bool
	}{
		{"deleted", nil, audit.Deleted, true},
		{"an AMI registered since the plan", func(m *memEBS, _ *ebs.Snapshot) { m.users["snap-1"] = []string{"AMI ami-2"} }, audit.Skipped, false},
		{"protected since the plan", func(_ *memEBS, s *ebs.Snapshot) { s.Tags["reclaim.dev/protect"] = "" }, audit.Skipped, false},
		{"tag removed since the plan", func(_ *memEBS, s *ebs.Snapshot) { delete(s.Tags, tag) }, audit.Skipped, false},
		{"archived since the plan", func(_ *memEBS, s *ebs.Snapshot) { s.StorageTier = "archive" }, audit.Skipped, false},
		{"taken in by AWS Backup since the plan", func(_ *memEBS, s *ebs.Snapshot) { s.Tags[TagBackup] = "x" }, audit.Skipped, false},
		// EC2's own answer, past the re-read: kept in use, not failed.
		{"InvalidSnapshot.InUse", func(m *memEBS, _ *ebs.Snapshot) { m.inUse["snap-1"] = true }, audit.Skipped, false},
		{"gone already", func(m *memEBS, _ *ebs.Snapshot) { delete(m.snaps, "snap-9") }, audit.Deleted, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &memEBS{snaps: map[string]ebs.Snapshot{"snap-1": backup("snap-1")}, users: map[string][]string{}, inUse: map[string]bool{}}
			s := snapOf([]ebs.Snapshot{backup("snap-1")}, nil)
			k := New(testSection(), tag, m)
			p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), "snap-1"), t0)
			if c.change != nil {
				sn := m.snaps["snap-1"]
				sn.Tags = maps.Clone(sn.Tags)
				c.change(m, &sn)
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
			if !c.deleted && c.name != "InvalidSnapshot.InUse" && slices.Contains(m.calls, "delete snap-1") {
				t.Fatalf("skipped only by the delete call: %v", m.calls)
			}
		})
	}
}

// Dry-run (apply false) calls nothing.
func TestDryRunCallsNothing(t *testing.T) {
	m := &memEBS{snaps: map[string]ebs.Snapshot{"snap-1": backup("snap-1")}, users: map[string][]string{}, inUse: map[string]bool{}}
	s := snapOf([]ebs.Snapshot{backup("snap-1")}, nil)
	k := New(testSection(), tag, m)
	p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), "snap-1"), t0)
	a, _, _ := enginetest.Applier(t0, 3, k)
	if _, err := a.Apply(context.Background(), p, false); err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 0 {
		t.Fatalf("dry-run called %v", m.calls)
	}
}

func TestDescriptionIsEBSVolumes(t *testing.T) {
	for desc, want := range map[string]bool{
		ebsbase.SnapshotDescription("vol-1", ""):              true,
		ebsbase.SnapshotDescription("vol-1", "PV pvc-1"):      true,
		ebsbase.SnapshotDescription("vol-12", ""):             false,
		"reclaim: vol-1 before its delete, and then some":     false,
		"copy of " + ebsbase.SnapshotDescription("vol-1", ""): false,
	} {
		if got := ebsbase.IsSnapshotDescription(desc, "vol-1"); got != want {
			t.Errorf("%q: %v, want %v", desc, got, want)
		}
	}
}

func TestSection(t *testing.T) {
	const ebsSec = "ebs: {regions: [{account: \"123456789012\", region: us-east-1}]}\n"
	for _, c := range []struct{ yaml, want string }{
		{"ebsSnapshots: {}", "ebsSnapshots: needs the ebs section"},
		{ebsSec + "ebsSnapshots: {retention: 1h}", "ebsSnapshots.retention: 1h is less than a day"},
		{ebsSec + "ebsSnapshots: {grace: 0s}", "ebsSnapshots.grace: must be more than 0"},
		{ebsSec + "ebsSnapshots: {protectTag: \"aws:x\"}", "ebsSnapshots.protectTag"},
		{ebsSec + "ebsSnapshots: {retain: 1h}", "retain"},
		{ebsSec + "ebsSnapshots: {csi: {minAge: 1h}}", "ebsSnapshots.csi.minAge: 1h is less than a day"},
	} {
		_, err := config.Parse([]byte("clusters: [{name: a, context: a}]\n"+c.yaml+"\n"), "reclaim.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
	cfg, err := config.Parse([]byte("clusters: [{name: a, context: a}]\n"+ebsSec+"ebsSnapshots: {}\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k := FromConfig(cfg, nil)
	if k == nil || !k.s.Delete || k.s.Retention.Std() != month || k.tag != tag || k.s.PricePerGBMonth != 0.05 || k.Limits().OptOutKey != "reclaim.dev/protect" {
		t.Fatalf("defaults: %+v", k)
	}
	parse := func(y string) *Section {
		cfg, err := config.Parse([]byte("clusters: [{name: a, context: a}]\n"+ebsSec+y), "reclaim.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return SectionOf(cfg)
	}
	if ref, min := parse(reference), parse("ebsSnapshots: {}\n"); !reflect.DeepEqual(ref, min) {
		t.Errorf("reference.yaml does not show the defaults:\nreference: %+v\ndefaults:  %+v", *ref, *min)
	}
}

// One of reclaim's snapshots in the Recycle Bin is reported, kept, with
// when it leaves; another's is left out.
func TestRecycleBinReported(t *testing.T) {
	s := snapOf(nil, nil)
	r := s.Clouds[Name].(Read)
	r.Regions[0].Listing.Recycled = []ebs.Recycled{
		{ID: "snap-1", VolumeID: "vol-1", Description: ebsbase.SnapshotDescription("vol-1", ""), Exits: t0.Add(48 * time.Hour)},
		{ID: "snap-2", VolumeID: "vol-2", Description: "by hand"}}
	p := plan(s, testSection(), engine.NewState())
	d := enginetest.DecisionFor(t, p, "snap-1")
	if d.Action != engine.Keep || d.Class != ClassRecycleBin || !strings.Contains(d.Why(), "in the Recycle Bin until 2026-11-28") {
		t.Fatalf("%s %s %q", d.Action, d.Class, d.Why())
	}
	for d := range p.All() {
		if d.Name == "snap-2" {
			t.Fatalf("a snapshot reclaim did not make is in the plan: %+v", d)
		}
	}
}

// A Recycle Bin that could not be read is said on the listing's source, and
// holds nothing.
func TestRecycleBinUnknownHoldsNothing(t *testing.T) {
	s := snapOf([]ebs.Snapshot{backup("snap-1")}, nil)
	r := s.Clouds[Name].(Read)
	r.Regions[0].Listing.RecycleProblem = "UnauthorizedOperation"
	p := plan(s, testSection(), seen(t0.Add(-2*time.Hour), "snap-1"))
	if d := enginetest.DecisionFor(t, p, "snap-1"); d.Action != engine.Delete {
		t.Fatalf("%s %q", d.Action, d.Why())
	}
	var said bool
	for _, src := range p.Sources {
		said = said || (src.Kind == SourceKind && slices.ContainsFunc(src.Problems, func(p string) bool { return strings.Contains(p, "Recycle Bin is unknown") }))
	}
	if !said {
		t.Fatalf("sources %+v", p.Sources)
	}
}
