package ec2interface

import (
	"context"
	"maps"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ec2"
)

// Read names the read of the ec2Interfaces section's subnets and interfaces, per
// account and region (View.Clouds[Read], NetworksOf). The interfaces
// kind relies on it, and fleet discovery reads an EKS cluster's subnets
// from it.
const Read = "ec2"

// NetworksOf is the run's read of the networks.
func NetworksOf(snap *inventory.View) []inventory.NetworkListing {
	return NetworksIn(snap.Clouds)
}

// NetworksIn is the networks among a run's cloud reads.
func NetworksIn(clouds map[string]any) []inventory.NetworkListing {
	n, _ := clouds[Read].([]inventory.NetworkListing)
	return n
}

// Open makes one EC2 client per account and region of the ec2Interfaces section
// (nil without one): its List([]inventory.NetworkListing) is the read.
func Open(ctx context.Context, cfg *config.Config, log *zap.Logger, userAgent string) (any, func(), error) {
	if SectionOf(cfg) == nil {
		return nil, nil, nil
	}
	opts := NetworkOptions(cfg, log, userAgent)
	f, err := ec2.NewFleet(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	return f, nil, nil
}

// NetworkOptions turns the ec2Interfaces section into one client option set per
// account and region.
func NetworkOptions(cfg *config.Config, log *zap.Logger, userAgent string) []ec2.Options {
	e := SectionOf(cfg)
	out := make([]ec2.Options, 0, len(e.Networks))
	for _, n := range e.Networks {
		out = append(out, ec2.Options{
			Service:          awsclient.ServiceOf(n.AWSTarget, e.Endpoint, e.AWSRates, userAgent, log),
			Subnets:          n.Subnets,
			SubnetTags:       maps.Clone(n.SubnetTags),
			DeletesPerSecond: e.DeletesPerSecond,
			DeleteBurst:      e.DeleteBurst,
			PageSize:         int32(e.PageSize),
		})
	}
	return out
}
