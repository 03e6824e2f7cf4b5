package workflowpvc

import (
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
)

// FromConfig makes the kind from the disks and kubernetes sections. client
// returns a cluster's client (nil: plan only).
func FromConfig(cfg *config.Config, client func(cluster string) (kubernetes.Interface, error)) *Kind {
	dk := cfg.Disks
	return &Kind{Client: client, Policy: Policy{Delete: dk.DeleteWorkflowPVCs, Grace: dk.Grace.Std(), ProtectLabel: cfg.Kubernetes.ProtectLabel,
		MaxDeletes: dk.MaxDeletesPerRun, MaxDeletePercent: dk.MaxDeletePercent.Fraction(),
		MaxDeleteGB: float64(dk.MaxDeleteSizePerRun) / 1e9, BreakerCandidates: dk.BreakerCandidates}}
}
