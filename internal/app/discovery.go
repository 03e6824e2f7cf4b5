package app

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	"golang.org/x/oauth2"

	"reclaim.dev/reclaim/config"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/eks"
)

// Discoverers builds one discoverer per EKS account and region of the fleet
// section (GKE projects when GKE discovery is built in). Nothing is called
// until a pass lists them.
func Discoverers(ctx context.Context, cfg *config.Config, log *zap.Logger) ([]Discoverer, error) {
	var out []Discoverer
	var errs []error
	for i, e := range cfg.Fleet.EKS {
		c, err := eks.New(ctx, eks.Options{Account: e.Account, Region: e.Region, Profile: e.Profile, RoleARN: e.RoleARN,
			ExternalID: e.ExternalID, Endpoint: e.Endpoint, STSEndpoint: e.STSEndpoint, UserAgent: "reclaim/" + Version, Logger: SDKLogger(log)})
		if err != nil {
			errs = append(errs, fmt.Errorf("fleet.eks[%d]: %w", i, err))
			continue
		}
		out = append(out, Discoverer{Platform: inventory.EKS, Scope: e.Account + "/" + e.Region, List: c.Discover,
			Token: func(fc inventory.FleetCluster) oauth2.TokenSource { return c.TokenSource(fc.Name) }})
	}
	return out, errors.Join(errs...)
}
