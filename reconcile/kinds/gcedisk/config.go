package gcedisk

import (
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

import config "reclaim.dev/reclaim/configs"

// FromConfig makes the kind from the disks and gce sections; nil without a
// gce section. client is the gce read's (Open), nil: plan only.
func FromConfig(cfg *config.Config, client any) *Kind {
	g := gcepd.GCEOf(cfg)
	if g == nil {
		return nil
	}
	dk := gcepd.DisksOf(cfg)
	p := Policy{
		DiskPrice: cfg.Prices.DiskGBMonth,
		Regions:   g.Regions, Zones: g.Zones,
		MinAge: dk.MinAge.Std(), Grace: dk.Grace.Std(), MinDetached: dk.MinDetached.Std(),
		ProtectLabel: dk.ProtectLabel, OwnerLabelKeys: dk.Ownership.LabelKeys, OwnerDescriptionContains: dk.Ownership.DescriptionContains,
		SnapshotBeforeDelete: dk.SnapshotBeforeDelete, SnapshotTimeout: dk.SnapshotTimeout.Std(),
		MaxDeletes: dk.MaxDeletesPerRun, MaxDeletePercent: dk.MaxDeletePercent.Fraction(),
		MaxDeleteGB: float64(dk.MaxDeleteSizePerRun) / 1e9, BreakerCandidates: dk.BreakerCandidates,
		HeadroomWarning: g.HeadroomWarning.Fraction(),
	}
	api, _ := client.(API)
	return &Kind{Policy: p, API: api, SnapshotLabel: dk.SnapshotLabel}
}
