package app

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/netiface"
)

// Clouds lists the cloud reads several kinds may rely on, one line each.
// A kind names the reads it relies on (Registration.Clouds); a read no
// kind the config turns on names is neither opened for nothing nor read.
// A read only one kind has is that kind's Registration.Cloud.
var Clouds = []Cloud{
	{Name: gcedisk.Source, Open: gcedisk.Open, Read: gcedisk.Reader},
	{Name: ecrimage.Source, Open: ecrimage.Open, Read: Lists[[]inventory.RegistryListing]},
	{Name: ecrimage.UsersSource, Open: ecrimage.OpenUsers, Read: ecrimage.UsersReader, WithClusters: true},
	{Name: netiface.Source, Open: netiface.Open, Read: Lists[[]inventory.NetworkListing]},
}

// Lists is the Read of a client whose List is the whole read (a
// provider's Fleet).
func Lists[T any](_ *config.Config, client any) func(context.Context) any {
	l := client.(interface{ List(context.Context) T })
	return func(ctx context.Context) any { return l.List(ctx) }
}

// Cloud is one named read of a cloud: the client kinds delete through,
// and the read of the cloud for the snapshot (Snapshot.Clouds[Name]).
type Cloud struct {
	// Name is the read's (a kind's own: the kind's name).
	Name string
	// Open makes the client from the config: nil when its section is
	// absent, and closeFn nil when it holds nothing to release. Its
	// package's AWS and GCP clients take log and userAgent.
	Open func(ctx context.Context, cfg *config.Config, log *zap.Logger, userAgent string) (client any, closeFn func(), err error)
	// Read is the read through client (Open's, or the harness's). It never
	// fails as a whole: what it returns says what it could not read.
	Read func(cfg *config.Config, client any) func(ctx context.Context) any
	// WithClusters reads it with the clusters, after the other clouds: it
	// is evidence of use, which must be as fresh as what it is held against.
	WithClusters bool
}

// clouds are every registered read: the shared ones, then the kinds' own.
func clouds() []Cloud {
	out := slices.Clone(Clouds)
	for _, r := range Registered {
		if r.Cloud != nil {
			c := *r.Cloud
			c.Name = r.Name
			out = append(out, c)
		}
	}
	return out
}

// openClouds opens the clients of the reads the kinds the config turns on
// (and the runner plans) rely on, unless the harness gave them (d.Clients).
func openClouds(ctx context.Context, cfg *config.Config, d *Deps, closers *[]func(), plans func(Registration) bool) error {
	used := reliedOn(func(reg Registration) bool { return plans(reg) && reg.New(cfg, &Clients{}) != nil })
	all := clouds()
	for name := range used {
		// A read no line registers would never run, and its kinds would
		// see an empty cloud as if there were nothing in it.
		if !slices.ContainsFunc(all, func(c Cloud) bool { return c.Name == name }) {
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

// reliedOn names the cloud reads the registered kinds that run rely on.
func reliedOn(runs func(Registration) bool) map[string]bool {
	out := map[string]bool{}
	for _, r := range Registered {
		if !runs(r) {
			continue
		}
		for _, n := range r.Clouds {
			out[n] = true
		}
		if r.Cloud != nil {
			out[r.Name] = true
		}
	}
	return out
}

// cloudReads are the reads the kinds this runner plans rely on, in
// registration order, through the clients opened or given.
func (r *Runner) cloudReads() []inventory.CloudRead {
	used := reliedOn(func(reg Registration) bool {
		return slices.ContainsFunc(r.kinds, func(k engine.Kind) bool { return k.Name() == reg.Name })
	})
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

// CloudKind adapts a cloud kind's FromConfig(cfg, client) to
// Registration.New: client is the named read's (Clients.Clouds[name]),
// nil when none was opened; FromConfig returns nil when its section is
// absent.
func CloudKind[K interface {
	*T
	engine.Kind
}, T any](name string, from func(cfg *config.Config, client any) K) func(*config.Config, *Clients) engine.Kind {
	return func(cfg *config.Config, c *Clients) engine.Kind {
		return nilKind(from(cfg, c.Clouds[name]))
	}
}
