package awsclient

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// AfterRetry is an API option that puts m in the Finalize step right after
// the retry middleware: every attempt, a retry too, passes m, and before
// signing, so a wait in m leaves the signature fresh.
func AfterRetry(m middleware.FinalizeMiddleware) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Finalize.Insert(m, "Retry", middleware.After)
	}
}

// ErrorCode is the API error code of err, "" when it has none.
func ErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// IsThrottle says whether the retryers treat code as throttling.
func IsThrottle(code string) bool {
	_, ok := retry.DefaultThrottleErrorCodes[code]
	return ok
}
