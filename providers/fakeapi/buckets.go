package fakeapi

import (
	"math"
	"sync"

	"golang.org/x/time/rate"
)

// RateLimit is a token bucket: PerSecond tokens a second, at most Burst
// saved (default: PerSecond rounded up, at least 1). PerSecond <= 0 is no
// limit.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// Buckets are a fake's token buckets by key (an operation, or a class of
// them), like a service's request-rate limits, and the count of requests
// they turned away. Embed it in a fake: SetRate and Throttled become the
// fake's, and it asks Allow of each request. Safe for concurrent use.
type Buckets struct {
	mu        sync.Mutex
	by        map[string]*rate.Limiter
	throttled int
}

// SetRate sets (or, with PerSecond <= 0, removes) the bucket of key.
func (b *Buckets) SetRate(key string, rl RateLimit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rl.PerSecond <= 0 {
		delete(b.by, key)
		return
	}
	burst := rl.Burst
	if burst <= 0 {
		burst = max(1, int(math.Ceil(rl.PerSecond)))
	}
	if b.by == nil {
		b.by = map[string]*rate.Limiter{}
	}
	b.by[key] = rate.NewLimiter(rate.Limit(rl.PerSecond), burst)
}

// Allow takes a token from the bucket of each key in turn that has one; at
// the first without a token it stops, counts the request as throttled and
// says false.
func (b *Buckets) Allow(keys ...string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		if l := b.by[k]; l != nil && !l.Allow() {
			b.throttled++
			return false
		}
	}
	return true
}

// Throttled counts the requests the buckets turned away.
func (b *Buckets) Throttled() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.throttled
}

// ResetThrottled zeroes that count.
func (b *Buckets) ResetThrottled() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.throttled = 0
}
