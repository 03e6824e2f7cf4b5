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
	"reclaim.dev/reclaim/inventory/fleet"
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
// them. An AWS discoverer's listing counts for its account only once STS
// says its identity is that account's (sts:GetCallerIdentity, once per
// identity per run under eks.WithIdentityMemo); else it is incomplete and
// says what to fix.
func Discoverers(ctx context.Context, cfg *config.Config, log *zap.Logger) ([]fleet.Discoverer, error) {
	var out []fleet.Discoverer
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
				d := fleet.Discoverer{Platform: inventory.GKE, Scope: p, List: func(ctx context.Context) inventory.FleetListing { return c.Discover(ctx, p) }}
				if ts != nil {
					d.Token = func(inventory.FleetCluster) oauth2.TokenSource { return ts }
				}
				out = append(out, d)
			}
		}
	}
	var accounts []string
	for i, e := range cfg.Fleet.EKS {
		d, err := eksDiscoverer(ctx, e, identityOf(cfg, i), log)
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
		i := slices.IndexFunc(cfg.Fleet.EKS, func(e config.EKSDiscovery) bool { return e.Account == a })
		d, err := regionsDiscoverer(ctx, cfg, cfg.Fleet.EKS[i], identityOf(cfg, i), log)
		if err != nil {
			errs = append(errs, fmt.Errorf("fleet.eks account %s regions: %w", a, err))
			continue
		}
		out = append(out, d)
	}
	return out, errors.Join(errs...)
}

// identityOf names where fleet.eks[i]'s identity is configured, for the
// report: the entry itself, or, with fleet.eks left out, the kinds'
// section entry it was copied from.
func identityOf(cfg *config.Config, i int) string {
	e := cfg.Fleet.EKS[i]
	if cfg.Fleet.EveryRegion() {
		return fmt.Sprintf("the ecr.registries, ec2Interfaces.networks or ebs.regions entry of account %s in %s (fleet.eks is left out, so discovery reaches the account as it does)", e.Account, e.Region)
	}
	return fmt.Sprintf("fleet.eks[%d]", i)
}

// confirmed asks STS whose identity a discovery of e's account runs as:
// "" when it is the account's, else why none of its listings counts for
// the account, and what to fix (where names the entry that configures
// it). An identity of another account lists that account's clusters
// (usually none), which would pass for a complete, empty listing.
func confirmed(ctx context.Context, id *eks.Identity, e config.EKSDiscovery, where string) (problem string, calls int) {
	c, calls, err := id.Confirm(ctx, e.Account)
	var wrong *eks.WrongAccountError
	switch {
	case err == nil:
		return "", calls
	case errors.As(err, &wrong):
		var fix string
		switch {
		case e.RoleARN != "":
			fix = fmt.Sprintf("the role in %s (roleARN %s) lands in the wrong account — fix roleARN: a role of account %s", where, e.RoleARN, e.Account)
		case e.Profile != "":
			fix = fmt.Sprintf("the profile in %s (profile %q) is of the wrong account — fix profile, or set roleARN to a role of account %s", where, e.Profile, e.Account)
		default:
			fix = fmt.Sprintf("%s sets no profile or roleARN, and reclaim's own identity (IRSA, Pod Identity, the environment's keys) is of the wrong account — set roleARN there to a role of account %s that it may assume", where, e.Account)
		}
		return fmt.Sprintf("discovery for account %s ran as %s of account %s: %s", e.Account, c.ARN, c.Account, fix), calls
	default:
		return fmt.Sprintf("discovery for account %s could not confirm whose identity it runs as (sts:GetCallerIdentity): %v — its listings cannot count for the account: check the credentials %s reaches it with (profile, roleARN), and that STS is reachable", e.Account, err, where), calls
	}
}

// eksDiscoverer lists the EKS clusters of one account and region, once
// the identity is confirmed to be the account's (where names the entry
// that configures it).
func eksDiscoverer(ctx context.Context, e config.EKSDiscovery, where string, log *zap.Logger) (fleet.Discoverer, error) {
	c, err := eks.New(ctx, eks.Options{STSEndpoint: e.STSEndpoint, Service: awsclient.ServiceOf(e.AWSTarget, e.Endpoint, config.AWSRates{}, "reclaim/"+Version, log)})
	if err != nil {
		return fleet.Discoverer{}, err
	}
	scope := e.Account + "/" + e.Region
	return fleet.Discoverer{Platform: inventory.EKS, Scope: scope,
		List: func(ctx context.Context) inventory.FleetListing {
			p, calls := confirmed(ctx, c.Identity(), e, where)
			if p != "" {
				return inventory.FleetListing{Platform: inventory.EKS, Scope: scope, Problem: p, Calls: calls}
			}
			l := c.Discover(ctx)
			l.Calls += calls
			return l
		},
		Token: func(fc inventory.FleetCluster) oauth2.TokenSource { return c.TokenSource(fc.Name) }}, nil
}

// regionsService is how an account's regions are listed: from first, its
// first fleet.eks entry (its region, identity and EC2 endpoint).
func regionsService(first config.EKSDiscovery, log *zap.Logger) awsclient.Service {
	return awsclient.ServiceOf(first.AWSTarget, first.EC2Endpoint, config.AWSRates{}, "reclaim/"+Version, log)
}

// regionsDiscoverer lists an account's regions (fleet.Regions narrowed,
// fleet.eks's added), once first's identity is confirmed to be the
// account's (where names the entry that configures it); with fleet.eks
// left out, it expands into an EKS discoverer for each region fleet.eks
// does not list, built once and kept for the runner's later passes.
func regionsDiscoverer(ctx context.Context, cfg *config.Config, first config.EKSDiscovery, where string, log *zap.Logger) (fleet.Discoverer, error) {
	rc, err := ec2.NewRegions(ctx, regionsService(first, log))
	if err != nil {
		return fleet.Discoverer{}, err
	}
	id, err := eks.NewIdentity(ctx, awsclient.ServiceOf(first.AWSTarget, first.STSEndpoint, config.AWSRates{}, "reclaim/"+Version, log))
	if err != nil {
		return fleet.Discoverer{}, err
	}
	section := &cfg.Fleet
	d := fleet.Discoverer{Platform: inventory.Regions, Scope: first.Account, List: func(ctx context.Context) inventory.FleetListing {
		// Another account's regions would say where this one's clusters
		// and services do not run.
		p, calls := confirmed(ctx, id, first, where)
		if p != "" {
			return inventory.FleetListing{Platform: inventory.Regions, Scope: first.Account, Problem: p, Calls: calls}
		}
		l := rc.List(ctx)
		l.Calls += calls
		if l.Complete {
			enabled := l.Regions
			l.Regions = section.RegionsOf(first.Account, enabled)
			for _, r := range enabled {
				if !slices.Contains(l.Regions, r) {
					l.LeftOut = append(l.LeftOut, r)
				}
			}
		}
		return l
	}}
	if !section.EveryRegion() {
		return d, nil
	}
	var mu sync.Mutex
	built := map[string]fleet.Discoverer{}
	d.Expand = func(ctx context.Context, l inventory.FleetListing) []fleet.Discoverer {
		var more []fleet.Discoverer
		for _, r := range l.Regions {
			if slices.ContainsFunc(section.EKS, func(e config.EKSDiscovery) bool { return e.Account == first.Account && e.Region == r }) {
				continue // listed already
			}
			mu.Lock()
			ed, ok := built[r]
			mu.Unlock()
			if !ok {
				e := first
				e.Region = r
				var err error
				if ed, err = eksDiscoverer(ctx, e, where, log); err != nil {
					// A region reclaim cannot search holds what it could use.
					p := fmt.Sprintf("eks client for %s/%s: %v", first.Account, r, err)
					ed = fleet.Discoverer{Platform: inventory.EKS, Scope: first.Account + "/" + r,
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
