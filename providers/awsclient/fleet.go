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

// Fleet is a set of clients, at most one per account and region, in the
// order they were added. The zero value is empty.
type Fleet[C Scoped] struct {
	byKey map[string]C
	order []C
}

func key(account, region string) string { return account + "/" + region }

// NewFleet builds a client per option with build. Every problem is reported
// (joined) as "<label> <index>: …", an account and region configured twice
// included; scope returns an option's account and region.
func NewFleet[O any, C Scoped](label string, opts []O, scope func(O) (account, region string), build func(O) (C, error)) (Fleet[C], error) {
	var f Fleet[C]
	var errs []error
	for i, o := range opts {
		// Checked before building, so a duplicate is not built.
		if _, dup := f.Get(scope(o)); dup {
			errs = append(errs, fmt.Errorf("%s %d: %s is configured twice", label, i, key(scope(o))))
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
		return Fleet[C]{}, err
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

// Get returns the client of an account and region.
func (f *Fleet[C]) Get(account, region string) (C, bool) {
	c, ok := f.byKey[key(account, region)]
	return c, ok
}

// All returns the clients in the order they were added.
func (f *Fleet[C]) All() []C { return append([]C(nil), f.order...) }

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
