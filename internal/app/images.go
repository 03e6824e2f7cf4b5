package app

import (
	"context"
	"fmt"

	"github.com/aws/smithy-go/logging"
	"go.uber.org/zap"

	"reclaim.dev/reclaim/config"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/manifests"
	"reclaim.dev/reclaim/providers/ecr"
)

// RegistryOptions turns the ecr section into one client option set per registry.
func RegistryOptions(cfg *config.Config) []ecr.Options {
	e := cfg.ECR
	out := make([]ecr.Options, 0, len(e.Registries))
	for _, r := range e.Registries {
		out = append(out, ecr.Options{Account: r.Account, Region: r.Region, Profile: r.Profile, RoleARN: r.RoleARN,
			ExternalID: r.ExternalID, Endpoint: e.Endpoint, PageSize: int32(e.PageSize), RequestsPerSecond: e.RequestsPerSecond,
			Burst: e.Burst, MaxAttempts: e.MaxAttempts, Concurrency: e.Concurrency, ProtectTag: e.ProtectTag,
			UserAgent: "reclaim/" + Version})
	}
	return out
}

// ManifestSources reads every configured manifest directory.
func ManifestSources(cfg *config.Config) func(ctx context.Context) []inventory.ImageSource {
	m := cfg.ECR.Manifests
	return func(ctx context.Context) []inventory.ImageSource {
		out := make([]inventory.ImageSource, 0, len(m.Dirs))
		for _, dir := range m.Dirs {
			out = append(out, manifests.Read(ctx, dir, manifests.Options{Exclude: m.Exclude}))
		}
		return out
	}
}

// SDKLogger sends the AWS SDK's log lines to log at debug level: they are
// transport notices (a connection not reused, a retry), not the run's story.
func SDKLogger(log *zap.Logger) logging.Logger {
	return logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		if !log.Core().Enabled(zap.DebugLevel) {
			return // formatting every retry notice for nobody costs the listing
		}
		log.Debug(fmt.Sprintf(format, v...), zap.String("source", "aws-sdk"), zap.String("classification", string(c)))
	})
}
