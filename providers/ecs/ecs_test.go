package ecs_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ecs"
	"reclaim.dev/reclaim/providers/ecs/ecsfake"
)

const (
	account = "123456789012"
	region  = "us-east-1"
	repo    = "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
	dig     = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
)

func setup(t *testing.T) (*ecsfake.Server, *ecs.Client) {
	t.Helper()
	f := ecsfake.New(ecsfake.Options{Account: account, Region: region})
	f.Start()
	t.Cleanup(f.Close)
	c, err := ecs.New(context.Background(), ecs.Options{Service: awsclient.Service{Account: account, Region: region, Endpoint: f.URL(),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDECSTEST", "ecs-test-secret", ""), MaxAttempts: 4,
		MaxBackoff: 5 * time.Millisecond, RequestsPerSecond: 1000, Burst: 1000,
		HTTPClient: awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.DisableKeepAlives = true })}})
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

func TestImagesOfTaskDefinitionsAndRunningTasks(t *testing.T) {
	f, c := setup(t)
	for i := range 150 { // two pages of task definitions
		f.AddTaskDefinition(ecsfake.TaskDefinition{Family: fmt.Sprintf("svc-%03d", i), Revision: 1,
			Containers: []ecsfake.Container{{Name: "app", Image: repo + fmt.Sprintf("svc:%d", i)}, {Name: "proxy", Image: "public.ecr.aws/nginx/nginx:1"}}})
	}
	f.AddTaskDefinition(ecsfake.TaskDefinition{Family: "old", Revision: 3, Status: "INACTIVE",
		Containers: []ecsfake.Container{{Name: "app", Image: repo + "old:v1"}}})
	for i := range 120 { // two pages of clusters
		f.AddCluster(fmt.Sprintf("c-%03d", i))
	}
	for i := range 130 { // two pages of tasks, two DescribeTasks batches
		f.AddTask(ecsfake.Task{Cluster: "batch", ID: fmt.Sprintf("t%03d", i), Containers: []ecsfake.Container{{Name: "job", Image: repo + "job:latest", ImageDigest: dig}}})
	}
	f.AddTask(ecsfake.Task{Cluster: "batch", ID: "stopped", DesiredStatus: "STOPPED", Containers: []ecsfake.Container{{Name: "x", Image: repo + "stopped:v1"}}})
	f.AddTask(ecsfake.Task{Cluster: "web", ID: "pinned", Containers: []ecsfake.Container{{Name: "api", Image: repo + "api@" + dig}}})

	s := c.Images(context.Background())
	if !s.Complete || s.Kind != "ecs" || s.Name != "ecs:"+account+"/"+region {
		t.Fatalf("source %+v", s)
	}
	u := uses(s)
	if w := u["svc:7"]; w != "ecs:123456789012/us-east-1 task-definition svc-007:1 container app" {
		t.Errorf("svc:7 at %q", w)
	}
	if _, ok := u["svc:149"]; !ok {
		t.Error("the second page of task definitions was not read")
	}
	if w := u["job:latest"]; !strings.Contains(w, "cluster batch task t") {
		t.Errorf("job:latest at %q", w)
	}
	if _, ok := u["job@"+dig]; !ok {
		t.Errorf("the running task's resolved digest is not a use: %v", u)
	}
	if _, ok := u["api@"+dig]; !ok {
		t.Error("a task pinned by digest is not a use")
	}
	for _, no := range []string{"old:v1", "stopped:v1", "nginx/nginx:1"} {
		if _, ok := u[no]; ok {
			t.Errorf("%s is a use", no)
		}
	}
	if len(u) != 150+3 {
		t.Errorf("%d uses, want 153", len(u))
	}
	for op, want := range map[string]int{ecs.OpListTaskDefinitions: 2, ecs.OpDescribeTaskDefinition: 150, ecs.OpListClusters: 2,
		ecs.OpListTasks: 2 + 121, ecs.OpDescribeTasks: 3, ecs.OpListServices: 122, ecs.OpDescribeServices: 0} {
		// The client's calls exactly; the fake may see a retry more (a
		// connection reset on a loaded machine).
		if got := c.Calls(op); got != want {
			t.Errorf("%s: the client made %d calls, want %d", op, got, want)
		}
		if got := f.Calls(op); got < want {
			t.Errorf("%s: %d calls, want %d", op, got, want)
		}
	}
}

// A service can run a revision deregistered since (INACTIVE: not in the
// ACTIVE listing), mid deployment or scaled to zero; ECS starts it again
// when it scales up, so its images are in use.
func TestImagesOfServicesINACTIVERevisions(t *testing.T) {
	f, c := setup(t)
	def := func(family string, revision int, status string) string {
		return f.AddTaskDefinition(ecsfake.TaskDefinition{Family: family, Revision: revision, Status: status,
			Containers: []ecsfake.Container{{Name: "app", Image: repo + fmt.Sprintf("%s:v%d", family, revision)}}})
	}
	api1, api2 := def("api", 1, "INACTIVE"), def("api", 2, "")
	worker := def("worker", 5, "INACTIVE")
	bg1, bg2 := def("bg", 1, "INACTIVE"), def("bg", 2, "INACTIVE")
	doomed := def("doomed", 1, "DELETE_IN_PROGRESS")
	gone := def("gone", 1, "INACTIVE")
	def("old", 1, "INACTIVE") // named by no service
	f.DeregisterOnDescribe(gone)
	f.AddService(
		// Mid deployment: the draining deployment runs the INACTIVE revision.
		ecsfake.Service{Cluster: "web", Name: "api", TaskDefinition: api2, Deployments: []string{api2, api1}, DesiredCount: 3},
		// Scaled to zero on a deregistered revision.
		ecsfake.Service{Cluster: "web", Name: "worker", TaskDefinition: worker, Deployments: []string{worker}},
		// CODE_DEPLOY: task sets, no deployments.
		ecsfake.Service{Cluster: "batch", Name: "bg", TaskDefinition: bg1, TaskSets: []string{bg2}, DesiredCount: 1},
		ecsfake.Service{Cluster: "batch", Name: "doomed", TaskDefinition: doomed, Deployments: []string{doomed}, DesiredCount: 1},
		ecsfake.Service{Cluster: "batch", Name: "gone", TaskDefinition: gone, Deployments: []string{gone}, DesiredCount: 1},
	)

	s := c.Images(context.Background())
	if !s.Complete {
		t.Fatalf("source %+v", s)
	}
	u := uses(s)
	for ref, why := range map[string]string{"api:v1": "a draining deployment's INACTIVE revision", "worker:v5": "the revision of a service scaled to zero",
		"bg:v1": "a service's own INACTIVE revision", "bg:v2": "a task set's INACTIVE revision", "doomed:v1": "a DELETE_IN_PROGRESS revision a service runs"} {
		if _, ok := u[ref]; !ok {
			t.Errorf("%s (%s) is not a use: %v", ref, why, u)
		}
	}
	if w := u["api:v1"]; w != "ecs:123456789012/us-east-1 task-definition api:1 container app" {
		t.Errorf("api:v1 at %q", w)
	}
	for _, no := range []string{"old:v1", "gone:v1"} {
		if _, ok := u[no]; ok {
			t.Errorf("%s is a use", no)
		}
	}
	if len(u) != 6 {
		t.Errorf("%d uses, want 6: %v", len(u), u)
	}
	// api:2 is listed ACTIVE and described once, not again for its service.
	if got := c.Calls(ecs.OpDescribeTaskDefinition); got != 1+6 {
		t.Errorf("DescribeTaskDefinition: %d calls, want 7", got)
	}
}

// ListServices is paged (100 at most), DescribeServices batched (10 at
// most), and a task definition many services share is described once.
func TestServicesArePagedAndBatched(t *testing.T) {
	f, c := setup(t)
	web := f.AddTaskDefinition(ecsfake.TaskDefinition{Family: "web", Revision: 1, Containers: []ecsfake.Container{{Name: "app", Image: repo + "web:1"}}})
	mid := f.AddTaskDefinition(ecsfake.TaskDefinition{Family: "mid", Revision: 1, Status: "INACTIVE", Containers: []ecsfake.Container{{Name: "app", Image: repo + "mid:1"}}})
	for i := range 105 { // two pages, eleven batches
		td := f.AddTaskDefinition(ecsfake.TaskDefinition{Family: fmt.Sprintf("big-%03d", i), Revision: 1, Status: "INACTIVE",
			Containers: []ecsfake.Container{{Name: "app", Image: repo + fmt.Sprintf("big:%d", i)}}})
		f.AddService(ecsfake.Service{Cluster: "big", Name: fmt.Sprintf("s%03d", i), TaskDefinition: td, Deployments: []string{td}, DesiredCount: 1})
	}
	for i := range 11 { // one page, two batches
		td := mid
		if i < 5 {
			td = web
		}
		f.AddService(ecsfake.Service{Cluster: "mid", Name: fmt.Sprintf("s%02d", i), TaskDefinition: td, Deployments: []string{td}, DesiredCount: 1})
	}
	f.AddCluster("empty")

	s := c.Images(context.Background())
	if !s.Complete {
		t.Fatalf("source %+v", s)
	}
	u := uses(s)
	for _, ref := range []string{"big:0", "big:99", "big:100", "big:104", "mid:1", "web:1"} {
		if _, ok := u[ref]; !ok {
			t.Errorf("%s is not a use", ref)
		}
	}
	if len(u) != 105+2 {
		t.Errorf("%d uses, want 107", len(u))
	}
	for op, want := range map[string]int{ecs.OpListClusters: 1, ecs.OpListServices: 2 + 1 + 1, ecs.OpDescribeServices: 11 + 2,
		ecs.OpDescribeTaskDefinition: 1 + 105 + 1} {
		if got := f.Calls(op); got < want {
			t.Errorf("%s: %d calls, want %d", op, got, want)
		}
		if got := c.Calls(op); got != want {
			t.Errorf("%s: the client counted %d calls, want %d", op, got, want)
		}
	}
}

func TestThrottlingIsRetried(t *testing.T) {
	f, c := setup(t)
	f.AddTaskDefinition(ecsfake.TaskDefinition{Family: "svc", Revision: 1, Containers: []ecsfake.Container{{Name: "app", Image: repo + "svc:1"}}})
	f.ThrottleNext(1)
	if s := c.Images(context.Background()); !s.Complete || len(s.Images) != 1 {
		t.Fatalf("%+v", s)
	}
}

func TestFailuresMakeTheSourceIncomplete(t *testing.T) {
	t.Run("access denied", func(t *testing.T) {
		f, c := setup(t)
		f.Deny(true)
		s := c.Images(context.Background())
		if s.Complete || len(s.Problems) == 0 || !strings.Contains(s.Problems[0], "ecs:ListTaskDefinitions, ecs:DescribeTaskDefinition") ||
			!strings.Contains(s.Problems[0], "ecs:ListServices and ecs:DescribeServices") ||
			strings.Contains(strings.Join(s.Problems, " "), "ecs-test-secret") {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("server error past the retries", func(t *testing.T) {
		f, c := setup(t)
		f.AddTask(ecsfake.Task{Cluster: "batch", ID: "t1", Containers: []ecsfake.Container{{Name: "job", Image: repo + "job:1"}}})
		f.FailNext(ecsfake.OpDescribeTasks, 10)
		if s := c.Images(context.Background()); s.Complete || !strings.Contains(strings.Join(s.Problems, " "), "DescribeTasks") {
			t.Fatalf("%+v", s)
		}
	})
	service := func(f *ecsfake.Server) {
		td := f.AddTaskDefinition(ecsfake.TaskDefinition{Family: "api", Revision: 1, Status: "INACTIVE", Containers: []ecsfake.Container{{Name: "app", Image: repo + "api:1"}}})
		f.AddService(ecsfake.Service{Cluster: "web", Name: "api", TaskDefinition: td, Deployments: []string{td}, DesiredCount: 1})
	}
	for _, op := range []string{ecsfake.OpListServices, ecsfake.OpDescribeServices, ecsfake.OpDescribeTaskDefinition} {
		t.Run(op+" failing past the retries for a service", func(t *testing.T) {
			f, c := setup(t)
			service(f)
			f.FailNext(op, 10)
			if s := c.Images(context.Background()); s.Complete || !strings.Contains(strings.Join(s.Problems, " "), "ecs "+op+" in ") {
				t.Fatalf("%+v", s)
			}
		})
	}
	t.Run("a service DescribeServices refuses (not MISSING)", func(t *testing.T) {
		f, c := setup(t)
		service(f)
		f.RefuseDescribeService("web", "api", "ACCESS_DENIED")
		if s := c.Images(context.Background()); s.Complete || !strings.Contains(strings.Join(s.Problems, " "), "ecs DescribeServices in ") ||
			!strings.Contains(strings.Join(s.Problems, " "), "ACCESS_DENIED") {
			t.Fatalf("a service whose images reclaim could not see reads as complete: %+v", s)
		}
	})
	t.Run("a service deleted since the list (MISSING) is skipped", func(t *testing.T) {
		f, c := setup(t)
		service(f)
		f.AddService(ecsfake.Service{Cluster: "web", Name: "gone"})
		f.RefuseDescribeService("web", "gone", "MISSING")
		if s := c.Images(context.Background()); !s.Complete || len(s.Images) != 1 {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("a task DescribeTasks refuses (not MISSING)", func(t *testing.T) {
		f, c := setup(t)
		f.AddTask(ecsfake.Task{Cluster: "batch", ID: "t1", Containers: []ecsfake.Container{{Name: "job", Image: repo + "job:1"}}},
			ecsfake.Task{Cluster: "batch", ID: "t2", Containers: []ecsfake.Container{{Name: "job", Image: repo + "job:2"}}})
		f.RefuseDescribe("batch", "t2", "ACCESS_DENIED")
		if s := c.Images(context.Background()); s.Complete || !strings.Contains(strings.Join(s.Problems, " "), "ACCESS_DENIED") {
			t.Fatalf("a task whose images reclaim could not see reads as complete: %+v", s)
		}
	})
	t.Run("a task stopped and gone since the list (MISSING) is skipped", func(t *testing.T) {
		f, c := setup(t)
		f.AddTask(ecsfake.Task{Cluster: "batch", ID: "t1", Containers: []ecsfake.Container{{Name: "job", Image: repo + "job:1"}}})
		f.RefuseDescribe("batch", "t1", "MISSING")
		if s := c.Images(context.Background()); !s.Complete {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("a task definition deregistered meanwhile is skipped", func(t *testing.T) {
		f, c := setup(t)
		arn := f.AddTaskDefinition(ecsfake.TaskDefinition{Family: "gone", Revision: 1, Containers: []ecsfake.Container{{Name: "app", Image: repo + "gone:1"}}})
		f.AddTaskDefinition(ecsfake.TaskDefinition{Family: "svc", Revision: 1, Containers: []ecsfake.Container{{Name: "app", Image: repo + "svc:1"}}})
		f.DeregisterOnDescribe(arn)
		if s := c.Images(context.Background()); !s.Complete || len(s.Images) != 1 {
			t.Fatalf("%+v", s)
		}
	})
}
