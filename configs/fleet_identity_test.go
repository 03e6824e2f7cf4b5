package config_test

import (
	"strings"
	"testing"

	config "reclaim.dev/reclaim/configs"
	_ "reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	_ "reclaim.dev/reclaim/reconcile/kinds/gcedisk"
)

// With discovery on, the clouds say which clusters exist: a config that
// lists none is the normal case. Without discovery it is refused.
func TestNoClustersWithDiscovery(t *testing.T) {
	const body = "gce:\n  projects: [demo-project]\necr:\n  registries:\n    - account: \"123456789012\"\n      region: us-east-1\n"
	cfg, err := config.Parse([]byte(body), "t.yaml")
	if err != nil {
		t.Fatalf("discovery on, no clusters: %v", err)
	}
	if !cfg.Fleet.Discovers() || len(cfg.Clusters) != 0 {
		t.Fatalf("discovers %v, clusters %d", cfg.Fleet.Discovers(), len(cfg.Clusters))
	}
	_, err = config.Parse([]byte(body+"fleet:\n  discover: false\n"), "t.yaml")
	if err == nil || !strings.Contains(err.Error(), "clusters: at least one cluster is required") {
		t.Fatalf("discovery off, no clusters: %v", err)
	}
}

// A configured cluster and an out-of-scope declaration of one name are
// refused only when they may be the same cluster.
func TestOutOfScopeBesideAConfiguredCluster(t *testing.T) {
	const clusters = "clusters:\n  - name: prod\n    context: prod\n    account: \"111122223333\"\n    location: us-east-1\n"
	for _, c := range []struct {
		decl string
		ok   bool
	}{
		{"    - name: prod\n      reason: old\n      platform: eks\n      account: \"111122223333\"\n      location: us-east-1\n", false},
		{"    - name: prod\n      reason: the old one in another region\n      platform: eks\n      account: \"111122223333\"\n      location: us-west-2\n", true},
	} {
		_, err := config.Parse([]byte(clusters+"fleet:\n  discover: false\n  outOfScope:\n"+c.decl), "t.yaml")
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.decl, err)
		}
	}
}

// An out-of-scope declaration names one cluster: its platform, account
// (EKS) or project (GKE), location and name. Each partial shape, which would
// cover every namesake in every account, is refused, naming the field
// missing and what to put there.
func TestOutOfScopeNeedsAFullIdentity(t *testing.T) {
	const eks = "      platform: eks\n      account: \"111122223333\"\n      location: us-east-1\n"
	for _, c := range []struct {
		name, decl, field, fix string
	}{
		{"name only", "", "fleet.outOfScope[0].platform", "is required — eks or gke"},
		{"name only: no account", "", "fleet.outOfScope[0].account", "is required — the AWS account id (EKS), or set project"},
		{"name only: no location", "", "fleet.outOfScope[0].location", "is required — the region (EKS) or zone/region (GKE) the cluster lived in"},
		{"platform only", "      platform: eks\n", "fleet.outOfScope[0].account", "is required — the AWS account id the EKS cluster lived in"},
		{"platform only: no location", "      platform: eks\n", "fleet.outOfScope[0].location", "is required"},
		{"location only", "      location: us-east-1\n", "fleet.outOfScope[0].platform", "is required"},
		{"location only: no account", "      location: us-east-1\n", "fleet.outOfScope[0].account", "is required"},
		{"no platform", "      account: \"111122223333\"\n      location: us-east-1\n", "fleet.outOfScope[0].platform", "is required — eks or gke"},
		{"eks without an account", "      platform: eks\n      location: us-east-1\n", "fleet.outOfScope[0].account", "is required — the AWS account id"},
		{"gke without a project", "      platform: gke\n      location: us-central1\n", "fleet.outOfScope[0].project", "is required — the GCP project the GKE cluster lived in"},
		{"gke with an account", "      platform: gke\n      account: \"111122223333\"\n      location: us-central1\n", "fleet.outOfScope[0].project", "is required"},
		{"no location", "      platform: eks\n      account: \"111122223333\"\n", "fleet.outOfScope[0].location", "is required"},
		{"endpoint but no place", "      endpoint: https://ABC123.gr7.us-east-1.eks.amazonaws.com\n", "fleet.outOfScope[0].location", "is required"},
		{"no name", eks, "fleet.outOfScope[0].name", "is required"},
		{"a creation time that is not one", eks + "      created: 2026-03-02\n", "fleet.outOfScope[0].created", "\"2026-03-02\" is not a creation time — write it as the cloud reports it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "    - name: legacy\n"
			if c.field == "fleet.outOfScope[0].name" {
				name = "    - name: \"\"\n"
			}
			_, err := config.Parse([]byte("clusters:\n  - name: a\n    context: a\nfleet:\n  discover: false\n  outOfScope:\n"+name+"      reason: decommissioned\n"+c.decl), "t.yaml")
			if err == nil || !strings.Contains(err.Error(), c.field+": "+c.fix) {
				t.Fatalf("want %s: %s, got %v", c.field, c.fix, err)
			}
		})
	}
	for _, decl := range []string{eks, "      platform: gke\n      project: my-project\n      location: us-central1-a\n"} {
		if _, err := config.Parse([]byte("clusters:\n  - name: a\n    context: a\nfleet:\n  discover: false\n  outOfScope:\n    - name: legacy\n      reason: decommissioned\n"+decl), "t.yaml"); err != nil {
			t.Errorf("a full identity is refused: %v", err)
		}
	}
}
