package inventory

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// DiskSource lists disks and quotas. The GCE provider satisfies it.
type DiskSource interface {
	ListDisks(ctx context.Context, project string) (DiskListing, error)
	RegionQuotas(ctx context.Context, project, region string, metrics []string) ([]Quota, error)
}

// CollectOptions say what one run collects.
type CollectOptions struct {
	Disks    DiskSource // nil: no GCE work
	Projects []string
	// Regions limits quota reads; empty means every region a disk was seen in.
	Regions      []string
	QuotaMetrics []string
	Concurrency  int
	// Clusters collects every cluster; it must return one result per cluster,
	// complete or not, and never fail as a whole.
	Clusters func(ctx context.Context) []ClusterRefs
	// Registries lists every ECR registry in scope (nil: no image work); like
	// Clusters it reports incompleteness in its results and never fails.
	Registries func(ctx context.Context) []RegistryListing
	// ImageSources reads the manifest directories (references of images that
	// will run); they are read with the clusters, after the clouds.
	ImageSources func(ctx context.Context) []ImageSource
	// Networks lists EC2 subnets and interfaces (nil: none); like Clusters it
	// reports incompleteness in its results and never fails.
	Networks func(ctx context.Context) []NetworkListing
	// Discover lists the clusters the clouds say exist (nil: discovery is
	// off); it runs with the clouds. FleetClusters, if set, replaces
	// Clusters: it joins the listings with the configured clusters and
	// collects every cluster of the fleet it reads (the subnet listings say
	// which subnets a discovered cluster's VPC holds).
	Discover      func(ctx context.Context) []FleetListing
	FleetClusters func(ctx context.Context, listings []FleetListing, networks []NetworkListing) (*Fleet, []ClusterRefs)
	// Clouds are the kinds' own cloud reads, with the other clouds.
	Clouds []CloudRead
	Now    func() time.Time
}

// CloudRead is a kind's own read of a cloud (app.Registration.Cloud): it
// runs with the other clouds, before the clusters, and what it returns is
// Snapshot.Clouds[Name]. Like every listing it never fails as a whole: what
// it returns says what it could not read, and the kind's proposals report
// that as sources the engine checks.
type CloudRead struct {
	Name string
	List func(ctx context.Context) any
}

// Collect lists the clouds first (GCE, ECR, EC2 and the kinds' own cloud
// reads side by side) and the clusters second, so the cluster view is the fresher one: a disk or image created
// after its cloud listing is not seen at all, while a PV or pod created after
// the cloud listing is still seen.
func Collect(ctx context.Context, o CollectOptions) Snapshot {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	s := Snapshot{TakenAt: now()}
	var wg sync.WaitGroup
	if o.Disks != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Disks = collectDisks(ctx, o)
			s.Quotas = collectQuotas(ctx, o, s.Disks)
		}()
	}
	if o.Registries != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Registries = o.Registries(ctx)
		}()
	}
	if o.Networks != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Networks = o.Networks(ctx)
		}()
	}
	clouds := make([]any, len(o.Clouds))
	for i, c := range o.Clouds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clouds[i] = c.List(ctx)
		}()
	}
	var listings []FleetListing
	if o.Discover != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			listings = o.Discover(ctx)
		}()
	}
	wg.Wait()
	for i, c := range o.Clouds {
		if s.Clouds == nil {
			s.Clouds = make(map[string]any, len(o.Clouds))
		}
		s.Clouds[c.Name] = clouds[i]
	}
	if o.ImageSources != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.ImageSources = o.ImageSources(ctx)
		}()
	}
	switch {
	case o.FleetClusters != nil:
		s.Fleet, s.Clusters = o.FleetClusters(ctx, listings, s.Networks)
	case o.Clusters != nil:
		s.Clusters = o.Clusters(ctx)
	}
	wg.Wait()
	return s
}

func collectDisks(ctx context.Context, o CollectOptions) []DiskListing {
	out := make([]DiskListing, len(o.Projects))
	each(len(o.Projects), o.Concurrency, func(i int) {
		l, err := o.Disks.ListDisks(ctx, o.Projects[i])
		if err != nil {
			l = DiskListing{Project: o.Projects[i], Complete: false, Problem: err.Error()}
		}
		l.Project = o.Projects[i]
		out[i] = l
	})
	return out
}

func collectQuotas(ctx context.Context, o CollectOptions, listings []DiskListing) []Quota {
	if len(o.QuotaMetrics) == 0 {
		return nil
	}
	type pr struct{ project, region string }
	var jobs []pr
	for _, l := range listings {
		regions := o.Regions
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
	res := make([][]Quota, len(jobs))
	each(len(jobs), o.Concurrency, func(i int) {
		j := jobs[i]
		qs, err := o.Disks.RegionQuotas(ctx, j.project, j.region, o.QuotaMetrics)
		if err != nil {
			for _, m := range o.QuotaMetrics {
				qs = append(qs, Quota{Project: j.project, Region: j.region, Metric: m, Problem: fmt.Sprintf("regions.get: %v", err)})
			}
		}
		res[i] = qs
	})
	var out []Quota
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
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}(i)
	}
	wg.Wait()
}
