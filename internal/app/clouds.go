package app

import (
	"context"
	"fmt"
	"slices"

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
