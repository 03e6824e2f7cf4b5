package awsclient_test

import (
	"context"
	"strings"
	"testing"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/time/rate"

	"reclaim.dev/reclaim/providers/awsclient"
)

// A mutating call waits on the mutate bucket, any other on the describe
// bucket; each attempt made is counted, throttled ones apart.
func TestMetered(t *testing.T) {
	var a awsclient.Attempts
	m := &awsclient.Metered{Name: "test", Describe: rate.NewLimiter(rate.Inf, 0), Mutate: rate.NewLimiter(0, 0),
		Mutating: []string{"DeleteVolume"}, Attempts: &a}
	var answer error
	next := middleware.FinalizeHandlerFunc(func(context.Context, middleware.FinalizeInput) (middleware.FinalizeOutput, middleware.Metadata, error) {
		return middleware.FinalizeOutput{}, middleware.Metadata{}, answer
	})
	call := func(op string) error {
		_, _, err := m.HandleFinalize(awsmiddleware.SetOperationName(context.Background(), op), middleware.FinalizeInput{}, next)
		return err
	}
	if err := call("DescribeVolumes"); err != nil {
		t.Fatal(err)
	}
	// The mutate bucket here has no room at all: the delete waits on it,
	// not on the describe bucket, and is never made.
	if err := call("DeleteVolume"); err == nil || !strings.Contains(err.Error(), "client-side rate limit") {
		t.Fatalf("DeleteVolume through an empty mutate bucket: %v", err)
	}
	answer = &smithy.GenericAPIError{Code: "RequestLimitExceeded"}
	if err := call("DescribeVolumes"); err == nil {
		t.Fatal("the API's answer was lost")
	}
	if got := a.ByOp(); len(got) != 1 || got["DescribeVolumes"] != 2 || a.Throttled() != 1 {
		t.Errorf("attempts %v, throttled %d; want 2 DescribeVolumes, 1 throttled", got, a.Throttled())
	}
}

// A page size left 0 is the API maximum, one outside the API's range is
// refused; a delete bucket left 0 takes the client's defaults.
func TestOptionDefaults(t *testing.T) {
	size := int32(0)
	if err := awsclient.CheckPageSize(&size, 5, 500, "EC2"); err != nil || size != 500 {
		t.Errorf("0: %d, %v", size, err)
	}
	size = 1000
	if err := awsclient.CheckPageSize(&size, 5, 500, "EC2"); err == nil || err.Error() != "pageSize 1000: EC2 allows 5..500" {
		t.Errorf("1000: %v", err)
	}
	rps, burst := 0.0, 3
	awsclient.DefaultDeletes(&rps, &burst, 2, 5)
	if rps != 2 || burst != 3 {
		t.Errorf("delete bucket %g/%d, want 2/3", rps, burst)
	}
}
