package ec2interface

import (
	"fmt"
	"testing"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
)

// The ec2 read shows an EKS cluster's pod addresses and nodes on the
// interfaces in use tagged for it in its account and region; not on
// another cluster's, and nothing for a GKE cluster.
func TestMadeFor(t *testing.T) {
	place := inventory.Place{Platform: inventory.EKS, Account: "123456789012", Location: "us-east-1"}
	clouds := map[string]any{Read: []inventory.NetworkListing{{Account: place.Account, Region: place.Location, Complete: true,
		Interfaces: []inventory.NetInterface{{ID: "eni-0a1b", Status: "in-use", Tags: map[string]string{inventory.InterfaceClusterTag: "prod-a"}},
			{ID: "eni-0c2d", Status: "in-use", Tags: map[string]string{inventory.InterfaceClusterTag: "prod-b"}},
			{ID: "eni-0e3f", Status: "available", Tags: map[string]string{inventory.InterfaceClusterTag: "prod-a"}}}}}}
	shown := records.Shown{}
	MadeFor(clouds, kube.Target{Name: "a", CloudName: "prod-a", Place: place}, shown)
	if got := fmt.Sprint(shown); got != "map[nodes:[network interface eni-0a1b] podIPs:[network interface eni-0a1b]]" {
		t.Fatalf("shown %s", got)
	}
	shown = records.Shown{}
	MadeFor(clouds, kube.Target{Name: "a", CloudName: "prod-a", Place: inventory.Place{Platform: inventory.GKE, Project: "p", Location: "us-east-1"}}, shown)
	if len(shown) != 0 {
		t.Fatalf("a GKE cluster: shown %v", shown)
	}
}
