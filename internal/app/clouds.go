package app

import (
	"context"
	"fmt"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
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

// cloudReads are the clouds the runner's kinds read, in registration order.
func (r *Runner) cloudReads() []inventory.CloudRead {
	var out []inventory.CloudRead
	for _, reg := range Registered {
		c := r.d.Clouds[reg.Name]
		if c == nil || c.List == nil || !r.runs(reg.Name) {
			continue
		}
		out = append(out, inventory.CloudRead{Name: reg.Name, List: c.List})
	}
	return out
}

// runs says whether the runner plans the kind.
func (r *Runner) runs(name string) bool {
	for _, k := range r.kinds {
		if k.Name() == name {
			return true
		}
	}
	return false
}
