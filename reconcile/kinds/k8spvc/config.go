package k8spvc

import (
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// FromConfig makes the kind from the disks and kubernetes sections: its
// switch and grace are the disks', its caps its own (disks.workflowPVCs).
// client returns a cluster's client (nil: plan only).
func FromConfig(cfg *config.Config, client func(cluster string) (kubernetes.Interface, error)) *Kind {
	dk := gcepd.DisksOf(cfg)
	return &Kind{Client: client, Policy: Policy{DiskPrice: cfg.Prices.DiskGBMonth, Delete: dk.DeleteWorkflowPVCs, ProtectLabel: cfg.Kubernetes.ProtectLabel,
		Safety: config.Safety{Grace: dk.Grace, Caps: dk.WorkflowPVCs}}}
}
