package gcedisk

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"
)

// Source names the read of the gce section's projects: their disks and
// quotas (Snapshot.Clouds[Source], ListingOf). The disks and
// workflow-pvcs kinds rely on it.
const Source = "gce"

// Listing is what the gce read returns.
type Listing struct {
	Disks  []inventory.DiskListing // one per project
	Quotas []inventory.Quota
}

// ListingOf is the run's gce read (empty when it did not read GCE).
func ListingOf(snap *inventory.Snapshot) Listing { return inventory.CloudOf[Listing](snap, Source) }

// DiskSource lists disks and quotas; the GCE provider is one.
type DiskSource interface {
	ListDisks(ctx context.Context, project string) (inventory.DiskListing, error)
	RegionQuotas(ctx context.Context, project, region string, metrics []string) ([]inventory.Quota, error)
}

// Open makes the GCE client the gce section describes (nil without one).
func Open(ctx context.Context, cfg *config.Config, _ *zap.Logger, userAgent string) (any, func(), error) {
	g := GCEOf(cfg)
	if g == nil {
		return nil, nil, nil
	}
	c, err := gce.New(ctx, gce.Options{Endpoint: g.Endpoint, WithoutAuthentication: g.WithoutAuthentication,
		CredentialsFile: g.CredentialsFile, PageSize: int(g.PageSize), UserAgent: userAgent})
	if err != nil {
		return nil, nil, err
	}
	return c, func() { c.Close() }, nil
}

// Reader reads every project's disks, then the quotas of the regions the
// section names (or, when it names none, of every region a disk is in).
func Reader(cfg *config.Config, client any) func(context.Context) any {
	g, src := GCEOf(cfg), client.(DiskSource)
	return func(ctx context.Context) any {
		disks := listDisks(ctx, src, g)
		return Listing{Disks: disks, Quotas: readQuotas(ctx, src, g, disks)}
	}
}

func listDisks(ctx context.Context, src DiskSource, g *GCE) []inventory.DiskListing {
	out := make([]inventory.DiskListing, len(g.Projects))
	each(len(g.Projects), g.Concurrency, func(i int) {
		l, err := src.ListDisks(ctx, g.Projects[i])
		if err != nil {
			l = inventory.DiskListing{Project: g.Projects[i], Complete: false, Problem: err.Error()}
		}
		l.Project = g.Projects[i]
		out[i] = l
	})
	return out
}

func readQuotas(ctx context.Context, src DiskSource, g *GCE, listings []inventory.DiskListing) []inventory.Quota {
	if len(g.QuotaMetrics) == 0 {
		return nil
	}
	type pr struct{ project, region string }
	var jobs []pr
	for _, l := range listings {
		regions := g.Regions
		if len(regions) == 0 {
			set := map[string]bool{}
			for _, d := range l.Disks {
				set[d.Region()] = true
			}
			for r := range set {
				regions = append(regions, r)
			}
			sort.Strings(regions)
		}
		for _, r := range regions {
			jobs = append(jobs, pr{l.Project, r})
		}
	}
	res := make([][]inventory.Quota, len(jobs))
	each(len(jobs), g.Concurrency, func(i int) {
		j := jobs[i]
		qs, err := src.RegionQuotas(ctx, j.project, j.region, g.QuotaMetrics)
		if err != nil {
			for _, m := range g.QuotaMetrics {
				qs = append(qs, inventory.Quota{Project: j.project, Region: j.region, Metric: m, Problem: fmt.Sprintf("regions.get: %v", err)})
			}
		}
		res[i] = qs
	})
	var out []inventory.Quota
	for _, qs := range res {
		out = append(out, qs...)
	}
	return out
}

// each runs f(0..n-1) with at most limit at once.
func each(n, limit int, f func(i int)) {
	if limit < 1 {
		limit = 1
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}
