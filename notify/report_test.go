package notify

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/reconcile"
)

var update = flag.Bool("update", false, "rewrite golden files")

func goldenReport() *Report {
	since := t0.Add(-9 * time.Hour)
	after := since.Add(6 * time.Hour)
	full := t0.Add(26 * time.Hour)
	p := &reconcile.Plan{
		Version: reconcile.SchemaVersion, GeneratedAt: t0,
		Sources: []reconcile.Source{
			{Kind: "cluster", Name: "prod-a", Complete: true, Items: 36, Duration: 1500 * time.Millisecond},
			{Kind: "cluster", Name: "prod-b", Complete: false, Problems: []string{"list persistentvolumes: forbidden — the service account needs list on persistentvolumes (see deploy/rbac.yaml)"}},
			{Kind: "gce-project", Name: "demo-project", Complete: true, Items: 52},
		},
		Decisions: []reconcile.Decision{
			{Kind: reconcile.KindDisk, ID: "projects/demo-project/zones/asia-northeast1-a/disks/pvc-1", Project: "demo-project", Location: "asia-northeast1-a",
				Name: "pvc-1", SizeGB: 25, Type: "pd-balanced", QuotaMetric: "SSD_TOTAL_GB", Region: "asia-northeast1", Action: reconcile.Delete,
				Reason: "no users, no PV in any of 2 clusters", OrphanSince: &since, DeletableAfter: &after, Owner: "created for PVC data-eng/backfill-00-workdir", LabelFingerprint: "42WmSpB8rSM="},
			{Kind: reconcile.KindPVC, ID: "clusters/prod-a/namespaces/argo/persistentvolumeclaims/wf-workdir", Cluster: "prod-a", Location: "argo",
				Name: "wf-workdir", SizeGB: 20, Action: reconcile.Report, Reason: "Workflow argo/wf Failed", UID: "u-1"},
		},
		Headroom: []reconcile.Headroom{{Project: "demo-project", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Known: true, Limit: 1500, Usage: 1455,
			PlanFrees: 25, OrphanGB: 25, FinishedWorkflowGB: 20, UsedPct: 0.97, UsedPctAfter: 0.9533, Warning: true, GrowthPerDay: 40, RunsOutAt: &full}},
		Holders:    []reconcile.Holder{{Cluster: "prod-a", Namespace: "argo", Workflow: "wf", Phase: "Failed", PVCs: 1, GB: 20}},
		Blocked:    []string{"cluster prod-b is incomplete"},
		Incomplete: true,
	}
	o := &reconcile.Outcome{Results: []reconcile.Result{{Kind: reconcile.KindDisk, ID: "projects/demo-project/zones/asia-northeast1-a/disks/pvc-1",
		Result: "deleted", Reason: "no users", SizeGB: 25}}, Deleted: 1, FreedGB: 25}
	r := New(p, o, true)
	r.LastSuccess = t0.Add(-time.Hour)
	return r
}

// The JSON report is a stable, versioned schema: any change to its shape shows
// up here, and must come with a new reconcile.SchemaVersion if it breaks readers.
func TestJSONSchemaIsStable(t *testing.T) {
	var b bytes.Buffer
	if err := goldenReport().JSON(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.json", b.Bytes())
}

func TestTextReport(t *testing.T) {
	var b bytes.Buffer
	if err := goldenReport().Text(&b, TextOptions{MaxKept: 3}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.txt", b.Bytes())
	for _, want := range []string{"QUOTA HEADROOM", "full around", "WHO HOLDS THE QUOTA", "INCOMPLETE", "HELD BACK THIS RUN", "APPLIED", "exit 3"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q", want)
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./notify -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s changed; if intended, run go test ./notify -update and review the diff.\ngot:\n%s", name, got)
	}
}
