package app

import (
	"context"
	"fmt"
	"slices"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Lists is the Read of a client whose List is the whole read (a
// provider's Fleet).
func Lists[T any](_ *config.Config, client any) func(context.Context) any {
	l := client.(interface{ List(context.Context) T })
	return func(ctx context.Context) any { return l.List(ctx) }
}

// clouds are every registered read: the shared ones, then the kinds' own.
func clouds() []kind.Cloud {
	out := slices.Clone(Clouds)
	for _, m := range Registered {
		if c := m.OwnCloud(); c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// openClouds opens the clients of the reads the kinds rely on (those the
// config turns on and the runner plans), unless the harness gave them
// (d.Clients).
func openClouds(ctx context.Context, cfg *config.Config, d *Deps, closers *[]func(), kinds Modules) error {
	used := reliedOn(kinds)
	all := clouds()
	for name := range used {
		// A read no line registers would never run, and its kinds would
		// see an empty cloud as if there were nothing in it.
		if !slices.ContainsFunc(all, func(c kind.Cloud) bool { return c.Name == name }) {
			return fmt.Errorf("a kind relies on the cloud read %q, which app.Clouds does not register", name)
		}
	}
	for _, c := range all {
		if !used[c.Name] || d.Clients[c.Name] != nil {
			continue
		}
		client, closeFn, err := c.Open(ctx, cfg, d.Log, "reclaim/"+Version)
		if err != nil {
			return fmt.Errorf("%s clients: %w", c.Name, err)
		}
		if client == nil {
			continue // its section is absent
		}
		if closeFn != nil {
			*closers = append(*closers, closeFn)
		}
		if d.Clients == nil {
			d.Clients = map[string]any{}
		}
		d.Clients[c.Name] = client
	}
	return nil
}

// reliedOn names the cloud reads the kinds rely on.
func reliedOn(kinds Modules) map[string]bool {
	out := map[string]bool{}
	for _, m := range kinds {
		for _, n := range m.Clouds {
			out[n] = true
		}
		if c := m.OwnCloud(); c != nil {
			out[c.Name] = true
		}
	}
	return out
}

// cloudReads are the reads the kinds this runner plans rely on, in
// registration order, through the clients opened or given.
func (r *Runner) cloudReads() []inventory.CloudRead {
	used := reliedOn(r.planned)
	var out []inventory.CloudRead
	for _, c := range clouds() {
		client := r.d.Clients[c.Name]
		if !used[c.Name] || client == nil {
			continue
		}
		out = append(out, inventory.CloudRead{Name: c.Name, List: c.Read(r.cfg, client), WithClusters: c.WithClusters})
	}
	return out
}
