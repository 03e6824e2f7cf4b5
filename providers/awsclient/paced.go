package awsclient

import "golang.org/x/time/rate"

// Paced is the pacing of a client of the EC2 API (ec2, ebs): a token bucket
// for its describes, one for its mutating calls, and the count of its
// attempts. EC2 buckets an account's describes apart from its mutations, so
// the two are paced apart. Embed it in the client; its methods become the
// client's. The buckets stay nil (no wait) for a client made around a given
// API, whose pacing is then the API's own.
type Paced struct {
	describe, mutate *rate.Limiter
	attempts         Attempts
}

// Meter makes the buckets, describes at s's RequestsPerSecond and Burst and
// the operations mutating lists at mutatesPerSecond and mutateBurst, and
// returns the middleware that waits on them and counts every attempt (for
// Client.EC2). name is its ID in the SDK's stack.
func (p *Paced) Meter(s Service, mutatesPerSecond float64, mutateBurst int, name string, mutating ...string) *Metered {
	p.describe = rate.NewLimiter(rate.Limit(s.RequestsPerSecond), s.Burst)
	p.mutate = rate.NewLimiter(rate.Limit(mutatesPerSecond), mutateBurst)
	return &Metered{Name: name, Describe: p.describe, Mutate: p.mutate, Mutating: mutating, Attempts: &p.attempts}
}

// Count returns a middleware that only counts attempts in p, for a service
// paced by a bucket of its own (ebs's Service Quotas).
func (p *Paced) Count(name string) *Metered { return &Metered{Name: name, Attempts: &p.attempts} }

// Limiters returns the token buckets of the describes and of the mutating
// calls (nil for a client made around a given API).
func (p *Paced) Limiters() (describe, mutate *rate.Limiter) { return p.describe, p.mutate }

// Calls returns the API attempts the client made, by operation, retries
// included (empty for a client made around a given API).
func (p *Paced) Calls() map[string]int { return p.attempts.ByOp() }

// Throttled counts the attempts the API answered with a throttle code
// (RequestLimitExceeded), each retried by the adaptive mode.
func (p *Paced) Throttled() int { return p.attempts.Throttled() }
