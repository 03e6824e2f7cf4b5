package fleet

import (
	"slices"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
)

func gkeAt(name, project, location, endpoint string) inventory.FleetCluster {
	return inventory.FleetCluster{Name: name, Platform: inventory.GKE, Project: project, Location: location,
		ID: "projects/" + project + "/locations/" + location + "/clusters/" + name, Endpoint: endpoint, CAData: []byte("ca"), Status: "RUNNING"}
}

// GKE names are unique per location, not per project: two prod clusters of
// one project are two members, each read with its own target, whatever
// the order discovery lists them in, and whether or not a configured
// cluster elsewhere is also called prod.
func TestSameNameClustersOfOneProject(t *testing.T) {
	east := gkeAt("prod", "p1", "us-east1-b", "https://10.0.0.1")
	europe := gkeAt("prod", "p1", "europe-west1", "https://10.0.0.2")
	const (
		eastName   = "prod@p1.us-east1-b"
		europeName = "prod@p1.europe-west1"
	)
	configs := map[string]string{
		"no namesake configured": "clusters:\n  - name: batch\n    context: batch\n",
		// The name prod is taken, so each would be prod@p1 by its project alone.
		"prod configured elsewhere": "clusters:\n  - name: prod\n    context: prod\n    platform: eks\n    account: \"" + acctA + "\"\n    location: us-east-1\n",
	}
	for what, conf := range configs {
		for _, order := range [][]inventory.FleetCluster{{east, europe}, {europe, east}} {
			t.Run(what+" "+order[0].Location+" first", func(t *testing.T) {
				fp := assemble(parse(t, conf), true, nil, listing(order...), map[string]APIServer{
					"prod": {host: hostOf("https://EAST.gr7.us-east-1.eks.amazonaws.com")}}, nil, time.Now())
				seen := map[string]bool{}
				for _, m := range fp.Fleet.Members {
					if seen[m.Name] {
						t.Fatalf("two members named %s: %+v", m.Name, fp.Fleet.Members)
					}
					seen[m.Name] = true
				}
				for name, c := range map[string]inventory.FleetCluster{eastName: east, europeName: europe} {
					if m := member(t, fp.Fleet, name); m.Cloud.ID != c.ID || m.State != inventory.MemberRead {
						t.Fatalf("%s is %+v, want %s read", name, m, c.ID)
					}
				}
				if len(fp.Conflicts) != 0 {
					t.Fatalf("conflicts %v", fp.Conflicts)
				}
				targets := map[string]string{}
				for _, r := range fp.Read {
					if _, dup := targets[r.Name]; dup {
						t.Fatalf("two read targets named %s: %v", r.Name, readNames(fp))
					}
					targets[r.Name] = r.Endpoint
				}
				if len(targets) != 2 || targets[eastName] != east.Endpoint || targets[europeName] != europe.Endpoint {
					t.Fatalf("read targets %v", targets)
				}

				// A disk label names prod: in a region of one of them, that
				// one; where neither is, or said nowhere, both hold it.
				for _, c := range []struct {
					location string
					want     []string
				}{
					{"us-east1-c", []string{eastName}},
					{"us-east1", []string{eastName}},
					{"europe-west1-d", []string{europeName}},
					{"asia-east1-a", []string{europeName, eastName}},
					{"", []string{europeName, eastName}},
				} {
					got := fp.Fleet.ResolveAt(inventory.GKE, "p1", c.location, "prod")
					slices.Sort(got)
					if !slices.Equal(got, c.want) {
						t.Errorf("a disk in %q labelled prod resolves to %v, want %v", c.location, got, c.want)
					}
				}
				got := fp.Fleet.Resolve(inventory.GKE, "p1", "prod")
				slices.Sort(got)
				if strings.Join(got, " ") != europeName+" "+eastName {
					t.Errorf("evidence of prod in p1 resolves to %v, want both", got)
				}
			})
		}
	}
}

// No two members share a name, even when a listing's clusters do not
// tell them apart by location.
func TestMemberNamesAreUnique(t *testing.T) {
	conf := "clusters:\n  - name: prod\n    context: b\n    platform: eks\n    account: \"" + acctA + "\"\n    location: us-west-2\n"
	fp := assemble(parse(t, conf), true, nil, listing(gkeAt("prod", "p1", "us-east1-b", "https://10.0.0.1"),
		gkeAt("prod", "p1", "us-east1-b", "https://10.0.0.2"), gkeAt("prod", "p2", "us-east1-b", "https://10.0.0.3")), nil, nil, time.Now())
	seen := map[string]bool{}
	for _, m := range fp.Fleet.Members {
		if seen[m.Name] {
			t.Fatalf("two members named %s: %+v", m.Name, fp.Fleet.Members)
		}
		seen[m.Name] = true
	}
	if len(fp.Fleet.Members) != 4 || len(fp.Read) != 3 {
		t.Fatalf("members %+v read %v", fp.Fleet.Members, readNames(fp))
	}
}

// A declaration of a regional GKE cluster names that cluster, not a zonal
// namesake in its region: the zonal one is read, and the regional one is
// out of scope.
func TestOutOfScopeRegionalIsNotItsZonalNamesake(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	regional := gkeAt("prod", "proj-one", "us-east1", "https://10.0.0.1")
	zonal := gkeAt("prod", "proj-one", "us-east1-b", "https://10.0.0.2")
	cfg := parse(t, "clusters:\n  - name: a\n    context: a\nfleet:\n  outOfScope:\n    - name: prod\n      reason: a sandbox\n      platform: gke\n      project: proj-one\n      location: us-east1\n      endpoint: https://10.0.0.1\n")
	fp := assemble(cfg, true, nil, listing(regional, zonal), map[string]APIServer{"a": {host: "a.example:443"}}, nil, now)
	states := map[string]string{}
	for _, m := range fp.Fleet.Members {
		states[m.Cloud.Location] = m.State
	}
	if states["us-east1"] != inventory.MemberOutOfScope || states["us-east1-b"] != inventory.MemberRead || len(fp.Read) != 1 {
		t.Fatalf("states %v, read %v", states, readNames(fp))
	}
}
