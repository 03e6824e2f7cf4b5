package inventory

// Regions is the platform of a regions listing: one AWS account's enabled
// regions (ec2:DescribeRegions), FleetListing.Scope being the account and
// FleetListing.Regions what it found. An account's regions decide where
// its clusters and image consumers are searched, and where a puller of an
// ECR registry may run: a failed listing leaves them unknown, and holds
// everything a cluster or consumer there could use.
const Regions = "regions"

// RegionsOf is the listing of account's regions in f; ok false when the
// run did not list them (discovery off, or no listing for the account).
func (f *Fleet) RegionsOf(account string) (l FleetListing, ok bool) {
	if f == nil {
		return FleetListing{}, false
	}
	for _, l := range f.Listings {
		if l.Platform == Regions && l.Scope == account {
			return l, true
		}
	}
	return FleetListing{}, false
}
