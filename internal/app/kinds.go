package app

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"reclaim.dev/reclaim/base/layout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ebssnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/ebsvolume"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/gcesnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Registered lists every kind reclaim knows, one line each: the kind
// package's Module (its name, whether the config turns it on, how it is
// made, its taps and reads, its clouds, its permissions and gauges).
// Adding a kind is a package (its config section registers itself, its
// module.go exports its Module) and a line here: see "Adding a kind" in
// docs/architecture.md.
var Registered = []kind.Module{
	gcedisk.Module,
	k8spvc.Module,
	ecrimage.Module,
	ec2interface.Module,
	k8sjob.Module,
	k8spod.Module,
	ebsvolume.Module,
	ebssnapshot.Module,
	gcesnapshot.Module,
}

// Clouds lists the cloud reads several kinds may rely on, one line each.
// A kind names the reads it relies on (kind.Module.Clouds); a read no
// kind the config turns on names is neither opened for nothing nor read.
// A read only one kind has is that kind's Module.Cloud.
var Clouds = []kind.Cloud{
	{Name: ecrimage.Read, Open: ecrimage.Open, Read: Lists[[]inventory.RegistryListing]},
	{Name: ecrimage.UsersRead, Open: ecrimage.OpenUsers, Read: ecrimage.UsersReader, WithClusters: true},
	{Name: ec2interface.Read, Open: ec2interface.Open, Read: Lists[[]inventory.NetworkListing]},
}

// networksRead is the shared read (in Clouds) whose listing,
// []inventory.NetworkListing, gives each VPC's subnets: a discovered EKS
// cluster may use any subnet of its VPC (fleet.Assemble).
const networksRead = ec2interface.Read

// Register adds a kind to Registered (a kind outside this list, like a
// test's): its name must be new.
func Register(m kind.Module) {
	if slices.ContainsFunc(Registered, func(o kind.Module) bool { return o.Name == m.Name }) {
		panic("app: kind " + m.Name + " is registered twice")
	}
	Registered = append(Registered, m)
}

// Modules are some registered kinds, in registration order.
type Modules []kind.Module

// On are the registered kinds the config turns on: it asks each module
// once, and a runner keeps the answer (what a run reads, taps, opens and
// makes follows from it).
func On(cfg *config.Config) Modules {
	var out Modules
	for _, m := range Registered {
		if m.IsOn(cfg) {
			out = append(out, m)
		}
	}
	return out
}

// Names are the kinds' names (config check says them).
func (ms Modules) Names() []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// Taps are the kinds' taps, one of each name: kinds that stand on one
// base register its tap each (csisnapshot's), and it is read once.
func (ms Modules) Taps(cfg *config.Config) []kube.Tap {
	var out []kube.Tap
	for _, m := range ms {
		if m.Taps == nil {
			continue
		}
		for _, t := range m.Taps(cfg) {
			if !slices.ContainsFunc(out, func(o kube.Tap) bool { return o.Name == t.Name }) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Reads says which of the collector's shared reads the kinds rely on.
func (ms Modules) Reads() map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		for _, x := range m.Reads {
			out[x] = true
		}
	}
	return out
}

// Collect is what the kinds ask of the collector's own reads: the
// retention annotation the first names (config check makes those that
// name one agree), and labels when any needs them.
func (ms Modules) Collect(cfg *config.Config) kind.Collect {
	var out kind.Collect
	for _, m := range ms {
		if m.Collect == nil {
			continue
		}
		c := m.Collect(cfg)
		if out.RetentionAnnotation == "" {
			out.RetentionAnnotation = c.RetentionAnnotation
		}
		out.Labels = out.Labels || c.Labels
	}
	return out
}

// Evidence is what the kinds' cloud reads show made for the cluster t
// reads (each module's Evidence, in order): what the records reader
// believes a cluster's first record against.
func (ms Modules) Evidence(clouds map[string]any, t kube.Target, shown records.Shown) {
	for _, m := range ms {
		if m.Evidence != nil {
			m.Evidence(clouds, t, shown)
		}
	}
}

// AllTaps are every registered kind's taps, on or not: what an agent
// reads, so that a deleter's kinds find theirs in its record.
func AllTaps(cfg *config.Config) []kube.Tap { return Modules(Registered).Taps(cfg) }

// KindNames are the names of every registered kind (for metrics that start at 0).
func KindNames() []string { return Modules(Registered).Names() }

// Enabled names the registered kinds the config turns on, in
// registration order (config check says them).
func Enabled(cfg *config.Config) []string { return On(cfg).Names() }

// Gauges are every registered kind's metric declarations.
func Gauges() []layout.GaugeDef {
	var out []layout.GaugeDef
	for _, m := range Registered {
		out = append(out, m.Gauges...)
	}
	return out
}

// OwnerLabel is the label or tag whose value names a resource's owner
// (notify.ownerLabel), "" for none.
func OwnerLabel(cfg *config.Config) string { return cfg.OwnerLabel() }

// Routes are the notify section's routes for the engine (engine.Settings.Routes).
// A kind a route names must be a kind of reclaim's: a typo would route
// nothing, silently.
func Routes(cfg *config.Config) ([]engine.Route, error) {
	if cfg.Notify == nil {
		return nil, nil
	}
	known := KindNames()
	var out []engine.Route
	for i, r := range cfg.Notify.Routes {
		for j, k := range r.Kinds {
			if !slices.ContainsFunc(known, func(n string) bool { ok, _ := path.Match(k, n); return ok }) {
				return nil, fmt.Errorf("notify.routes[%d].kinds[%d]: %q matches no kind — the kinds are %s", i, j, k, strings.Join(known, ", "))
			}
		}
		out = append(out, engine.Route{Owner: r.Owner, Kinds: r.Kinds, Clusters: r.Clusters, Namespaces: r.Namespaces,
			Scopes: r.Scopes, Repositories: r.Repositories, Labels: r.Labels})
	}
	return out, nil
}
