package fleet

import (
	"context"
	"slices"
	"sync"

	"golang.org/x/oauth2"

	"reclaim.dev/reclaim/inventory"
)

// Discoverer lists the clusters of one discovery scope (a GKE project, an
// EKS account and region) and mints the short-lived tokens its clusters are
// read with.
type Discoverer struct {
	Platform, Scope string
	List            func(ctx context.Context) inventory.FleetListing
	// Token returns the token source for one of its clusters; nil when the
	// scope cannot mint one (the cluster is then not read, and holds).
	Token func(c inventory.FleetCluster) oauth2.TokenSource
	// Expand, if set, returns the discoverers its listing calls for (an
	// account's regions call for the EKS listing of each): they run after.
	Expand func(ctx context.Context, l inventory.FleetListing) []Discoverer
}

// Discover runs every discoverer at once, then those their listings call
// for (Expand); one listing per discoverer it returns, in order.
func Discover(ctx context.Context, ds []Discoverer) ([]Discoverer, []inventory.FleetListing) {
	list := func(ds []Discoverer) []inventory.FleetListing {
		out := make([]inventory.FleetListing, len(ds))
		var wg sync.WaitGroup
		for i, d := range ds {
			wg.Go(func() {
				l := d.List(ctx)
				l.Platform, l.Scope = d.Platform, d.Scope
				out[i] = l
			})
		}
		wg.Wait()
		return out
	}
	out := list(ds)
	var more []Discoverer
	for i, d := range ds {
		if d.Expand != nil {
			more = append(more, d.Expand(ctx, out[i])...)
		}
	}
	if len(more) == 0 {
		return ds, out
	}
	return append(slices.Clip(ds), more...), append(out, list(more)...)
}
