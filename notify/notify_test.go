package notify

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// fakeTarget counts deliveries; fail makes them fail.
type fakeTarget struct {
	name string
	when When
	sent int
	fail error
}

func (f *fakeTarget) Name() string { return f.name }
func (f *fakeTarget) Type() string { return "fake" }
func (f *fakeTarget) When() When   { return f.when }
func (f *fakeTarget) Deliver(context.Context, *report.Report) error {
	if f.fail != nil {
		return f.fail
	}
	f.sent++
	return nil
}
func (f *fakeTarget) Test(context.Context) error { return f.fail }

func rep(ids ...string) *report.Report {
	p := &engine.Plan{Sources: []engine.Source{{Kind: "cluster", Name: "a", Complete: true}}}
	for _, id := range ids {
		p.Decisions = append(p.Decisions, engine.Decision{Kind: "gce-disk", ID: id, Action: engine.Delete})
	}
	// Kept resources are not part of what changed.
	p.Decisions = append(p.Decisions, engine.Decision{Kind: "gce-disk", ID: "kept-" + string(rune('a'+len(ids))), Action: engine.Keep})
	return report.New(p, nil, false)
}

func TestChangesSendsOnceForAnUnchangedReportAndAgainAfterAChange(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state.json.notify.json")
	changes, always, warn := &fakeTarget{name: "c", when: WhenChanges}, &fakeTarget{name: "a", when: WhenAlways}, &fakeTarget{name: "w", when: WhenWarnings}
	d := &Deliverer{Targets: []Target{changes, always, warn}, StateFile: file}
	results := func(rs []Result) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Target+"="+r.Result)
		}
		return strings.Join(s, " ")
	}
	steps := []struct {
		rep  *report.Report
		want string
	}{
		{rep("d1", "d2"), "c=sent a=sent w=skipped"},
		{rep("d2", "d1"), "c=skipped a=sent w=skipped"}, // same set, other order
		{rep("d1", "d2", "d3"), "c=sent a=sent w=skipped"},
		{rep("d1", "d2", "d3"), "c=skipped a=sent w=skipped"},
	}
	for i, s := range steps {
		if got := results(d.Deliver(context.Background(), s.rep)); got != s.want {
			t.Fatalf("step %d: %s, want %s", i, got, s.want)
		}
	}
	if changes.sent != 2 || always.sent != 4 || warn.sent != 0 {
		t.Fatalf("sent changes=%d always=%d warnings=%d", changes.sent, always.sent, warn.sent)
	}
	// The fingerprint survives the process: a new Deliverer reads the file.
	d2 := &Deliverer{Targets: []Target{changes}, StateFile: file}
	if got := results(d2.Deliver(context.Background(), rep("d3", "d1", "d2"))); got != "c=skipped" {
		t.Fatalf("after reload: %s", got)
	}
	// A mark becoming a delete is a change.
	r := rep("d1", "d2")
	r.Plan.Decisions[1].Action = engine.Mark
	r.Plan.Decisions = append(r.Plan.Decisions, engine.Decision{Kind: "gce-disk", ID: "d3", Action: engine.Delete})
	if got := results(d2.Deliver(context.Background(), r)); got != "c=sent" {
		t.Fatalf("mark vs delete: %s", got)
	}
}

func TestWarningsAlwaysSendAndFailuresAreRetried(t *testing.T) {
	file := filepath.Join(t.TempDir(), "n.json")
	changes, warn := &fakeTarget{name: "c", when: WhenChanges}, &fakeTarget{name: "w", when: WhenWarnings}
	d := &Deliverer{Targets: []Target{changes, warn}, StateFile: file}
	r := rep("d1")
	r.Plan.Sections = []layout.Section{{Title: "QUOTA HEADROOM", Place: layout.Overview, Blocks: []layout.Block{{Lines: []string{"  ! p r SSD_TOTAL_GB is 97.0% used"}}}}}
	for i := range 2 {
		rs := d.Deliver(context.Background(), r)
		if rs[0].Result != Sent || rs[1].Result != Sent {
			t.Fatalf("run %d with a warning: %+v", i, rs)
		}
	}
	// A failed delivery is not remembered: the next run sends again.
	fail := &fakeTarget{name: "f", when: WhenChanges, fail: errors.New("slack webhook answered 404 channel_not_found")}
	var logs bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&logs), zap.InfoLevel))
	d = &Deliverer{Targets: []Target{fail}, StateFile: file, Log: log}
	rs := d.Deliver(context.Background(), rep("d1"))
	if !AnyFailed(rs) || !strings.Contains(logs.String(), `"target":"f"`) || !strings.Contains(logs.String(), "channel_not_found") {
		t.Fatalf("%+v\n%s", rs, logs.String())
	}
	fail.fail = nil
	if rs := d.Deliver(context.Background(), rep("d1")); rs[0].Result != Sent {
		t.Fatalf("after a failure: %+v", rs)
	}
}

func TestUnreadableStateSends(t *testing.T) {
	file := filepath.Join(t.TempDir(), "n.json")
	os.WriteFile(file, []byte("{not json"), 0o644)
	c := &fakeTarget{name: "c", when: WhenChanges}
	rs := (&Deliverer{Targets: []Target{c}, StateFile: file}).Deliver(context.Background(), rep("d1"))
	if rs[0].Result != Sent {
		t.Fatalf("%+v", rs)
	}
}

func TestWarningGroupsOrder(t *testing.T) {
	r := rep("d1")
	p := r.Plan
	p.BreakerTripped = true
	p.Blocked = []string{"cluster b is incomplete (timeout): no disk it could reference is deleted this run"}
	p.Sources = append(p.Sources, engine.Source{Kind: "cluster", Name: "b"})
	p.Sections = []layout.Section{
		{Title: "QUOTA HEADROOM", Place: layout.Overview, Blocks: []layout.Block{{Lines: []string{"  ! quota 97%", "  ? unknown", "plain"}}}},
		{Title: "GCE DISKS", Place: layout.Details, Blocks: []layout.Block{{Lines: []string{"  ! not an overview line"}}}},
	}
	got := strings.Join(Warnings(r), "\n")
	want := "breaker tripped: too many resources were due at once, nothing of that kind is deleted this run\n" +
		"incomplete sources: cluster b\n" +
		"cluster b is incomplete (timeout): no disk it could reference is deleted this run\n" +
		"quota 97%"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestHeadline(t *testing.T) {
	p := &engine.Plan{}
	for i := range 12 {
		p.Decisions = append(p.Decisions, engine.Decision{Kind: "gce-disk", ID: string(rune('a' + i)), Action: engine.Delete, Frees: amount.Free(25, gcepd.GB)})
	}
	for i := range 490 {
		p.Decisions = append(p.Decisions, engine.Decision{Kind: "ecr-image", ID: string(rune(1000 + i)), Action: engine.Delete, Frees: amount.Free(1e6, ecrimage.Bytes)})
	}
	got := Headline(report.New(p, nil, false), map[string]string{"gce-disk": "disks"})
	if got != "12 disks (300 GB) and 490 images (490 MB) would be deleted" {
		t.Fatal(got)
	}
	if Noun("k8s-pvc", nil) != "PVCs" {
		t.Fatal(Noun("k8s-pvc", nil))
	}
}

// sinceTarget records the Previous each delivery is given.
type sinceTarget struct {
	fakeTarget
	prevs []Previous
}

func (s *sinceTarget) DeliverSince(ctx context.Context, r *report.Report, p Previous) error {
	s.prevs = append(s.prevs, p)
	return s.Deliver(ctx, r)
}

// A state file written before decision sets existed reads as "previous
// unknown" (everything new); the next delivery records the set, and the one
// after is told exactly what the previous report held. A failed delivery
// does not replace the previous set.
func TestPreviousDecisionSetIsKeptPerTarget(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notify.json")
	old := `{"version":1,"targets":{"mail":{"fingerprint":"sha256:x","decisions":1,"deliveredAt":"2026-11-01T00:00:00Z"}}}`
	if err := os.WriteFile(file, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	tg := &sinceTarget{fakeTarget: fakeTarget{name: "mail", when: WhenAlways}}
	d := &Deliverer{Targets: []Target{tg}, StateFile: file}
	d.Deliver(context.Background(), rep("d1", "d2"))
	if len(tg.prevs) != 1 || tg.prevs[0].Known {
		t.Fatalf("an old state file must read as unknown: %+v", tg.prevs)
	}
	tg.fail = errors.New("smtp down")
	d.Deliver(context.Background(), rep("d2", "d3"))
	tg.fail = nil
	d.Deliver(context.Background(), rep("d3"))
	p := tg.prevs[2]
	if !p.Known || len(p.Keys) != 2 || !p.Keys["gce-disk d1 delete"] || !p.Keys["gce-disk d2 delete"] {
		t.Fatalf("previous after a failed delivery must be the last delivered: %+v", p)
	}
	d3 := &engine.Decision{Kind: "gce-disk", ID: "d3", Action: engine.Delete}
	d1 := &engine.Decision{Kind: "gce-disk", ID: "d1", Action: engine.Delete}
	if !p.IsNew(d3) || p.IsNew(d1) {
		t.Fatalf("IsNew: d3 %v d1 %v", p.IsNew(d3), p.IsNew(d1))
	}
	b, _ := os.ReadFile(file)
	if !strings.Contains(string(b), `"set": [`) || !strings.Contains(string(b), `"gce-disk d3 delete"`) || !strings.Contains(string(b), `"fingerprint"`) {
		t.Fatalf("state file:\n%s", b)
	}
	// An empty set is known too (written as []), not unknown.
	d.Deliver(context.Background(), rep())
	d.Deliver(context.Background(), rep("d9"))
	if p := tg.prevs[len(tg.prevs)-1]; !p.Known || len(p.Keys) != 0 {
		t.Fatalf("after an empty report: %+v", p)
	}
}

func TestFleetLine(t *testing.T) {
	snap := &inventory.View{Clusters: []inventory.ClusterRefs{{Name: "a", Complete: true}}, Fleet: &inventory.Fleet{Members: []inventory.FleetMember{
		{Name: "a", Configured: true, State: inventory.MemberRead},
		{Name: "b", Discovered: true, State: inventory.MemberExcluded, Rule: `fleet.exclude[0] "b"`},
		{Name: "old", State: inventory.MemberOutOfScope, Reason: "decommissioned"},
	}}}
	p := enginetest.Build(snap, nil, engine.NewState(), time.Now())
	want := "Fleet: 1 cluster read · not read, holding what they may use: b · declared out of scope: old (decommissioned) · discovery off"
	if got := FleetLine(p); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := FleetLine(&engine.Plan{}); got != "" {
		t.Errorf("a plan without a fleet: %q", got)
	}
}

// keeper is a target that keeps what it was sent.
type keeper struct {
	fakeTarget
	got *report.Report
}

func (k *keeper) Deliver(ctx context.Context, r *report.Report) error {
	k.got = r
	return k.fakeTarget.Deliver(ctx, r)
}

// A routed target is sent its owners' candidates only, and its "changes"
// follow those alone; the fleet's target is sent everything. Each result
// carries the report it sent, for the notice.
func TestRoutedTargetsGetTheirOwnersCandidates(t *testing.T) {
	owned := func(owner, id string) engine.Decision {
		return engine.Decision{Kind: "gce-disk", ID: id, Action: engine.Delete, Owner: owner}
	}
	mk := func(ds ...engine.Decision) *report.Report {
		p := &engine.Plan{Decisions: ds, Warnings: []layout.Warning{{Kind: "gce-disk", Text: "SSD_TOTAL_GB is 95% used"}},
			Sections: []layout.Section{{Title: "QUOTA"}}, Summaries: []string{"3 disks"}}
		return report.New(p, nil, false)
	}
	fleet := &keeper{fakeTarget: fakeTarget{name: "ops", when: WhenAlways}}
	etl := &keeper{fakeTarget: fakeTarget{name: "etl-mail", when: WhenChanges}}
	d := &Deliverer{Targets: []Target{fleet, etl}, Owners: map[string][]string{"etl-mail": {"etl"}},
		StateFile: filepath.Join(t.TempDir(), "n.json")}
	rs := d.Deliver(context.Background(), mk(owned("etl", "d1"), owned("ml", "d2"), owned("", "d3")))
	if len(fleet.got.Plan.Decisions) != 3 || len(fleet.got.Plan.Warnings) != 1 {
		t.Fatalf("fleet target got %d decisions, %d warnings", len(fleet.got.Plan.Decisions), len(fleet.got.Plan.Warnings))
	}
	if ds := etl.got.Plan.Decisions; len(ds) != 1 || ds[0].ID != "d1" {
		t.Fatalf("etl's target got %+v, want d1 alone", ds)
	}
	if p := etl.got.Plan; len(p.Warnings)+len(p.Sections)+len(p.Summaries) != 0 {
		t.Fatalf("etl's target got the fleet's warnings, sections or summaries: %+v", p)
	}
	if rs[1].Result != Sent || rs[1].Report != etl.got || len(rs[1].Owners) != 1 || rs[0].Owners != nil {
		t.Fatalf("results %+v", rs)
	}
	// Another team's change is not etl's: its target stays quiet.
	rs = d.Deliver(context.Background(), mk(owned("etl", "d1"), owned("ml", "d2"), owned("ml", "d4")))
	if rs[1].Result != Skipped || etl.sent != 1 {
		t.Fatalf("etl's target after ml's change: %s (%s), sent %d", rs[1].Result, rs[1].Why, etl.sent)
	}
	rs = d.Deliver(context.Background(), mk(owned("ml", "d2"), owned("etl", "d5")))
	if rs[1].Result != Sent || etl.got.Plan.Decisions[0].ID != "d5" {
		t.Fatalf("etl's target after etl's change: %s", rs[1].Result)
	}
}
