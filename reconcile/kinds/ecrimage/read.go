package ecrimage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/manifests"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/batch"
	"reclaim.dev/reclaim/providers/ec2"
	"reclaim.dev/reclaim/providers/ecr"
	"reclaim.dev/reclaim/providers/ecs"
	"reclaim.dev/reclaim/providers/lambda"
)

// Read names the read of the ecr section's registries
// (View.Clouds[Read], RegistriesOf).
const Read = "ecr"

// UsersRead names the read of the images named outside the clusters:
// the manifest directories and the ECS, Batch and Lambda consumers
// (View.Clouds[UsersRead], ImageSourcesOf). It is evidence of use,
// read with the clusters after the registries.
const UsersRead = "ecr-image-users"

// RegistriesOf is the run's read of the registries.
func RegistriesOf(snap *inventory.View) []inventory.RegistryListing {
	return inventory.CloudOf[[]inventory.RegistryListing](snap, Read)
}

// ImageSourcesOf is the run's read of the images named outside the clusters.
func ImageSourcesOf(snap *inventory.View) []inventory.ImageSource {
	return inventory.CloudOf[[]inventory.ImageSource](snap, UsersRead)
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
	rates := config.AWSRates{RequestsPerSecond: e.RequestsPerSecond, Burst: e.Burst, MaxAttempts: e.MaxAttempts}
	for _, r := range e.Registries {
		out = append(out, ecr.Options{
			Service:     awsclient.ServiceOf(r.AWSTarget, e.Endpoint, rates, userAgent, log),
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
	var readers []imageReaders
	for _, dir := range m.Dirs {
		readers = append(readers, func(ctx context.Context) []inventory.ImageSource {
			return []inventory.ImageSource{manifests.Read(ctx, dir, manifests.Options{Exclude: m.Exclude})}
		})
	}
	var errs []error
	for i, cs := range e.Consumers {
		read, err := consumerReaders(ctx, fmt.Sprintf("ecr.consumers[%d]", i), cs, log, userAgent)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		readers = append(readers, read)
	}
	// The default consumers cover every region of the registries'
	// accounts that discovery covers: a service in another region pulls
	// as readily as one in the registry's.
	if e.defaultConsumers && cfg.Fleet.Discover && cfg.Fleet.EveryRegion() {
		for _, a := range consumerAccounts(e) {
			i := slices.IndexFunc(cfg.Fleet.EKS, func(d config.EKSDiscovery) bool { return d.Account == a })
			if i < 0 {
				continue
			}
			read, err := everyRegion(ctx, cfg, e, cfg.Fleet.EKS[i], log, userAgent)
			if err != nil {
				errs = append(errs, fmt.Errorf("ecr.consumers (default) account %s: %w", a, err))
				continue
			}
			readers = append(readers, read)
		}
	}
	if err := errors.Join(errs...); err != nil || len(readers) == 0 {
		return nil, nil, err
	}
	return ImageUsers(func(ctx context.Context) []inventory.ImageSource {
		out := make([][]inventory.ImageSource, len(readers))
		var wg sync.WaitGroup
		for i, read := range readers {
			wg.Go(func() { out[i] = read(ctx) })
		}
		wg.Wait()
		return slices.Concat(out...)
	}), nil, nil
}

// imageReaders reads some sources of images outside the clusters.
type imageReaders = func(ctx context.Context) []inventory.ImageSource

// consumerReaders reads one ecr.consumers entry's ECS, Batch and Lambda.
// A consumer whose client cannot be built is an error, never skipped: the
// images only it runs would look unused.
func consumerReaders(ctx context.Context, path string, cs Consumer, log *zap.Logger, userAgent string) (imageReaders, error) {
	var readers []imageReader
	var errs []error
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
		read, err := svc.open(awsclient.ServiceOf(cs.AWSTarget, svc.endpoint, config.AWSRates{}, userAgent, log))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.%s: %w", path, svc.name, err))
			continue
		}
		readers = append(readers, read)
	}
	if err := errors.Join(errs...); err != nil {
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

// consumerAccounts are the accounts of the default consumers, in order.
func consumerAccounts(e *Section) []string {
	var out []string
	for _, cs := range e.Consumers {
		if !slices.Contains(out, cs.Account) {
			out = append(out, cs.Account)
		}
	}
	return out
}

// everyRegion reads the consumers of first's account in each of its
// regions (fleet.regions narrowed) that no default consumer reads: the
// account's regions are listed once a run (shared with discovery), and
// each region's clients are built once. A listing that fails is an
// incomplete source: no image is deleted while the account's services
// may run anywhere unseen.
func everyRegion(ctx context.Context, cfg *config.Config, e *Section, first config.EKSDiscovery, log *zap.Logger, userAgent string) (imageReaders, error) {
	rc, err := ec2.NewRegions(ctx, awsclient.ServiceOf(first.AWSTarget, first.EC2Endpoint, config.AWSRates{}, userAgent, log))
	if err != nil {
		return nil, err
	}
	var own []string
	var base Consumer
	for _, cs := range e.Consumers {
		if cs.Account == first.Account {
			if own == nil {
				base = cs
			}
			own = append(own, cs.Region)
		}
	}
	var mu sync.Mutex
	built := map[string]imageReaders{}
	return func(ctx context.Context) []inventory.ImageSource {
		l := rc.List(ctx)
		if !l.Complete {
			return []inventory.ImageSource{{Kind: inventory.Regions, Name: inventory.Regions + ":" + first.Account,
				Problems: []string{"the account's regions, where its ECS, Lambda and Batch may run, are unknown: " + l.Problem}}}
		}
		var out []inventory.ImageSource
		var reads []imageReaders
		for _, r := range cfg.Fleet.RegionsOf(first.Account, l.Regions, own...) {
			if slices.Contains(own, r) {
				continue // a default consumer reads it
			}
			mu.Lock()
			read, ok := built[r]
			mu.Unlock()
			if !ok {
				cs := base
				cs.Region = r
				var err error
				if read, err = consumerReaders(ctx, "ecr.consumers (default) "+first.Account+"/"+r, cs, log, userAgent); err != nil {
					out = append(out, inventory.ImageSource{Kind: "ecs", Name: "ecs:" + first.Account + "/" + r, Problems: []string{err.Error()}})
					continue
				}
				mu.Lock()
				built[r] = read
				mu.Unlock()
			}
			reads = append(reads, read)
		}
		got := make([][]inventory.ImageSource, len(reads))
		var wg sync.WaitGroup
		for i, read := range reads {
			wg.Go(func() { got[i] = read(ctx) })
		}
		wg.Wait()
		return append(out, slices.Concat(got...)...)
	}, nil
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
