package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// The test's own kind data: the JSON shapes of schema v1, and sections that
// render the text the disk and PVC kinds show.

func goldenReport() *report.Report {
	since := t0.Add(-9 * time.Hour)
	after := since.Add(6 * time.Hour)
	full := t0.Add(26 * time.Hour)
	decisions := []engine.Decision{
		{Kind: "gce-disk", ID: "projects/demo-project/zones/asia-northeast1-a/disks/pvc-1", Name: "pvc-1", Action: engine.Delete,
			Reason: "no users, no PV in any of 2 clusters", OrphanSince: &since, DeletableAfter: &after, Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 25, Unit: gcepd.GB}}, Cost: 2.5},
			Detail: &gcedisk.Detail{Project: "demo-project", Location: "asia-northeast1-a", Type: "pd-balanced", QuotaMetric: "SSD_TOTAL_GB",
				Region: "asia-northeast1", Owner: "created for PVC data-eng/backfill-00-workdir", LabelFingerprint: "42WmSpB8rSM="}},
		{Kind: "k8s-pvc", ID: "clusters/prod-a/namespaces/argo/persistentvolumeclaims/wf-workdir", Name: "wf-workdir", Action: engine.Report,
			Reason: "Workflow argo/wf Failed", Frees: amount.Frees{Amounts: [2]amount.Amount{{N: 20, Unit: gcepd.GB}}, Cost: 2}, Detail: &k8spvc.Detail{Cluster: "prod-a", Location: "argo", UID: "u-1"}},
	}
	p := &engine.Plan{
		Version: engine.SchemaVersion, GeneratedAt: t0, Currency: "USD",
		Sources: []engine.Source{
			{Kind: "cluster", Name: "prod-a", Complete: true, Items: 36, Duration: 1500 * time.Millisecond, Unit: "PV references"},
			{Kind: "cluster", Name: "prod-b", Complete: false, Problems: []string{"list persistentvolumes: forbidden — the service account needs list on persistentvolumes (see deploy/base/rbac.yaml)"},
				Unit: "PV references"},
			{Kind: "gce-project", Name: "demo-project", Complete: true, Items: 52, Unit: "disks"},
		},
		Decisions:  decisions,
		Summaries:  []string{"disks delete 1, mark 0, report 0, keep 0", "PVCs delete 0, report 1"},
		Blocked:    []string{"cluster prod-b is incomplete"},
		Incomplete: true,
	}
	// The kinds' own section builders, as their View calls them.
	hs := []gcedisk.Headroom{{Project: "demo-project", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Known: true, Limit: 1500, Usage: 1455,
		PlanFrees: 25, OrphanGB: 25, FinishedWorkflowGB: 20,
		Headroom: layout.Headroom{UsedPct: 0.97, UsedPctAfter: 0.9533, Warning: true, GrowthPerDay: 40, RunsOutAt: &full}}}
	p.Warnings = gcedisk.Warnings(hs)
	for i := range p.Warnings {
		p.Warnings[i].Kind = gcedisk.Name // as Build sets it
	}
	p.Sections = []layout.Section{
		gcedisk.HeadroomSection(hs),
		k8spvc.HoldersSection([]k8spvc.Holder{{Cluster: "prod-a", Namespace: "argo", Workflow: "wf", Phase: "Failed", PVCs: 1, GB: 20}}),
		gcedisk.DecisionSection(p),
		k8spvc.DecisionSection(p),
	}
	o := &engine.Outcome{}
	o.Add(engine.Result{Kind: "gce-disk", ID: "projects/demo-project/zones/asia-northeast1-a/disks/pvc-1",
		Result: "deleted", Reason: "no users", SizeGB: 25, Frees: amount.Free(25, gcepd.GB)})
	r := report.New(p, o, true)
	r.LastSuccess = t0.Add(-time.Hour)
	return r
}

// The JSON report is a stable, versioned schema: any change to its shape shows
// up here, and must come with a new engine.SchemaVersion if it breaks readers.
// The comparison is of the JSON values, not of the bytes: key order is not
// part of the schema.
func TestJSONSchemaIsStable(t *testing.T) {
	var b bytes.Buffer
	if err := goldenReport().JSON(&b); err != nil {
		t.Fatal(err)
	}
	want := readGolden(t, "report.golden.json", b.Bytes())
	var g, w any
	if err := json.Unmarshal(b.Bytes(), &g); err != nil {
		t.Fatalf("report is not JSON: %v", err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("golden is not JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("report.golden.json changed; if intended, run go test ./report -update and review the diff.\ngot:\n%s", b.Bytes())
	}
}

func TestTextReport(t *testing.T) {
	var b bytes.Buffer
	if err := goldenReport().Text(&b, report.TextOptions{MaxKept: 3}); err != nil {
		t.Fatal(err)
	}
	if want := readGolden(t, "report.golden.txt", b.Bytes()); !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("report.golden.txt changed; if intended, run go test ./report -update and review the diff.\ngot:\n%s", b.Bytes())
	}
	for _, want := range []string{"QUOTA HEADROOM", "full around", "WHO HOLDS THE QUOTA", "INCOMPLETE", "HELD BACK THIS RUN", "APPLIED", "exit 3"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q", want)
		}
	}
}

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		p    engine.Plan
		o    *engine.Outcome
		want int
	}{
		{engine.Plan{}, nil, report.ExitOK},
		{engine.Plan{Incomplete: true}, nil, report.ExitIncomplete},
		{engine.Plan{BreakerTripped: true}, nil, report.ExitIncomplete},
		{engine.Plan{Incomplete: true}, &engine.Outcome{Failed: 1}, report.ExitFailed},
		{engine.Plan{}, &engine.Outcome{Stopped: "5 failed in a row"}, report.ExitFailed},
		{engine.Plan{}, &engine.Outcome{Deleted: 1, Unaudited: 1}, report.ExitFailed},
		// A pass stopped by shutdown: the deletes it did not start are held back.
		{engine.Plan{}, &engine.Outcome{Results: []engine.Result{{Result: audit.Deleted}, {Result: audit.NotAttempted}}}, report.ExitIncomplete},
		// A delete deferred for its snapshot is held back, not failed.
		{engine.Plan{}, &engine.Outcome{Deferred: 1, Results: []engine.Result{{Result: audit.Deferred}}}, report.ExitIncomplete},
	} {
		if got := report.ExitCode(&c.p, c.o); got != c.want {
			t.Errorf("%+v %+v: exit %d, want %d", c.p, c.o, got, c.want)
		}
	}
}

// readGolden returns the golden file name; with -update it first writes got.
func readGolden(t *testing.T, name string, got []byte) []byte {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	return want
}

// A report cut to owners keeps their decisions and what apply did to them
// (recounted), the sources and held-back notes, not the fleet's warnings.
func TestForOwnersCutsDecisionsAndOutcome(t *testing.T) {
	p := &engine.Plan{Decisions: []engine.Decision{
		{Kind: "k8s-job", ID: "a", Action: engine.Delete, Owner: "etl"},
		{Kind: "k8s-job", ID: "b", Action: engine.Delete, Owner: "ml"},
		{Kind: "k8s-job", ID: "c", Action: engine.Delete},
		{Kind: "gce-disk", ID: "d", Action: engine.Mark, Owner: "web"},
	}, Sources: []engine.Source{{Kind: "cluster", Name: "x", Complete: false}}, Incomplete: true,
		Blocked: []string{"cluster x is incomplete"}, Warnings: []layout.Warning{{Text: "w"}}, Summaries: []string{"s"}}
	o := &engine.Outcome{}
	for _, r := range []engine.Result{{Kind: "k8s-job", ID: "a", Result: audit.Deleted, SizeGB: 1},
		{Kind: "k8s-job", ID: "b", Result: audit.Failed}, {Kind: "k8s-job", ID: "c", Result: audit.Deleted}} {
		o.Add(r)
	}
	r := report.New(p, o, true)
	c := report.ForOwners(r, []string{"etl", "web"})
	var ids []string
	for _, d := range c.Plan.Decisions {
		ids = append(ids, d.ID)
	}
	if strings.Join(ids, ",") != "a,d" {
		t.Fatalf("decisions %v, want a,d", ids)
	}
	if c.Outcome.Deleted != 1 || c.Outcome.Failed != 0 || len(c.Outcome.Results) != 1 || c.Outcome.FreedGB != 1 {
		t.Fatalf("outcome %+v", c.Outcome)
	}
	if len(c.Plan.Warnings)+len(c.Plan.Summaries) != 0 || len(c.Plan.Blocked) != 1 || !c.Plan.Incomplete || len(c.Plan.Sources) != 1 {
		t.Fatalf("plan %+v", c.Plan)
	}
	if len(r.Plan.Decisions) != 4 || r.Outcome.Deleted != 2 || len(r.Plan.Warnings) != 1 {
		t.Fatal("the whole report was changed")
	}
	if c.ExitCode != r.ExitCode {
		t.Fatalf("exit %d, the run's is %d", c.ExitCode, r.ExitCode)
	}
}

// A team's cut counts its deletions past the outcome's list too
// (engine.MaxListed a kind), and not another team's.
func TestForOwnersCountsUnlistedDeletions(t *testing.T) {
	defer func(n int) { engine.MaxListed = n }(engine.MaxListed)
	engine.MaxListed = 2
	p := &engine.Plan{}
	o := &engine.Outcome{}
	for i, owner := range []string{"ml", "ml", "etl", "etl", "etl", "ml", ""} {
		id := fmt.Sprintf("img-%d", i)
		p.Decisions = append(p.Decisions, engine.Decision{Kind: "ecr-image", ID: id, Action: engine.Delete, Owner: owner})
		o.Add(engine.Result{Kind: "ecr-image", ID: id, Result: audit.Deleted, Bytes: 10, Owner: owner,
			Frees: amount.Free(10, ecrimage.Bytes)})
	}
	r := report.New(p, o, true)
	for owner, want := range map[string]int{"etl": 3, "ml": 3} {
		c := report.ForOwners(r, []string{owner})
		if c.Outcome.Deleted != want || c.Outcome.FreedBytes != int64(10*want) || c.Outcome.Freed.Of(ecrimage.Bytes) != int64(10*want) {
			t.Errorf("%s: %d deleted, %d bytes (%d in units); want %d", owner, c.Outcome.Deleted, c.Outcome.FreedBytes, c.Outcome.Freed.Of(ecrimage.Bytes), want)
		}
	}
	if r.Outcome.Deleted != 7 || len(r.Outcome.Results) != 2 {
		t.Fatalf("the run's outcome: %d deleted, %d listed", r.Outcome.Deleted, len(r.Outcome.Results))
	}
	var b bytes.Buffer
	if err := r.Text(&b, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "DELETED: 5 more ecr-image, listed in the audit log"); n != 1 {
		t.Fatalf("the text says the 5 unlisted deletions %d times:\n%s", n, b.String())
	}
}

// The terminal report sums the candidates per owner when routes name any:
// the costliest owner first, what no route matched last.
func TestOwnerTotals(t *testing.T) {
	p := &engine.Plan{Currency: "USD", Decisions: []engine.Decision{
		{Kind: "gce-disk", ID: "a", Action: engine.Delete, Owner: "etl", Frees: amount.Frees{Cost: 5}},
		{Kind: "gce-disk", ID: "b", Action: engine.Mark, Owner: "ml", Frees: amount.Frees{Cost: 20}},
		{Kind: "gce-disk", ID: "c", Action: engine.Mark, Frees: amount.Frees{Cost: 50}},
		{Kind: "gce-disk", ID: "d", Action: engine.Keep, Owner: "etl", Frees: amount.Frees{Cost: 99}},
		{Kind: "gce-disk", ID: "e", Action: engine.Report, Owner: "etl", Frees: amount.Frees{Cost: 1}},
	}}
	got := report.OwnerTotals(p)
	want := []report.OwnerTotal{{"ml", report.Tally{Mark: 1, Waste: 20}}, {"etl", report.Tally{Delete: 1, Waste: 6}}, {"", report.Tally{Mark: 1, Waste: 50}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	var b bytes.Buffer
	if err := report.New(p, nil, false).Text(&b, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ml                       0       1       20.00 USD") {
		t.Fatalf("no owner table:\n%s", b.String())
	}
	for i := range p.Decisions {
		p.Decisions[i].Owner = ""
	}
	if report.OwnerTotals(p) != nil {
		t.Fatal("owner totals without any owner")
	}
}

// Rows a section lists a few of per class are counted with the block's own
// word ("HELD" for addresses), "KEEP" by default; -v (MaxKept -1) lists all.
func TestCountedRowsNameTheirWord(t *testing.T) {
	p := &engine.Plan{Sections: []layout.Section{{Title: "ADDRESSES", Place: layout.Details, Blocks: []layout.Block{{
		Rows: [][]string{{"a"}, {"b"}, {"c"}}, Classes: []string{"running-pods", "running-pods", "running-pods"}, Counted: "HELD"}}}}}
	text := func(max int) string {
		var b bytes.Buffer
		if err := report.New(p, nil, false).Text(&b, report.TextOptions{MaxKept: max}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if s := text(1); !strings.Contains(s, "HELD  2 more: running-pods") || strings.Contains(s, "KEEP") {
		t.Fatalf("%s", s)
	}
	if s := text(-1); strings.Contains(s, "more:") || !strings.Contains(s, "c\n") {
		t.Fatalf("-v:\n%s", s)
	}
}
