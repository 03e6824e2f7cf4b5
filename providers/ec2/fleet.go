package ec2

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"reclaim.dev/reclaim/inventory"
)

// Fleet is the set of accounts and regions reclaim is configured with, one
// Client per account and region.
type Fleet struct {
	clients map[string]*Client // by account/region
	order   []*Client
}

// NewFleet builds a client per Options. Every problem is reported (joined),
// including an account and region configured twice.
func NewFleet(ctx context.Context, opts []Options) (*Fleet, error) {
	f := &Fleet{clients: map[string]*Client{}}
	var errs []error
	for i, o := range opts {
		k := o.Account + "/" + o.Region
		if f.clients[k] != nil {
			errs = append(errs, fmt.Errorf("ec2 %d: %s is configured twice", i, k))
			continue
		}
		c, err := New(ctx, o)
		if err != nil {
			errs = append(errs, fmt.Errorf("ec2 %d: %w", i, err))
			continue
		}
		f.clients[k] = c
		f.order = append(f.order, c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f, nil
}

// NewFleetOf makes a Fleet of existing clients (built with New or NewWithAPI).
func NewFleetOf(clients ...*Client) (*Fleet, error) {
	f := &Fleet{clients: map[string]*Client{}}
	for _, c := range clients {
		k := c.account + "/" + c.region
		if f.clients[k] != nil {
			return nil, fmt.Errorf("ec2: %s given twice", k)
		}
		f.clients[k] = c
		f.order = append(f.order, c)
	}
	return f, nil
}

// Client returns the client of an account and region.
func (f *Fleet) Client(account, region string) (*Client, bool) {
	c, ok := f.clients[account+"/"+region]
	return c, ok
}

// Clients returns the clients in configuration order.
func (f *Fleet) Clients() []*Client { return append([]*Client(nil), f.order...) }

// List lists every account and region in parallel; the listings are in
// configuration order.
func (f *Fleet) List(ctx context.Context) []inventory.NetworkListing {
	out := make([]inventory.NetworkListing, len(f.order))
	var wg sync.WaitGroup
	for i, c := range f.order {
		wg.Go(func() { out[i] = c.List(ctx) })
	}
	wg.Wait()
	return out
}

func (f *Fleet) client(account, region string) (*Client, error) {
	c, ok := f.clients[account+"/"+region]
	if !ok {
		return nil, fmt.Errorf("ec2: account %s region %s is not configured", account, region)
	}
	return c, nil
}

// Interfaces implements Provider.
func (f *Fleet) Interfaces(ctx context.Context, account, region string, ids []string) ([]inventory.NetInterface, error) {
	c, err := f.client(account, region)
	if err != nil {
		return nil, err
	}
	return c.Interfaces(ctx, ids)
}

// DeleteInterface implements Provider.
func (f *Fleet) DeleteInterface(ctx context.Context, account, region, id string) error {
	c, err := f.client(account, region)
	if err != nil {
		return err
	}
	return c.DeleteInterface(ctx, id)
}

// Calls sums every client's API attempts by operation (retries included).
func (f *Fleet) Calls() map[string]int {
	out := map[string]int{}
	for _, c := range f.order {
		for op, n := range c.Calls() {
			out[op] += n
		}
	}
	return out
}

// Throttled sums every client's attempts that EC2 answered with a throttle code.
func (f *Fleet) Throttled() int {
	n := 0
	for _, c := range f.order {
		n += c.Throttled()
	}
	return n
}
