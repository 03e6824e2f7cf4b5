package gcesnapshot

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
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/retention"
)

const (
	proj  = "proj-one"
	zone  = "us-east1-b"
	label = "reclaim-snapshot-of"
	month = 30 * 24 * time.Hour
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func testSection() Section {
	return Section{Policy: retention.Policy{Retention: config.Duration(month), Delete: true, PricePerGBMonth: 0.065},
		Safety: config.Safety{ProtectTag: "reclaim-protect", Grace: config.Duration(time.Hour), MinAge: config.Duration(24 * time.Hour),
			Caps: config.Caps{MaxDeletesPerRun: 10, MaxDeletePercent: 1, BreakerCandidates: 50}}}
}

// backup is a READY snapshot reclaim made of disk, 40 days ago, as
// gce-disk names and labels it.
func backup(disk string, f ...func(*gce.Snapshot)) gce.Snapshot {
	key := inventory.DiskKey{Project: proj, Zone: zone, Name: disk}
	made := t0.Add(-40 * 24 * time.Hour)
	s := gce.Snapshot{Name: gcepd.SnapshotName(disk, made.Add(-time.Hour)), ID: "100" + disk, Status: "READY", Created: made,
		SourceDisk: "https://www.googleapis.com/compute/v1/" + key.String(), DiskSizeGB: 200, StorageBytes: 20 * amount.GiB,
		Type: "STANDARD", Labels: gcepd.SnapshotLabels(label, key)}
	for _, g := range f {
		g(&s)
	}
	return s
}

func path(name string) string { return "projects/" + proj + "/global/snapshots/" + name }

func snapOf(snaps []gce.Snapshot, users map[string][]string) inventory.View {
	return inventory.View{TakenAt: t0, Clouds: map[string]any{Name: Read{Projects: []Project{{
		Listing: gce.SnapshotListing{Project: proj, Complete: true, Snapshots: snaps}, Users: users, UsersRead: true}}}}}
}

func seen(t time.Time, snaps ...gce.Snapshot) engine.State {
	s := engine.NewState()
	for _, sn := range snaps {
		s.Seen(ID(proj, sn.Name), sn.ID, t)
	}
	return s
}

func plan(s inventory.View, sec Section, st engine.State) *engine.Plan {
	return enginetest.Build(&s, []engine.Kind{New(sec, label, []string{proj}, nil)}, st, t0)
}

// Each rule of the kind, one row each; removing a rule fails its row.
func TestPlanSnapshot(t *testing.T) {
	old := t0.Add(-2 * time.Hour) // past the 1h grace
	other := inventory.DiskKey{Project: proj, Zone: zone, Name: "pvc-other"}
	for _, c := range []struct {
		name   string
		snap   gce.Snapshot
		users  map[string][]string
		sec    func(*Section)
		action engine.Action
		class  string
		why    string
	}{
		{name: "reclaim's, past retention", snap: backup("pvc-1"), action: engine.Delete, class: ClassExpired,
			why: "reclaim's backup of projects/proj-one/zones/us-east1-b/disks/pvc-1, 40 days old, past its retention of 30 days"},
		{name: "reclaim's, within retention", snap: backup("pvc-1", func(s *gce.Snapshot) { s.Created = t0.Add(-10 * 24 * time.Hour) }),
			action: engine.Keep, class: ClassRetained, why: "kept until 2026-12-16 (retention 30 days)"},
		// Label, name and sourceDisk, all of them, or it is not reclaim's.
		{name: "reclaim's name, no label", snap: backup("pvc-1", func(s *gce.Snapshot) { s.Labels = map[string]string{"team": "x"} }),
			action: engine.Keep, class: ClassNotReclaims, why: "its name looks like reclaim's, but it has no reclaim-snapshot-of label"},
		{name: "label, another name", snap: backup("pvc-1", func(s *gce.Snapshot) { s.Name = "nightly-pvc-1" }),
			action: engine.Keep, class: ClassNotReclaims, why: "its name is not reclaim's for pvc-1"},
		{name: "name and label of another disk than its source", snap: backup("pvc-1", func(s *gce.Snapshot) {
			s.SourceDisk = "https://www.googleapis.com/compute/v1/" + other.String()
		}), action: engine.Keep, class: ClassNotReclaims, why: `label names "pvc-1", not the disk it was made from (projects/proj-one/zones/us-east1-b/disks/pvc-other)`},
		{name: "a disk of that name in another zone", snap: backup("pvc-1", func(s *gce.Snapshot) { s.Labels[gcepd.LocationLabel] = "us-east1-c" }),
			action: engine.Keep, class: ClassNotReclaims, why: "reclaim-location label"},
		{name: "no source disk", snap: backup("pvc-1", func(s *gce.Snapshot) { s.SourceDisk = "" }),
			action: engine.Keep, class: ClassNotReclaims, why: "the disk it was made from is unknown"},
		{name: "a disk of another project", snap: backup("pvc-1", func(s *gce.Snapshot) {
			s.SourceDisk = "https://www.googleapis.com/compute/v1/projects/proj-nine/zones/us-east1-b/disks/pvc-1"
		}), action: engine.Keep, class: ClassNotReclaims, why: "a disk of another project"},
		{name: "protect label, any value", snap: backup("pvc-1", func(s *gce.Snapshot) { s.Labels["reclaim-protect"] = "false" }),
			action: engine.Keep, class: ClassProtected, why: "protected by label reclaim-protect=false"},
		{name: "a disk was made from it", snap: backup("pvc-1"), users: map[string][]string{path(backup("pvc-1").Name): {"disk projects/proj-one/zones/us-east1-b/disks/restored"}},
			action: engine.Keep, class: ClassInUse, why: "made into disk projects/proj-one/zones/us-east1-b/disks/restored"},
		{name: "an image was made from it", snap: backup("pvc-1"), users: map[string][]string{path(backup("pvc-1").Name): {"image golden"}},
			action: engine.Keep, class: ClassInUse, why: "made into image golden"},
		{name: "a snapshot schedule's", snap: backup("pvc-1", func(s *gce.Snapshot) {
			s.SchedulePolicy = "https://www.googleapis.com/compute/v1/projects/proj-one/regions/us-east1/resourcePolicies/daily"
		}), action: engine.Keep, class: ClassScheduled, why: "made by snapshot schedule daily: left to it"},
		{name: "creating", snap: backup("pvc-1", func(s *gce.Snapshot) { s.Status = "CREATING" }),
			action: engine.Keep, class: ClassNotReady, why: "CREATING"},
		{name: "no creation time", snap: backup("pvc-1", func(s *gce.Snapshot) { s.Created = time.Time{} }),
			action: engine.Keep, class: ClassNotReady, why: "unknown age"},
		{name: "archive", snap: backup("pvc-1", func(s *gce.Snapshot) { s.Type = "ARCHIVE" }),
			action: engine.Report, class: ClassArchived, why: "an archive snapshot: reported, not deleted"},
		{name: "delete off", snap: backup("pvc-1"), sec: func(s *Section) { s.Delete = false },
			action: engine.Report, class: ClassExpired, why: "gceSnapshots.delete is off"},
		{name: "retention set longer", snap: backup("pvc-1"), sec: func(s *Section) { s.Retention = config.Duration(2 * month) },
			action: engine.Keep, class: ClassRetained},
		{name: "the CSI driver's, by its description", snap: backup("pvc-1", func(s *gce.Snapshot) { s.Description = csiDescription }),
			action: engine.Report, class: ClassCSIOrphan, why: "made by the GCE PD CSI driver, and no VolumeSnapshotContent in any read cluster names it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sec := testSection()
			if c.sec != nil {
				c.sec(&sec)
			}
			p := plan(snapOf([]gce.Snapshot{c.snap}, c.users), sec, seen(old, c.snap))
			d := enginetest.DecisionFor(t, p, c.snap.Name)
			if d.Action != c.action || d.Class != c.class || !strings.Contains(d.Why(), c.why) {
				t.Fatalf("got %s %s %q, want %s %s %q", d.Action, d.Class, d.Why(), c.action, c.class, c.why)
			}
		})
	}
}

// A snapshot that is neither reclaim's look-alike nor the CSI driver's is
// none of the kind's business: not in the plan.
func TestOthersLeftOut(t *testing.T) {
	s := gce.Snapshot{Name: "by-hand", ID: "9", Status: "READY", Created: t0.Add(-400 * 24 * time.Hour),
		SourceDisk: "https://www.googleapis.com/compute/v1/projects/proj-one/zones/us-east1-b/disks/pvc-1"}
	p := plan(snapOf([]gce.Snapshot{s}, nil), testSection(), seen(t0.Add(-2*time.Hour), s))
	for d := range p.All() {
		t.Fatalf("in the plan: %+v", d)
	}
}

// What holds a candidate: its project's listing incomplete, what was made
// from snapshots unknown (a failed images or disks read), or never read.
func TestFailsClosed(t *testing.T) {
	b := backup("pvc-1")
	for _, c := range []struct {
		name string
		set  func(*Project)
	}{
		{"listing incomplete", func(p *Project) { p.Listing.Complete, p.Listing.Problem = false, "page 2 failed" }},
		{"users unknown", func(p *Project) { p.UsersProblem = "images.list proj-one: 403 forbidden" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapOf([]gce.Snapshot{b}, nil)
			r := s.Clouds[Name].(Read)
			c.set(&r.Projects[0])
			p := plan(s, testSection(), seen(t0.Add(-2*time.Hour), b))
			if d := enginetest.DecisionFor(t, p, b.Name); d.Action == engine.Delete || !d.Held {
				t.Fatalf("%s %q held %v", d.Action, d.Why(), d.Held)
			}
		})
	}
	// Another project's users unknown holds too: a disk there may be made
	// from this project's snapshot.
	s := snapOf([]gce.Snapshot{b}, nil)
	r := s.Clouds[Name].(Read)
	r.Projects = append(r.Projects, Project{Listing: gce.SnapshotListing{Project: "proj-two", Complete: true}, UsersRead: true, UsersProblem: "disks.aggregatedList proj-two: 503"})
	s.Clouds[Name] = r
	p := plan(s, testSection(), seen(t0.Add(-2*time.Hour), b))
	if d := enginetest.DecisionFor(t, p, b.Name); d.Action == engine.Delete || !d.Held {
		t.Fatalf("another project's users unknown: %s %q", d.Action, d.Why())
	}
}

// The Reader asks what was made from snapshots only when one is
// reclaim's, and then of every project.
func TestReaderAsksUsersOnlyForReclaims(t *testing.T) {
	m := &memGCE{snaps: map[string]gce.Snapshot{}, users: map[string][]string{}}
	cfg, err := config.Parse([]byte("clusters: [{name: a, context: a, gceProjects: [proj-one, proj-two]}]\ngce: {projects: [proj-one, proj-two]}\ngceSnapshots: {}\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	read := Reader(cfg, m)
	m.snaps["by-hand"] = gce.Snapshot{Name: "by-hand"}
	if r := read(context.Background()).(Read); len(r.Projects) != 2 || r.Projects[0].UsersRead || m.usersCalls != 0 {
		t.Fatalf("none of reclaim's: %+v, %d users calls", r, m.usersCalls)
	}
	b := backup("pvc-1")
	m.snaps[b.Name] = b
	if r := read(context.Background()).(Read); !r.Projects[0].UsersRead || !r.Projects[1].UsersRead || m.usersCalls != 2 {
		t.Fatalf("one of reclaim's: %+v, %d users calls", r, m.usersCalls)
	}
}

// CSIMade: the driver's fixed descriptions, its JSON tags, and the
// snapshotter's name; never a snapshot reclaim made.
func TestCSIMade(t *testing.T) {
	for _, c := range []struct {
		name, desc string
		want       bool
		content    string
	}{
		{"snapshot-1", csiDescription, true, ""},
		{"snapshot-1", csiRegionalDescription, true, ""},
		{"x", `{"kubernetes.io/created-for/volumesnapshot/name":"vs","kubernetes.io/created-for/volumesnapshot/namespace":"ns","kubernetes.io/created-for/volumesnapshotcontent/name":"snapcontent-1","storage.gke.io/created-by":"pd.csi.storage.gke.io"}`, true, "snapcontent-1"},
		{"x", `{"storage.gke.io/created-by":"pd.csi.storage.gke.io"}`, true, ""},
		{"snapshot-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "", true, ""},
		{"snapshot-nightly", "", false, ""},
		{"x", `{"team":"x"}`, false, ""},
		{backup("pvc-1").Name, "", false, ""},
	} {
		got, ok := CSIMade(&gce.Snapshot{Name: c.name, Description: c.desc})
		if ok != c.want || got.Content != c.content {
			t.Errorf("%s %q: %+v %v, want %v %q", c.name, c.desc, got, ok, c.want, c.content)
		}
	}
}

// The name gce-disk gives is the one gce-snapshot knows again, and no other.
func TestSnapshotNameRoundTrip(t *testing.T) {
	long := strings.Repeat("pvc-0123456789abcdef", 4)
	for _, disk := range []string{"pvc-1", long, "Disk_With.Dots"} {
		at := t0.Add(-time.Hour)
		if got, ok := gcepd.IsSnapshotName(gcepd.SnapshotName(disk, at), disk); !ok || !got.Equal(at) {
			t.Errorf("%s: %v %v", disk, got, ok)
		}
	}
	for _, name := range []string{gcepd.SnapshotName("pvc-12", t0), "reclaim-pvc-1-20261126-25xx00", "reclaim-pvc-1", "copy-" + gcepd.SnapshotName("pvc-1", t0)} {
		if _, ok := gcepd.IsSnapshotName(name, "pvc-1"); ok {
			t.Errorf("%s taken for pvc-1's", name)
		}
	}
}

// The view and the price: what a snapshot stores, priced per GiB-month.
func TestViewAndCost(t *testing.T) {
	k := New(testSection(), label, []string{proj}, nil)
	b1 := backup("pvc-1")
	b2 := backup("pvc-2", func(s *gce.Snapshot) { s.Created = t0.Add(-5 * 24 * time.Hour); s.StorageBytes = 10 * amount.GiB })
	s := snapOf([]gce.Snapshot{b1, b2}, nil)
	p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), b1), t0)
	d := enginetest.DecisionFor(t, p, b1.Name)
	if c := k.MonthlyCost(&d); c != 20*0.065 || d.Frees.Of(GiB) != 20 {
		t.Fatalf("cost %v, frees %v: want 20 GiB at 0.065", c, d.Frees)
	}
	v := k.View(p, &s)
	text := fmt.Sprintf("%+v", v)
	for _, want := range []string{b1.Name, "200 GB", "21.5 GB", "40 days", "1.30", b2.Name, "5 days", "0.65"} {
		if !strings.Contains(text, want) {
			t.Errorf("view lacks %q: %s", want, text)
		}
	}
	// Only b2, retained, stays: b1 is due.
	want := layout.Kept{Group: layout.Backups, Noun: "GCE snapshots", Count: 1, Bytes: 10 * amount.GiB, Cost: 10 * 0.065}
	if len(v.Kept) != 1 || v.Kept[0] != want {
		t.Errorf("kept %+v, want %+v", v.Kept, want)
	}
}

// memGCE is an in-memory project: snapshots and what was made from them.
type memGCE struct {
	snaps      map[string]gce.Snapshot
	users      map[string][]string
	usersErr   error
	deleteErr  error
	calls      []string
	usersCalls int
}

func (m *memGCE) ListSnapshots(_ context.Context, project string) gce.SnapshotListing {
	l := gce.SnapshotListing{Project: project, Complete: true}
	if project == proj {
		for _, n := range slices.Sorted(maps.Keys(m.snaps)) {
			l.Snapshots = append(l.Snapshots, m.snaps[n])
		}
	}
	return l
}

func (m *memGCE) GetSnapshot(_ context.Context, _, name string) (gce.Snapshot, error) {
	m.calls = append(m.calls, "get "+name)
	s, ok := m.snaps[name]
	if !ok {
		return s, fmt.Errorf("snapshots.get: %w", outcome.ErrNotFound)
	}
	return s, nil
}

func (m *memGCE) SnapshotUsers(_ context.Context, _ string) (map[string][]string, error) {
	m.usersCalls++
	return maps.Clone(m.users), m.usersErr
}

func (m *memGCE) DeleteSnapshot(_ context.Context, _, name string) error {
	m.calls = append(m.calls, "delete "+name)
	if m.deleteErr != nil {
		return m.deleteErr
	}
	if _, ok := m.snaps[name]; !ok {
		return fmt.Errorf("snapshots.delete: %w", outcome.ErrNotFound)
	}
	delete(m.snaps, name)
	return nil
}

// The re-read right before the delete: anything that changed since the
// plan is a skip, never a delete.
func TestApply(t *testing.T) {
	b := backup("pvc-1")
	for _, c := range []struct {
		name    string
		change  func(m *memGCE, s *gce.Snapshot)
		result  string
		deleted bool
	}{
		{"deleted", nil, audit.Deleted, true},
		{"a disk made from it since the plan", func(m *memGCE, _ *gce.Snapshot) {
			m.users[path(b.Name)] = []string{"disk projects/proj-one/zones/us-east1-b/disks/restored"}
		}, audit.Skipped, false},
		{"protected since the plan", func(_ *memGCE, s *gce.Snapshot) { s.Labels["reclaim-protect"] = "" }, audit.Skipped, false},
		{"label removed since the plan", func(_ *memGCE, s *gce.Snapshot) { delete(s.Labels, label) }, audit.Skipped, false},
		{"made again under its name", func(_ *memGCE, s *gce.Snapshot) { s.ID = "777" }, audit.Skipped, false},
		{"now an archive snapshot", func(_ *memGCE, s *gce.Snapshot) { s.Type = "ARCHIVE" }, audit.Skipped, false},
		{"taken in by a schedule", func(_ *memGCE, s *gce.Snapshot) {
			s.SchedulePolicy = "projects/proj-one/regions/us-east1/resourcePolicies/daily"
		}, audit.Skipped, false},
		{"deleting", func(_ *memGCE, s *gce.Snapshot) { s.Status = "DELETING" }, audit.Skipped, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &memGCE{snaps: map[string]gce.Snapshot{b.Name: backup("pvc-1")}, users: map[string][]string{}}
			s := snapOf([]gce.Snapshot{b}, nil)
			k := New(testSection(), label, []string{proj}, m)
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
			if _, left := m.snaps[b.Name]; left == c.deleted {
				t.Fatalf("deleted=%v, calls %v", !left, m.calls)
			}
			if !c.deleted && slices.Contains(m.calls, "delete "+b.Name) {
				t.Fatalf("skipped only by the delete call: %v", m.calls)
			}
		})
	}
	// What was made from it unknown at the re-read: nothing is deleted.
	m := &memGCE{snaps: map[string]gce.Snapshot{b.Name: b}, users: map[string][]string{}}
	s := snapOf([]gce.Snapshot{b}, nil)
	k := New(testSection(), label, []string{proj}, m)
	p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), b), t0)
	m.usersErr = fmt.Errorf("images.list: 503")
	a, _, _ := enginetest.Applier(t0, 3, k)
	out, _ := a.Apply(context.Background(), p, true)
	if _, left := m.snaps[b.Name]; !left || slices.Contains(m.calls, "delete "+b.Name) {
		t.Fatalf("deleted with its users unknown: %+v %v", out, m.calls)
	}
}

// Dry-run (apply false) calls nothing.
func TestDryRunCallsNothing(t *testing.T) {
	b := backup("pvc-1")
	m := &memGCE{snaps: map[string]gce.Snapshot{b.Name: b}, users: map[string][]string{}}
	s := snapOf([]gce.Snapshot{b}, nil)
	k := New(testSection(), label, []string{proj}, m)
	p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), b), t0)
	a, _, _ := enginetest.Applier(t0, 3, k)
	if _, err := a.Apply(context.Background(), p, false); err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 0 || m.usersCalls != 0 {
		t.Fatalf("dry-run called %v and users %d times", m.calls, m.usersCalls)
	}
}

func TestSection(t *testing.T) {
	const gceSec = "gce: {projects: [proj-one]}\n"
	const clusters = "clusters: [{name: a, context: a, gceProjects: [proj-one]}]\n"
	for _, c := range []struct{ yaml, want string }{
		{"gceSnapshots: {}", "gceSnapshots: needs the gce section"},
		{gceSec + "gceSnapshots: {retention: 1h}", "gceSnapshots.retention: 1h is less than a day"},
		{gceSec + "gceSnapshots: {grace: 0s}", "gceSnapshots.grace: must be more than 0"},
		{gceSec + "gceSnapshots: {protectTag: \"Keep.Me\"}", "gceSnapshots.protectTag"},
		{gceSec + "gceSnapshots: {retain: 1h}", "retain"},
	} {
		_, err := config.Parse([]byte(clusters+c.yaml+"\n"), "reclaim.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
	cfg, err := config.Parse([]byte(clusters+gceSec+"gceSnapshots: {}\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k := FromConfig(cfg, nil)
	if k == nil || !k.s.Delete || k.s.Retention.Std() != month || k.label != label || k.s.PricePerGBMonth != 0.065 ||
		k.Limits().OptOutKey != "reclaim-protect" || !reflect.DeepEqual(k.projects, []string{"proj-one"}) {
		t.Fatalf("defaults: %+v", k)
	}
	parse := func(y string) *Section {
		cfg, err := config.Parse([]byte(clusters+gceSec+y), "reclaim.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return SectionOf(cfg)
	}
	if ref, min := parse(reference), parse("gceSnapshots: {}\n"); !reflect.DeepEqual(ref, min) {
		t.Errorf("reference.yaml does not show the defaults:\nreference: %+v\ndefaults:  %+v", *ref, *min)
	}
}
