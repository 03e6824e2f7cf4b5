package inventory

import (
	"context"
	"sync"
	"time"
)

// CollectOptions say what one run collects.
type CollectOptions struct {
	// Clusters collects every cluster; it must return one result per cluster,
	// complete or not, and never fail as a whole.
	Clusters func(ctx context.Context) []ClusterRefs
	// Discover lists the clusters the clouds say exist (nil: discovery is
	// off); it runs with the clouds. FleetClusters, if set, replaces
	// Clusters: it joins the listings with the configured clusters and
	// collects every cluster of the fleet it reads (what the clouds read,
	// by name, may say more about a discovered cluster: the subnets of
	// its VPC).
	Discover      func(ctx context.Context) []FleetListing
	FleetClusters func(ctx context.Context, listings []FleetListing, clouds map[string]any) (*Fleet, []ClusterRefs)
	// Clouds are the registered cloud reads the run's kinds rely on.
	Clouds []CloudRead
	Now    func() time.Time
}

// CloudRead is one named read of a cloud (kind.Cloud): GCE disks and
// quotas, ECR registries, EC2 subnets and interfaces, a kind's own. What it
// returns is View.Clouds[Name]. Like every listing it never fails as a
// whole: what it returns says what it could not read, and the kinds'
// proposals report that as sources the engine checks.
type CloudRead struct {
	Name string
	List func(ctx context.Context) any
	// WithClusters reads it with the clusters, after the other clouds: it
	// is evidence of use (manifests, ECS tasks), which must be at least as
	// fresh as the listings it is held against.
	WithClusters bool
}

// Collect lists the clouds first (every cloud read side by side, with
// discovery) and the clusters second, with the reads of use outside them,
// so the view of use is the fresher one: a disk or image created after its
// cloud listing is not seen at all, while a PV or pod created after the
// cloud listing is still seen.
func Collect(ctx context.Context, o CollectOptions) View {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	s := View{TakenAt: now()}
	clouds := make([]any, len(o.Clouds))
	var wg sync.WaitGroup
	read := func(late bool) {
		for i, c := range o.Clouds {
			if c.WithClusters == late {
				wg.Go(func() { clouds[i] = c.List(ctx) })
			}
		}
	}
	read(false)
	var listings []FleetListing
	if o.Discover != nil {
		wg.Go(func() { listings = o.Discover(ctx) })
	}
	wg.Wait()
	if len(o.Clouds) > 0 {
		s.Clouds = make(map[string]any, len(o.Clouds))
	}
	for i, c := range o.Clouds {
		if !c.WithClusters {
			s.Clouds[c.Name] = clouds[i]
		}
	}
	read(true)
	clustersAt := now()
	switch {
	case o.FleetClusters != nil:
		s.Fleet, s.Clusters = o.FleetClusters(ctx, listings, s.Clouds)
	case o.Clusters != nil:
		s.Clusters = o.Clusters(ctx)
	}
	for i := range s.Clusters {
		if s.Clusters[i].ReadAt.IsZero() { // a record's says when it was taken
			s.Clusters[i].ReadAt = clustersAt
		}
	}
	wg.Wait()
	for i, c := range o.Clouds {
		if c.WithClusters {
			s.Clouds[c.Name] = clouds[i]
		}
	}
	return s
}

// CloudOf is what the cloud read name returned in s, as a T: the zero T
// when the run did not read it.
func CloudOf[T any](s *View, name string) T {
	v, _ := s.Clouds[name].(T)
	return v
}
