package ec2

import (
	"context"
	"fmt"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Fleet is the set of accounts and regions reclaim is configured with, one
// Client per account and region.
type Fleet struct {
	clients awsclient.Fleet[*Client]
}

// NewFleet builds a client per Options. Every problem is reported (joined),
// including an account and region configured twice.
func NewFleet(ctx context.Context, opts []Options) (*Fleet, error) {
	clients, err := awsclient.NewFleet("ec2", opts,
		func(o Options) (string, string) { return o.Account, o.Region },
		func(o Options) (*Client, error) { return New(ctx, o) })
	if err != nil {
		return nil, err
	}
	return &Fleet{clients: clients}, nil
}

// NewFleetOf makes a Fleet of existing clients (built with New or NewWithAPI).
func NewFleetOf(clients ...*Client) (*Fleet, error) {
	f := &Fleet{}
	for _, c := range clients {
		if !f.clients.Add(c) {
			return nil, fmt.Errorf("ec2: %s/%s given twice", c.account, c.region)
		}
	}
	return f, nil
}

// Client returns the client of an account and region.
func (f *Fleet) Client(account, region string) (*Client, bool) {
	return f.clients.Get(account, region)
}

// Clients returns the clients in configuration order.
func (f *Fleet) Clients() []*Client { return f.clients.All() }

// List lists every account and region in parallel; the listings are in
// configuration order.
func (f *Fleet) List(ctx context.Context) []inventory.NetworkListing {
	return awsclient.Map(&f.clients, func(c *Client) inventory.NetworkListing { return c.List(ctx) })
}

func (f *Fleet) client(account, region string) (*Client, error) {
	c, ok := f.clients.Get(account, region)
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
	for _, c := range f.clients.All() {
		for op, n := range c.Calls() {
			out[op] += n
		}
	}
	return out
}

// Throttled sums every client's attempts that EC2 answered with a throttle code.
func (f *Fleet) Throttled() int {
	n := 0
	for _, c := range f.clients.All() {
		n += c.Throttled()
	}
	return n
}
