package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/engine"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// The test's own kind data: the JSON shapes of schema v1, and sections that
// render the text the disk and PVC kinds show.

type diskDetail struct {
	Project          string `json:"project"`
	Location         string `json:"location"`
	Type             string `json:"type"`
	QuotaMetric      string `json:"quotaMetric"`
	Region           string `json:"region"`
	Owner            string `json:"owner,omitempty"`
	LabelFingerprint string `json:"labelFingerprint,omitempty"`
}

type pvcDetail struct {
	Cluster  string `json:"cluster"`
	Location string `json:"location"`
	UID      string `json:"uid"`
}

type headroom struct {
	Project            string     `json:"project"`
	Region             string     `json:"region"`
	Metric             string     `json:"metric"`
	Known              bool       `json:"known"`
	Problem            string     `json:"problem,omitempty"`
	Limit              float64    `json:"limit"`
	Usage              float64    `json:"usage"`
	PlanFrees          float64    `json:"planFreesGB"`
	OrphanGB           float64    `json:"orphanGB"`
	FinishedWorkflowGB float64    `json:"finishedWorkflowGB"`
	UsedPct            float64    `json:"usedPct"`
	UsedPctAfter       float64    `json:"usedPctAfter"`
	Warning            bool       `json:"warning"`
	GrowthPerDay       float64    `json:"growthPerDay"`
	RunsOutAt          *time.Time `json:"runsOutAt,omitempty"`
}

type holder struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Workflow  string `json:"workflow"`
	Phase     string `json:"phase"`
	PVCs      int    `json:"pvcs"`
	GB        int64  `json:"gb"`
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

func gb(f float64) string {
	if f == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f GB", f)
}

func headroomSection(hs []headroom) engine.Section {
	bl := engine.Block{Indent: 2, Header: []string{"PROJECT", "REGION", "METRIC", "USAGE/LIMIT GB", "USED", "PLAN FREES", "USED AFTER", "ORPHAN DISKS", "FINISHED-WORKFLOW PVCs"}}
	for _, h := range hs {
		if !h.Known {
			bl.Rows = append(bl.Rows, []string{h.Project, h.Region, h.Metric, "unknown", "", gb(h.PlanFrees), "", gb(h.OrphanGB), gb(h.FinishedWorkflowGB)})
			continue
		}
		bl.Rows = append(bl.Rows, []string{h.Project, h.Region, h.Metric, fmt.Sprintf("%.0f/%.0f", h.Usage, h.Limit),
			pct(h.UsedPct), gb(h.PlanFrees), pct(h.UsedPctAfter), gb(h.OrphanGB), gb(h.FinishedWorkflowGB)})
	}
	for _, h := range hs {
		switch {
		case !h.Known:
			bl.Lines = append(bl.Lines, fmt.Sprintf("  ? %s %s %s is unknown: %s", h.Project, h.Region, h.Metric, h.Problem))
		case h.Warning:
			l := fmt.Sprintf("  ! %s %s %s is %s used (%.0f of %.0f GB), %s after this plan.", h.Project, h.Region, h.Metric, pct(h.UsedPct), h.Usage, h.Limit, pct(h.UsedPctAfter))
			if h.FinishedWorkflowGB > 0 {
				l += fmt.Sprintf(" PVCs of finished workflows hold %s: deleting those workflows (or setting disks.deleteWorkflowPVCs) frees it.", gb(h.FinishedWorkflowGB))
			}
			bl.Lines = append(bl.Lines, l)
		}
		if h.RunsOutAt != nil {
			bl.Lines = append(bl.Lines, fmt.Sprintf("  ! %s %s %s grows %.0f GB a day: full around %s at this rate.", h.Project, h.Region, h.Metric, h.GrowthPerDay, h.RunsOutAt.UTC().Format("2006-01-02 15:04 MST")))
		}
	}
	return engine.Section{Key: "headroom", Data: hs, Title: "QUOTA HEADROOM", Place: engine.Overview, Blocks: []engine.Block{bl}}
}

func holdersSection(hs []holder) engine.Section {
	bl := engine.Block{Indent: 2, Header: []string{"CLUSTER", "NAMESPACE", "WORKFLOW", "PHASE", "PVCs", "GB"}}
	type nsKey struct{ c, ns string }
	byNS := map[nsKey]int64{}
	for i, h := range hs {
		byNS[nsKey{h.Cluster, h.Namespace}] += h.GB
		if i < 15 {
			bl.Rows = append(bl.Rows, []string{h.Cluster, h.Namespace, h.Workflow, h.Phase, fmt.Sprint(h.PVCs), fmt.Sprint(h.GB)})
		}
	}
	if len(hs) > 15 {
		bl.Rows = append(bl.Rows, []string{"…", "", fmt.Sprintf("%d more workflows", len(hs)-15), "", "", ""})
	}
	keys := make([]nsKey, 0, len(byNS))
	for k := range byNS {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return byNS[keys[i]] > byNS[keys[j]] })
	l := "  by namespace:"
	for _, k := range keys {
		l += fmt.Sprintf(" %s/%s %d GB;", k.c, k.ns, byNS[k])
	}
	bl.Lines = []string{l}
	return engine.Section{Key: "holders", Data: hs, Title: "WHO HOLDS THE QUOTA: PVCs of finished Argo Workflows that no running pod mounts",
		Place: engine.Overview, Blocks: []engine.Block{bl}}
}

// decisionsSection lists a kind's decisions, a few kept ones of each class.
func decisionsSection(ds []engine.Decision, kind, title string, maxKept int) engine.Section {
	bl := engine.Block{Indent: 2}
	shown, keptBy := map[string]int{}, map[string]int{}
	for _, d := range ds {
		if d.Kind != kind {
			continue
		}
		if d.Action == engine.Keep {
			if maxKept >= 0 && shown[d.Class] >= maxKept {
				keptBy[d.Class]++
				continue
			}
			shown[d.Class]++
		}
		name, typ, extra := d.ID, "", ""
		switch det := d.Detail.(type) {
		case diskDetail:
			typ = det.Type
			if det.Owner != "" && d.Action != engine.Keep {
				extra = " [" + det.Owner + "]"
			}
		case pvcDetail:
			name = det.Cluster + "/" + det.Location + "/" + d.Name
		}
		bl.Rows = append(bl.Rows, []string{strings.ToUpper(string(d.Action)), name, fmt.Sprintf("%d GB %s", d.Frees.GB, typ), d.Reason + extra})
	}
	classes := make([]string, 0, len(keptBy))
	for k := range keptBy {
		classes = append(classes, k)
	}
	sort.Slice(classes, func(i, j int) bool {
		if keptBy[classes[i]] != keptBy[classes[j]] {
			return keptBy[classes[i]] > keptBy[classes[j]]
		}
		return classes[i] < classes[j]
	})
	for _, k := range classes {
		bl.Lines = append(bl.Lines, fmt.Sprintf("  KEEP  %d more: %s", keptBy[k], k))
	}
	return engine.Section{Title: title, Place: engine.Details, Blocks: []engine.Block{bl}}
}

func goldenReport() *Report {
	since := t0.Add(-9 * time.Hour)
	after := since.Add(6 * time.Hour)
	full := t0.Add(26 * time.Hour)
	decisions := []engine.Decision{
		{Kind: "gce-disk", ID: "projects/demo-project/zones/asia-northeast1-a/disks/pvc-1", Name: "pvc-1", Action: engine.Delete,
			Reason: "no users, no PV in any of 2 clusters", OrphanSince: &since, DeletableAfter: &after, Frees: engine.Frees{GB: 25},
			Detail: diskDetail{Project: "demo-project", Location: "asia-northeast1-a", Type: "pd-balanced", QuotaMetric: "SSD_TOTAL_GB",
				Region: "asia-northeast1", Owner: "created for PVC data-eng/backfill-00-workdir", LabelFingerprint: "42WmSpB8rSM="}},
		{Kind: "k8s-pvc", ID: "clusters/prod-a/namespaces/argo/persistentvolumeclaims/wf-workdir", Name: "wf-workdir", Action: engine.Report,
			Reason: "Workflow argo/wf Failed", Frees: engine.Frees{GB: 20}, Detail: pvcDetail{Cluster: "prod-a", Location: "argo", UID: "u-1"}},
	}
	p := &engine.Plan{
		Version: engine.SchemaVersion, GeneratedAt: t0,
		Sources: []engine.Source{
			{Kind: "cluster", Name: "prod-a", Complete: true, Items: 36, Duration: 1500 * time.Millisecond, Unit: "PV references"},
			{Kind: "cluster", Name: "prod-b", Complete: false, Problems: []string{"list persistentvolumes: forbidden — the service account needs list on persistentvolumes (see deploy/rbac.yaml)"},
				Unit: "PV references"},
			{Kind: "gce-project", Name: "demo-project", Complete: true, Items: 52, Unit: "disks"},
		},
		Decisions: decisions,
		Sections: []engine.Section{
			headroomSection([]headroom{{Project: "demo-project", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Known: true, Limit: 1500, Usage: 1455,
				PlanFrees: 25, OrphanGB: 25, FinishedWorkflowGB: 20, UsedPct: 0.97, UsedPctAfter: 0.9533, Warning: true, GrowthPerDay: 40, RunsOutAt: &full}}),
			holdersSection([]holder{{Cluster: "prod-a", Namespace: "argo", Workflow: "wf", Phase: "Failed", PVCs: 1, GB: 20}}),
			decisionsSection(decisions, "gce-disk", "GCE DISKS", 3),
			decisionsSection(decisions, "k8s-pvc", "PVCs OF FINISHED ARGO WORKFLOWS", 3),
			{Place: engine.Details, Blocks: []engine.Block{{Lines: []string{
				"  PVCs marked REPORT are only reported: set disks.deleteWorkflowPVCs: true to let reclaim delete them after the grace period",
				"  (their PVs and disks follow when the reclaim policy is Delete), or delete the finished Workflows.",
			}}}},
		},
		Summaries:  []string{"disks delete 1, mark 0, report 0, keep 0", "PVCs delete 0, report 1"},
		Blocked:    []string{"cluster prod-b is incomplete"},
		Incomplete: true,
	}
	o := &engine.Outcome{Results: []engine.Result{{Kind: "gce-disk", ID: "projects/demo-project/zones/asia-northeast1-a/disks/pvc-1",
		Result: "deleted", Reason: "no users", SizeGB: 25}}, Deleted: 1, FreedGB: 25}
	r := New(p, o, true)
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
	if err := goldenReport().Text(&b, TextOptions{MaxKept: 3}); err != nil {
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
		{engine.Plan{}, nil, ExitOK},
		{engine.Plan{Incomplete: true}, nil, ExitIncomplete},
		{engine.Plan{BreakerTripped: true}, nil, ExitIncomplete},
		{engine.Plan{Incomplete: true}, &engine.Outcome{Failed: 1}, ExitFailed},
		{engine.Plan{}, &engine.Outcome{Stopped: "5 failed in a row"}, ExitFailed},
	} {
		if got := ExitCode(&c.p, c.o); got != c.want {
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
