package app

import (
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
)

// assembleFleetOf assembles the fleet with the shared reads of the kinds
// cfg turns on, as a run does.
func assembleFleetOf(cfg *config.Config, discovers bool, ds []Discoverer, listings []inventory.FleetListing, apis map[string]apiServer, clouds map[string]any, now time.Time) fleetPlan {
	return assembleFleet(cfg, On(cfg).Reads(), discovers, ds, listings, apis, clouds, now)
}
