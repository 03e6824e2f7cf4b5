package awsclient

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
)

// Call names a failed AWS call for Explain.
type Call struct {
	// Service and Op are the IAM action's parts ("ec2", "DeleteVolume").
	Service, Op string
	// Account and Region are where it was made; What, if set, the
	// resource or page it was about.
	Account, Region, What string
	// GrantAlso finishes the access-denied hint: what else the call needs.
	GrantAlso string
	// ThrottleAlso finishes the throttle hint: what shares the service's
	// request bucket, and whom to ask.
	ThrottleAlso string
}

// explained is an API error in operator words; it unwraps to the SDK's
// error and to what the caller adds (outcome.ErrNotFound, an outcome
// mark).
type explained struct {
	text string
	errs []error
}

func (e *explained) Error() string   { return e.text }
func (e *explained) Unwrap() []error { return e.errs }

// Explain renders an AWS API error for an operator, the same for every AWS
// client: the call ("ec2 DeleteVolume 123456789012/us-east-1 vol-1"), the
// service's code and message, and what to do (the IAM action to grant,
// credentials to check, a region to enable, a rate to lower). The error
// unwraps to err and to each of also.
func Explain(c Call, err error, also ...error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s/%s", c.Service, c.Op, c.Account, c.Region)
	if c.What != "" {
		b.WriteString(" " + c.What)
	}
	b.WriteString(": ")
	var ae smithy.APIError
	var mae *retry.MaxAttemptsError
	code := ErrorCode(err)
	if errors.As(err, &ae) {
		b.WriteString(ae.ErrorCode() + ": " + ae.ErrorMessage())
	} else {
		b.WriteString(err.Error())
	}
	var hint string
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		hint = "interrupted"
	case code == "UnauthorizedOperation" || code == "AccessDenied" || code == "AccessDeniedException":
		hint = fmt.Sprintf("grant %s:%s to the principal reclaim runs as in account %s", c.Service, c.Op, c.Account) + c.GrantAlso
	case code == "AuthFailure" || code == "InvalidClientTokenId" || code == "UnrecognizedClientException" || code == "SignatureDoesNotMatch" ||
		code == "InvalidSignatureException" || code == "ExpiredToken" || code == "ExpiredTokenException" || code == "RequestExpired" ||
		code == "MissingAuthenticationTokenException":
		hint = "credentials rejected: check the profile, role and region"
	case code == "OptInRequired":
		hint = fmt.Sprintf("region %s is not enabled for account %s", c.Region, c.Account)
	case errors.As(err, &mae) && IsThrottle(code):
		hint = fmt.Sprintf("throttled after %d attempts: lower requestsPerSecond for %s/%s", mae.Attempt, c.Account, c.Region) + c.ThrottleAlso
	case errors.As(err, &mae):
		hint = fmt.Sprintf("failed after %d attempts", mae.Attempt)
	}
	if hint != "" {
		b.WriteString("; " + hint)
	}
	return &explained{text: b.String(), errs: append([]error{err}, also...)}
}
