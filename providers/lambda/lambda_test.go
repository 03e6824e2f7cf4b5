package lambda_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/lambda"
	"reclaim.dev/reclaim/providers/lambda/lambdafake"
)

const (
	account = "123456789012"
	region  = "us-east-1"
	repo    = "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
)

func digest(i int) string { return fmt.Sprintf("sha256:%064x", i) }

func setup(t *testing.T) (*lambdafake.Server, *lambda.Client) {
	t.Helper()
	f := lambdafake.New(lambdafake.Options{Account: account, Region: region})
	f.Start()
	t.Cleanup(f.Close)
	c, err := lambda.New(context.Background(), lambda.Options{Service: awsclient.Service{Account: account, Region: region, Endpoint: f.URL(),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLAMBDATEST", "lambda-test-secret", ""), MaxAttempts: 4,
		MaxBackoff: 5 * time.Millisecond, RequestsPerSecond: 1000, Burst: 1000,
		HTTPClient: awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.DisableKeepAlives = true })}})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestImagesOfEveryVersion(t *testing.T) {
	f, c := setup(t)
	for i := range 60 { // two pages of functions
		f.AddZipFunction(fmt.Sprintf("zip-%02d", i))
	}
	var vs []lambdafake.Version
	for i := range 55 { // two pages of versions
		vs = append(vs, lambdafake.Version{Version: fmt.Sprint(i), ImageURI: repo + fmt.Sprintf("fn:v%d", i), ResolvedImageURI: repo + "fn@" + digest(i)})
	}
	f.AddFunction("resize", vs...)
	f.AddFunction("pinned", lambdafake.Version{ImageURI: repo + "pinned@" + digest(999), ResolvedImageURI: repo + "pinned@" + digest(999)})

	s := c.Images(context.Background())
	if !s.Complete || s.Kind != "lambda" || s.Name != "lambda:"+account+"/"+region {
		t.Fatalf("%+v", s)
	}
	got := map[string]string{}
	for _, u := range s.Images {
		got[u.Ref.Repo.Name+":"+u.Ref.Tag+"@"+u.Ref.Digest] = u.Where
	}
	if w := got["fn:v0@"]; w != "lambda:123456789012/us-east-1 function resize:$LATEST" {
		t.Errorf("fn:v0 at %q", w)
	}
	if w := got["fn:v54@"]; w != "lambda:123456789012/us-east-1 function resize:54" {
		t.Errorf("fn:v54 (the second page of versions) at %q", w)
	}
	if _, ok := got["fn:@"+digest(54)]; !ok {
		t.Error("the resolved digest of version 54 is not a use")
	}
	if _, ok := got["pinned:@"+digest(999)]; !ok || len(got) != 111 {
		t.Errorf("%d uses, want 111: %v", len(got), got)
	}
	for op, want := range map[string]int{lambda.OpListFunctions: 2, lambda.OpListVersionsByFunction: 3, lambda.OpGetFunction: 56} {
		if n := f.Calls(op); n != want {
			t.Errorf("%s: %d calls, want %d (no call for a Zip function)", op, n, want)
		}
	}
}

func TestThrottlingIsRetried(t *testing.T) {
	f, c := setup(t)
	f.AddFunction("fn", lambdafake.Version{ImageURI: repo + "fn:v1"})
	f.ThrottleNext(1)
	if s := c.Images(context.Background()); !s.Complete || len(s.Images) != 1 {
		t.Fatalf("%+v", s)
	}
}

func TestFailuresMakeTheSourceIncomplete(t *testing.T) {
	t.Run("access denied", func(t *testing.T) {
		f, c := setup(t)
		f.AddFunction("fn", lambdafake.Version{ImageURI: repo + "fn:v1"})
		f.Deny(true)
		s := c.Images(context.Background())
		if s.Complete || len(s.Problems) != 1 || !strings.Contains(s.Problems[0], "lambda:ListFunctions, lambda:ListVersionsByFunction and lambda:GetFunction") ||
			strings.Contains(s.Problems[0], "lambda-test-secret") {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("server error past the retries", func(t *testing.T) {
		f, c := setup(t)
		f.AddFunction("fn", lambdafake.Version{ImageURI: repo + "fn:v1"})
		f.FailNext(lambdafake.OpGetFunction, 10)
		if s := c.Images(context.Background()); s.Complete || !strings.Contains(strings.Join(s.Problems, " "), "GetFunction") {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("a function deleted meanwhile is skipped", func(t *testing.T) {
		f, c := setup(t)
		f.AddFunction("gone", lambdafake.Version{ImageURI: repo + "gone:v1"})
		f.AddFunction("fn", lambdafake.Version{ImageURI: repo + "fn:v1"})
		f.DeleteOnGet("gone")
		if s := c.Images(context.Background()); !s.Complete || len(s.Images) != 1 {
			t.Fatalf("%+v", s)
		}
	})
}
