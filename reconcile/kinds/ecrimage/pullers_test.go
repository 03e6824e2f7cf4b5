package ecrimage_test

import (
	"strings"
	"testing"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

// Who a repository or registry policy lets pull must be read: an account
// whose EKS clusters and consumers reclaim reads, or a declaration with a
// reason. Any other puller holds the trims of what it may pull.
func TestPullersReclaimDoesNotReadHold(t *testing.T) {
	const workload = "444455556666"
	read := func(s *inventory.View) {
		s.Fleet = &inventory.Fleet{Discovery: true, Listings: []inventory.FleetListing{
			{Platform: inventory.EKS, Scope: acct + "/us-east-1", Complete: true},
			{Platform: inventory.EKS, Scope: workload + "/us-east-1", Complete: true},
		}}
		s.Clouds[ecrimage.UsersRead] = append(ecrimage.ImageSourcesOf(s), inventory.ImageSource{Kind: "ecs", Name: "ecs:" + workload + "/us-east-1", Complete: true},
			inventory.ImageSource{Kind: "lambda", Name: "lambda:" + workload + "/us-east-1", Complete: true})
	}
	for _, tc := range []struct {
		name     string
		mutate   func(*inventory.View)
		declared map[string]string
		held     string // "" when the trim goes
	}{
		{"no policy", func(*inventory.View) {}, nil, ""},
		{"the registry's own account", func(s *inventory.View) { ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{acct} }, nil, ""},
		{"a workload account reclaim does not read", func(s *inventory.View) { ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{workload} }, nil,
			"lets account " + workload + " pull, but reclaim reads no EKS cluster of it (add it to fleet.eks) and no ECS, Lambda or Batch use of it"},
		{"a workload account whose clusters and consumers are read", func(s *inventory.View) {
			read(s)
			ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{workload}
		}, nil, ""},
		{"a workload account read in one of its two regions", func(s *inventory.View) {
			read(s)
			s.Fleet.Listings = append(s.Fleet.Listings, inventory.FleetListing{Platform: inventory.Regions, Scope: workload, Complete: true, Regions: []string{"eu-west-1", "us-east-1"}})
			ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{workload}
		}, nil, "lets account " + workload + " pull, but reclaim reads no EKS cluster of it in eu-west-1 (add the region to fleet.eks) and no ECS, Lambda or Batch use of it in eu-west-1"},
		{"its clusters read, its consumers not", func(s *inventory.View) {
			read(s)
			s.Clouds[ecrimage.UsersRead] = nil
			ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{workload}
		}, nil, "no ECS, Lambda or Batch use of it in us-east-1 (add the region to ecr.consumers)"},
		{"a cluster of the workload account is not read", func(s *inventory.View) {
			read(s)
			s.Fleet.Members = []inventory.FleetMember{{Name: "wl", State: inventory.MemberExcluded, Discovered: true,
				Cloud: inventory.FleetCluster{Name: "wl", Platform: inventory.EKS, Account: workload, Location: "us-east-1"}}}
			ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{workload}
		}, nil, "cluster wl"},
		{"declared out of scope", func(s *inventory.View) { ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{workload} },
			map[string]string{workload: "a vendor that pulls only release tags"}, ""},
		{"anyone", func(s *inventory.View) { ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{"*"} }, nil, "lets anyone pull"},
		{"an organization", func(s *inventory.View) {
			ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{"org:o-a1b2c3d4e5"}
		}, nil, "organization o-a1b2c3d4e5"},
		{"an organization declared", func(s *inventory.View) {
			ecrimage.RegistriesOf(s)[0].Repos[0].Pullers = []string{"org:o-a1b2c3d4e5"}
		},
			map[string]string{"o-a1b2c3d4e5": "every account with clusters is in fleet.eks"}, ""},
		{"the registry policy's puller", func(s *inventory.View) { ecrimage.RegistriesOf(s)[0].Pullers = []string{workload} }, nil, "the registry policy lets account " + workload},
		{"the registry policy could not be read", func(s *inventory.View) {
			ecrimage.RegistriesOf(s)[0].PullersProblem = "GetRegistryPolicy: AccessDenied"
		}, nil,
			"who the registry policy lets pull is unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := imageSnap(images(10))
			tc.mutate(&snap)
			pol := imagePolicy(10, 9, 6, 1)
			pol.OutOfScopePullers = tc.declared
			p := planTwice(t, snap, pol)
			n := len(deleted(p))
			if tc.held == "" {
				if n != 4 {
					t.Fatalf("deleted %d, want 4\n%s", n, dump(p))
				}
				if tc.declared != nil && !strings.Contains(strings.Join(p.Notices, "\n"), "ecr.outOfScopePullers") {
					t.Errorf("the declaration is not repeated: %q", p.Notices)
				}
				return
			}
			if n != 0 {
				t.Fatalf("deleted %d images a puller reclaim does not read may run\n%s", n, dump(p))
			}
			for d := range p.All() {
				if d.Kind == ecrimage.Name && d.Action == engine.Mark && !strings.Contains(d.Why(), tc.held) {
					t.Fatalf("held without naming it (want %q): %s", tc.held, d.Why())
				}
			}
		})
	}
}

// A registry's own account pulls from every region it runs in: with the
// account's regions listed, a region whose EKS clusters or ECS, Lambda and
// Batch consumers reclaim does not read holds the trims, and names it; a
// failed region listing holds them all; a fully read multi-region account
// still loses exactly its orphans.
func TestPullersEveryRegionOfTheOwnAccount(t *testing.T) {
	regions := func(s *inventory.View, l inventory.FleetListing, eks ...string) {
		s.Fleet = &inventory.Fleet{Discovery: true, Listings: []inventory.FleetListing{l}}
		for _, r := range eks {
			s.Fleet.Listings = append(s.Fleet.Listings, inventory.FleetListing{Platform: inventory.EKS, Scope: acct + "/" + r, Complete: true})
		}
	}
	consumers := func(s *inventory.View, rs ...string) {
		for _, r := range rs {
			for _, k := range []string{"ecs", "lambda", "batch"} {
				s.Clouds[ecrimage.UsersRead] = append(ecrimage.ImageSourcesOf(s), inventory.ImageSource{Kind: k, Name: k + ":" + acct + "/" + r, Complete: true})
			}
		}
	}
	both := inventory.FleetListing{Platform: inventory.Regions, Scope: acct, Complete: true, Regions: []string{"us-east-1", "us-west-2"}}
	for _, tc := range []struct {
		name   string
		mutate func(*inventory.View)
		held   string // "" when the orphans go
	}{
		{"only the registry's region is read", func(s *inventory.View) {
			regions(s, both, "us-east-1")
			consumers(s, "us-east-1")
		}, "the registry's own account " + acct + " pulls from it, but reclaim reads no EKS cluster of it in us-west-2 (add the region to fleet.eks) and no ECS, Lambda or Batch use of it in us-west-2"},
		{"the other region's consumers are not read", func(s *inventory.View) {
			regions(s, both, "us-east-1", "us-west-2")
			consumers(s, "us-east-1")
		}, "no ECS, Lambda or Batch use of it in us-west-2"},
		{"the account's regions could not be listed", func(s *inventory.View) {
			regions(s, inventory.FleetListing{Platform: inventory.Regions, Scope: acct, Problem: "DescribeRegions: UnauthorizedOperation"}, "us-east-1")
			consumers(s, "us-east-1")
		}, "its enabled regions could not be listed (DescribeRegions: UnauthorizedOperation)"},
		{"every region is read", func(s *inventory.View) {
			regions(s, both, "us-east-1", "us-west-2")
			consumers(s, "us-east-1", "us-west-2")
		}, ""},
		{"an unread GKE cluster may pull with any credentials", func(s *inventory.View) {
			regions(s, both, "us-east-1", "us-west-2")
			consumers(s, "us-east-1", "us-west-2")
			s.Fleet.Listings = append(s.Fleet.Listings, inventory.FleetListing{Platform: inventory.GKE, Scope: "demo-project", Complete: true})
			s.Fleet.Members = []inventory.FleetMember{{Name: "gke-ml", State: inventory.MemberExcluded, Discovered: true, Rule: "fleet.exclude[0]",
				Cloud: inventory.FleetCluster{Name: "gke-ml", Platform: inventory.GKE, Project: "demo-project", Location: "us-central1"}}}
		}, "cluster gke-ml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := imageSnap(images(10))
			snap.Clouds[ecrimage.UsersRead] = []inventory.ImageSource{}
			tc.mutate(&snap)
			p := planTwice(t, snap, imagePolicy(10, 9, 6, 1))
			n := len(deleted(p))
			if tc.held == "" {
				if n != 4 {
					t.Fatalf("deleted %d, want the 4 orphans\n%s", n, dump(p))
				}
				return
			}
			if n != 0 {
				t.Fatalf("deleted %d images a cluster or consumer of another region may run\n%s", n, dump(p))
			}
			for d := range p.All() {
				if d.Kind == ecrimage.Name && d.Action == engine.Mark && !strings.Contains(d.Why(), tc.held) {
					t.Fatalf("held without naming it (want %q): %s", tc.held, d.Why())
				}
			}
		})
	}
}
