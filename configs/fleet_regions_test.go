package config_test

import (
	"slices"
	"strings"
	"testing"

	config "reclaim.dev/reclaim/configs"
)

// With fleet.eks left out, discovery covers every enabled region of the
// registries' accounts, narrowed by fleet.regions; a listed fleet.eks
// means what it lists. fleet.regions takes region names, each once.
func TestFleetRegions(t *testing.T) {
	const ecr = "ecr:\n  registries:\n    - account: \"123456789012\"\n      region: us-east-1\n"
	cfg, err := config.Parse([]byte(ecr+"fleet:\n  regions: [us-east-1, eu-west-1]\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Fleet.EveryRegion() {
		t.Error("fleet.eks left out does not cover every region")
	}
	got := cfg.Fleet.RegionsOf("123456789012", []string{"us-west-2", "eu-west-1", "ap-south-1"})
	if !slices.Equal(got, []string{"eu-west-1", "us-east-1"}) {
		t.Errorf("regions %v, want the allowed enabled one and the registry's", got)
	}
	cfg, err = config.Parse([]byte(ecr+"fleet:\n  eks:\n    - account: \"123456789012\"\n      region: us-east-1\n      ec2Endpoint: http://127.0.0.1:9\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Fleet.EveryRegion() || cfg.Fleet.EKS[0].EC2Endpoint != "http://127.0.0.1:9" {
		t.Errorf("a listed fleet.eks: every region %v, ec2Endpoint %q", cfg.Fleet.EveryRegion(), cfg.Fleet.EKS[0].EC2Endpoint)
	}
	for _, bad := range []string{"[us_east_1]", "[useast1]", "[us-east-1, us-east-1]"} {
		_, err := config.Parse([]byte(ecr+"fleet:\n  regions: "+bad+"\n"), "t.yaml")
		if err == nil || !strings.Contains(err.Error(), "fleet.regions") {
			t.Errorf("fleet.regions %s: %v", bad, err)
		}
	}
}
