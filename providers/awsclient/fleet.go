package awsclient

import (
	"errors"
	"fmt"
	"sync"
)

// Scoped is a client of one account and region.
type Scoped interface {
	Account() string
	Region() string
}

// Fleet is a set of clients of one service, at most one per account and
// region, in the order they were added. A service's own Fleet embeds it and
// adds its listing and the calls that route to one client.
type Fleet[C Scoped] struct {
	label string // the service, in errors
	byKey map[string]C
	order []C
}

func key(account, region string) string { return account + "/" + region }

// Option is a client's options: they name its account and region.
type Option interface {
	Scope() (account, region string)
}

// NewFleet builds a client per option with build. Every problem is reported
// (joined) as "<label> <index>: …", an account and region configured twice
// included; the Fleet is then empty.
func NewFleet[O Option, C Scoped](label string, opts []O, build func(O) (C, error)) (Fleet[C], error) {
	f := Fleet[C]{label: label}
	var errs []error
	for i, o := range opts {
		// Checked before building, so a duplicate is not built.
		if _, dup := f.Client(o.Scope()); dup {
			errs = append(errs, fmt.Errorf("%s %d: %s is configured twice", label, i, key(o.Scope())))
			continue
		}
		c, err := build(o)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %d: %w", label, i, err))
			continue
		}
		f.Add(c)
	}
	if err := errors.Join(errs...); err != nil {
		return Fleet[C]{label: label}, err
	}
	return f, nil
}

// FleetOf makes a Fleet of existing clients; an account and region given
// twice is an error, and the Fleet is then empty.
func FleetOf[C Scoped](label string, clients ...C) (Fleet[C], error) {
	f := Fleet[C]{label: label}
	for _, c := range clients {
		if !f.Add(c) {
			return Fleet[C]{label: label}, fmt.Errorf("%s: %s given twice", label, key(c.Account(), c.Region()))
		}
	}
	return f, nil
}

// Add adds c; false, leaving the fleet as it is, if its account and region
// are already in it.
func (f *Fleet[C]) Add(c C) bool {
	k := key(c.Account(), c.Region())
	if _, dup := f.byKey[k]; dup {
		return false
	}
	if f.byKey == nil {
		f.byKey = map[string]C{}
	}
	f.byKey[k] = c
	f.order = append(f.order, c)
	return true
}

// Client returns the client of an account and region.
func (f *Fleet[C]) Client(account, region string) (C, bool) {
	c, ok := f.byKey[key(account, region)]
	return c, ok
}

// Lookup is Client with an error naming what is missing: a re-read or a
// delete routed to an account and region reclaim was not configured with.
func (f *Fleet[C]) Lookup(account, region string) (C, error) {
	c, ok := f.byKey[key(account, region)]
	if !ok {
		return c, fmt.Errorf("%s: account %s region %s is not configured", f.label, account, region)
	}
	return c, nil
}

// Clients returns the clients in the order they were added.
func (f *Fleet[C]) Clients() []C { return append([]C(nil), f.order...) }

// Map calls fn on every client at once and returns the results in the order
// the clients were added.
func Map[C Scoped, R any](f *Fleet[C], fn func(C) R) []R {
	out := make([]R, len(f.order))
	var wg sync.WaitGroup
	for i, c := range f.order {
		wg.Go(func() { out[i] = fn(c) })
	}
	wg.Wait()
	return out
}

// Unique drops empty and repeated strings, keeping the first of each: a
// request then never names one resource twice.
func Unique(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := make([]string, 0, len(in))
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
