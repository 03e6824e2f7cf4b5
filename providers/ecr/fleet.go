package ecr

import (
	"context"
	"fmt"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Fleet is the set of registries reclaim is configured with, one Client per
// account and region.
type Fleet struct {
	clients awsclient.Fleet[*Client]
}

// NewFleet builds a client per Options. Every problem is reported (joined),
// including a registry configured twice.
func NewFleet(ctx context.Context, opts []Options) (*Fleet, error) {
	clients, err := awsclient.NewFleet("registry", opts,
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
			return nil, fmt.Errorf("ecr: registry %s/%s given twice", c.account, c.region)
		}
	}
	return f, nil
}

// Client returns the client of a registry.
func (f *Fleet) Client(account, region string) (*Client, bool) {
	return f.clients.Get(account, region)
}

// Clients returns the clients in configuration order.
func (f *Fleet) Clients() []*Client { return f.clients.All() }

// List lists every registry in parallel, in configuration order.
func (f *Fleet) List(ctx context.Context) []inventory.RegistryListing {
	return awsclient.Map(&f.clients, func(c *Client) inventory.RegistryListing { return c.List(ctx) })
}

func (f *Fleet) client(repo inventory.RepoKey) (*Client, error) {
	c, ok := f.clients.Get(repo.Account, repo.Region)
	if !ok {
		return nil, fmt.Errorf("ecr: registry %s (account %s, region %s) is not configured; repository %s", repo.Registry(), repo.Account, repo.Region, repo.Name)
	}
	return c, nil
}

// DescribeImages implements Provider.
func (f *Fleet) DescribeImages(ctx context.Context, repo inventory.RepoKey, digests []string) ([]inventory.Image, error) {
	c, err := f.client(repo)
	if err != nil {
		return nil, err
	}
	return c.DescribeImages(ctx, repo.Name, digests)
}

// DeleteImages implements Provider.
func (f *Fleet) DeleteImages(ctx context.Context, repo inventory.RepoKey, digests []string) ([]inventory.ImageFailure, error) {
	c, err := f.client(repo)
	if err != nil {
		return nil, err
	}
	return c.DeleteImages(ctx, repo.Name, digests)
}
