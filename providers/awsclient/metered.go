package awsclient

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/time/rate"
)

// Attempts counts a client's API attempts by operation, retries included,
// and those the API answered with a throttle code.
type Attempts struct {
	mu        sync.Mutex
	calls     map[string]int
	throttled int
}

func (a *Attempts) record(op string, throttled bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls == nil {
		a.calls = map[string]int{}
	}
	a.calls[op]++
	if throttled {
		a.throttled++
	}
}

// ByOp returns the attempts by operation.
func (a *Attempts) ByOp() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.calls)
}

// Throttled is how many attempts the API answered with a throttle code
// (each retried by the adaptive mode).
func (a *Attempts) Throttled() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.throttled
}

// Metered is a client's own rate limit on one service, and its count: a
// Finalize middleware (install it with AfterRetry) that waits on the
// operation's token bucket before every attempt, retries included — Mutate
// for the operations Mutating lists, Describe for the rest (nil: no wait)
// — and counts the attempt in Attempts.
type Metered struct {
	// Name is the middleware's ID, unique in its stack.
	Name             string
	Describe, Mutate *rate.Limiter
	Mutating         []string
	Attempts         *Attempts
}

// ID names the middleware.
func (p *Metered) ID() string { return p.Name }

// HandleFinalize waits, makes the attempt and counts it.
func (p *Metered) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	op := awsmiddleware.GetOperationName(ctx)
	l := p.Describe
	if slices.Contains(p.Mutating, op) {
		l = p.Mutate
	}
	if l != nil {
		if err := l.Wait(ctx); err != nil {
			return middleware.FinalizeOutput{}, middleware.Metadata{}, fmt.Errorf("client-side rate limit: %w", err)
		}
	}
	out, md, err := next.HandleFinalize(ctx, in)
	throttled := err != nil && IsThrottle(ErrorCode(err))
	p.Attempts.record(op, throttled)
	process.record(awsmiddleware.GetServiceID(ctx), op, throttled)
	return out, md, err
}

// Total is the process's attempts at one operation of one service, and
// those throttled.
type Total struct {
	Service, Operation  string
	Attempts, Throttled int64
}

// process counts every metered attempt of the process: what its metrics
// export (a CronJob's process is one run; a daemon's, all its passes).
var process totals

type totals struct {
	mu sync.Mutex
	m  map[[2]string]*Total
}

func (t *totals) record(service, op string, throttled bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[[2]string]*Total{}
	}
	k := [2]string{service, op}
	c := t.m[k]
	if c == nil {
		c = &Total{Service: service, Operation: op}
		t.m[k] = c
	}
	c.Attempts++
	if throttled {
		c.Throttled++
	}
}

// Totals are the process's attempts so far, by service and operation.
func Totals() []Total {
	process.mu.Lock()
	defer process.mu.Unlock()
	out := make([]Total, 0, len(process.m))
	for _, c := range process.m {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Total) int {
		if a.Service != b.Service {
			return strings.Compare(a.Service, b.Service)
		}
		return strings.Compare(a.Operation, b.Operation)
	})
	return out
}

// CheckPageSize sets a page size left 0 to max, the API maximum, and says
// when one is outside min..max (api names who allows them).
func CheckPageSize(size *int32, min, max int32, api string) error {
	switch {
	case *size == 0:
		*size = max
	case *size < min || *size > max:
		return fmt.Errorf("pageSize %d: %s allows %d..%d", *size, api, min, max)
	}
	return nil
}

// DefaultDeletes fills a client's delete bucket where it was left 0.
func DefaultDeletes(perSecond *float64, burst *int, defPerSecond float64, defBurst int) {
	if *perSecond <= 0 {
		*perSecond = defPerSecond
	}
	if *burst <= 0 {
		*burst = defBurst
	}
}
