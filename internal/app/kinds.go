package app

import (
	"fmt"
	"path"
	"slices"
	"strings"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
	"reclaim.dev/reclaim/reconcile/kinds/netiface"
	"reclaim.dev/reclaim/reconcile/kinds/workflowpvc"
)

// Registered lists every kind reclaim knows, one line each: its name, its
// metrics, and how its config section and the run's clients make it (nil
// when its section is absent). Adding a kind is a package, a config section
// and a line here.
var Registered = []Registration{
	{gcedisk.Name, gcedisk.Gauges, func(cfg *config.Config, c *Clients) engine.Kind { return nilKind(gcedisk.FromConfig(cfg, c.Disks)) }},
	{workflowpvc.Name, nil, func(cfg *config.Config, c *Clients) engine.Kind { return workflowpvc.FromConfig(cfg, c.Kube) }},
	{ecrimage.Name, ecrimage.Gauges, func(cfg *config.Config, c *Clients) engine.Kind { return nilKind(ecrimage.FromConfig(cfg, c.Images)) }},
	{netiface.Name, netiface.Gauges, func(cfg *config.Config, c *Clients) engine.Kind { return nilKind(netiface.FromConfig(cfg, c.Networks)) }},
	{k8sjob.Name, k8sjob.Gauges, func(cfg *config.Config, c *Clients) engine.Kind { return nilKind(k8sjob.FromConfig(cfg, c.Kube)) }},
	{k8spod.Name, k8spod.Gauges, func(cfg *config.Config, c *Clients) engine.Kind { return nilKind(k8spod.FromConfig(cfg, c.Kube)) }},
}

// Registration is one kind.
type Registration struct {
	Name   string
	Gauges []engine.GaugeDef
	New    func(cfg *config.Config, c *Clients) engine.Kind
}

// KindNames are the names of every registered kind (for metrics that start at 0).
func KindNames() []string {
	out := make([]string, len(Registered))
	for i, r := range Registered {
		out[i] = r.Name
	}
	return out
}

// Gauges are every registered kind's metric declarations.
func Gauges() []engine.GaugeDef {
	var out []engine.GaugeDef
	for _, r := range Registered {
		out = append(out, r.Gauges...)
	}
	return out
}

// nilKind turns a typed nil (section absent) into a nil interface.
func nilKind[K interface {
	*T
	engine.Kind
}, T any](k K) engine.Kind {
	if k == nil {
		return nil
	}
	return k
}

// OwnerLabel is the label or tag whose value names a resource's owner
// (notify.ownerLabel), "" for none.
func OwnerLabel(cfg *config.Config) string {
	if cfg.Notify == nil {
		return ""
	}
	return cfg.Notify.OwnerLabel
}

// Routes are the notify section's routes for the engine (engine.Routes).
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
