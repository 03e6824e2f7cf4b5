package ec2

import (
	"context"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Fleet is the set of accounts and regions reclaim is configured with, one
// Client per account and region.
type Fleet struct{ awsclient.Fleet[*Client] }

// NewFleet builds a client per Options. Every problem is reported (joined),
// including an account and region configured twice; the Fleet is then empty.
func NewFleet(ctx context.Context, opts []Options) (*Fleet, error) {
	f, err := awsclient.NewFleet("ec2", opts, func(o Options) (*Client, error) { return New(ctx, o) })
	return &Fleet{f}, err
}

// NewFleetOf makes a Fleet of existing clients (built with New or NewWithAPI).
func NewFleetOf(clients ...*Client) (*Fleet, error) {
	f, err := awsclient.FleetOf("ec2", clients...)
	return &Fleet{f}, err
}

// List lists every account and region in parallel; the listings are in
// configuration order.
func (f *Fleet) List(ctx context.Context) []inventory.NetworkListing {
	return awsclient.Map(&f.Fleet, func(c *Client) inventory.NetworkListing { return c.List(ctx) })
}

// Interfaces implements Provider.
func (f *Fleet) Interfaces(ctx context.Context, account, region string, ids []string) ([]inventory.NetInterface, error) {
	c, err := f.Lookup(account, region)
	if err != nil {
		return nil, err
	}
	return c.Interfaces(ctx, ids)
}

// DeleteInterface implements Provider.
func (f *Fleet) DeleteInterface(ctx context.Context, account, region, id string) error {
	c, err := f.Lookup(account, region)
	if err != nil {
		return err
	}
	return c.DeleteInterface(ctx, id)
}

// Calls sums every client's API attempts by operation (retries included).
func (f *Fleet) Calls() map[string]int {
	out := map[string]int{}
	for _, c := range f.Clients() {
		for op, n := range c.Calls() {
			out[op] += n
		}
	}
	return out
}

// Throttled sums every client's attempts that EC2 answered with a throttle code.
func (f *Fleet) Throttled() int {
	n := 0
	for _, c := range f.Clients() {
		n += c.Throttled()
	}
	return n
}
