package awsclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/time/rate"
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

// Refusal says whether err is the API's answer that it did not do the
// request (an HTTP 4xx: denied, invalid, a bad state), as opposed to no
// answer or a server error, after which a delete may have happened.
func Refusal(err error) bool {
	var st interface{ HTTPStatusCode() int }
	if !errors.As(err, &st) || ErrorCode(err) == "" {
		return false
	}
	return st.HTTPStatusCode() >= 400 && st.HTTPStatusCode() < 500
}

// Grant says what a denied err (AccessDenied and its kin, or ECS's
// ClientException "not authorized") needs: " — reclaim's identity needs
// ACTIONS in account A region R (policy)", or "" for any other error.
func Grant(err error, actions, account, region string) string {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return ""
	}
	switch code := ae.ErrorCode(); {
	case code == "AccessDeniedException", code == "AccessDenied", code == "UnauthorizedOperation",
		code == "ClientException" && strings.Contains(ae.ErrorMessage(), "not authorized"):
		return fmt.Sprintf(" — reclaim's identity needs %s in account %s region %s (deploy/aws/iam-policy-readonly.json)", actions, account, region)
	}
	return ""
}

// IsThrottle says whether the retryers treat code as throttling.
func IsThrottle(code string) bool {
	_, ok := retry.DefaultThrottleErrorCodes[code]
	return ok
}

// Pace returns a middleware that waits on l before every attempt, retries
// included (add it with AfterRetry): the client's own share of the API's
// rate limit.
func Pace(id string, l *rate.Limiter) middleware.FinalizeMiddleware {
	return paceBy(id, func(context.Context) *rate.Limiter { return l })
}

// PaceEach is Pace with a bucket of rps and burst for each API operation,
// for a service whose rate quotas are per action, as ECR's are: a listing's
// policy reads then do not slow its DescribeImages pages.
func PaceEach(id string, rps float64, burst int) middleware.FinalizeMiddleware {
	var mu sync.Mutex
	buckets := map[string]*rate.Limiter{}
	return paceBy(id, func(ctx context.Context) *rate.Limiter {
		op := awsmiddleware.GetOperationName(ctx)
		mu.Lock()
		defer mu.Unlock()
		l := buckets[op]
		if l == nil {
			l = rate.NewLimiter(rate.Limit(rps), burst)
			buckets[op] = l
		}
		return l
	})
}

// paceBy waits on the bucket bucket picks for the call before every attempt.
func paceBy(id string, bucket func(context.Context) *rate.Limiter) middleware.FinalizeMiddleware {
	return middleware.FinalizeMiddlewareFunc(id, func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		if err := bucket(ctx).Wait(ctx); err != nil {
			return middleware.FinalizeOutput{}, middleware.Metadata{}, err
		}
		return next.HandleFinalize(ctx, in)
	})
}
