package awsclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/time/rate"
)

// Service is what every read-only service client of one account and region
// takes (EKS, ECS, Lambda): its scope, identity, endpoint and pacing.
type Service struct {
	Account, Region              string
	Profile, RoleARN, ExternalID string
	// Endpoint overrides the service's (fakes).
	Endpoint          string
	RequestsPerSecond float64
	Burst             int
	MaxAttempts       int
	// MaxBackoff caps the wait between attempts; default the SDK's (20s).
	MaxBackoff time.Duration
	UserAgent  string
	Logger     logging.Logger
	// Credentials, if set, replaces the default chain's (tests).
	Credentials aws.CredentialsProvider
	HTTPClient  aws.HTTPClient
}

// Client is a service client's setup: the aws.Config, and what the
// service's options take besides (the endpoint, the retryer, pacing).
type Client struct {
	Config   aws.Config
	Endpoint *string // nil: the service's own
	Retryer  aws.Retryer
	// Pace waits on the client's token bucket before every attempt; append
	// it to the service options' APIOptions.
	Pace func(*middleware.Stack) error
}

// Load checks the scope and loads the config of service (its name in
// errors and the pacing middleware's id), pacing at rps and burst unless
// the Service sets its own. It calls nothing.
func (s Service) Load(ctx context.Context, service string, rps float64, burst, maxAttempts int) (Client, error) {
	errs := CheckScope("account", s.Account, s.Region)
	errs = append(errs, CheckRole(s.RoleARN, s.ExternalID))
	if err := errors.Join(errs...); err != nil {
		return Client{}, fmt.Errorf("%s %s/%s: %w", service, s.Account, s.Region, err)
	}
	if s.RequestsPerSecond > 0 {
		rps = s.RequestsPerSecond
	}
	if s.Burst > 0 {
		burst = s.Burst
	}
	if s.MaxAttempts > 0 {
		maxAttempts = s.MaxAttempts
	}
	cfg, err := Config{Region: s.Region, Profile: s.Profile, RoleARN: s.RoleARN, ExternalID: s.ExternalID,
		Credentials: s.Credentials, HTTPClient: s.HTTPClient, UserAgent: s.UserAgent, Logger: s.Logger}.Load(ctx)
	if err != nil {
		return Client{}, fmt.Errorf("%s %s/%s: %w", service, s.Account, s.Region, err)
	}
	c := Client{Config: cfg, Retryer: Retryer(maxAttempts, s.MaxBackoff),
		Pace: AfterRetry(Pace("reclaim/"+service+"-pace", rate.NewLimiter(rate.Limit(rps), burst)))}
	if s.Endpoint != "" {
		c.Endpoint = aws.String(s.Endpoint)
	}
	return c, nil
}

// Calls counts a client's calls by operation (attempts not counted).
type Calls struct{ m sync.Map } // op -> *atomic.Int64

// Add counts one call of op.
func (c *Calls) Add(op string) {
	n, _ := c.m.LoadOrStore(op, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
}

// Of is how many calls of op were counted.
func (c *Calls) Of(op string) int {
	if n, ok := c.m.Load(op); ok {
		return int(n.(*atomic.Int64).Load())
	}
	return 0
}

// Each calls f(i) for every i below n, at most limit at once, and joins
// the errors in index order (the describe fan-out of a listing).
func Each(n, limit int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
