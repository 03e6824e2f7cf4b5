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
	var readers []imageReader
	for _, dir := range m.Dirs {
		readers = append(readers, func(ctx context.Context) inventory.ImageSource {
			return manifests.Read(ctx, dir, manifests.Options{Exclude: m.Exclude})
		})
	}
	var errs []error
	for i, cs := range e.Consumers {
		for _, svc := range []struct {
			on             bool
			name, endpoint string
			open           func(awsclient.Service) (imageReader, error)
		}{
			{cs.ECS, "ecs", cs.ECSEndpoint, func(s awsclient.Service) (imageReader, error) {
				return readerOf(ecs.New(ctx, ecs.Options{Service: s}))
			}},
			{cs.Batch, "batch", cs.BatchEndpoint, func(s awsclient.Service) (imageReader, error) {
				return readerOf(batch.New(ctx, batch.Options{Service: s}))
			}},
			{cs.Lambda, "lambda", cs.LambdaEndpoint, func(s awsclient.Service) (imageReader, error) {
				return readerOf(lambda.New(ctx, lambda.Options{Service: s}))
			}},
		} {
			if !svc.on {
				continue
			}
			// A consumer whose client cannot be built is an error, never
			// skipped: the images only it runs would look unused.
			if read, err := svc.open(consumer(cs, svc.endpoint, log)); err != nil {
				errs = append(errs, fmt.Errorf("ecr.consumers[%d].%s: %w", i, svc.name, err))
			} else {
				readers = append(readers, read)
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

// imageReader reads one source of images outside the clusters.
type imageReader = func(ctx context.Context) inventory.ImageSource

// readerOf is a consumer client's Images, or its constructor's error.
func readerOf[C interface {
	Images(context.Context) inventory.ImageSource
}](c C, err error) (imageReader, error) {
	if err != nil {
		return nil, err
	}
	return c.Images, nil
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
