package gce_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/contracttest"
	"reclaim.dev/reclaim/providers/gce/gcefake"
)

// The GCE provider keeps the delete contract the applier relies on, for zonal
// and regional disks.
func TestDeleteContract(t *testing.T) {
	for _, regional := range []bool{false, true} {
		t.Run(fmt.Sprintf("regional=%v", regional), func(t *testing.T) {
			srv := newFake(t, gcefake.Options{})
			c := newClient(t, srv.URL())
			var n atomic.Int32
			key := func(id string) inventory.DiskKey {
				k, err := inventory.ParseDiskKey(id)
				if err != nil {
					t.Fatal(err)
				}
				return k
			}
			missing := "projects/p1/zones/us-east1-b/disks/never-was"
			if regional {
				missing = "projects/p1/regions/us-east1/disks/never-was"
			}
			contracttest.Run(t, contracttest.Deleter{
				Get: func(ctx context.Context, id string) error {
					_, err := c.GetDisk(ctx, key(id))
					return err
				},
				Delete: func(ctx context.Context, id string) error { return c.DeleteDisk(ctx, key(id)) },
				Existing: func(t *testing.T) string {
					d := gcefake.Disk{Name: fmt.Sprintf("d-%d", n.Add(1)), SizeGB: 10, Zone: "us-east1-b"}
					if regional {
						d.Zone, d.Region, d.ReplicaZones = "", "us-east1", []string{"us-east1-b", "us-east1-c"}
					}
					return srv.AddDisk("p1", d)
				},
				Missing: missing,
			})
		})
	}
}
