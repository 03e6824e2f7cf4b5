package awsclient_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Every AWS client says a failed call the same way: the call, the
// service's code and message, and what to do; the error still unwraps to
// the SDK's and to what the client adds.
func TestExplain(t *testing.T) {
	call := awsclient.Call{Service: "ec2", Op: "DeleteVolume", Account: "123456789012", Region: "us-east-1", What: "vol-1"}
	api := func(code string) error { return &smithy.GenericAPIError{Code: code, Message: "no"} }
	throttled := &retry.MaxAttemptsError{Attempt: 10, Err: api("RequestLimitExceeded")}
	for _, c := range []struct {
		call awsclient.Call
		err  error
		want string
	}{
		{call, api("UnauthorizedOperation"), "ec2 DeleteVolume 123456789012/us-east-1 vol-1: UnauthorizedOperation: no; grant ec2:DeleteVolume to the principal reclaim runs as in account 123456789012"},
		{awsclient.Call{Service: "ec2", Op: "CreateSnapshot", Account: "123456789012", Region: "us-east-1", GrantAlso: " (and ec2:CreateTags)"}, api("AccessDenied"),
			"ec2 CreateSnapshot 123456789012/us-east-1: AccessDenied: no; grant ec2:CreateSnapshot to the principal reclaim runs as in account 123456789012 (and ec2:CreateTags)"},
		{call, api("UnrecognizedClientException"), "vol-1: UnrecognizedClientException: no; credentials rejected: check the profile, role and region"},
		{call, api("ExpiredTokenException"), "; credentials rejected: check the profile, role and region"},
		{call, api("OptInRequired"), "; region us-east-1 is not enabled for account 123456789012"},
		{awsclient.Call{Service: "ec2", Op: "DescribeNetworkInterfaces", Account: "123456789012", Region: "us-east-1", ThrottleAlso: " or ask AWS"}, throttled,
			"; throttled after 10 attempts: lower requestsPerSecond for 123456789012/us-east-1 or ask AWS"},
		{call, &retry.MaxAttemptsError{Attempt: 3, Err: errors.New("reset")}, "; failed after 3 attempts"},
		{call, fmt.Errorf("send: %w", context.Canceled), "vol-1: send: context canceled; interrupted"},
	} {
		got := awsclient.Explain(c.call, c.err, outcome.ErrNotFound)
		if s := got.Error(); len(s) < len(c.want) || (s != c.want && s[len(s)-len(c.want):] != c.want) {
			t.Errorf("%v:\ngot  %s\nwant …%s", c.err, s, c.want)
		}
		if !errors.Is(got, c.err) || !errors.Is(got, outcome.ErrNotFound) {
			t.Errorf("%v: %v does not unwrap to the SDK's error and ErrNotFound", c.err, got)
		}
	}
}
