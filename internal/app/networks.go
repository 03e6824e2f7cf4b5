package app

import (
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/reconcile/kinds/netiface"
)

// NetworkOptions turns the ec2 section into one client option set per
// account and region.
func NetworkOptions(cfg *config.Config) []ec2.Options {
	e := netiface.SectionOf(cfg)
	out := make([]ec2.Options, 0, len(e.Networks))
	for _, n := range e.Networks {
		var tags map[string]string
		if len(n.SubnetTags) > 0 {
			tags = make(map[string]string, len(n.SubnetTags))
			for k, v := range n.SubnetTags {
				tags[k] = v
			}
		}
		out = append(out, ec2.Options{
			Service: awsclient.Service{
				Account:           n.Account,
				Region:            n.Region,
				Profile:           n.Profile,
				RoleARN:           n.RoleARN,
				ExternalID:        n.ExternalID,
				Endpoint:          e.Endpoint,
				RequestsPerSecond: e.RequestsPerSecond,
				Burst:             e.Burst,
				MaxAttempts:       e.MaxAttempts,
				UserAgent:         "reclaim/" + Version,
			},
			Subnets:          n.Subnets,
			SubnetTags:       tags,
			DeletesPerSecond: e.DeletesPerSecond,
			DeleteBurst:      e.DeleteBurst,
			PageSize:         int32(e.PageSize),
		})
	}
	return out
}
