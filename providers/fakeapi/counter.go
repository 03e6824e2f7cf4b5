// Package fakeapi holds what reclaim's wire-level cloud fakes share: the
// per-operation call counters tests and benchmarks assert on, the injected
// faults, the local listener, the simulated latency, the SigV4 scope check,
// and the EC2 Query protocol's answers, errors, page tokens and tag sets.
package fakeapi

import (
	"maps"
	"sync"
)

// Counter counts requests by operation, and those that could change state.
// Embed it in a fake: its methods become the fake's. Safe for concurrent use.
type Counter struct {
	mu       sync.Mutex
	calls    map[string]int
	mutating int
}

// Count records one request of op; mutating says it could change state.
func (c *Counter) Count(op string, mutating bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[op]++
	if mutating {
		c.mutating++
	}
}

// Calls returns how many requests of op were received (faulted and
// throttled ones included).
func (c *Counter) Calls(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[op]
}

// CallCounts returns a copy of all counters.
func (c *Counter) CallCounts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// TotalCalls is the sum of all counters.
func (c *Counter) TotalCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.calls {
		n += v
	}
	return n
}

// MutatingCalls counts the requests that could change state, whatever their outcome.
func (c *Counter) MutatingCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mutating
}

// ResetCalls zeroes the counters.
func (c *Counter) ResetCalls() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls, c.mutating = nil, 0
}

// Unknown is the operation a fake counts a request it could not route as.
const Unknown = "unknown"

// Route counts a request: as one of op (mutating says whether it could
// change state) when the fake routed it, else as one of Unknown.
func (c *Counter) Route(op string, routed, mutating bool) {
	if !routed {
		op, mutating = Unknown, false
	}
	c.Count(op, mutating)
}
