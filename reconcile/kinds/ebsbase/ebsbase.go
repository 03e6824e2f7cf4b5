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
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/reconcile/engine"
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

// RegionUsers are the clusters that could use an account and region's
// volumes and snapshots, by reads (the taps their evidence comes from):
// every cluster read (configured or discovered) that is not known to be
// elsewhere (on GKE), every EKS cluster the cloud says lives in that
// account and region, read or not, and any cluster a failed discovery of
// it hides. Each holds what it could use until its reads are complete.
func RegionUsers(snap *inventory.View, account, region string, reads ...string) engine.Users {
	f := snap.Fleet
	u := engine.Users{Reads: reads, Scopes: []string{inventory.EKS + " " + account + "/" + region}}
	for _, m := range f.EKSOf(account) {
		if m.Cloud.Region() == region {
			u.Members = append(u.Members, m)
		}
	}
	for _, c := range snap.Clusters {
		if m, ok := f.Member(c.Name); ok && (m.Cloud.Platform == inventory.GKE || m.Where.Platform == inventory.GKE) {
			continue // a GKE cluster attaches no EBS volume
		}
		u.Clusters = append(u.Clusters, c.Name)
	}
	return u
}
