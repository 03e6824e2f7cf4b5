package app

import (
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/fleet"
)

// The collector's shared reads follow the kinds the config turns on (their
// kind.Module.Reads), for configured and discovered clusters alike.
func TestReadsFollowTheKinds(t *testing.T) {
	for _, tc := range []struct {
		name, extra       string
		images, workloads bool
	}{
		{"disks only", "", false, false},
		{"jobs", "jobs: {}\n", false, true},
		{"ecr", "ecr:\n  registries:\n    - account: \"123456789012\"\n      region: us-east-1\n", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := parse(t, "clusters:\n  - name: a\n    context: a\n"+tc.extra)
			got := Targets(cfg)[0]
			b := inventory.FleetCluster{Name: "b", Platform: inventory.GKE, Project: "p"}
			fp := fleet.Assemble(cfg, On(cfg).Reads(), true, nil, []inventory.FleetListing{{Platform: inventory.GKE, Scope: "p", Complete: true,
				Clusters: []inventory.FleetCluster{b}}}, nil, nil, time.Now())
			if len(fp.Read) != 1 {
				t.Fatalf("read %+v, want b", fp.Read)
			}
			d := fp.Read[0]
			if got.Images != tc.images || got.Workloads != tc.workloads || d.Images != tc.images || d.Workloads != tc.workloads {
				t.Fatalf("configured images %v workloads %v, discovered %v %v; want %v %v", got.Images, got.Workloads, d.Images, d.Workloads, tc.images, tc.workloads)
			}
		})
	}
}

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
