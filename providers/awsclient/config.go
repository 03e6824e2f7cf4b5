// Package awsclient is the plumbing the AWS providers (ecr, ec2) share: the
// aws.Config of one account and region, the retryer, the checks of the
// options every client takes, and a fleet of clients.
package awsclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/logging"
)

// Config is how a client reaches AWS: the providers' Options fields of the
// same names.
type Config struct {
	Region      string
	Profile     string // "" is the default chain
	RoleARN     string // assumed on top of the base credentials
	ExternalID  string
	Credentials aws.CredentialsProvider // replaces the chain's (tests)
	HTTPClient  aws.HTTPClient
	UserAgent   string         // the SDK's app id
	Logger      logging.Logger // nil discards the SDK's log lines
}

// Load builds the aws.Config: config.LoadDefaultConfig with the region and
// profile, then the assumed role, if any. It does not call AWS (an assumed
// role's credentials are fetched on the first call).
func (c Config) Load(ctx context.Context) (aws.Config, error) {
	logger := c.Logger
	if logger == nil {
		// The SDK's default writes unstructured lines to stderr.
		logger = logging.Nop{}
	}
	lopts := []func(*config.LoadOptions) error{config.WithRegion(c.Region), config.WithLogger(logger)}
	if c.Profile != "" {
		lopts = append(lopts, config.WithSharedConfigProfile(c.Profile))
	}
	if c.Credentials != nil {
		lopts = append(lopts, config.WithCredentialsProvider(c.Credentials))
	}
	if c.HTTPClient != nil {
		lopts = append(lopts, config.WithHTTPClient(c.HTTPClient))
	}
	if c.UserAgent != "" {
		lopts = append(lopts, config.WithAppID(c.UserAgent))
	}
	cfg, err := config.LoadDefaultConfig(ctx, lopts...)
	if err != nil {
		if b := os.Getenv("AWS_CA_BUNDLE"); b != "" && strings.Contains(err.Error(), b) {
			return aws.Config{}, fmt.Errorf("load AWS config: AWS_CA_BUNDLE=%s cannot be read: mount the file or unset the variable: %w", b, err)
		}
		return aws.Config{}, fmt.Errorf("load AWS config (profile %q): %w", c.Profile, err)
	}
	// After loading: the loader needs the SDK's own client type to add a
	// CA bundle (AWS_CA_BUNDLE), and leaves the field nil without one.
	cfg.HTTPClient = wrapBody(cfg.HTTPClient)
	if c.RoleARN != "" {
		prov := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), c.RoleARN, func(ao *stscreds.AssumeRoleOptions) {
			ao.RoleSessionName = "reclaim"
			if c.ExternalID != "" {
				ao.ExternalID = aws.String(c.ExternalID)
			}
		})
		cfg.Credentials = aws.NewCredentialsCache(prov)
	}
	return cfg, nil
}

// Retryer is the adaptive retry mode with maxAttempts per call (the first
// included) and, if maxBackoff > 0, that cap on the delay between attempts.
// It is set on the service client only, not in the aws.Config, so that STS
// keeps the SDK's default.
func Retryer(maxAttempts int, maxBackoff time.Duration) aws.Retryer {
	return boundedUnreachable{retry.NewAdaptiveMode(func(ao *retry.AdaptiveModeOptions) {
		ao.StandardOptions = append(ao.StandardOptions, func(so *retry.StandardOptions) {
			so.MaxAttempts = maxAttempts
			if maxBackoff > 0 {
				so.MaxBackoff = maxBackoff
			}
			// The clients' token buckets and the adaptive mode pace attempts;
			// the standard retry quota would turn a burst of throttles into
			// hard failures ("retry quota exceeded") instead.
			so.RateLimiter = ratelimit.None
		})
	})}
}

// UnreachableAttempts bounds the attempts at an endpoint that cannot be
// reached at all (no route, refused, no such host): retrying it like a
// throttle, 10 attempts backing off to 20 s, made the report wait two
// minutes for a typo in an endpoint or a blocked egress.
const UnreachableAttempts = 3

// boundedUnreachable stops retrying an unreachable endpoint after
// UnreachableAttempts (or one fewer: the SDK passes RetryDelay the attempt
// made, or the retries made so far, depending on its retry mode).
type boundedUnreachable struct{ *retry.AdaptiveMode }

func (b boundedUnreachable) RetryDelay(attempt int, err error) (time.Duration, error) {
	if attempt >= UnreachableAttempts-1 && Unreachable(err) {
		return 0, fmt.Errorf("endpoint unreachable, gave up after %d attempts: %w", attempt+1, err)
	}
	return b.AdaptiveMode.RetryDelay(attempt, err)
}

// Unreachable says whether err is a failure to reach the endpoint at all:
// a refused or failed dial, or a host name that does not resolve.
func Unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial") || errors.Is(err, syscall.ECONNREFUSED)
}

// CheckScope reports a missing or malformed account id and a missing region.
// field is what a missing account is called in the message (ECR says
// "account (registryId)").
func CheckScope(field, account, region string) []error {
	var errs []error
	if account == "" {
		errs = append(errs, errors.New(field+" is required"))
	} else if !IsAccountID(account) {
		errs = append(errs, fmt.Errorf("account %q: want a 12-digit AWS account id", account))
	}
	if region == "" {
		errs = append(errs, errors.New("region is required"))
	}
	return errs
}

// CheckRole reports an external id without a role to assume it with.
func CheckRole(roleARN, externalID string) error {
	if externalID != "" && roleARN == "" {
		return errors.New("externalID is set without roleARN")
	}
	return nil
}

// IsAccountID says whether s is a 12-digit AWS account id.
func IsAccountID(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
