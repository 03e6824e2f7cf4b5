package config_test

// The example configurations and testdata/good load, print and load back
// the same. External, so that every kind's section is registered (through
// internal/app) as in the binary.

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/configs/configtest"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.err and docs/configuration.md from the current output")

// fakeHome makes ~ expand to a fixed directory, so expected values do not
// depend on the machine.
func fakeHome(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", "/home/reclaim")
}

func load(t *testing.T, path string) *config.Config {
	t.Helper()
	c, err := config.Load(path)
	if err != nil {
		t.Fatalf("Load(%s):\n%v", path, err)
	}
	return c
}

func printed(t *testing.T, c *config.Config) string {
	t.Helper()
	y, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	return string(y)
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
			first := printed(t, c)
			again, err := config.Parse([]byte(first), "redacted "+f)
			if err != nil {
				t.Fatalf("Redacted output does not load:\n%v\n%s", err, first)
			}
			// Compared as printed: a nil list and an empty one print alike.
			if second := printed(t, again); first != second {
				t.Errorf("Redacted output loads differently:\nfirst:\n%s\nsecond:\n%s", first, second)
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
	if g := gcepd.GCEOf(demo); g == nil || !reflect.DeepEqual(g.Projects, []string{"demo-project"}) {
		t.Errorf("demo gce = %+v, want projects [demo-project]", g)
	}
	if d := gcepd.DisksOf(demo); d.MinAge.Std() != 24*time.Hour || d.Grace.Std() != 6*time.Hour {
		t.Errorf("demo minAge, grace = %s, %s; want 24h, 6h", d.MinAge, d.Grace)
	}

	gke := load(t, "gke.yaml")
	if len(gke.Clusters) != 2 || gke.Clusters[0].Context == "" || gke.Clusters[1].Context == "" {
		t.Errorf("gke.yaml should have two clusters reached by context, got %+v", gke.Clusters)
	}

	eks := load(t, "eks.yaml")
	ec2, jobs, pods, ecr := ec2interface.SectionOf(eks), k8sjob.SectionOf(eks), k8spod.SectionOf(eks), ecrimage.SectionOf(eks)
	prodSubnets := []string{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1", "subnet-0123456789abcdef2"}
	switch {
	case len(eks.Clusters) != 4 || ecr == nil || len(ecr.Registries) != 2:
		t.Errorf("eks.yaml should have four clusters and two registries, got %+v", eks)
	case ec2 == nil || len(ec2.Networks) != 1:
		t.Errorf("eks.yaml should have an ec2Interfaces section with one network, got %+v", ec2)
	case !reflect.DeepEqual(ec2.Networks[0], ec2interface.Network{AWSTarget: config.AWSTarget{Account: "123456789012", Region: "us-east-1"}, Subnets: prodSubnets}):
		t.Errorf("eks.yaml network = %+v", ec2.Networks[0])
	case !reflect.DeepEqual(eks.Clusters[0].AWSSubnets, prodSubnets):
		t.Errorf("eks.yaml prod-use1 awsSubnets = %v, want the subnets of ec2Interfaces.networks[0]", eks.Clusters[0].AWSSubnets)
	case !ec2.Interfaces.Delete || ec2.Interfaces.Grace.Std() != 6*time.Hour || ec2.RequestsPerSecond != 5:
		t.Errorf("eks.yaml ec2 = %+v", *ec2)
	case jobs == nil || pods == nil:
		t.Errorf("eks.yaml should have jobs and pods sections, got %v, %v", jobs, pods)
	case jobs.Succeeded.Std() != 6*time.Hour || jobs.Failed.Std() != 72*time.Hour ||
		jobs.KeepCronJobHistory == nil || !*jobs.KeepCronJobHistory || jobs.TTLGrace == nil || jobs.TTLGrace.Std() != time.Hour:
		t.Errorf("eks.yaml jobs = %+v", *jobs)
	case pods.Succeeded.Std() != time.Hour || pods.Failed.Std() != 48*time.Hour ||
		!reflect.DeepEqual(pods.Namespaces.Exclude, []string{"kube-system", "reclaim"}) || pods.KeepCronJobHistory != nil:
		t.Errorf("eks.yaml pods = %+v", *pods)
	}
	for i, cl := range eks.Clusters {
		if len(cl.AWSSubnets) == 0 {
			t.Errorf("eks.yaml clusters[%d] (%s) has no awsSubnets", i, cl.Name)
		}
	}
}

// The reference spells out every field, each with its default, except the
// alternatives it can only show commented out. Sections are compared as
// printed (config check --print): a nil list and an empty one print alike.
func TestReferenceShowsTheDefaults(t *testing.T) {
	fakeHome(t)
	ref := load(t, "reference.yaml")
	minimal := load(t, "testdata/good/minimal.yaml")
	ref.Clusters[0].Kubeconfig, ref.Clusters[0].Context, ref.Clusters[0].GCEProjects = "", "", nil
	ref.Clusters[0].AWSAccounts, ref.Clusters[0].AWSSubnets = nil, nil
	// The ECR section is compared with a minimal one that only names a registry.
	minECR := ecrimage.SectionOf(load(t, "testdata/good/ecr-minimal.yaml"))
	refECR := *ecrimage.SectionOf(ref)
	// Consumers default to the registries, which differ.
	refECR.Registries, refECR.Consumers = minECR.Registries, minECR.Consumers
	if len(refECR.OutOfScopePullers) == 0 {
		refECR.OutOfScopePullers = nil // the reference writes outOfScopePullers: []
	}
	if !reflect.DeepEqual(&refECR, minECR) {
		t.Errorf("reference.yaml's ecr section does not show the defaults:\nreference: %+v\ndefaults:  %+v", refECR, *minECR)
	}
	if ref.Daemon == nil || !reflect.DeepEqual(*ref.Daemon, config.DefaultDaemon()) {
		t.Errorf("reference.yaml's daemon section does not show the defaults:\nreference: %+v\ndefaults:  %+v", ref.Daemon, config.DefaultDaemon())
	}
	// The ec2Interfaces section is compared with a minimal one that only names a network.
	minEC2, refEC2 := ec2interface.SectionOf(load(t, "testdata/good/ec2-minimal.yaml")), ec2interface.SectionOf(ref)
	if refEC2 == nil || minEC2 == nil {
		t.Fatalf("ec2Interfaces sections: reference %v, minimal %v; want both present", refEC2, minEC2)
	}
	e := *refEC2
	e.Networks = minEC2.Networks
	if !reflect.DeepEqual(&e, minEC2) {
		t.Errorf("reference.yaml's ec2Interfaces section does not show the defaults:\nreference: %+v\ndefaults:  %+v", e, *minEC2)
	}
	// The jobs and pods sections are compared with empty ones ({}), which
	// are present (non-nil) and take every default.
	empty, err := config.Parse([]byte("clusters: [{name: prod-a}]\njobs: {}\npods: {}\n"), "empty sections")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name     string
		ref, def *finished.Retention
	}{{"jobs", k8sjob.SectionOf(ref), k8sjob.SectionOf(empty)}, {"pods", k8spod.SectionOf(ref), k8spod.SectionOf(empty)}} {
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
	config.SetSection[gcepd.GCE](ref, gcepd.GCEKey, nil)
	config.SetSection[ecrimage.Section](ref, ecrimage.Key, nil)
	config.SetSection[ec2interface.Section](ref, ec2interface.Key, nil)
	config.SetSection[finished.Retention](ref, k8sjob.Key, nil)
	config.SetSection[finished.Retention](ref, k8spod.Key, nil)
	if len(ref.Prices.Disks) == 0 {
		ref.Prices.Disks = nil // the reference writes disks: []
	}
	// The scopes discovery searches default to the cloud sections' own.
	ref.Fleet.GKE.Projects, ref.Fleet.EKS = nil, nil
	if f := &ref.Fleet; len(f.Include)+len(f.Exclude)+len(f.OutOfScope)+len(f.IncludeLabels)+len(f.ExcludeLabels) == 0 {
		f.Include, f.Exclude, f.OutOfScope, f.IncludeLabels, f.ExcludeLabels = nil, nil, nil, nil, nil
	}
	if r, m := printed(t, ref), printed(t, minimal); r != m {
		t.Errorf("reference.yaml does not show the defaults:\nreference:\n%s\ndefaults:\n%s", r, m)
	}
}

// emptyListsAsNil returns r with its empty lists nil: the reference writes
// include: [] and ownerKinds: [] where a default leaves them nil.
func emptyListsAsNil(r finished.Retention) finished.Retention {
	for _, l := range []*[]string{&r.Namespaces.Include, &r.Namespaces.Exclude, &r.OwnerKinds} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return r
}

// Every bad file fails with the problems its .err golden lists (-update
// rewrites them), the kinds' sections' included.
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
			_, err = config.Parse(data, "reclaim.yaml")
			if err == nil {
				t.Fatal("loaded without error")
			}
			var cerr *config.Error
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

// defaultFleet is the fleet section a file without one gets.
func defaultFleet() config.Fleet {
	return config.Fleet{Discover: true, ReadDiscovered: true, Timeout: config.Duration(2 * time.Minute), QPS: 20, Burst: 40, PageSize: 500}
}

// defaultDisks is the disks section a file without one gets.
func defaultDisks() *gcepd.Disks {
	return &gcepd.Disks{
		Safety: config.Safety{MinAge: config.Duration(24 * time.Hour), Grace: config.Duration(7 * 24 * time.Hour),
			Caps: config.Caps{MaxDeletesPerRun: 20, MaxDeletePercent: 0.10, MaxDeleteSizePerRun: 0, BreakerCandidates: 200}},
		MinDetached: config.Duration(time.Hour),
		Ownership: gcepd.Ownership{
			LabelKeys:           []string{"goog-gke-volume"},
			DescriptionContains: []string{"kubernetes.io/created-for/pv/name"},
		},
		ProtectLabel:    "reclaim-protect",
		SnapshotLabel:   "reclaim-snapshot-of",
		SnapshotTimeout: config.Duration(30 * time.Minute),
	}
}

// defaultPVCs is the k8sPvcs section a file without one gets.
func defaultPVCs() *k8spvc.Section {
	return &k8spvc.Section{Safety: config.Safety{Grace: config.Duration(7 * 24 * time.Hour),
		Caps: config.Caps{MaxDeletesPerRun: 20, MaxDeletePercent: 0.10, BreakerCandidates: 200}}}
}

// samePrinted compares two configurations as config check --print shows
// them: every global key and every kind's section.
func samePrinted(t *testing.T, name string, got, want *config.Config) {
	t.Helper()
	if g, w := printed(t, got), printed(t, want); g != w {
		t.Errorf("%s:\ngot\n%s\nwant\n%s", name, g, w)
	}
}

func TestDefaults(t *testing.T) {
	fakeHome(t)
	got := load(t, "testdata/good/minimal.yaml")
	want := &config.Config{
		Clusters: []config.Cluster{{
			Name:     "prod-a",
			Timeout:  config.Duration(2 * time.Minute),
			QPS:      20,
			Burst:    40,
			PageSize: 500,
		}},
		Kubernetes: config.Kubernetes{ProtectLabel: "reclaim.dev/protect"},
		State:      config.State{File: "reclaim-state.json"},
		Audit:      config.Audit{File: "reclaim-audit.jsonl"},
		Fleet:      defaultFleet(),
		Prices:     config.Prices{Currency: "USD", ECRPerGBMonth: 0.10},
	}
	config.SetSection(want, gcepd.DisksKey, defaultDisks())
	config.SetSection(want, k8spvc.Key, defaultPVCs())
	samePrinted(t, "defaults", got, want)
	if !reflect.DeepEqual(gcepd.DisksOf(got), defaultDisks()) {
		t.Errorf("disks defaults:\ngot  %+v\nwant %+v", gcepd.DisksOf(got), defaultDisks())
	}
	if !reflect.DeepEqual(k8spvc.SectionOf(got), defaultPVCs()) {
		t.Errorf("k8sPvcs defaults:\ngot  %+v\nwant %+v", k8spvc.SectionOf(got), defaultPVCs())
	}
	if gcepd.GCEOf(got) != nil {
		t.Error("no gce section, yet one is present")
	}

	// GCE defaults apply inside a gce section.
	c, err := config.Parse([]byte("clusters: [{name: a}]\ngce: {projects: [demo-project]}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantGCE := &gcepd.GCE{
		Projects:        []string{"demo-project"},
		QuotaMetrics:    []string{"SSD_TOTAL_GB", "DISKS_TOTAL_GB"},
		HeadroomWarning: 0.85,
		PageSize:        500,
		Concurrency:     4,
	}
	if !reflect.DeepEqual(gcepd.GCEOf(c), wantGCE) {
		t.Errorf("gce defaults:\ngot  %+v\nwant %+v", gcepd.GCEOf(c), wantGCE)
	}
	// Defaults are copies: changing one config does not change the next.
	gcepd.GCEOf(c).QuotaMetrics[0] = "CHANGED"
	c2, _ := config.Parse([]byte("clusters: [{name: a}]\ngce: {projects: [demo-project]}\n"), "t.yaml")
	if gcepd.GCEOf(c2).QuotaMetrics[0] != "SSD_TOTAL_GB" {
		t.Error("default quotaMetrics shared between configs")
	}
}

func TestFullFileKeepsEveryValue(t *testing.T) {
	fakeHome(t)
	home := "/home/reclaim"
	got := load(t, "testdata/good/full.yaml")
	want := &config.Config{
		Clusters: []config.Cluster{{
			Name:        "prod-a",
			Kubeconfig:  home + "/kube/prod-a.yaml",
			Context:     "gke_my-gke-project_europe-west4_prod-a",
			GCEProjects: []string{"my-gke-project"},
			Timeout:     config.Duration(90 * time.Second),
			QPS:         5.5,
			Burst:       6,
			PageSize:    10000,
		}, {
			Name:        "prod-b",
			InCluster:   true,
			GCEProjects: []string{"my-gke-project", "other-project-42"},
			Timeout:     config.Duration(time.Hour),
			QPS:         100,
			Burst:       100,
			PageSize:    1,
		}},
		Kubernetes: config.Kubernetes{ProtectLabel: "protect"},
		State:      config.State{ConfigMap: &config.ConfigMapRef{Namespace: "reclaim", Name: "reclaim.state"}},
		Audit:      config.Audit{File: "-"},
		Fleet: func() config.Fleet {
			f := defaultFleet()
			f.GKE = config.GKEDiscovery{Projects: []string{"my-gke-project", "other-project-42"}, WithoutAuthentication: true}
			return f
		}(),
		Prices: config.Prices{Currency: "EUR", ECRPerGBMonth: 0.09, Disks: []config.DiskPrice{{Type: "pd-ssd", PerGBMonth: 0.2}, {Type: "pd-ssd", Region: "asia-northeast1", PerGBMonth: 0.25}}},
	}
	wantGCE := &gcepd.GCE{
		Projects:              []string{"my-gke-project", "other-project-42"},
		Regions:               []string{"europe-west4", "us-central1"},
		Endpoint:              "http://localhost:8080/compute/v1/",
		WithoutAuthentication: true,
		QuotaMetrics:          []string{},
		HeadroomWarning:       0.70,
		PageSize:              1,
		Concurrency:           64,
	}
	wantDisks := &gcepd.Disks{
		Safety: config.Safety{MinAge: config.Duration(7 * 24 * time.Hour), Grace: config.Duration(36 * time.Hour),
			Caps: config.Caps{MaxDeletesPerRun: 0, MaxDeletePercent: 0.025, MaxDeleteSizePerRun: 1 << 30, BreakerCandidates: 1}},
		MinDetached:          0,
		ProtectLabel:         "keep_me",
		Ownership:            gcepd.Ownership{LabelKeys: []string{}, DescriptionContains: []string{"created-for/pv"}},
		SnapshotBeforeDelete: true,
		SnapshotLabel:        "snapshot-of",
		SnapshotTimeout:      config.Duration(10 * time.Minute),
	}
	wantPVCs := &k8spvc.Section{Delete: true, Safety: config.Safety{Grace: config.Duration(2 * time.Hour),
		Caps: config.Caps{MaxDeletesPerRun: 3, MaxDeletePercent: 0.50, MaxDeleteSizePerRun: config.Size(500 << 30), BreakerCandidates: 7}}}
	config.SetSection(want, gcepd.GCEKey, wantGCE)
	config.SetSection(want, gcepd.DisksKey, wantDisks)
	config.SetSection(want, k8spvc.Key, wantPVCs)
	samePrinted(t, "full.yaml", got, want)
	if !reflect.DeepEqual(gcepd.GCEOf(got), wantGCE) || !reflect.DeepEqual(gcepd.DisksOf(got), wantDisks) {
		t.Errorf("full.yaml gce, disks:\ngot  %+v\n     %+v\nwant %+v\n     %+v", gcepd.GCEOf(got), gcepd.DisksOf(got), wantGCE, wantDisks)
	}
	if !reflect.DeepEqual(k8spvc.SectionOf(got), wantPVCs) {
		t.Errorf("full.yaml k8sPvcs:\ngot  %+v\nwant %+v", k8spvc.SectionOf(got), wantPVCs)
	}
}

func TestOtherForms(t *testing.T) {
	fakeHome(t)
	home := "/home/reclaim"
	c := load(t, "testdata/good/sizes-and-percents.yaml")
	g, d := gcepd.GCEOf(c), gcepd.DisksOf(c)
	checks := []struct {
		name      string
		got, want any
	}{
		{"timeout 0.5h", c.Clusters[0].Timeout.Std(), 30 * time.Minute},
		{"headroomWarning \"100%\"", g.HeadroomWarning.Fraction(), 1.0},
		{"minAge 36h", d.MinAge.Std(), 36 * time.Hour},
		{"grace 30m", d.Grace.Std(), 30 * time.Minute},
		{"minDetached 2d", d.MinDetached.Std(), 48 * time.Hour},
		{"maxDeletePercent 0", d.MaxDeletePercent.Fraction(), 0.0},
		{"maxDeleteSizePerRun 500G", d.MaxDeleteSizePerRun, config.Size(500e9)},
		{"state.file ~/", c.State.File, home + "/reclaim/state.json"},
		{"audit.file relative", c.Audit.File, "audit/reclaim.jsonl"},
	}
	c = load(t, "testdata/good/neither-kubeconfig.yaml")
	d = gcepd.DisksOf(c)
	checks = append(checks, []struct {
		name      string
		got, want any
	}{
		{"timeout: (null) is the default", c.Clusters[0].Timeout.Std(), 2 * time.Minute},
		{"gceProjects: (null) is empty", len(c.Clusters[1].GCEProjects), 0},
		{"maxDeleteSizePerRun 10Ti", d.MaxDeleteSizePerRun, config.Size(10 << 40)},
		{"10Ti in GiB", d.MaxDeleteSizePerRun.GiB(), 10240.0},
		{"maxDeletePercent 100", d.MaxDeletePercent.Fraction(), 1.0},
		{"no gce section", gcepd.GCEOf(c) == nil, true},
	}...)
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

// A cluster's awsSubnets feed the ec2, jobs and pods sections' kinds.
func TestClusterProblems(t *testing.T) {
	configtest.Run(t, []configtest.Case{
		{"clusters awsSubnets alone", "clusters:\n  - {name: a, awsSubnets: [subnet-12345678]}\n", "clusters[0].awsSubnets", "only meaningful with an ec2Interfaces section"},
	}, nil)
}
