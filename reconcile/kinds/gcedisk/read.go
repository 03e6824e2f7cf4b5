package gcedisk

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// Lister lists disks and quotas: the kind's read of its cloud
// (gcepd.Read). The GCE provider's Client is one.
type Lister interface {
	ListDisks(ctx context.Context, project string) (gce.Listing, error)
	RegionQuotas(ctx context.Context, project, region string, metrics []string) ([]gce.Quota, error)
}

var (
	_ Lister = (*gce.Client)(nil)
	_ API    = (*gce.Client)(nil)
)

// Open makes the GCE client the gce section describes (nil without one).
func Open(ctx context.Context, cfg *config.Config, _ *zap.Logger, userAgent string) (any, func(), error) {
	g := gcepd.GCEOf(cfg)
	if g == nil {
		return nil, nil, nil
	}
	return gcepd.Open(ctx, g, userAgent)
}

// Reader reads every project's disks, then the quotas of the regions the
// section names (or, when it names none, of every region a disk is in).
func Reader(cfg *config.Config, client any) func(context.Context) any {
	g, src := gcepd.GCEOf(cfg), client.(Lister)
	return func(ctx context.Context) any {
		disks := listDisks(ctx, src, g)
		return gcepd.Listing{Disks: disks, Quotas: readQuotas(ctx, src, g, disks)}
	}
}

func listDisks(ctx context.Context, src Lister, g *gcepd.GCE) []gce.Listing {
	out := make([]gce.Listing, len(g.Projects))
	each(len(g.Projects), g.Concurrency, func(i int) {
		l, err := src.ListDisks(ctx, g.Projects[i])
		if err != nil {
			l = gce.Listing{Project: g.Projects[i], Complete: false, Problem: err.Error()}
		}
		l.Project = g.Projects[i]
		out[i] = l
	})
	return out
}

func readQuotas(ctx context.Context, src Lister, g *gcepd.GCE, listings []gce.Listing) []gce.Quota {
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
	res := make([][]gce.Quota, len(jobs))
	each(len(jobs), g.Concurrency, func(i int) {
		j := jobs[i]
		qs, err := src.RegionQuotas(ctx, j.project, j.region, g.QuotaMetrics)
		if err != nil {
			for _, m := range g.QuotaMetrics {
				qs = append(qs, gce.Quota{Project: j.project, Region: j.region, Metric: m, Problem: fmt.Sprintf("regions.get: %v", err)})
			}
		}
		res[i] = qs
	})
	var out []gce.Quota
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
