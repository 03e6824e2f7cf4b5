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
