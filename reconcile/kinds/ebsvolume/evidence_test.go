package ebsvolume

import (
	"fmt"
	"testing"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/providers/ebs"
)

// The kind's read shows the volumes the EBS CSI driver made for an EKS
// cluster's PVs (tagged with the cluster, legacy tag or new, and a PV),
// which its PVs' tap lists; not a volume without a PV, nor another
// cluster's.
func TestMadeFor(t *testing.T) {
	place := inventory.Place{Platform: inventory.EKS, Account: "123456789012", Location: "us-east-1"}
	clouds := map[string]any{Name: Read{Listings: []ebs.Listing{{Account: place.Account, Region: place.Location, Complete: true, Volumes: []ebs.Volume{
		{ID: "vol-1", Tags: map[string]string{TagLegacyCluster: "prod-a", TagCreatedForPV: "pv-1"}},
		{ID: "vol-2", Tags: map[string]string{"kubernetes.io/cluster/prod-a": "owned", TagCreatedForPV: "pv-2"}},
		{ID: "vol-3", Tags: map[string]string{TagLegacyCluster: "prod-a"}},
		{ID: "vol-4", Tags: map[string]string{TagLegacyCluster: "prod-b", TagCreatedForPV: "pv-4"}}}}}}}
	shown := records.Shown{}
	MadeFor(clouds, kube.Target{Name: "a", CloudName: "prod-a", Place: place}, shown)
	if got := fmt.Sprint(shown); got != "map[tap ebs-pvs:[EBS volume vol-1 EBS volume vol-2]]" {
		t.Fatalf("shown %s", got)
	}
}
