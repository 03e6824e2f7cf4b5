package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/smithy-go/logging"
	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/manifests"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/batch"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecs"
	"reclaim.dev/reclaim/providers/lambda"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

// RegistryOptions turns the ecr section into one client option set per registry.
func RegistryOptions(cfg *config.Config) []ecr.Options {
	e := ecrimage.SectionOf(cfg)
	out := make([]ecr.Options, 0, len(e.Registries))
	for _, r := range e.Registries {
		out = append(out, ecr.Options{
			Service: awsclient.Service{
				Account:           r.Account,
				Region:            r.Region,
				Profile:           r.Profile,
				RoleARN:           r.RoleARN,
				ExternalID:        r.ExternalID,
				Endpoint:          e.Endpoint,
				RequestsPerSecond: e.RequestsPerSecond,
				Burst:             e.Burst,
				MaxAttempts:       e.MaxAttempts,
				UserAgent:         "reclaim/" + Version,
			},
			PageSize:    int32(e.PageSize),
			Concurrency: e.Concurrency,
			ProtectTag:  e.ProtectTag,
			OwnerTag:    OwnerLabel(cfg),
		})
	}
	return out
}

// ImageSources reads what names images outside the clusters: every
// manifest directory, and the ECS task definitions, services and tasks,
// the Lambda functions and the Batch job definitions of every
// ecr.consumers entry, all at once. Nil when the ecr
// section names none. Nothing is called until a pass reads them.
func ImageSources(ctx context.Context, cfg *config.Config, log *zap.Logger) (func(ctx context.Context) []inventory.ImageSource, error) {
	e := ecrimage.SectionOf(cfg)
	m := e.Manifests
	var readers []func(ctx context.Context) inventory.ImageSource
	for _, dir := range m.Dirs {
		readers = append(readers, func(ctx context.Context) inventory.ImageSource {
			return manifests.Read(ctx, dir, manifests.Options{Exclude: m.Exclude})
		})
	}
	var errs []error
	for i, cs := range e.Consumers {
		if cs.ECS {
			c, err := ecs.New(ctx, ecs.Options{Service: consumer(cs, cs.ECSEndpoint, log)})
			if err != nil {
				errs = append(errs, fmt.Errorf("ecr.consumers[%d].ecs: %w", i, err))
			} else {
				readers = append(readers, c.Images)
			}
		}
		if cs.Batch {
			c, err := batch.New(ctx, batch.Options{Service: consumer(cs, cs.BatchEndpoint, log)})
			if err != nil {
				errs = append(errs, fmt.Errorf("ecr.consumers[%d].batch: %w", i, err))
			} else {
				readers = append(readers, c.Images)
			}
		}
		if cs.Lambda {
			c, err := lambda.New(ctx, lambda.Options{Service: consumer(cs, cs.LambdaEndpoint, log)})
			if err != nil {
				errs = append(errs, fmt.Errorf("ecr.consumers[%d].lambda: %w", i, err))
			} else {
				readers = append(readers, c.Images)
			}
		}
	}
	if err := errors.Join(errs...); err != nil || len(readers) == 0 {
		return nil, err
	}
	return func(ctx context.Context) []inventory.ImageSource {
		out := make([]inventory.ImageSource, len(readers))
		var wg sync.WaitGroup
		for i, read := range readers {
			wg.Go(func() { out[i] = read(ctx) })
		}
		wg.Wait()
		return out
	}, nil
}

// consumer is how an ecr.consumers entry's service is reached.
func consumer(cs ecrimage.Consumer, endpoint string, log *zap.Logger) awsclient.Service {
	return awsclient.Service{Account: cs.Account, Region: cs.Region, Profile: cs.Profile, RoleARN: cs.RoleARN,
		ExternalID: cs.ExternalID, Endpoint: endpoint, UserAgent: "reclaim/" + Version, Logger: SDKLogger(log)}
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
