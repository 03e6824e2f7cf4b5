package ebsvolume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
)

const (
	acct   = "111122223333"
	region = "us-east-1"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func testSection() Section {
	return Section{Delete: true, Ownership: []string{EvidenceCSI, EvidenceInTree}, SnapshotTag: "reclaim.dev/snapshot-of", HeadroomWarning: 0.85,
		Safety: config.Safety{ProtectTag: "reclaim.dev/protect", Grace: config.Duration(time.Hour), MinAge: config.Duration(24 * time.Hour),
			Caps: config.Caps{MaxDeletesPerRun: 10, MaxDeletePercent: 1, BreakerCandidates: 50}}}
}

// csiVolume is an available volume the EBS CSI driver made for ns/claim.
func csiVolume(id string, f ...func(*ebs.Volume)) ebs.Volume {
	v := ebs.Volume{ID: id, AZ: region + "a", State: "available", Type: "gp3", SizeGiB: 100, Created: t0.Add(-30 * 24 * time.Hour),
		Tags: map[string]string{TagCSICluster: "true", TagCreatedForPV: "pvc-" + id, TagCreatedForPVC: "claim-" + id, TagCreatedForNS: "wf"}}
	for _, g := range f {
		g(&v)
	}
	return v
}

func cluster(name string, pvRefs refs) inventory.ClusterRefs {
	if pvRefs == nil {
		pvRefs = refs{}
	}
	return inventory.ClusterRefs{Name: name, Complete: true, Taps: map[string]inventory.Tapped{
		TapPVs: {Complete: true, Data: pvRefs}, TapPods: {Complete: true, Data: refs{}}}}
}

func snapOf(vols []ebs.Volume, clusters ...inventory.ClusterRefs) inventory.View {
	return inventory.View{TakenAt: t0, Clusters: clusters, Clouds: map[string]any{Name: Read{
		Listings: []ebs.Listing{{Account: acct, Region: region, Complete: true, Volumes: vols}},
		Quotas:   []ebs.QuotaListing{{Account: acct, Region: region, Quotas: []ebs.Quota{{Account: acct, Region: region, VolumeType: "gp3", LimitGiB: 1000}}}},
	}}}
}

// seen: every named volume has been an orphan since t.
func seen(t time.Time, ids ...string) engine.State {
	s := engine.NewState()
	for _, id := range ids {
		s.Seen(ID(acct, region, id), id, t)
	}
	return s
}

func plan(s inventory.View, sec Section, st engine.State) *engine.Plan {
	return enginetest.Build(&s, []engine.Kind{New(sec, nil)}, st, t0)
}

func TestPlanVolume(t *testing.T) {
	old := t0.Add(-2 * time.Hour) // past the 1h grace
	pv := func(name string) refs { return refs{"vol-1": {{PV: name, ClaimNamespace: "wf", Claim: "claim-vol-1"}}} }
	for _, c := range []struct {
		name     string
		vol      ebs.Volume
		clusters []inventory.ClusterRefs
		fleet    *inventory.Fleet
		action   engine.Action
		class    string
		why      string
	}{
		{name: "orphan past grace", vol: csiVolume("vol-1"), clusters: []inventory.ClusterRefs{cluster("a", nil)},
			action: engine.Delete, class: ClassOrphan, why: "made by the EBS CSI driver for PVC wf/claim-vol-1"},
		{name: "a PV in another cluster names it", vol: csiVolume("vol-1"), clusters: []inventory.ClusterRefs{cluster("a", nil), cluster("b", pv("pv-x"))},
			action: engine.Keep, class: ClassPV, why: "PV pv-x in cluster b (PVC wf/claim-vol-1) names it"},
		{name: "a pod mounts it inline", vol: csiVolume("vol-1"), clusters: []inventory.ClusterRefs{{Name: "a", Complete: true, Taps: map[string]inventory.Tapped{
			TapPVs: {Complete: true, Data: refs{}}, TapPods: {Complete: true, Data: refs{"vol-1": {{Pod: "ns/p"}}}}}}},
			action: engine.Keep, class: ClassInline, why: "pod ns/p in cluster a mounts it inline"},
		{name: "protect tag, any value", vol: csiVolume("vol-1", func(v *ebs.Volume) { v.Tags["reclaim.dev/protect"] = "false" }),
			clusters: []inventory.ClusterRefs{cluster("a", nil)}, action: engine.Keep, class: ClassProtected, why: "protected by tag reclaim.dev/protect=false"},
		{name: "no ownership evidence", vol: csiVolume("vol-1", func(v *ebs.Volume) { v.Tags = map[string]string{"team": "x"} }),
			clusters: []inventory.ClusterRefs{cluster("a", nil)}, action: engine.Keep, class: ClassNoEvidence},
		{name: "in-tree evidence", vol: csiVolume("vol-1", func(v *ebs.Volume) {
			v.Tags = map[string]string{TagCreatedForPV: "pv-1", TagLegacyCluster: "a"}
		}), clusters: []inventory.ClusterRefs{cluster("a", nil)}, action: engine.Delete, class: ClassOrphan, why: "in-tree EBS provisioner"},
		{name: "no cluster could attach it", vol: csiVolume("vol-1"), action: engine.Keep, class: ClassNoCluster},
		// Fail closed: whatever could not be read holds the volume.
		{name: "a cluster not read", vol: csiVolume("vol-1"), clusters: []inventory.ClusterRefs{cluster("a", nil), {Name: "b", Problems: []string{"connection refused"}}},
			action: engine.Mark, class: ClassOrphan, why: "cluster b"},
		{name: "a PV pass incomplete", vol: csiVolume("vol-1"), clusters: []inventory.ClusterRefs{{Name: "a", Complete: true, Taps: map[string]inventory.Tapped{
			TapPVs: {Complete: false, Problem: "expired", Data: refs{}}, TapPods: {Complete: true, Data: refs{}}}}},
			action: engine.Mark, class: ClassOrphan, why: "ebs-pvs"},
		{name: "a cluster its tag names, unread", vol: csiVolume("vol-1", func(v *ebs.Volume) { v.Tags["kubernetes.io/cluster/ghost"] = "owned" }),
			clusters: []inventory.ClusterRefs{cluster("a", nil)}, action: engine.Mark, class: ClassOrphan, why: "ghost"},
		// The in-tree provisioner's legacy tag names a cluster as
		// kubernetes.io/cluster/NAME does: one nobody read holds the volume.
		{name: "a cluster its legacy KubernetesCluster tag names, unread", vol: csiVolume("vol-1", func(v *ebs.Volume) {
			v.Tags = map[string]string{TagCreatedForPV: "pv-1", TagLegacyCluster: "ghost"}
		}), clusters: []inventory.ClusterRefs{cluster("a", nil)}, action: engine.Mark, class: ClassOrphan, why: "ghost"},
		{name: "an EKS cluster of the region, unread", vol: csiVolume("vol-1"), clusters: []inventory.ClusterRefs{cluster("a", nil)},
			fleet: &inventory.Fleet{Discovery: true, Listings: []inventory.FleetListing{{Platform: inventory.EKS, Scope: acct + "/" + region, Complete: true}},
				Members: []inventory.FleetMember{{Name: "a", Configured: true, State: inventory.MemberRead},
					{Name: "unseen", Discovered: true, State: inventory.MemberExcluded, Cloud: inventory.FleetCluster{Name: "unseen", Platform: inventory.EKS, Account: acct, Location: region}}}},
			action: engine.Mark, class: ClassOrphan, why: "unseen"},
		{name: "a failed discovery of the region", vol: csiVolume("vol-1"), clusters: []inventory.ClusterRefs{cluster("a", nil)},
			fleet: &inventory.Fleet{Discovery: true, Listings: []inventory.FleetListing{{Platform: inventory.EKS, Scope: acct + "/" + region, Problem: "AccessDenied"}},
				Members: []inventory.FleetMember{{Name: "a", Configured: true, State: inventory.MemberRead}}},
			action: engine.Mark, class: ClassOrphan, why: "discovery eks " + acct + "/" + region},
		{name: "young", vol: csiVolume("vol-1", func(v *ebs.Volume) { v.Created = t0.Add(-time.Hour) }), clusters: []inventory.ClusterRefs{cluster("a", nil)},
			action: engine.Mark, class: ClassOrphan, why: "younger than min age"},
		{name: "attached", vol: csiVolume("vol-1", func(v *ebs.Volume) { v.State = "in-use"; v.Attachments = []string{"i-1"} }),
			clusters: []inventory.ClusterRefs{cluster("a", nil)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapOf([]ebs.Volume{c.vol}, c.clusters...)
			s.Fleet = c.fleet
			p := plan(s, testSection(), seen(old, "vol-1"))
			var got *engine.Decision
			for d := range p.All() {
				if d.Name == "vol-1" {
					dd := *d
					got = &dd
				}
			}
			if c.action == "" {
				if got != nil {
					t.Fatalf("an attached volume was proposed: %+v", got)
				}
				return
			}
			if got == nil || got.Action != c.action || got.Class != c.class || !strings.Contains(got.Why(), c.why) {
				t.Fatalf("got %+v (why %q), want %s %s %q", got, got.Why(), c.action, c.class, c.why)
			}
		})
	}
}

// A volume's owner is the engine's to name, from the routes, and only a
// candidate's: what a volume was made for is its detail (madeFor), not its
// owner, kept or not.
func TestOwnerIsTheRoutesNotWhatTheVolumeWasMadeFor(t *testing.T) {
	pv := refs{"vol-1": {{PV: "pv-x", ClaimNamespace: "wf", Claim: "claim-vol-1"}}}
	s := snapOf([]ebs.Volume{csiVolume("vol-1"), csiVolume("vol-2")}, cluster("a", pv))
	routes := engine.Settings{Routes: []engine.Route{{Owner: "storage", Kinds: []string{Name}}}}
	p := routes.Build(&s, []engine.Kind{New(testSection(), nil)}, seen(t0.Add(-2*time.Hour), "vol-2"), t0)
	for name, want := range map[string]struct {
		action engine.Action
		owner  string
	}{"vol-1": {engine.Keep, ""}, "vol-2": {engine.Delete, "storage"}} {
		d := enginetest.DecisionFor(t, p, name)
		if d.Action != want.action || d.Owner != want.owner {
			t.Errorf("%s: %s owned by %q, want %s owned by %q", name, d.Action, d.Owner, want.action, want.owner)
		}
		if made := d.Detail.(*Detail).MadeFor; made != "PVC wf/claim-"+name+" (PV pvc-"+name+")" {
			t.Errorf("%s: made for %q, want its PVC and PV", name, made)
		}
	}
}

// The first run starts the grace clock; a listing that failed holds.
func TestPlanGraceAndIncompleteListing(t *testing.T) {
	s := snapOf([]ebs.Volume{csiVolume("vol-1")}, cluster("a", nil))
	if d := enginetest.DecisionFor(t, plan(s, testSection(), engine.NewState()), "vol-1"); d.Action != engine.Mark {
		t.Fatalf("first sight: %+v", d)
	}
	r := s.Clouds[Name].(Read)
	r.Listings[0].Complete, r.Listings[0].Problem = false, "page 2 failed"
	p := plan(s, testSection(), seen(t0.Add(-2*time.Hour), "vol-1"))
	if d := enginetest.DecisionFor(t, p, "vol-1"); d.Action == engine.Delete || !p.Incomplete {
		t.Fatalf("incomplete listing: %+v", d)
	}
}

func TestHeadroom(t *testing.T) {
	vols := []ebs.Volume{csiVolume("vol-1", func(v *ebs.Volume) { v.SizeGiB = 300 }),
		csiVolume("vol-2", func(v *ebs.Volume) { v.SizeGiB = 600; v.State = "in-use"; v.Attachments = []string{"i-1"} })}
	s := snapOf(vols, cluster("a", nil))
	p := plan(s, testSection(), seen(t0.Add(-2*time.Hour), "vol-1"))
	hs := HeadroomOf(p)
	if len(hs) != 1 {
		t.Fatalf("%+v", hs)
	}
	h := hs[0]
	if !h.Known || h.UsageGiB != 900 || h.LimitGiB != 1000 || h.PlanFreesGiB != 300 || h.OrphanGiB != 300 || !h.Warning || h.UsedPctAfter != 0.6 {
		t.Fatalf("%+v", h)
	}
	v := New(testSection(), nil).View(p, &s)
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0].Text, "gp3 storage in "+acct+"/"+region+" is 90% used") {
		t.Fatalf("warnings %+v", v.Warnings)
	}
	// An incomplete listing makes usage unknown: no gauge says "plenty left".
	r := s.Clouds[Name].(Read)
	r.Listings[0].Complete = false
	h = New(testSection(), nil).headroom(p, &s)[0]
	if h.Known || h.Warning {
		t.Fatalf("unknown usage: %+v", h)
	}
}

// memEBS is an in-memory API with EC2's delete rules.
type memEBS struct {
	vols    map[string]ebs.Volume
	snapErr error
	// snaps are the snapshots made, with the describes each stays pending.
	snaps     []ebs.Snapshot
	pending   map[string]int
	failed    map[string]bool
	snapshots []string
	calls     []string
	// at is how long after t0 the run is planned and applied.
	at time.Duration
}

func (m *memEBS) Volume(_ context.Context, _, _, id string) (ebs.Volume, error) {
	m.calls = append(m.calls, "get "+id)
	v, ok := m.vols[id]
	if !ok {
		return v, fmt.Errorf("InvalidVolume.NotFound: %w", outcome.ErrNotFound)
	}
	return v, nil
}

func (m *memEBS) DeleteVolume(_ context.Context, _, _, id string) error {
	m.calls = append(m.calls, "delete "+id)
	v, ok := m.vols[id]
	switch {
	case !ok:
		return fmt.Errorf("InvalidVolume.NotFound: %w", outcome.ErrNotFound)
	case len(v.Attachments) > 0:
		return outcome.MarkChanged(errors.New("VolumeInUse"))
	}
	delete(m.vols, id)
	return nil
}

func (m *memEBS) CreateSnapshot(_ context.Context, _, _, id, desc string, tags map[string]string) (string, error) {
	m.calls = append(m.calls, "snapshot "+id)
	if m.snapErr != nil {
		return "", m.snapErr
	}
	m.snapshots = append(m.snapshots, id+" "+tags["reclaim.dev/snapshot-of"]+" "+desc)
	sid := fmt.Sprintf("snap-%d", len(m.snaps)+1)
	m.snaps = append(m.snaps, ebs.Snapshot{ID: sid, VolumeID: id, State: "pending", Started: t0.Add(m.at + time.Duration(len(m.snaps))*time.Second)})
	return sid, nil
}

func (m *memEBS) SnapshotsOf(_ context.Context, _, _, vol, _ string) ([]ebs.Snapshot, error) {
	m.calls = append(m.calls, "list snapshots")
	var out []ebs.Snapshot
	for i := range m.snaps {
		s := &m.snaps[i]
		if s.VolumeID != vol {
			continue
		}
		if s.State == "pending" {
			switch {
			case m.failed[s.ID]:
				s.State = "error"
			case m.pending[s.ID] <= 0:
				s.State = "completed"
			}
			m.pending[s.ID]--
		}
		out = append(out, *s)
	}
	return out, nil
}

func applyOnce(t *testing.T, m *memEBS, sec Section, change func()) *engine.Outcome {
	t.Helper()
	out, _ := applyAudited(t, m, sec, change)
	return out
}

// applyAudited plans vol-1 (orphaned for two hours) and applies the plan,
// returning the outcome and the audit log's results by id.
func applyAudited(t *testing.T, m *memEBS, sec Section, change func()) (*engine.Outcome, []audit.Record) {
	t.Helper()
	var vols []ebs.Volume
	for _, v := range m.vols {
		vols = append(vols, v)
	}
	s := snapOf(vols, cluster("a", nil))
	k := New(sec, m)
	p := enginetest.Build(&s, []engine.Kind{k}, seen(t0.Add(-2*time.Hour), "vol-1"), t0.Add(m.at))
	if change != nil {
		change()
	}
	a, buf, _ := enginetest.Applier(t0.Add(m.at), 3, k)
	a.SnapshotPoll = time.Millisecond
	out, err := a.Apply(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	var lines []audit.Record
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r audit.Record
		if l != "" {
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, r)
		}
	}
	return out, lines
}

func TestApply(t *testing.T) {
	for _, c := range []struct {
		name    string
		change  func(v *ebs.Volume)
		result  string
		deleted bool
	}{
		{"deleted", nil, audit.Deleted, true},
		{"attached since the plan", func(v *ebs.Volume) { v.State, v.Attachments = "in-use", []string{"i-9"} }, audit.Skipped, false},
		// Each re-read check on its own: a state that is no longer
		// available with no attachment listed (yet), and an attachment
		// listed while the state still says available.
		{"no longer available, no attachment listed", func(v *ebs.Volume) { v.State = "in-use" }, audit.Skipped, false},
		{"attached while still available", func(v *ebs.Volume) { v.Attachments = []string{"i-9"} }, audit.Skipped, false},
		{"protected since the plan", func(v *ebs.Volume) { v.Tags["reclaim.dev/protect"] = "" }, audit.Skipped, false},
		{"evidence gone since the plan", func(v *ebs.Volume) { delete(v.Tags, TagCSICluster) }, audit.Skipped, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &memEBS{vols: map[string]ebs.Volume{"vol-1": csiVolume("vol-1")}}
			out := applyOnce(t, m, testSection(), func() {
				if c.change != nil {
					v := m.vols["vol-1"]
					v.Tags = maps(v.Tags)
					c.change(&v)
					m.vols["vol-1"] = v
				}
			})
			if len(out.Results) != 1 || out.Results[0].Result != c.result {
				t.Fatalf("%+v", out.Results)
			}
			if _, left := m.vols["vol-1"]; left == c.deleted {
				t.Fatalf("deleted=%v, calls %v", !left, m.calls)
			}
			// A skip is the re-read's: no delete was sent (EC2 would refuse
			// an attached volume's, but that is not the check).
			if !c.deleted && slices.Contains(m.calls, "delete vol-1") {
				t.Fatalf("skipped only by the delete call: %v", m.calls)
			}
		})
	}
}

// A volume is deleted only once its snapshot is completed; one that fails
// keeps the volume (a refusal), and one still pending past snapshotTimeout
// is deferred: held, not failed, and a later run does not rely on it (the
// volume may have been used between the runs: EC2 would not say), but makes
// a new one.
func TestApplySnapshotsFirst(t *testing.T) {
	sec := testSection()
	sec.SnapshotBeforeDelete, sec.SnapshotTimeout = true, config.Duration(time.Minute)
	fresh := func() *memEBS {
		return &memEBS{vols: map[string]ebs.Volume{"vol-1": csiVolume("vol-1")}, pending: map[string]int{"snap-1": 2}}
	}
	m := fresh()
	out := applyOnce(t, m, sec, nil)
	if out.Deleted != 1 || len(m.snapshots) != 1 ||
		!strings.Contains(m.snapshots[0], "vol-1 vol-1 reclaim: vol-1 before its delete, made for PVC wf/claim-vol-1") ||
		strings.Join(m.calls, ",") != "list snapshots,snapshot vol-1,list snapshots,list snapshots,list snapshots,get vol-1,delete vol-1" {
		t.Fatalf("%+v calls %v snapshots %v", out.Results, m.calls, m.snapshots)
	}
	// A failed CreateSnapshot, or a snapshot that ends in error, leaves the
	// volume untouched: a refusal, not a delete.
	m = fresh()
	m.snapErr = errors.New("SnapshotLimitExceeded")
	if out = applyOnce(t, m, sec, nil); out.Failed != 1 || len(m.vols) != 1 {
		t.Fatalf("%+v calls %v", out.Results, m.calls)
	}
	m = fresh()
	m.failed = map[string]bool{"snap-1": true}
	if out = applyOnce(t, m, sec, nil); out.Failed != 1 || len(m.vols) != 1 || len(m.snapshots) != 1 || !strings.Contains(out.Results[0].Error, "snapshot snap-1 failed") {
		t.Fatalf("a failed snapshot: %+v calls %v", out.Results, m.calls)
	}
	// Pending past the timeout: deferred, not failed; the next run, an hour
	// later, makes a new snapshot and deletes once that one completes.
	short := sec
	short.SnapshotTimeout = config.Duration(5 * time.Millisecond)
	m = fresh()
	m.pending["snap-1"] = 1 << 20
	out, lines := applyAudited(t, m, short, nil)
	if out.Failed != 0 || out.Deferred != 1 || len(m.vols) != 1 || out.Results[0].Result != audit.Deferred || !strings.Contains(out.Results[0].Reason, "still pending") {
		t.Fatalf("pending: %+v", out.Results)
	}
	if got := snapshotLines(lines); got != "created snap-1" {
		t.Fatalf("pending: snapshot audit %q", got)
	}
	m.pending["snap-1"], m.at = 0, time.Hour
	out, lines = applyAudited(t, m, short, nil)
	if out.Deleted != 1 || len(m.snapshots) != 2 {
		t.Fatalf("the second run: %+v snapshots %v", out.Results, m.snapshots)
	}
	if got := snapshotLines(lines); got != "created snap-2" {
		t.Fatalf("the second run: snapshot audit %q", got)
	}
}

// A snapshot an earlier run started within the orphan period, completed
// since, is not relied on: the volume may have been attached, written and
// detached between the runs, and EC2 keeps no time of a last detach to say
// so. The delete relies on a snapshot started after this run's plan.
func TestApplySnapshotOfAnEarlierRunNotRelied(t *testing.T) {
	sec := testSection()
	sec.SnapshotBeforeDelete, sec.SnapshotTimeout = true, config.Duration(time.Minute)
	m := &memEBS{vols: map[string]ebs.Volume{"vol-1": csiVolume("vol-1")}, pending: map[string]int{},
		// Orphaned since t0-2h; an earlier run's snapshot of t0-1h.
		snaps: []ebs.Snapshot{{ID: "snap-earlier", VolumeID: "vol-1", State: "completed", Started: t0.Add(-time.Hour)}}}
	out, lines := applyAudited(t, m, sec, nil)
	if out.Deleted != 1 || len(m.snapshots) != 1 {
		t.Fatalf("%+v calls %v", out.Results, m.calls)
	}
	if got := snapshotLines(lines); got != "created snap-2" {
		t.Fatalf("snapshot audit %q, want a new snapshot", got)
	}
	for _, r := range lines {
		if r.Action == "delete" && r.Snapshot != "snap-2" {
			t.Fatalf("the delete relied on %q", r.Snapshot)
		}
	}
}

// A snapshot reclaim made before the current orphan period (the volume was
// used again since) is not reused: a new one is made and waited for.
func TestApplyStaleSnapshotNotReused(t *testing.T) {
	sec := testSection()
	sec.SnapshotBeforeDelete, sec.SnapshotTimeout = true, config.Duration(time.Minute)
	m := &memEBS{vols: map[string]ebs.Volume{"vol-1": csiVolume("vol-1")}, pending: map[string]int{},
		// Weeks old, and orphaned since t0-2h.
		snaps: []ebs.Snapshot{{ID: "snap-old", VolumeID: "vol-1", State: "completed", Started: t0.Add(-21 * 24 * time.Hour)}}}
	out, lines := applyAudited(t, m, sec, nil)
	if out.Deleted != 1 || len(m.snapshots) != 1 {
		t.Fatalf("%+v calls %v", out.Results, m.calls)
	}
	if got := snapshotLines(lines); got != "created snap-2" {
		t.Fatalf("snapshot audit %q, want the new snapshot created", got)
	}
	for _, r := range lines {
		if r.Action == "delete" && r.Snapshot != "snap-2" {
			t.Fatalf("the delete relied on %q", r.Snapshot)
		}
	}
}

// snapshotLines are the audit's snapshot lines, "result id" each.
func snapshotLines(lines []audit.Record) string {
	var out []string
	for _, r := range lines {
		if r.Action == "snapshot" {
			out = append(out, r.Result+" "+r.Snapshot)
		}
	}
	return strings.Join(out, ", ")
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestSectionErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"ebs: {}", "ebs.regions: at least one is required"},
		{"ebs: {regions: [{account: \"123456789012\", region: us-east-1}], ownership: [csi, magic]}", `"magic" is not an ownership evidence`},
		{"ebs: {regions: [{account: \"123456789012\", region: us-east-1}, {account: \"123456789012\", region: us-east-1}]}", "listed twice"},
		{"ebs: {regions: [{account: \"123456789012\", region: us-east-1}], protectTag: \"aws:x\"}", "ebs.protectTag"},
		{"ebs: {regions: [{account: \"123456789012\", region: us-east-1}], grace: 0s}", "ebs.grace: must be more than 0"},
	} {
		_, err := config.Parse([]byte("clusters: [{name: a, context: a}]\n"+c.yaml+"\n"), "reclaim.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
	cfg, err := config.Parse([]byte("clusters: [{name: a, context: a}]\nebs: {regions: [{account: \"123456789012\", region: us-east-1}]}\n"), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k := New(*SectionOf(cfg), nil)
	if k == nil || !k.s.Delete || k.s.Grace.Std() != 24*time.Hour || k.Limits().OptOutKey != "reclaim.dev/protect" {
		t.Fatalf("defaults: %+v", k)
	}
}
