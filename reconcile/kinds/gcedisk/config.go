package gcedisk

import config "reclaim.dev/reclaim/configs"

// FromConfig makes the kind from the disks and gce sections; nil without a
// gce section. client is the gce read's (Open), nil: plan only.
func FromConfig(cfg *config.Config, client any) *Kind {
	g := GCEOf(cfg)
	if g == nil {
		return nil
	}
	dk := DisksOf(cfg)
	p := Policy{
		DiskPrice: cfg.Prices.DiskGBMonth,
		Regions:   g.Regions, Zones: g.Zones,
		Safety: dk.Safety, MinDetached: dk.MinDetached.Std(),
		ProtectLabel: dk.ProtectLabel, OwnerLabelKeys: dk.Ownership.LabelKeys, OwnerDescriptionContains: dk.Ownership.DescriptionContains,
		SnapshotBeforeDelete: dk.SnapshotBeforeDelete, SnapshotTimeout: dk.SnapshotTimeout.Std(),
		HeadroomWarning: g.HeadroomWarning.Fraction(),
	}
	api, _ := client.(API)
	return &Kind{Policy: p, API: api, SnapshotLabel: dk.SnapshotLabel}
}
