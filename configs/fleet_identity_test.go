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
		{"    - name: prod\n      reason: old\n", false},
		{"    - name: prod\n      reason: old\n      account: \"111122223333\"\n      location: us-east-1\n", false},
		{"    - name: prod\n      reason: the old one in another region\n      account: \"111122223333\"\n      location: us-west-2\n", true},
	} {
		_, err := config.Parse([]byte(clusters+"fleet:\n  discover: false\n  outOfScope:\n"+c.decl), "t.yaml")
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.decl, err)
		}
	}
}
