package awsclient_test

import (
	"context"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"

	"reclaim.dev/reclaim/providers/awsclient"
)

// PaceEach gives every operation its own bucket: one operation's calls do
// not spend another's tokens, and an operation past its burst waits (here:
// longer than the deadline allows, so the wait is refused at once).
func TestPaceEachIsPerOperation(t *testing.T) {
	m := awsclient.PaceEach("pace", 0.001, 1)
	next := middleware.FinalizeHandlerFunc(func(context.Context, middleware.FinalizeInput) (middleware.FinalizeOutput, middleware.Metadata, error) {
		return middleware.FinalizeOutput{}, middleware.Metadata{}, nil
	})
	call := func(op string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _, err := m.HandleFinalize(awsmiddleware.SetOperationName(ctx, op), middleware.FinalizeInput{}, next)
		return err
	}
	for _, op := range []string{"DescribeImages", "GetRepositoryPolicy", "BatchDeleteImage"} {
		if err := call(op); err != nil {
			t.Fatalf("first %s: %v, want its own token", op, err)
		}
	}
	if err := call("DescribeImages"); err == nil {
		t.Fatal("a second DescribeImages went through a bucket of one token refilled every 1000 s")
	}
}
