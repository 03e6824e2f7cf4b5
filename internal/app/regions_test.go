package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/batch/batchfake"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/ecr/ecrfake"
	"reclaim.dev/reclaim/providers/ecs/ecsfake"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/eks/stsfake"
	"reclaim.dev/reclaim/providers/fakeapi"
	"reclaim.dev/reclaim/providers/lambda/lambdafake"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// regionWorld is one account with a registry in us-east-1 and EKS, ECS,
// Lambda and Batch in us-east-1 and us-west-2, each service's fakes on one
// endpoint (AWS_ENDPOINT_URL_<SERVICE>) routed by the request's region.
type regionWorld struct {
	ec2     *ec2fake.Server
	sts     *stsfake.Server
	ecr     *ecrfake.Server
	eks     map[string]*eksfake.Server
	ecs     map[string]*ecsfake.Server
	digests []string
}

const (
	regionAccount = "123456789012"
	regionRepo    = "team/app"
)

func newRegionWorld(t *testing.T, now time.Time) *regionWorld {
	noAWSProfiles(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	w := &regionWorld{eks: map[string]*eksfake.Server{}, ecs: map[string]*ecsfake.Server{}}
	// Discovery asks who it is: the keys are the account's.
	w.sts = stsfake.New(stsfake.Identity{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		ARN: "arn:aws:iam::" + regionAccount + ":user/reclaim", Account: regionAccount, UserID: "AIDAEXAMPLE"})
	w.sts.Start()
	t.Cleanup(w.sts.Close)
	t.Setenv("AWS_ENDPOINT_URL_STS", w.sts.URL())
	w.ec2 = ec2fake.New(ec2fake.Options{Region: "us-east-1", Account: regionAccount})
	w.ec2.SetRegions(ec2fake.Region{Name: "us-east-1"}, ec2fake.Region{Name: "us-west-2"}, ec2fake.Region{Name: "eu-south-1", OptInStatus: ec2fake.NotOptedIn})
	routers := map[string]map[string]http.Handler{"EC2": {"us-east-1": w.ec2}, "EKS": {}, "ECS": {}, "LAMBDA": {}, "BATCH": {}}
	for _, r := range []string{"us-east-1", "us-west-2"} {
		w.eks[r] = eksfake.New(eksfake.Options{Account: regionAccount, Region: r})
		w.ecs[r] = ecsfake.New(ecsfake.Options{Account: regionAccount, Region: r})
		routers["EKS"][r], routers["ECS"][r] = w.eks[r], w.ecs[r]
		routers["LAMBDA"][r] = lambdafake.New(lambdafake.Options{Account: regionAccount, Region: r})
		routers["BATCH"][r] = batchfake.New(batchfake.Options{Account: regionAccount, Region: r})
	}
	for svc, by := range routers {
		rt := fakeapi.NewRegions(by)
		t.Cleanup(rt.Close)
		t.Setenv("AWS_ENDPOINT_URL_"+svc, rt.URL())
	}
	w.ecr = ecrfake.NewServer(ecrfake.Options{Region: "us-east-1", Now: func() time.Time { return now }})
	t.Cleanup(w.ecr.Close)
	w.ecr.AddRepository(regionAccount, regionRepo, now.Add(-1000*time.Hour), nil)
	for i := range 12 {
		img := ecrfake.NewManifest(fmt.Sprint("img", i), now.Add(-time.Duration(200-i)*time.Hour), fmt.Sprint("build-", i))
		w.ecr.AddImage(regionAccount, regionRepo, img)
		w.digests = append(w.digests, img.Digest)
	}
	return w
}

func (w *regionWorld) config(t *testing.T, fleet string) string {
	return fmt.Sprintf(`ecr:
  endpoint: %s
  registries:
    - account: "%s"
      region: us-east-1
  repositories:
    - match: "**"
      limit: 10
      highWater: 90%%
      target: 50%%
      keepNewest: 1
      keepTags: []
      keepPulledWithin: 0s
  maxDeletePercent: 100%%
fleet:
  timeout: 5s
%sstate:
  file: %s/state.json
`, w.ecr.URL(), regionAccount, fleet, t.TempDir())
}

// run applies twice, grace apart, and returns the second report.
func (w *regionWorld) run(t *testing.T, yaml string, now time.Time) *report.Report {
	t.Helper()
	cfg := parse(t, yaml)
	store := state.NewMemoryStore(engine.NewState())
	var rep *report.Report
	for _, at := range []time.Time{now.Add(-3 * time.Hour), now} {
		var err error
		rep, err = Run(context.Background(), cfg, Deps{Store: store, Audit: audit.New(io.Discard), Now: func() time.Time { return at }}, Options{Apply: true})
		if err != nil {
			t.Fatal(err)
		}
	}
	return rep
}

func reportText(rep *report.Report) string {
	var b strings.Builder
	_ = rep.Text(&b, report.TextOptions{MaxKept: -1})
	return b.String()
}

// The usual layout: one registry region, and a cluster and an ECS service
// of the same account in another region running one of its images. With
// the default discovery and consumers, reclaim lists the account's
// regions, searches EKS and reads ECS, Lambda and Batch in us-west-2 too:
// the image the service runs is kept, and while the cluster there cannot
// be read nothing it could pull is deleted; once it is gone, the account
// loses exactly its orphans. One DescribeRegions per account and run.
func TestRegistryPulledFromAnotherRegion(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	w := newRegionWorld(t, now)
	w.ecs["us-west-2"].AddTask(ecsfake.Task{Cluster: "web", ID: "feed0001", Containers: []ecsfake.Container{{Name: "app",
		Image: regionAccount + ".dkr.ecr.us-east-1.amazonaws.com/" + regionRepo + ":build-0", ImageDigest: w.digests[0]}}})
	w.eks["us-west-2"].Add(eksfake.Cluster{Name: "web-usw2", Endpoint: "https://127.0.0.1:1", VPC: "vpc-0example"})

	rep := w.run(t, w.config(t, ""), now)
	out := reportText(rep)
	if n := w.ecr.MutatingCalls(); n != 0 {
		t.Fatalf("deleted with a cluster of us-west-2 unread: %d mutating calls\n%s", n, out)
	}
	if !strings.Contains(out, "web-usw2") {
		t.Errorf("the report does not name the cluster of us-west-2:\n%s", out)
	}
	if n := w.ec2.Calls(ec2fake.ActionDescribeRegions); n != 2 {
		t.Errorf("DescribeRegions: %d calls in 2 runs, want 2", n)
	}
	if w.eks["us-west-2"].TotalCalls() == 0 || w.ecs["us-west-2"].TotalCalls() == 0 {
		t.Errorf("us-west-2 not read: eks %v, ecs %v", w.eks["us-west-2"].CallCounts(), w.ecs["us-west-2"].CallCounts())
	}

	// The cluster is gone: every region is read, and exactly the orphans
	// go — the 7 oldest but the one the service runs.
	w2 := newRegionWorld(t, now)
	w2.ecs["us-west-2"].AddTask(ecsfake.Task{Cluster: "web", ID: "feed0001", Containers: []ecsfake.Container{{Name: "app",
		Image: regionAccount + ".dkr.ecr.us-east-1.amazonaws.com/" + regionRepo + ":build-0", ImageDigest: w2.digests[0]}}})
	rep = w2.run(t, w2.config(t, ""), now)
	out = reportText(rep)
	if !w2.ecr.Has(regionAccount, regionRepo, w2.digests[0]) {
		t.Fatalf("the image an ECS service of us-west-2 runs was deleted\n%s", out)
	}
	for i, d := range w2.digests {
		if gone := !w2.ecr.Has(regionAccount, regionRepo, d); gone != (i >= 1 && i <= 7) {
			t.Errorf("image %d: deleted %v\n%s", i, gone, out)
		}
	}
}

// A failed region listing leaves where the account's clusters and services
// run unknown: nothing they could pull is deleted, and the report says why.
func TestRegionsThatCannotBeListedHold(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	w := newRegionWorld(t, now)
	w.ec2.FailNext(ec2fake.ActionDescribeRegions, ec2fake.CodeUnauthorizedOperation, 0)
	rep := w.run(t, w.config(t, ""), now)
	out := reportText(rep)
	if n := w.ecr.MutatingCalls(); n != 0 {
		t.Fatalf("deleted with the account's regions unknown: %d mutating calls\n%s", n, out)
	}
	if !strings.Contains(out, "ec2:DescribeRegions") {
		t.Errorf("the report does not say what to grant:\n%s", out)
	}
}

// fleet.regions narrows the regions an account is searched in and treated
// as running in: us-west-2 left out is neither read nor guarded.
func TestFleetRegionsNarrows(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	w := newRegionWorld(t, now)
	rep := w.run(t, w.config(t, "  regions: [us-east-1]\n"), now)
	if !strings.Contains(reportText(rep), "regions us-west-2 of account "+regionAccount+" are enabled but left out by fleet.regions") {
		t.Errorf("the report does not repeat what fleet.regions leaves out:\n%s", reportText(rep))
	}
	if w.eks["us-west-2"].TotalCalls() != 0 || w.ecs["us-west-2"].TotalCalls() != 0 {
		t.Errorf("us-west-2 read though fleet.regions leaves it out: eks %v, ecs %v", w.eks["us-west-2"].CallCounts(), w.ecs["us-west-2"].CallCounts())
	}
	for i, d := range w.digests {
		if gone := !w.ecr.Has(regionAccount, regionRepo, d); gone != (i <= 6) {
			t.Errorf("image %d: deleted %v\n%s", i, gone, reportText(rep))
		}
	}
}

// Keys of another account list that account's clusters and services (here
// none) as the registry's: discovery asks STS who it is first, holds
// every trim the account's clusters could pull, and says what to fix. Once
// per identity and run.
func TestDiscoveryAsAnotherAccountHoldsTheTrims(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	w := newRegionWorld(t, now)
	w.sts.Add(stsfake.Identity{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		ARN: "arn:aws:iam::444455556666:user/reclaim", Account: "444455556666", UserID: "AIDAOTHER"})
	rep := w.run(t, w.config(t, ""), now)
	out := reportText(rep)
	if n := w.ecr.MutatingCalls(); n != 0 {
		t.Fatalf("deleted with discovery run as another account: %d mutating calls\n%s", n, out)
	}
	for _, want := range []string{"discovery for account " + regionAccount + " ran as arn:aws:iam::444455556666:user/reclaim of account 444455556666",
		"set roleARN there to a role of account " + regionAccount} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %q:\n%s", want, out)
		}
	}
	for r, f := range w.eks {
		if n := f.Calls(eksfake.OpListClusters); n != 0 {
			t.Errorf("EKS %s listed %d times as another account", r, n)
		}
	}
	if n := w.sts.Calls(stsfake.OpGetCallerIdentity); n != 2 {
		t.Errorf("GetCallerIdentity: %d calls in 2 runs, want 2 (one identity)", n)
	}
}
