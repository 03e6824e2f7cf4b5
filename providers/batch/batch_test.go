package batch_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsbatch "github.com/aws/aws-sdk-go-v2/service/batch"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/batch"
	"reclaim.dev/reclaim/providers/batch/batchfake"
)

const (
	account = "123456789012"
	region  = "us-east-1"
	repo    = "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
	at      = "batch:123456789012/us-east-1 job-definition "
)

func options(f *batchfake.Server) batch.Options {
	return batch.Options{Service: awsclient.Service{Account: account, Region: region, Endpoint: f.URL(),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDBATCHTEST", "batch-test-secret", ""), MaxAttempts: 4,
		MaxBackoff: 5 * time.Millisecond, RequestsPerSecond: 1000, Burst: 1000,
		HTTPClient: awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.DisableKeepAlives = true })}}
}

func setup(t *testing.T) (*batchfake.Server, *batch.Client) {
	t.Helper()
	f := batchfake.New(batchfake.Options{Account: account, Region: region})
	f.Start()
	t.Cleanup(f.Close)
	c, err := batch.New(context.Background(), options(f))
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

// uses maps each reference (repo:tag or repo@digest) to where it was seen.
func uses(s inventory.ImageSource) map[string]string {
	out := map[string]string{}
	for _, u := range s.Images {
		k := u.Ref.Repo.Name
		if u.Ref.Tag != "" {
			k += ":" + u.Ref.Tag
		}
		if u.Ref.Digest != "" {
			k += "@" + u.Ref.Digest
		}
		out[k] = u.Where
	}
	return out
}

func TestImagesOfEveryPropertyKind(t *testing.T) {
	f, c := setup(t)
	dig := "sha256:" + strings.Repeat("1", 64)
	f.Add(
		batchfake.JobDefinition{Name: "single", Revision: 3, Image: repo + "single:v3"},
		batchfake.JobDefinition{Name: "mpi", Revision: 1, NodeImages: []string{repo + "mpi-main:1", repo + "mpi-worker:1"}},
		batchfake.JobDefinition{Name: "ecs", Revision: 2, ECSImages: []string{repo + "ecs-app:2", repo + "ecs-sidecar@" + dig}},
		batchfake.JobDefinition{Name: "eks", Revision: 5, EKSImages: []string{repo + "eks-app:5"}, EKSInitImages: []string{repo + "eks-init:5"}},
		batchfake.JobDefinition{Name: "mpi-ecs", Revision: 1, NodeECSImages: []string{repo + "node-ecs:1"}},
		batchfake.JobDefinition{Name: "mpi-eks", Revision: 1, NodeEKSImages: []string{repo + "node-eks:1"}},
		batchfake.JobDefinition{Name: "hub", Revision: 1, Image: "public.ecr.aws/docker/library/busybox:1"},
	)
	s := c.Images(context.Background())
	if !s.Complete || s.Kind != "batch" || s.Name != "batch:"+account+"/"+region || len(s.Problems) != 0 {
		t.Fatalf("source %+v", s)
	}
	u := uses(s)
	want := map[string]string{
		"single:v3":          at + "single:3",
		"mpi-main:1":         at + "mpi:1 nodes 0",
		"mpi-worker:1":       at + "mpi:1 nodes 1:",
		"ecs-app:2":          at + "ecs:2 task 0 container c0",
		"ecs-sidecar@" + dig: at + "ecs:2 task 0 container c1",
		"eks-app:5":          at + "eks:5 container c0",
		"eks-init:5":         at + "eks:5 init-container init0",
		"node-ecs:1":         at + "mpi-ecs:1 nodes 0: task 0 container c0",
		"node-eks:1":         at + "mpi-eks:1 nodes 0: container c0",
	}
	for ref, where := range want {
		if got, ok := u[ref]; !ok || got != where {
			t.Errorf("%s at %q (found %v), want %q", ref, got, ok, where)
		}
	}
	if len(u) != len(want) {
		t.Errorf("%d uses, want %d (not the other registry's): %v", len(u), len(want), u)
	}
}

func TestInactiveDefinitionsAreNotRead(t *testing.T) {
	f, c := setup(t)
	f.Add(batchfake.JobDefinition{Name: "job", Revision: 1, Status: "INACTIVE", Image: repo + "job:1"},
		batchfake.JobDefinition{Name: "job", Revision: 2, Image: repo + "job:2"})
	s := c.Images(context.Background())
	u := uses(s)
	if _, ok := u["job:1"]; ok || !s.Complete || len(u) != 1 {
		t.Fatalf("the deregistered revision's image is a use, or the active one is not: %+v", s)
	}
}

func TestPagination(t *testing.T) {
	f, c := setup(t)
	for i := range 230 { // three pages of 100
		f.Add(batchfake.JobDefinition{Name: fmt.Sprintf("job-%03d", i), Image: repo + fmt.Sprintf("job:%d", i)})
	}
	s := c.Images(context.Background())
	u := uses(s)
	if !s.Complete || len(u) != 230 {
		t.Fatalf("%d uses, want 230: %+v", len(u), s.Problems)
	}
	if w := u["job:229"]; w != at+"job-229:1" {
		t.Errorf("job:229 (the last page) at %q", w)
	}
	if n := f.Calls(batchfake.OpDescribeJobDefinitions); n != 3 {
		t.Errorf("the fake got %d calls, want 3 pages", n)
	}
	if n := c.Calls(batch.OpDescribeJobDefinitions); n != 3 {
		t.Errorf("the client counted %d calls, want 3", n)
	}
}

func TestThrottlingIsRetried(t *testing.T) {
	f, c := setup(t)
	f.Add(batchfake.JobDefinition{Name: "job", Image: repo + "job:1"})
	// More than the SDK's default 3 attempts allow: reclaim's retryer is in use.
	f.ThrottleNext(3)
	if s := c.Images(context.Background()); !s.Complete || len(s.Images) != 1 {
		t.Fatalf("%+v", s)
	}
	if n, m := f.Calls(batchfake.OpDescribeJobDefinitions), c.Calls(batch.OpDescribeJobDefinitions); n != 4 || m != 1 {
		t.Errorf("%d attempts and %d calls counted, want 4 and 1", n, m)
	}
}

// secondPage fails every attempt from the second page on.
type secondPage struct {
	batch.API
	f     *batchfake.Server
	calls atomic.Int32
}

func (p *secondPage) DescribeJobDefinitions(ctx context.Context, in *awsbatch.DescribeJobDefinitionsInput, optFns ...func(*awsbatch.Options)) (*awsbatch.DescribeJobDefinitionsOutput, error) {
	if p.calls.Add(1) == 2 {
		p.f.FailNext(batchfake.OpDescribeJobDefinitions, 10)
	}
	return p.API.DescribeJobDefinitions(ctx, in, optFns...)
}

func TestFailuresMakeTheSourceIncomplete(t *testing.T) {
	t.Run("access denied", func(t *testing.T) {
		f, c := setup(t)
		f.Add(batchfake.JobDefinition{Name: "job", Image: repo + "job:1"})
		f.Deny(true)
		s := c.Images(context.Background())
		if s.Complete || len(s.Problems) != 1 || !strings.Contains(s.Problems[0], "reclaim's identity needs batch:DescribeJobDefinitions in account "+account) ||
			strings.Contains(s.Problems[0], "batch-test-secret") {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("server error past the retries", func(t *testing.T) {
		f, c := setup(t)
		f.Add(batchfake.JobDefinition{Name: "job", Image: repo + "job:1"})
		f.FailNext(batchfake.OpDescribeJobDefinitions, 10)
		s := c.Images(context.Background())
		if s.Complete || len(s.Problems) != 1 || !strings.Contains(s.Problems[0], "DescribeJobDefinitions") || strings.Contains(s.Problems[0], "batch-test-secret") {
			t.Fatalf("%+v", s)
		}
		if n := f.Calls(batchfake.OpDescribeJobDefinitions); n != 4 {
			t.Errorf("%d attempts, want 4", n)
		}
	})
	t.Run("a failed second page", func(t *testing.T) {
		f, c := setup(t)
		for i := range 150 {
			f.Add(batchfake.JobDefinition{Name: fmt.Sprintf("job-%03d", i), Image: repo + fmt.Sprintf("job:%d", i)})
		}
		c = batch.NewWithAPI(&secondPage{API: c.API(), f: f}, options(f))
		if s := c.Images(context.Background()); s.Complete || !strings.Contains(strings.Join(s.Problems, " "), "ServerException") {
			t.Fatalf("a listing that stopped after one page reads as complete: %+v", s.Problems)
		}
	})
}
