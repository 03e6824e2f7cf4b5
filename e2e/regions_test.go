package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/providers/batch/batchfake"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/ecs/ecsfake"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/fakeapi"
	"reclaim.dev/reclaim/providers/lambda/lambdafake"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

// The usual layout, with the binary in a pod: a registry in us-east-1,
// and an EKS cluster and an ECS task of the same account in us-west-2
// running one of its images. With the default discovery and consumers,
// reclaim lists the account's regions and reads us-west-2 too: while the
// cluster there cannot be read, nothing is trimmed and the report names
// it; once it is gone, --apply trims around the image the task runs.
// Every service is one endpoint (AWS_ENDPOINT_URL_<SERVICE>) serving each
// region's fake by the request's SigV4 scope.
func TestBinaryGuardsEveryRegionOfTheRegistryAccount(t *testing.T) {
	w := newImageWorld(t, 200)
	w.seen(w.now.Add(-2 * time.Hour))
	const west = "us-west-2"
	ec2 := ec2fake.New(ec2fake.Options{Account: account, Region: ecrRegion})
	ec2.SetRegions(ec2fake.Region{Name: ecrRegion}, ec2fake.Region{Name: west})
	eksWest := eksfake.New(eksfake.Options{Account: account, Region: west})
	eksWest.Add(eksfake.Cluster{Name: "web-usw2", Endpoint: "https://127.0.0.1:1", CAData: newCA(t), VPC: "vpc-0web"})
	ecsWest := ecsfake.New(ecsfake.Options{Account: account, Region: west})
	ecsWest.AddTask(ecsfake.Task{Cluster: "web", ID: "feed0001", Containers: []ecsfake.Container{{Name: "app", Image: w.ref(":build-0"), ImageDigest: w.digest[0]}}})
	routers := map[string]*fakeapi.Regions{
		"EC2": fakeapi.NewRegions(map[string]http.Handler{ecrRegion: ec2}),
		"EKS": fakeapi.NewRegions(map[string]http.Handler{ecrRegion: eksfake.New(eksfake.Options{Account: account, Region: ecrRegion}), west: eksWest}),
		"ECS": fakeapi.NewRegions(map[string]http.Handler{ecrRegion: ecsfake.New(ecsfake.Options{Account: account, Region: ecrRegion}), west: ecsWest}),
		"LAMBDA": fakeapi.NewRegions(map[string]http.Handler{ecrRegion: lambdafake.New(lambdafake.Options{Account: account, Region: ecrRegion}),
			west: lambdafake.New(lambdafake.Options{Account: account, Region: west})}),
		"BATCH": fakeapi.NewRegions(map[string]http.Handler{ecrRegion: batchfake.New(batchfake.Options{Account: account, Region: ecrRegion}),
			west: batchfake.New(batchfake.Options{Account: account, Region: west})}),
	}
	// Discovery confirms its identity at TestMain's STS.
	env := []string{"AWS_ENDPOINT_URL_STS=" + os.Getenv("AWS_ENDPOINT_URL_STS")}
	for svc, r := range routers {
		t.Cleanup(r.Close)
		env = append(env, "AWS_ENDPOINT_URL_"+svc+"="+r.URL())
	}
	w.fleetYAML = "  discover: true\n  timeout: 10s\n"
	w.consumersYAML = "-"
	run := func(apply bool) ecrimage.RepoSummary {
		t.Helper()
		args := []string{"run", "--config", w.configPath(), "-o", "json"}
		if apply {
			args = append(args, "--apply")
		}
		out, _ := reclaimCmd(context.Background(), t, testenv.CronJob, env, args...).Output()
		var rep struct {
			Plan struct {
				Repositories []ecrimage.RepoSummary `json:"repositories"`
			} `json:"plan"`
		}
		if err := json.Unmarshal(out, &rep); err != nil || len(rep.Plan.Repositories) != 1 {
			t.Fatalf("json: %v\n%s", err, out)
		}
		return rep.Plan.Repositories[0]
	}

	s := run(true)
	if s.Delete != 0 || w.ecr.MutatingCalls() != 0 || !strings.Contains(s.Blocked, "web-usw2") {
		t.Fatalf("with a cluster of %s unread: mutating %d, summary %+v", west, w.ecr.MutatingCalls(), s)
	}
	if n := ec2.Calls(ec2fake.ActionDescribeRegions); n != 1 {
		t.Errorf("DescribeRegions: %d calls in one run, want 1", n)
	}
	if ecsWest.TotalCalls() == 0 || eksWest.TotalCalls() == 0 {
		t.Errorf("%s not read: ecs %v, eks %v", west, ecsWest.CallCounts(), eksWest.CallCounts())
	}

	// The cluster is gone: the trim goes around the image the task runs.
	routers["EKS"].Set(west, eksfake.New(eksfake.Options{Account: account, Region: west}))
	w.seen(w.now.Add(-2 * time.Hour))
	s = run(true)
	if s.Delete != 100 || s.Kept[ecrimage.ClassInUse] != 1 || !w.ecr.Has(account, w.repo, w.digest[0]) {
		t.Fatalf("every region read: summary %+v, image 0 there %v", s, w.ecr.Has(account, w.repo, w.digest[0]))
	}
}
