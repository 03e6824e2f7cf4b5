package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.err from the current output")

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

func TestGoodFilesLoadAndRoundTrip(t *testing.T) {
	fakeHome(t)
	files, _ := filepath.Glob("testdata/good/*.yaml")
	examples, _ := filepath.Glob("*.yaml")
	files = append(files, examples...)
	if len(files) < 7 {
		t.Fatalf("found only %d files", len(files))
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			c := load(t, f)
			printed, err := c.Redacted()
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse(printed, "redacted "+f)
			if err != nil {
				t.Fatalf("Redacted output does not load:\n%v\n%s", err, printed)
			}
			// Compared as printed: a nil list and an empty one print alike.
			reprinted, err := again.Redacted()
			if err != nil {
				t.Fatal(err)
			}
			if string(printed) != string(reprinted) {
				t.Errorf("Redacted output loads differently:\nfirst:\n%s\nsecond:\n%s", printed, reprinted)
			}
		})
	}
}

func TestExampleConfigs(t *testing.T) {
	fakeHome(t)
	demo := load(t, "demo.yaml")
	var names []string
	for _, cl := range demo.Clusters {
		names = append(names, cl.Name)
	}
	if got := strings.Join(names, ","); got != "prod-a,prod-b,batch-use1,etl-use1" {
		t.Errorf("demo clusters = %s, want prod-a,prod-b,batch-use1,etl-use1", got)
	}
	if demo.GCE == nil || !reflect.DeepEqual(demo.GCE.Projects, []string{"demo-project"}) {
		t.Errorf("demo gce = %+v, want projects [demo-project]", demo.GCE)
	}
	if demo.Disks.MinAge.Std() != 24*time.Hour || demo.Disks.Grace.Std() != 6*time.Hour {
		t.Errorf("demo minAge, grace = %s, %s; want 24h, 6h", demo.Disks.MinAge, demo.Disks.Grace)
	}

	gke := load(t, "gke.yaml")
	if len(gke.Clusters) != 2 || gke.Clusters[0].Context == "" || gke.Clusters[1].Context == "" {
		t.Errorf("gke.yaml should have two clusters reached by context, got %+v", gke.Clusters)
	}

	eks := load(t, "eks.yaml")
	prodSubnets := []string{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1", "subnet-0123456789abcdef2"}
	switch {
	case len(eks.Clusters) != 4 || eks.ECR == nil || len(eks.ECR.Registries) != 2:
		t.Errorf("eks.yaml should have four clusters and two registries, got %+v", eks)
	case eks.EC2 == nil || len(eks.EC2.Networks) != 1:
		t.Errorf("eks.yaml should have an ec2 section with one network, got %+v", eks.EC2)
	case !reflect.DeepEqual(eks.EC2.Networks[0], Network{Account: "123456789012", Region: "us-east-1", Subnets: prodSubnets}):
		t.Errorf("eks.yaml network = %+v", eks.EC2.Networks[0])
	case !reflect.DeepEqual(eks.Clusters[0].AWSSubnets, prodSubnets):
		t.Errorf("eks.yaml prod-use1 awsSubnets = %v, want the subnets of ec2.networks[0]", eks.Clusters[0].AWSSubnets)
	case !eks.EC2.Interfaces.Delete || eks.EC2.Interfaces.Grace.Std() != 6*time.Hour || eks.EC2.RequestsPerSecond != 5:
		t.Errorf("eks.yaml ec2 = %+v", *eks.EC2)
	case eks.Jobs == nil || eks.Pods == nil:
		t.Errorf("eks.yaml should have jobs and pods sections, got %v, %v", eks.Jobs, eks.Pods)
	case eks.Jobs.Succeeded.Std() != 6*time.Hour || eks.Jobs.Failed.Std() != 72*time.Hour ||
		eks.Jobs.KeepCronJobHistory == nil || !*eks.Jobs.KeepCronJobHistory || eks.Jobs.TTLGrace == nil || eks.Jobs.TTLGrace.Std() != time.Hour:
		t.Errorf("eks.yaml jobs = %+v", *eks.Jobs)
	case eks.Pods.Succeeded.Std() != time.Hour || eks.Pods.Failed.Std() != 48*time.Hour ||
		!reflect.DeepEqual(eks.Pods.Namespaces.Exclude, []string{"kube-system", "reclaim"}) || eks.Pods.KeepCronJobHistory != nil:
		t.Errorf("eks.yaml pods = %+v", *eks.Pods)
	}
	for i, cl := range eks.Clusters {
		if len(cl.AWSSubnets) == 0 {
			t.Errorf("eks.yaml clusters[%d] (%s) has no awsSubnets", i, cl.Name)
		}
	}

	// The reference spells out every field, each with its default, except the
	// alternatives it can only show commented out.
	ref := load(t, "reference.yaml")
	minimal := load(t, "testdata/good/minimal.yaml")
	ref.present, minimal.present = nil, nil
	ref.Clusters[0].Kubeconfig, ref.Clusters[0].Context, ref.Clusters[0].GCEProjects = "", "", nil
	ref.Clusters[0].AWSAccounts, ref.Clusters[0].AWSSubnets = nil, nil
	// The ECR section is compared with a minimal one that only names a registry.
	minECR := load(t, "testdata/good/ecr-minimal.yaml").ECR
	refECR := *ref.ECR
	refECR.Registries = minECR.Registries
	if len(refECR.Consumers) == 0 {
		refECR.Consumers = nil // the reference writes consumers: []
	}
	if !reflect.DeepEqual(&refECR, minECR) {
		t.Errorf("reference.yaml's ecr section does not show the defaults:\nreference: %+v\ndefaults:  %+v", refECR, *minECR)
	}
	if ref.Daemon == nil || !reflect.DeepEqual(*ref.Daemon, DefaultDaemon()) {
		t.Errorf("reference.yaml's daemon section does not show the defaults:\nreference: %+v\ndefaults:  %+v", ref.Daemon, DefaultDaemon())
	}
	// The ec2 section is compared with a minimal one that only names a network.
	minEC2 := load(t, "testdata/good/ec2-minimal.yaml").EC2
	if ref.EC2 == nil || minEC2 == nil {
		t.Fatalf("ec2 sections: reference %v, minimal %v; want both present", ref.EC2, minEC2)
	}
	refEC2 := *ref.EC2
	refEC2.Networks = minEC2.Networks
	if !reflect.DeepEqual(&refEC2, minEC2) {
		t.Errorf("reference.yaml's ec2 section does not show the defaults:\nreference: %+v\ndefaults:  %+v", refEC2, *minEC2)
	}
	// The jobs and pods sections are compared with empty ones ({}), which
	// are present (non-nil) and take every default.
	empty, err := Parse([]byte("clusters: [{name: prod-a}]\njobs: {}\npods: {}\n"), "empty sections")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name     string
		ref, def *Retention
	}{{"jobs", ref.Jobs, empty.Jobs}, {"pods", ref.Pods, empty.Pods}} {
		if s.ref == nil || s.def == nil {
			t.Errorf("%s sections: reference %v, {} %v; want both present", s.name, s.ref, s.def)
			continue
		}
		r, d := emptyListsAsNil(*s.ref), emptyListsAsNil(*s.def)
		if !reflect.DeepEqual(r, d) {
			t.Errorf("reference.yaml's %s section does not show the defaults:\nreference: %+v\ndefaults:  %+v", s.name, r, d)
		}
	}
	ref.Daemon = nil
	ref.GCE, ref.ECR, ref.EC2, ref.Jobs, ref.Pods = nil, nil, nil, nil, nil
	if len(ref.Prices.Disks) == 0 {
		ref.Prices.Disks = nil // the reference writes disks: []
	}
	// The scopes discovery searches default to the cloud sections' own.
	ref.Fleet.GKE.Projects, ref.Fleet.EKS = nil, nil
	if f := &ref.Fleet; len(f.Include)+len(f.Exclude)+len(f.OutOfScope)+len(f.IncludeLabels)+len(f.ExcludeLabels) == 0 {
		f.Include, f.Exclude, f.OutOfScope, f.IncludeLabels, f.ExcludeLabels = nil, nil, nil, nil, nil
	}
	if !reflect.DeepEqual(ref, minimal) {
		t.Errorf("reference.yaml does not show the defaults:\nreference: %+v\ndefaults:  %+v", ref, minimal)
	}
	data, err := os.ReadFile("reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range allKeys(reflect.TypeFor[Config]()) {
		if !strings.Contains(string(data), " "+key+":") && !strings.Contains(string(data), "\n"+key+":") {
			t.Errorf("reference.yaml does not mention %s", key)
		}
	}
}

// emptyListsAsNil returns r with its empty lists nil: the reference writes
// include: [] and ownerKinds: [] where a default leaves them nil.
func emptyListsAsNil(r Retention) Retention {
	for _, l := range []*[]string{&r.Namespaces.Include, &r.Namespaces.Exclude, &r.OwnerKinds} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return r
}

// allKeys lists every YAML key in t.
func allKeys(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	var keys []string
	for _, f := range fieldsOf(t) {
		keys = append(keys, f.name)
		keys = append(keys, allKeys(t.Field(f.index).Type)...)
	}
	return keys
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
func TestBadFiles(t *testing.T) {
	fakeHome(t)
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	if len(files) == 0 {
		t.Fatal("no bad files")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(data, "reclaim.yaml")
			if err == nil {
				t.Fatal("loaded without error")
			}
			var cerr *Error
			if !errors.As(err, &cerr) || len(cerr.Problems) == 0 {
				t.Fatalf("error is %T, want *Error with problems: %v", err, err)
			}
			golden := strings.TrimSuffix(f, ".yaml") + ".err"
			got := err.Error() + "\n"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("error text differs from %s\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

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
