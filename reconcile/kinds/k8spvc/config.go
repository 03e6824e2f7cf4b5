package k8spvc

import (
	"k8s.io/client-go/kubernetes"

	config "reclaim.dev/reclaim/configs"
)

// FromConfig makes the kind from the k8sPvcs and kubernetes sections.
// client returns a cluster's client (nil: plan only).
func FromConfig(cfg *config.Config, client func(cluster string) (kubernetes.Interface, error)) *Kind {
	s := SectionOf(cfg)
	return &Kind{Client: client, Policy: Policy{DiskPrice: cfg.Prices.DiskGBMonth, Delete: s.Delete, ProtectLabel: cfg.Kubernetes.ProtectLabel,
		Safety: s.Safety}}
}
