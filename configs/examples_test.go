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
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
	"reclaim.dev/reclaim/reconcile/kinds/netiface"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.err from the current output")

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
	ec2, jobs, pods, ecr := netiface.SectionOf(eks), k8sjob.SectionOf(eks), k8spod.SectionOf(eks), ecrimage.SectionOf(eks)
	prodSubnets := []string{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1", "subnet-0123456789abcdef2"}
	switch {
	case len(eks.Clusters) != 4 || ecr == nil || len(ecr.Registries) != 2:
		t.Errorf("eks.yaml should have four clusters and two registries, got %+v", eks)
	case ec2 == nil || len(ec2.Networks) != 1:
		t.Errorf("eks.yaml should have an ec2 section with one network, got %+v", ec2)
	case !reflect.DeepEqual(ec2.Networks[0], netiface.Network{Account: "123456789012", Region: "us-east-1", Subnets: prodSubnets}):
		t.Errorf("eks.yaml network = %+v", ec2.Networks[0])
	case !reflect.DeepEqual(eks.Clusters[0].AWSSubnets, prodSubnets):
		t.Errorf("eks.yaml prod-use1 awsSubnets = %v, want the subnets of ec2.networks[0]", eks.Clusters[0].AWSSubnets)
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
	refECR.Registries = minECR.Registries
	if len(refECR.Consumers) == 0 {
		refECR.Consumers = nil // the reference writes consumers: []
	}
	if !reflect.DeepEqual(&refECR, minECR) {
		t.Errorf("reference.yaml's ecr section does not show the defaults:\nreference: %+v\ndefaults:  %+v", refECR, *minECR)
	}
	if ref.Daemon == nil || !reflect.DeepEqual(*ref.Daemon, config.DefaultDaemon()) {
		t.Errorf("reference.yaml's daemon section does not show the defaults:\nreference: %+v\ndefaults:  %+v", ref.Daemon, config.DefaultDaemon())
	}
	// The ec2 section is compared with a minimal one that only names a network.
	minEC2, refEC2 := netiface.SectionOf(load(t, "testdata/good/ec2-minimal.yaml")), netiface.SectionOf(ref)
	if refEC2 == nil || minEC2 == nil {
		t.Fatalf("ec2 sections: reference %v, minimal %v; want both present", refEC2, minEC2)
	}
	e := *refEC2
	e.Networks = minEC2.Networks
	if !reflect.DeepEqual(&e, minEC2) {
		t.Errorf("reference.yaml's ec2 section does not show the defaults:\nreference: %+v\ndefaults:  %+v", e, *minEC2)
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
	ref.GCE = nil
	config.SetSection[ecrimage.Section](ref, ecrimage.Key, nil)
	config.SetSection[netiface.Section](ref, netiface.Key, nil)
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
