package ecrimage

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/manifests"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/batch"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecs"
	"reclaim.dev/reclaim/providers/lambda"
)

// Source names the read of the ecr section's registries
// (Snapshot.Clouds[Source], RegistriesOf).
const Source = "ecr"

// UsersSource names the read of the images named outside the clusters:
// the manifest directories and the ECS, Batch and Lambda consumers
// (Snapshot.Clouds[UsersSource], ImageSourcesOf). It is evidence of use,
// read with the clusters after the registries.
const UsersSource = "ecr-image-users"

// RegistriesOf is the run's read of the registries.
func RegistriesOf(snap *inventory.Snapshot) []inventory.RegistryListing {
	return inventory.CloudOf[[]inventory.RegistryListing](snap, Source)
}

// ImageSourcesOf is the run's read of the images named outside the clusters.
func ImageSourcesOf(snap *inventory.Snapshot) []inventory.ImageSource {
	return inventory.CloudOf[[]inventory.ImageSource](snap, UsersSource)
}

// Open makes one ECR client per registry of the ecr section (nil without
// one): its List([]inventory.RegistryListing) is the read.
func Open(ctx context.Context, cfg *config.Config, log *zap.Logger, userAgent string) (any, func(), error) {
	if SectionOf(cfg) == nil {
		return nil, nil, nil
	}
	f, err := ecr.NewFleet(ctx, RegistryOptions(cfg, log, userAgent))
	if err != nil {
		return nil, nil, err
	}
	return f, nil, nil
}

// RegistryOptions turns the ecr section into one client option set per registry.
func RegistryOptions(cfg *config.Config, log *zap.Logger, userAgent string) []ecr.Options {
	e := SectionOf(cfg)
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
				UserAgent:         userAgent,
				Logger:            awsclient.ZapLogger(log),
			},
			PageSize:    int32(e.PageSize),
			Concurrency: e.Concurrency,
			ProtectTag:  e.ProtectTag,
			OwnerTag:    cfg.OwnerLabel(),
		})
	}
	return out
}

// ImageUsers is the read of what names images outside the clusters.
type ImageUsers func(ctx context.Context) []inventory.ImageSource

// OpenUsers makes the readers of every manifest directory, and of the ECS
// task definitions, services and tasks, the Lambda functions and the
// Batch job definitions of every ecr.consumers entry (an ImageUsers); nil
// when the ecr section names none. Nothing is called until a pass reads
// them.
func OpenUsers(ctx context.Context, cfg *config.Config, log *zap.Logger, userAgent string) (any, func(), error) {
	e := SectionOf(cfg)
	if e == nil {
		return nil, nil, nil
	}
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
			s := awsclient.Service{Account: cs.Account, Region: cs.Region, Profile: cs.Profile, RoleARN: cs.RoleARN,
				ExternalID: cs.ExternalID, Endpoint: svc.endpoint, UserAgent: userAgent, Logger: awsclient.ZapLogger(log)}
			if read, err := svc.open(s); err != nil {
				errs = append(errs, fmt.Errorf("ecr.consumers[%d].%s: %w", i, svc.name, err))
			} else {
				readers = append(readers, read)
			}
		}
	}
	if err := errors.Join(errs...); err != nil || len(readers) == 0 {
		return nil, nil, err
	}
	return ImageUsers(func(ctx context.Context) []inventory.ImageSource {
		out := make([]inventory.ImageSource, len(readers))
		var wg sync.WaitGroup
		for i, read := range readers {
			wg.Go(func() { out[i] = read(ctx) })
		}
		wg.Wait()
		return out
	}), nil, nil
}

// UsersReader reads the image users through client (OpenUsers').
func UsersReader(_ *config.Config, client any) func(context.Context) any {
	read := client.(ImageUsers)
	return func(ctx context.Context) any { return read(ctx) }
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
