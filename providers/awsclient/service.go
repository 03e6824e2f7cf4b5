package awsclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	"go.uber.org/zap"
	"golang.org/x/time/rate"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
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

// ServiceOf is how a client reaches t, a config section's account and
// region, through endpoint ("" for the service's own) at the section's
// rates (their zero values are the client's defaults).
func ServiceOf(t config.AWSTarget, endpoint string, r config.AWSRates, userAgent string, log *zap.Logger) Service {
	return Service{Account: t.Account, Region: t.Region, Profile: t.Profile, RoleARN: t.RoleARN, ExternalID: t.ExternalID,
		Endpoint: endpoint, RequestsPerSecond: r.RequestsPerSecond, Burst: r.Burst, MaxAttempts: r.MaxAttempts,
		UserAgent: userAgent, Logger: ZapLogger(log)}
}

// Scope is the Service's account and region.
func (s Service) Scope() (account, region string) { return s.Account, s.Region }

// Client is a service client's setup: the aws.Config, and what the
// service's options take besides (the endpoint, the retryer, pacing).
type Client struct {
	Config   aws.Config
	Endpoint *string // nil: the service's own
	Retryer  aws.Retryer
	// Pace waits on the client's token bucket before every attempt; append
	// it to the service options' APIOptions.
	Pace func(*middleware.Stack) error
	// PaceEach is Pace with a bucket per API operation (PaceEach).
	PaceEach func(*middleware.Stack) error
}

// Into sets what every SDK client's Options holds under the same three
// names, BaseEndpoint, Retryer and APIOptions: the Service's endpoint when
// it sets one (else what the SDK resolved itself, AWS_ENDPOINT_URL_ECR,
// AWS_ENDPOINT_URL or config files, stays: a nil would wipe it out), the
// retryer, and mw appended to the stack (Pace, PaceEach, a Metered).
func (c Client) Into(endpoint **string, retryer *aws.Retryer, stack *[]func(*middleware.Stack) error, mw ...func(*middleware.Stack) error) {
	if c.Endpoint != nil {
		*endpoint = c.Endpoint
	}
	*retryer = c.Retryer
	*stack = append(*stack, mw...)
}

// Load checks the scope and loads the config of service (its name in
// errors and the pacing middleware's id), pacing at rps and burst unless
// the Service sets its own. It calls nothing.
func (s Service) Load(ctx context.Context, service string, rps float64, burst, maxAttempts int) (Client, error) {
	if err := errors.Join(s.Check("account", rps, burst, maxAttempts)...); err != nil {
		return Client{}, fmt.Errorf("%s %s/%s: %w", service, s.Account, s.Region, err)
	}
	rps, burst, maxAttempts = s.RequestsPerSecond, s.Burst, s.MaxAttempts
	cfg, err := Config{Region: s.Region, Profile: s.Profile, RoleARN: s.RoleARN, ExternalID: s.ExternalID,
		Credentials: s.Credentials, HTTPClient: s.HTTPClient, UserAgent: s.UserAgent, Logger: s.Logger}.Load(ctx)
	if err != nil {
		return Client{}, fmt.Errorf("%s %s/%s: %w", service, s.Account, s.Region, err)
	}
	c := Client{Config: cfg, Retryer: Retryer(maxAttempts, s.MaxBackoff),
		Pace:     AfterRetry(Pace("reclaim/"+service+"-pace", rate.NewLimiter(rate.Limit(rps), burst))),
		PaceEach: AfterRetry(PaceEach("reclaim/"+service+"-pace", rps, burst))}
	if s.Endpoint != "" {
		c.Endpoint = aws.String(s.Endpoint)
	}
	return c, nil
}

// Check fills in the pacing the Service leaves unset (rps, burst — 0 means
// ceil(rps) — and maxAttempts) and returns what is wrong with its scope
// (accountWord names the account in errors) and role.
func (s *Service) Check(accountWord string, rps float64, burst, maxAttempts int) []error {
	if s.RequestsPerSecond <= 0 {
		s.RequestsPerSecond = rps
	}
	if s.Burst <= 0 {
		s.Burst = burst
	}
	if s.Burst <= 0 {
		s.Burst = max(1, int(math.Ceil(s.RequestsPerSecond)))
	}
	if s.MaxAttempts <= 0 {
		s.MaxAttempts = maxAttempts
	}
	return append(CheckScope(accountWord, s.Account, s.Region), CheckRole(s.RoleARN, s.ExternalID))
}

// Scope is a client's account and region.
type Scope struct{ account, region string }

// NewScope is the Scope of an account and region.
func NewScope(account, region string) Scope { return Scope{account, region} }

// Account and Region are the client's scope.
func (s Scope) Account() string { return s.account }
func (s Scope) Region() string  { return s.region }

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

// ReaderOptions configures a read-only client that fans out over many
// calls (ECS, Lambda): its Service and how many calls run at once.
type ReaderOptions struct {
	Service
	Concurrency int
}

// Reader is what such a client keeps besides its API: its scope, its
// fan-out limit and its call count. A service's Client embeds it.
type Reader[API any] struct {
	Scope
	api         API
	concurrency int
	calls       Calls
}

// NewReader makes the Reader of api; a Concurrency of 0 takes def.
func NewReader[API any](api API, o ReaderOptions, def int) Reader[API] {
	if o.Concurrency <= 0 {
		o.Concurrency = def
	}
	return Reader[API]{Scope: NewScope(o.Account, o.Region), api: api, concurrency: o.Concurrency}
}

// ReaderSpec is a read-only client's service name (in errors, its
// pacing's id and the sources it lists), its defaults, and the actions
// its listing needs (said when one is refused).
type ReaderSpec struct {
	Service                   string
	RequestsPerSecond         float64
	Burst, MaxAttempts, Calls int // Calls: Concurrency's default
	Grants                    string
}

// OpenReader loads the spec's service for o and makes r the Reader over
// the SDK client sdk builds from the loaded setup (each SDK's options are
// a type of their own: sdk sets them with Client.Into). It calls nothing.
func OpenReader[API any](ctx context.Context, o ReaderOptions, s ReaderSpec, r *Reader[API], sdk func(Client) API) error {
	c, err := o.Load(ctx, s.Service, s.RequestsPerSecond, s.Burst, s.MaxAttempts)
	if err != nil {
		return err
	}
	*r = NewReader(sdk(c), o, s.Calls)
	return nil
}

// ImageSource is the listing of the images s names in the reader's
// account and region: complete until Fail records a failed call.
func (r *Reader[API]) ImageSource(s ReaderSpec) inventory.ImageSource {
	return inventory.ImageSource{Kind: s.Service, Name: s.Service + ":" + r.Account() + "/" + r.Region(), Complete: true}
}

// Fail makes out incomplete for the failed call op, saying what to grant
// when it was refused.
func (r *Reader[API]) Fail(out *inventory.ImageSource, s ReaderSpec, op string, err error) {
	out.Complete = false
	out.Problems = append(out.Problems, fmt.Sprintf("%s %s in %s/%s: %v%s", s.Service, op, r.Account(), r.Region(), err, Grant(err, s.Grants, r.Account(), r.Region())))
}

// API is the client's API.
func (r *Reader[API]) API() API { return r.api }

// Concurrency is how many calls the client runs at once.
func (r *Reader[API]) Concurrency() int { return r.concurrency }

// Count counts one call of op.
func (r *Reader[API]) Count(op string) { r.calls.Add(op) }

// Calls says how many calls of op the client made (attempts not counted).
func (r *Reader[API]) Calls(op string) int { return r.calls.Of(op) }

// ZapLogger sends the AWS SDK's log lines to log at debug level: they are
// transport notices (a connection not reused, a retry), not the run's story.
func ZapLogger(log *zap.Logger) logging.Logger {
	return logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		if !log.Core().Enabled(zap.DebugLevel) {
			return // formatting every retry notice for nobody costs the listing
		}
		log.Debug(fmt.Sprintf(format, v...), zap.String("source", "aws-sdk"), zap.String("classification", string(c)))
	})
}
