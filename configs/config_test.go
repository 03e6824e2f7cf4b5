package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fakeHome makes ~ expand to a fixed directory, so expected values do not
// depend on the machine.
func fakeHome(t *testing.T) string {
	t.Helper()
	t.Setenv("HOME", "/home/reclaim")
	return "/home/reclaim"
}

func load(t *testing.T, path string) *Config {
	t.Helper()
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s):\n%v", path, err)
	}
	return c
}

func TestDefaults(t *testing.T) {
	fakeHome(t)
	got := load(t, "testdata/good/minimal.yaml")
	got.present = nil
	want := &Config{
		Clusters: []Cluster{{
			Name:     "prod-a",
			Timeout:  Duration(2 * time.Minute),
			QPS:      20,
			Burst:    40,
			PageSize: 500,
		}},
		Disks: Disks{
			MinAge:      Duration(24 * time.Hour),
			Grace:       Duration(7 * 24 * time.Hour),
			MinDetached: Duration(time.Hour),
			Ownership: Ownership{
				LabelKeys:           []string{"goog-gke-volume"},
				DescriptionContains: []string{"kubernetes.io/created-for/pv/name"},
			},
			ProtectLabel:        "reclaim-protect",
			SnapshotLabel:       "reclaim-snapshot-of",
			MaxDeletesPerRun:    20,
			MaxDeletePercent:    0.10,
			MaxDeleteSizePerRun: 0,
			BreakerCandidates:   200,
			WorkflowPVCs:        Caps{MaxDeletesPerRun: 20, MaxDeletePercent: 0.10, BreakerCandidates: 200},
		},
		Kubernetes: Kubernetes{ProtectLabel: "reclaim.dev/protect"},
		State:      State{File: "reclaim-state.json"},
		Audit:      Audit{File: "reclaim-audit.jsonl"},
		Fleet:      defaultFleet(),
		Prices:     Prices{Currency: "USD", ECRPerGBMonth: 0.10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\ngot  %+v\nwant %+v", got, want)
	}

	// GCE defaults apply inside a gce section.
	c, err := Parse([]byte("clusters: [{name: a}]\ngce: {projects: [demo-project]}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantGCE := &GCE{
		Projects:        []string{"demo-project"},
		QuotaMetrics:    []string{"SSD_TOTAL_GB", "DISKS_TOTAL_GB"},
		HeadroomWarning: 0.85,
		PageSize:        500,
		Concurrency:     4,
	}
	if !reflect.DeepEqual(c.GCE, wantGCE) {
		t.Errorf("gce defaults:\ngot  %+v\nwant %+v", c.GCE, wantGCE)
	}
	// Defaults are copies: changing one config does not change the next.
	c.GCE.QuotaMetrics[0] = "CHANGED"
	c2, _ := Parse([]byte("clusters: [{name: a}]\ngce: {projects: [demo-project]}\n"), "t.yaml")
	if c2.GCE.QuotaMetrics[0] != "SSD_TOTAL_GB" {
		t.Error("default quotaMetrics shared between configs")
	}
}

func TestFullFileKeepsEveryValue(t *testing.T) {
	home := fakeHome(t)
	got := load(t, "testdata/good/full.yaml")
	got.present = nil
	want := &Config{
		Clusters: []Cluster{{
			Name:        "prod-a",
			Kubeconfig:  home + "/kube/prod-a.yaml",
			Context:     "gke_my-gke-project_europe-west4_prod-a",
			GCEProjects: []string{"my-gke-project"},
			Timeout:     Duration(90 * time.Second),
			QPS:         5.5,
			Burst:       6,
			PageSize:    10000,
		}, {
			Name:        "prod-b",
			InCluster:   true,
			GCEProjects: []string{"my-gke-project", "other-project-42"},
			Timeout:     Duration(time.Hour),
			QPS:         100,
			Burst:       100,
			PageSize:    1,
		}},
		GCE: &GCE{
			Projects:              []string{"my-gke-project", "other-project-42"},
			Regions:               []string{"europe-west4", "us-central1"},
			Endpoint:              "http://localhost:8080/compute/v1/",
			WithoutAuthentication: true,
			QuotaMetrics:          []string{},
			HeadroomWarning:       0.70,
			PageSize:              1,
			Concurrency:           64,
		},
		Disks: Disks{
			MinAge:               Duration(7 * 24 * time.Hour),
			Grace:                Duration(36 * time.Hour),
			MinDetached:          0,
			ProtectLabel:         "keep_me",
			Ownership:            Ownership{LabelKeys: []string{}, DescriptionContains: []string{"created-for/pv"}},
			SnapshotBeforeDelete: true,
			SnapshotLabel:        "snapshot-of",
			DeleteWorkflowPVCs:   true,
			MaxDeletesPerRun:     0,
			MaxDeletePercent:     0.025,
			MaxDeleteSizePerRun:  1 << 30,
			BreakerCandidates:    1,
			WorkflowPVCs:         Caps{MaxDeletesPerRun: 3, MaxDeletePercent: 0.50, MaxDeleteSizePerRun: Size(500 << 30), BreakerCandidates: 7},
		},
		Kubernetes: Kubernetes{ProtectLabel: "protect"},
		State:      State{ConfigMap: &ConfigMapRef{Namespace: "reclaim", Name: "reclaim.state"}},
		Audit:      Audit{File: "-"},
		Fleet: func() Fleet {
			f := defaultFleet()
			f.GKE = GKEDiscovery{Projects: []string{"my-gke-project", "other-project-42"}, WithoutAuthentication: true}
			return f
		}(),
		Prices: Prices{Currency: "EUR", ECRPerGBMonth: 0.09, Disks: []DiskPrice{{Type: "pd-ssd", PerGBMonth: 0.2}, {Type: "pd-ssd", Region: "asia-northeast1", PerGBMonth: 0.25}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("full.yaml:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestOtherForms(t *testing.T) {
	home := fakeHome(t)
	c := load(t, "testdata/good/sizes-and-percents.yaml")
	checks := []struct {
		name      string
		got, want any
	}{
		{"timeout 0.5h", c.Clusters[0].Timeout.Std(), 30 * time.Minute},
		{"headroomWarning \"100%\"", c.GCE.HeadroomWarning.Fraction(), 1.0},
		{"minAge 36h", c.Disks.MinAge.Std(), 36 * time.Hour},
		{"grace 30m", c.Disks.Grace.Std(), 30 * time.Minute},
		{"minDetached 2d", c.Disks.MinDetached.Std(), 48 * time.Hour},
		{"maxDeletePercent 0", c.Disks.MaxDeletePercent.Fraction(), 0.0},
		{"maxDeleteSizePerRun 500G", c.Disks.MaxDeleteSizePerRun, Size(500e9)},
		{"state.file ~/", c.State.File, home + "/reclaim/state.json"},
		{"audit.file relative", c.Audit.File, "audit/reclaim.jsonl"},
	}
	c = load(t, "testdata/good/neither-kubeconfig.yaml")
	checks = append(checks, []struct {
		name      string
		got, want any
	}{
		{"timeout: (null) is the default", c.Clusters[0].Timeout.Std(), 2 * time.Minute},
		{"gceProjects: (null) is empty", len(c.Clusters[1].GCEProjects), 0},
		{"maxDeleteSizePerRun 10Ti", c.Disks.MaxDeleteSizePerRun, Size(10 << 40)},
		{"10Ti in GiB", c.Disks.MaxDeleteSizePerRun.GiB(), 10240.0},
		{"maxDeletePercent 100", c.Disks.MaxDeletePercent.Fraction(), 1.0},
		{"no gce section", c.GCE == nil, true},
	}...)
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

// TestBadFiles checks each testdata/bad/X.yaml fails with exactly the text in
// X.err. Run `go test ./config -run TestBadFiles -update` to rewrite them, then
// read the diff.
func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml")
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("got %T %v, want *Error", err, err)
	}
	want := "testdata/does-not-exist.yaml: cannot read the configuration file: no such file or directory"
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err.Error(), want)
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{Source: "reclaim.yaml", Problems: []Problem{
		{Path: "clusters[1].timeout", Message: `"2x" is not a duration — write 90s, 15m, 6h or 7d`},
		{Message: "YAML: line 3: did not find expected ',' or ']'"},
	}}
	want := "reclaim.yaml: clusters[1].timeout: \"2x\" is not a duration — write 90s, 15m, 6h or 7d\n" +
		"reclaim.yaml: YAML: line 3: did not find expected ',' or ']'"
	if e.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", e.Error(), want)
	}
}

func TestClosest(t *testing.T) {
	known := []string{"projects", "regions", "endpoint", "pageSize", "concurrency"}
	for word, want := range map[string]string{
		"projcts":     "projects",
		"project":     "projects",
		"page_size":   "pageSize",
		"PageSize":    "pageSize",
		"concurency":  "concurrency",
		"credentials": "",
		"zones":       "",
	} {
		if got := closest(word, known); got != want {
			t.Errorf("closest(%q) = %q, want %q", word, got, want)
		}
	}
}

// defaultFleet is the fleet section a file without one gets.
func defaultFleet() Fleet {
	return Fleet{Discover: true, ReadDiscovered: true, Timeout: Duration(2 * time.Minute), QPS: 20, Burst: 40, PageSize: 500}
}

// A file far larger than any configuration is refused before it is parsed.
func TestLoadRefusesAHugeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.yaml")
	big := strings.Repeat("# padding\n", MaxFileSize/10+1)
	if err := os.WriteFile(p, []byte("clusters: []\n"+big), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Fatalf("got %v, want a refusal naming the limit", err)
	}
	// A file at the limit is read (and judged on its content).
	if err := os.WriteFile(p, []byte("clusters: []\n"+big[:MaxFileSize-20]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err != nil && strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a file under the limit was refused: %v", err)
	}
}

// A region's price wins over its type's, the file's over the built-in ones,
// and a type nobody prices has no price.
func TestDiskPrices(t *testing.T) {
	c, err := Parse([]byte("clusters: [{name: a}]\nprices:\n  disks:\n    - {type: pd-ssd, perGBMonth: 0.2}\n    - {type: pd-ssd, region: asia-northeast1, perGBMonth: 0.25}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		typ, region string
		want        float64
		ok          bool
	}{
		{"pd-ssd", "asia-northeast1", 0.25, true},
		{"pd-ssd", "us-central1", 0.2, true},
		{"pd-balanced", "asia-northeast1", 0.10, true},
		{"local-ssd", "us-central1", 0, false},
	} {
		if got, ok := c.Prices.DiskGBMonth(x.typ, x.region); got != x.want || ok != x.ok {
			t.Errorf("%s in %s: %v %v, want %v %v", x.typ, x.region, got, ok, x.want, x.ok)
		}
	}
	if _, err := Parse([]byte("clusters: [{name: a}]\nprices: {currency: usd, disks: [{perGBMonth: -1}]}\n"), "t.yaml"); err == nil ||
		!strings.Contains(err.Error(), "prices.currency") || !strings.Contains(err.Error(), "prices.disks[0].type") || !strings.Contains(err.Error(), "prices.disks[0].perGBMonth") {
		t.Errorf("bad prices: %v", err)
	}
}
