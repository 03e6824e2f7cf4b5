// Package ebsbase is what the EBS kinds stand on: the ebs section (where
// the volumes are, how to reach them, the snapshot tag), the client it
// opens, and the description of the snapshots ebs-volume makes, by which
// ebs-snapshot knows them. No kind imports another.
package ebsbase

import (
	"context"
	"strings"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ebs"
)

// Open opens the EBS kinds' cloud from the ebs section: the provider's Fleet, one
// client per region. A nil client when the section is absent.
func Open(ctx context.Context, cfg *config.Config, log *zap.Logger, userAgent string) (any, func(), error) {
	s := SectionOf(cfg)
	if s == nil {
		return nil, nil, nil
	}
	opts := make([]ebs.Options, len(s.Regions))
	for i, r := range s.Regions {
		opts[i] = ebs.Options{Service: awsclient.ServiceOf(r.AWSTarget, s.Endpoint, s.AWSRates, userAgent, log),
			QuotasEndpoint: s.QuotasEndpoint, PageSize: int32(s.PageSize), DeletesPerSecond: s.DeletesPerSecond, DeleteBurst: s.DeleteBurst}
	}
	f, err := ebs.NewFleet(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	return f, nil, nil
}

// SnapshotDescription is the description of the snapshot reclaim makes of
// a volume before deleting it; ebs-snapshot expires only snapshots whose
// description IsSnapshotDescription says is one.
func SnapshotDescription(volume, madeFor string) string {
	desc := "reclaim: " + volume + " before its delete"
	if madeFor != "" {
		desc += ", made for " + madeFor
	}
	return desc
}

// IsSnapshotDescription says whether desc is SnapshotDescription's for volume.
func IsSnapshotDescription(desc, volume string) bool {
	base := SnapshotDescription(volume, "")
	return volume != "" && (desc == base || strings.HasPrefix(desc, base+", made for "))
}

// IDs are how an EBS kind names its resources in decisions:
// PREFIX:ACCOUNT/REGION/RESOURCE, the resource's id starting Resource
// ("vol-", "snap-").
type IDs struct{ Prefix, Resource string }

// ID is the decision id of resource in account and region.
func (f IDs) ID(account, region, resource string) string {
	return f.Prefix + account + "/" + region + "/" + resource
}

// Parse reads an id ID made; ok false for any other.
func (f IDs) Parse(id string) (account, region, resource string, ok bool) {
	rest, found := strings.CutPrefix(id, f.Prefix)
	parts := strings.Split(rest, "/")
	if !found || len(parts) != 3 || parts[0] == "" || parts[1] == "" || !strings.HasPrefix(parts[2], f.Resource) {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}
