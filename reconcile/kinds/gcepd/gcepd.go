// Package gcepd is what the two kinds of GCE persistent disks stand on:
// gce-disk, which deletes the disks, and k8s-pvc, whose deletes free them
// through their PVs. It holds their config sections (gce, and disks: the
// disks' policy, and k8s-pvc's switch, grace and caps), the name and
// result of the gce read (gce-disk's cloud, which k8s-pvc prices its
// PVCs' quota pools with), and the unit and quota pools both free.
//
// It is no kind: it has no Module and deletes nothing. Kinds import it,
// never each other (arch_test.go).
package gcepd

import (
	"context"
	"fmt"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"

	// Initialized after kind, as every kind is, so its sections register
	// where gce-disk's always did: after ebs and ecr, before jobs
	// (internal/app TestSectionsKeepTheirOrder).
	_ "reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Read names the read of the gce section's projects: their disks and
// quotas (View.Clouds[Read], ListingOf). gce-disk reads it (its
// module's Cloud); k8s-pvc relies on it for its PVCs' quota pools.
const Read = "gce"

// Listing is what the gce read returns.
type Listing struct {
	Disks  []gce.Listing // one per project
	Quotas []gce.Quota
}

// ListingOf is the run's gce read (empty when it did not read GCE).
func ListingOf(snap *inventory.View) Listing { return inventory.CloudOf[Listing](snap, Read) }

// Open makes the GCE client the gce section g describes: gce-disk's and
// gce-snapshot's clouds both read through one of these.
func Open(ctx context.Context, g *GCE, userAgent string) (any, func(), error) {
	c, err := gce.New(ctx, gce.Options{Endpoint: g.Endpoint, WithoutAuthentication: g.WithoutAuthentication,
		CredentialsFile: g.CredentialsFile, PageSize: int(g.PageSize), UserAgent: userAgent})
	if err != nil {
		return nil, nil, err
	}
	return c, func() { c.Close() }, nil
}

// GB is what a disk's or a PVC's deletion frees: GB of disk quota, which
// GCE counts in GiB (a disk of sizeGb 100 is 100 GiB).
var GB = &amount.Unit{Name: "GB", Key: amount.KeySizeGB, Say: func(n int64) string { return fmt.Sprintf("%d GB", n) }, Bytes: amount.GiB}

// QuotaMetricOf maps a disk type to the regional quota it counts against, as
// Google documents it: pd-balanced, pd-ssd and pd-extreme are SSD-backed and count
// against SSD_TOTAL_GB (GKE's default standard-rwo class makes pd-balanced disks,
// which is why the Argo leak exhausts SSD_TOTAL_GB); pd-standard counts against
// DISKS_TOTAL_GB. Hyperdisks have quotas of their own that reclaim does not map.
func QuotaMetricOf(diskType string) string {
	switch diskType {
	case "pd-balanced", "pd-ssd", "pd-extreme":
		return "SSD_TOTAL_GB"
	case "pd-standard":
		return "DISKS_TOTAL_GB"
	}
	return ""
}

// Pool names a regional quota: project/region/metric.
func Pool(project, region, metric string) string {
	if metric == "" {
		return ""
	}
	return project + "/" + region + "/" + metric
}
