package ecr

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"reclaim.dev/reclaim/inventory"
)

// Fleet is the set of registries reclaim is configured with, one Client per
// account and region.
type Fleet struct {
	clients map[string]*Client // by account/region
	order   []*Client
}

// NewFleet builds a client per Options. Every problem is reported (joined),
// including a registry configured twice.
func NewFleet(ctx context.Context, opts []Options) (*Fleet, error) {
	f := &Fleet{clients: map[string]*Client{}}
	var errs []error
	for i, o := range opts {
		k := o.Account + "/" + o.Region
		if f.clients[k] != nil {
			errs = append(errs, fmt.Errorf("registry %d: %s is configured twice", i, k))
			continue
		}
		c, err := New(ctx, o)
		if err != nil {
			errs = append(errs, fmt.Errorf("registry %d: %w", i, err))
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
			return nil, fmt.Errorf("ecr: registry %s given twice", k)
		}
		f.clients[k] = c
		f.order = append(f.order, c)
	}
	return f, nil
}

// Client returns the client of a registry.
func (f *Fleet) Client(account, region string) (*Client, bool) {
	c, ok := f.clients[account+"/"+region]
	return c, ok
}

// Clients returns the clients in configuration order.
func (f *Fleet) Clients() []*Client { return append([]*Client(nil), f.order...) }

// List lists every registry in parallel, in configuration order.
func (f *Fleet) List(ctx context.Context) []inventory.RegistryListing {
	out := make([]inventory.RegistryListing, len(f.order))
	var wg sync.WaitGroup
	for i, c := range f.order {
		wg.Go(func() { out[i] = c.List(ctx) })
	}
	wg.Wait()
	return out
}

func (f *Fleet) client(repo inventory.RepoKey) (*Client, error) {
	c, ok := f.clients[repo.Account+"/"+repo.Region]
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
