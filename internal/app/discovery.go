package app

import (
	"context"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/config"
)

// Discoverers builds one discoverer per GKE project and EKS account and
// region of the fleet section.
func Discoverers(ctx context.Context, cfg *config.Config, log *zap.Logger) ([]Discoverer, error) {
	return nil, nil
}
