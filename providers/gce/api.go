// Package gce lists GCE disks and regional quotas and deletes disks, through the
// compute v1 REST client. Everything it returns is converted to inventory types.
package gce

import (
	"context"

	"reclaim.dev/reclaim/inventory"
)

// Provider is the narrow seam between reclaim and GCE. The real client and any
// decorator (metrics, rate limiting) satisfy it.
type Provider interface {
	// ListDisks lists every zonal and regional disk of a project with
	// aggregatedList. A failed page makes the listing incomplete, not an error;
	// the error is only for a listing that could not start.
	ListDisks(ctx context.Context, project string) (inventory.DiskListing, error)
	// RegionQuotas reads the named metrics of one region. A metric the API did
	// not return comes back with Known=false.
	RegionQuotas(ctx context.Context, project, region string, metrics []string) ([]inventory.Quota, error)
	// GetDisk re-reads one disk; inventory.ErrNotFound if it is gone.
	GetDisk(ctx context.Context, key inventory.DiskKey) (inventory.Disk, error)
	// SnapshotDisk creates a snapshot of the disk with the given name and labels
	// and waits for the operation to finish.
	SnapshotDisk(ctx context.Context, key inventory.DiskKey, name string, labels map[string]string) error
	// StartSnapshot starts the snapshot without waiting for it: nil once
	// GCE accepted it, or when a snapshot of that name exists already.
	StartSnapshot(ctx context.Context, key inventory.DiskKey, name string, labels map[string]string) error
	// GetSnapshot reads one snapshot; inventory.ErrNotFound if there is none.
	GetSnapshot(ctx context.Context, project, name string) (inventory.DiskSnapshot, error)
	// DeleteDisk deletes the disk and waits for the operation to finish.
	// inventory.ErrNotFound if it was already gone.
	DeleteDisk(ctx context.Context, key inventory.DiskKey) error
}
