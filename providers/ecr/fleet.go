package ecr

import (
	"context"
	"fmt"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
)

// Fleet is the set of registries reclaim is configured with, one Client per
// account and region.
type Fleet struct{ awsclient.Fleet[*Client] }

// NewFleet builds a client per Options. Every problem is reported (joined),
// including a registry configured twice; the Fleet is then empty.
func NewFleet(ctx context.Context, opts []Options) (*Fleet, error) {
	f, err := awsclient.NewFleet("registry", opts, func(o Options) (*Client, error) { return New(ctx, o) })
	return &Fleet{f}, err
}

// NewFleetOf makes a Fleet of existing clients (built with New or NewWithAPI).
func NewFleetOf(clients ...*Client) (*Fleet, error) {
	f, err := awsclient.FleetOf("ecr registry", clients...)
	return &Fleet{f}, err
}

// List lists every registry in parallel, in configuration order.
func (f *Fleet) List(ctx context.Context) []inventory.RegistryListing {
	return awsclient.Map(&f.Fleet, func(c *Client) inventory.RegistryListing { return c.List(ctx) })
}

func (f *Fleet) client(repo inventory.RepoKey) (*Client, error) {
	c, err := f.Lookup(repo.Account, repo.Region)
	if err != nil {
		return nil, fmt.Errorf("%w; repository %s", err, repo.Name)
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

// RepoTags implements Provider.
func (f *Fleet) RepoTags(ctx context.Context, repo inventory.RepoKey) (map[string]string, error) {
	c, err := f.client(repo)
	if err != nil {
		return nil, err
	}
	return c.RepoTags(ctx, repo.Name)
}

// DeleteImages implements Provider.
func (f *Fleet) DeleteImages(ctx context.Context, repo inventory.RepoKey, digests []string) ([]inventory.ImageFailure, error) {
	c, err := f.client(repo)
	if err != nil {
		return nil, err
	}
	return c.DeleteImages(ctx, repo.Name, digests)
}
