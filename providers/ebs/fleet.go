package ebs

import (
	"context"

	"reclaim.dev/reclaim/providers/awsclient"
)

// Fleet is the set of accounts and regions reclaim is configured with, one
// Client per account and region.
type Fleet struct{ awsclient.Fleet[*Client] }

// NewFleet builds a client per Options. Every problem is reported (joined),
// including an account and region configured twice; the Fleet is then empty.
func NewFleet(ctx context.Context, opts []Options) (*Fleet, error) {
	f, err := awsclient.NewFleet("ebs", opts, func(o Options) (*Client, error) { return New(ctx, o) })
	return &Fleet{f}, err
}

// NewFleetOf makes a Fleet of existing clients (built with New or NewWithAPI).
func NewFleetOf(clients ...*Client) (*Fleet, error) {
	f, err := awsclient.FleetOf("ebs", clients...)
	return &Fleet{f}, err
}

// List lists every account and region in parallel; the listings are in
// configuration order.
func (f *Fleet) List(ctx context.Context) []Listing {
	return awsclient.Map(&f.Fleet, func(c *Client) Listing { return c.List(ctx) })
}

// Quotas reads every account and region's storage quotas in parallel, in
// configuration order; a failure is that listing's Problem.
func (f *Fleet) Quotas(ctx context.Context) []QuotaListing {
	return awsclient.Map(&f.Fleet, func(c *Client) QuotaListing {
		l := QuotaListing{Account: c.Account(), Region: c.Region()}
		q, err := c.Quotas(ctx)
		if err != nil {
			l.Problem = err.Error()
		}
		l.Quotas = q
		return l
	})
}

// Volume re-reads one volume of an account and region.
func (f *Fleet) Volume(ctx context.Context, account, region, id string) (Volume, error) {
	c, err := f.Lookup(account, region)
	if err != nil {
		return Volume{}, err
	}
	return c.Volume(ctx, id)
}

// DeleteVolume deletes one volume of an account and region (see Client.DeleteVolume).
func (f *Fleet) DeleteVolume(ctx context.Context, account, region, id string) error {
	c, err := f.Lookup(account, region)
	if err != nil {
		return err
	}
	return c.DeleteVolume(ctx, id)
}

// CreateSnapshot snapshots one volume of an account and region (see Client.CreateSnapshot).
// SnapshotsOf lists the snapshots of a volume tagged tagKey=volumeID.
func (f *Fleet) SnapshotsOf(ctx context.Context, account, region, volumeID, tagKey string) ([]Snapshot, error) {
	c, err := f.Lookup(account, region)
	if err != nil {
		return nil, err
	}
	return c.SnapshotsOf(ctx, volumeID, tagKey)
}

func (f *Fleet) CreateSnapshot(ctx context.Context, account, region, volumeID, description string, tags map[string]string) (string, error) {
	c, err := f.Lookup(account, region)
	if err != nil {
		return "", err
	}
	return c.CreateSnapshot(ctx, volumeID, description, tags)
}
