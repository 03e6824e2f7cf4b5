package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/oauth2"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/providers/gke"
)

// Discoverers builds one discoverer per GKE project and EKS account and
// region of the fleet section, and one per AWS account of it that lists
// the account's enabled regions (from its first region, with its
// identity). With fleet.eks left out, that one adds a discoverer for each
// enabled region fleet.regions keeps. Nothing is called until a pass lists
// them.
func Discoverers(ctx context.Context, cfg *config.Config, log *zap.Logger) ([]Discoverer, error) {
	var out []Discoverer
	var errs []error
	if g := cfg.Fleet.GKE; len(g.Projects) > 0 {
		c, err := gke.New(ctx, gke.Options{Endpoint: g.Endpoint, WithoutAuthentication: g.WithoutAuthentication,
			CredentialsFile: g.CredentialsFile, PrivateEndpoint: g.PrivateEndpoint, UserAgent: "reclaim/" + Version})
		var ts oauth2.TokenSource
		if err == nil && !g.WithoutAuthentication {
			ts, err = gke.TokenSource(ctx, g.CredentialsFile)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("fleet.gke: %w", err))
		} else {
			for _, p := range g.Projects {
				d := Discoverer{Platform: inventory.GKE, Scope: p, List: func(ctx context.Context) inventory.FleetListing { return c.Discover(ctx, p) }}
				if ts != nil {
					d.Token = func(inventory.FleetCluster) oauth2.TokenSource { return ts }
				}
				out = append(out, d)
			}
		}
	}
	var accounts []string
	for i, e := range cfg.Fleet.EKS {
		d, err := eksDiscoverer(ctx, e, log)
		if err != nil {
			errs = append(errs, fmt.Errorf("fleet.eks[%d]: %w", i, err))
			continue
		}
		out = append(out, d)
		if !slices.Contains(accounts, e.Account) {
			accounts = append(accounts, e.Account)
		}
	}
	for _, a := range accounts {
		first := cfg.Fleet.EKS[slices.IndexFunc(cfg.Fleet.EKS, func(e config.EKSDiscovery) bool { return e.Account == a })]
		d, err := regionsDiscoverer(ctx, cfg, first, log)
		if err != nil {
			errs = append(errs, fmt.Errorf("fleet.eks account %s regions: %w", a, err))
			continue
		}
		out = append(out, d)
	}
	return out, errors.Join(errs...)
}

// eksDiscoverer lists the EKS clusters of one account and region.
func eksDiscoverer(ctx context.Context, e config.EKSDiscovery, log *zap.Logger) (Discoverer, error) {
	c, err := eks.New(ctx, eks.Options{STSEndpoint: e.STSEndpoint, Service: awsclient.ServiceOf(e.AWSTarget, e.Endpoint, config.AWSRates{}, "reclaim/"+Version, log)})
	if err != nil {
		return Discoverer{}, err
	}
	return Discoverer{Platform: inventory.EKS, Scope: e.Account + "/" + e.Region, List: c.Discover,
		Token: func(fc inventory.FleetCluster) oauth2.TokenSource { return c.TokenSource(fc.Name) }}, nil
}

// regionsService is how an account's regions are listed: from first, its
// first fleet.eks entry (its region, identity and EC2 endpoint).
func regionsService(first config.EKSDiscovery, log *zap.Logger) awsclient.Service {
	return awsclient.ServiceOf(first.AWSTarget, first.EC2Endpoint, config.AWSRates{}, "reclaim/"+Version, log)
}

// regionsDiscoverer lists an account's regions (fleet.Regions narrowed,
// fleet.eks's added); with fleet.eks left out, it expands into an EKS
// discoverer for each region fleet.eks does not list, built once and kept
// for the runner's later passes.
func regionsDiscoverer(ctx context.Context, cfg *config.Config, first config.EKSDiscovery, log *zap.Logger) (Discoverer, error) {
	rc, err := ec2.NewRegions(ctx, regionsService(first, log))
	if err != nil {
		return Discoverer{}, err
	}
	fleet := &cfg.Fleet
	d := Discoverer{Platform: inventory.Regions, Scope: first.Account, List: func(ctx context.Context) inventory.FleetListing {
		l := rc.List(ctx)
		if l.Complete {
			enabled := l.Regions
			l.Regions = fleet.RegionsOf(first.Account, enabled)
			for _, r := range enabled {
				if !slices.Contains(l.Regions, r) {
					l.LeftOut = append(l.LeftOut, r)
				}
			}
		}
		return l
	}}
	if !fleet.EveryRegion() {
		return d, nil
	}
	var mu sync.Mutex
	built := map[string]Discoverer{}
	d.Expand = func(ctx context.Context, l inventory.FleetListing) []Discoverer {
		var more []Discoverer
		for _, r := range l.Regions {
			if slices.ContainsFunc(fleet.EKS, func(e config.EKSDiscovery) bool { return e.Account == first.Account && e.Region == r }) {
				continue // listed already
			}
			mu.Lock()
			ed, ok := built[r]
			mu.Unlock()
			if !ok {
				e := first
				e.Region = r
				var err error
				if ed, err = eksDiscoverer(ctx, e, log); err != nil {
					// A region reclaim cannot search holds what it could use.
					p := fmt.Sprintf("eks client for %s/%s: %v", first.Account, r, err)
					ed = Discoverer{Platform: inventory.EKS, Scope: first.Account + "/" + r,
						List: func(context.Context) inventory.FleetListing { return inventory.FleetListing{Problem: p} }}
				} else {
					mu.Lock()
					built[r] = ed
					mu.Unlock()
				}
			}
			more = append(more, ed)
		}
		return more
	}
	return d, nil
}
