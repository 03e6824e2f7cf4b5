package gcedisk

import (
	"fmt"
	"testing"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/providers/gce"
)

// The gce read shows a GKE cluster's PV volumes and boot disks in its
// project, by the label GKE puts on them; not another cluster's.
func TestMadeFor(t *testing.T) {
	pv, boot, other := orphan("pvc-1"), orphan("gke-prod-a-node-1"), orphan("pvc-2")
	pv.Labels = map[string]string{"goog-gke-volume": "", ClusterLabel: "prod-a"}
	boot.Labels = map[string]string{ClusterLabel: "prod-a"}
	other.Labels = map[string]string{"goog-gke-volume": "", ClusterLabel: "prod-b"}
	s := snap([]gce.Disk{pv, boot, other})
	shown := records.Shown{}
	MadeFor(s.Clouds, kube.Target{Name: "a", CloudName: "prod-a", Place: inventory.Place{Platform: inventory.GKE, Project: "p1", Location: "asia-northeast1"}}, shown)
	if got := fmt.Sprint(shown); got != "map[nodes:[GCE disk gke-prod-a-node-1] pvs:[GCE disk pvc-1]]" {
		t.Fatalf("shown %s", got)
	}
}
