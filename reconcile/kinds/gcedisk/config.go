package gcedisk

import (
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// FromConfig makes the kind from the gce and disks sections, as they are;
// nil without a gce section. client is the gce read's (Open), nil: plan
// only.
func FromConfig(cfg *config.Config, client any) *Kind {
	g := gcepd.GCEOf(cfg)
	if g == nil {
		return nil
	}
	api, _ := client.(API)
	return &Kind{GCE: *g, Disks: *gcepd.DisksOf(cfg), DiskPrice: cfg.Prices.DiskGBMonth, API: api}
}
