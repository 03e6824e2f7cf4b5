package app

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Cloud is a kind's own cloud: the client it lists and deletes through. A
// kind that reads a cloud no other kind reads registers one
// (Registration.Cloud) instead of a slot in the snapshot and a case in the
// collector.
type Cloud struct {
	// Client is handed to the kind's New (Clients.Clouds[name]).
	Client any
	// List reads the cloud for the snapshot (Snapshot.Clouds[name]), with
	// the other clouds and before the clusters. It never fails as a whole:
	// what it returns says what it could not read.
	List func(ctx context.Context) any
	// Close releases the client; nil: nothing to release.
	Close func()
}

// buildClouds builds the clouds of the registered kinds the config turns
// on, unless the harness gave them (d.Clouds).
func buildClouds(ctx context.Context, cfg *config.Config, d *Deps, closers *[]func()) error {
	for _, r := range Registered {
		if r.Cloud == nil || d.Clouds[r.Name] != nil {
			continue
		}
		c, err := r.Cloud(ctx, cfg, d.Log)
		if err != nil {
			return fmt.Errorf("%s clients: %w", r.Name, err)
		}
		if c == nil {
			continue // its section is absent
		}
		if c.Close != nil {
			*closers = append(*closers, c.Close)
		}
		if d.Clouds == nil {
			d.Clouds = map[string]*Cloud{}
		}
		d.Clouds[r.Name] = c
	}
	return nil
}

// cloudReads are the clouds of the kinds the runner plans, in
// registration order.
func (r *Runner) cloudReads() []inventory.CloudRead {
	var out []inventory.CloudRead
	for _, reg := range Registered {
		c := r.d.Clouds[reg.Name]
		if c == nil || c.List == nil || !slices.ContainsFunc(r.kinds, func(k engine.Kind) bool { return k.Name() == reg.Name }) {
			continue
		}
		out = append(out, inventory.CloudRead{Name: reg.Name, List: c.List})
	}
	return out
}

// Opener is how a cloud kind's package opens its cloud without naming
// app's types: its client (handed back to its FromConfig), its read of the
// cloud for the snapshot, and what releases the client. A nil client: its
// section is absent.
type Opener func(ctx context.Context, cfg *config.Config, log *zap.Logger) (client any, read func(context.Context) any, close func(), err error)

// Opened adapts an Opener to Registration.Cloud.
func Opened(open Opener) func(context.Context, *config.Config, *zap.Logger) (*Cloud, error) {
	return func(ctx context.Context, cfg *config.Config, log *zap.Logger) (*Cloud, error) {
		client, read, closeFn, err := open(ctx, cfg, log)
		if err != nil || client == nil {
			return nil, err
		}
		return &Cloud{Client: client, List: read, Close: closeFn}, nil
	}
}

// CloudKind adapts a cloud kind's FromConfig(cfg, client) to
// Registration.New: client is its cloud's (Clients.Clouds[name]), nil when
// none was opened; FromConfig returns nil when its section is absent.
func CloudKind[K interface {
	*T
	engine.Kind
}, T any](name string, from func(cfg *config.Config, client any) K) func(*config.Config, *Clients) engine.Kind {
	return func(cfg *config.Config, c *Clients) engine.Kind {
		return nilKind(from(cfg, c.Clouds[name]))
	}
}
