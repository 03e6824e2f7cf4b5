package app

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	"golang.org/x/oauth2"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/eks"
	"reclaim.dev/reclaim/providers/gke"
)

// Discoverers builds one discoverer per GKE project and EKS account and
// region of the fleet section. Nothing is called until a pass lists them.
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
	for i, e := range cfg.Fleet.EKS {
		c, err := eks.New(ctx, eks.Options{STSEndpoint: e.STSEndpoint, Service: awsclient.Service{Account: e.Account, Region: e.Region, Profile: e.Profile,
			RoleARN: e.RoleARN, ExternalID: e.ExternalID, Endpoint: e.Endpoint, UserAgent: "reclaim/" + Version, Logger: awsclient.ZapLogger(log)}})
		if err != nil {
			errs = append(errs, fmt.Errorf("fleet.eks[%d]: %w", i, err))
			continue
		}
		out = append(out, Discoverer{Platform: inventory.EKS, Scope: e.Account + "/" + e.Region, List: c.Discover,
			Token: func(fc inventory.FleetCluster) oauth2.TokenSource { return c.TokenSource(fc.Name) }})
	}
	return out, errors.Join(errs...)
}
