package app

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/base/perms"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ebsvolume"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
	"reclaim.dev/reclaim/reconcile/kinds/netiface"
	"reclaim.dev/reclaim/reconcile/kinds/workflowpvc"
)

// Registered lists every kind reclaim knows, one line each: its name, its
// metrics, and how its config section and the run's clients make it (nil
// when its section is absent), and the taps it reads clusters with. Adding a
// kind is a package (its config section registers itself) and a line here:
// see "Adding a kind" in docs/architecture.md.
var Registered = []Registration{
	{Name: gcedisk.Name, Gauges: gcedisk.Gauges, Permissions: gcedisk.Permissions, New: CloudKind(gcedisk.Source, gcedisk.FromConfig), Clouds: []string{gcedisk.Source}},
	{Name: workflowpvc.Name, Permissions: workflowpvc.Permissions, New: func(cfg *config.Config, c *Clients) engine.Kind { return workflowpvc.FromConfig(cfg, c.Kube) },
		Taps: func(*config.Config) []kube.Tap { return []kube.Tap{workflowpvc.Tap} }, Clouds: []string{gcedisk.Source}, InCluster: true},
	{Name: ecrimage.Name, Gauges: ecrimage.Gauges, Permissions: ecrimage.Permissions, New: CloudKind(ecrimage.Source, ecrimage.FromConfig),
		Reads: []string{inventory.ReadImages}, Clouds: []string{ecrimage.Source, ecrimage.UsersSource}},
	{Name: netiface.Name, Gauges: netiface.Gauges, Permissions: netiface.Permissions, New: CloudKind(netiface.Source, netiface.FromConfig),
		Reads: []string{inventory.ReadWorkloads}, Clouds: []string{netiface.Source}},
	{Name: k8sjob.Name, Gauges: k8sjob.Gauges, Permissions: k8sjob.Permissions, New: func(cfg *config.Config, c *Clients) engine.Kind { return nilKind(k8sjob.FromConfig(cfg, c.Kube)) },
		Reads: []string{inventory.ReadWorkloads}, InCluster: true},
	{Name: k8spod.Name, Gauges: k8spod.Gauges, Permissions: k8spod.Permissions, New: func(cfg *config.Config, c *Clients) engine.Kind { return nilKind(k8spod.FromConfig(cfg, c.Kube)) },
		Reads: []string{inventory.ReadWorkloads}, InCluster: true},
	{Name: ebsvolume.Name, Gauges: ebsvolume.Gauges, Permissions: ebsvolume.Permissions, New: CloudKind(ebsvolume.Name, ebsvolume.FromConfig), Taps: ebsvolume.Taps,
		Cloud: &Cloud{Open: ebsvolume.Open, Read: ebsvolume.Reader}},
}

// Registration is one kind.
type Registration struct {
	Name   string
	Gauges []layout.GaugeDef
	New    func(cfg *config.Config, c *Clients) engine.Kind
	// Taps, if set, are the kind's own reads of each cluster, made when the
	// config turns the kind on (and by an agent whatever its config, for
	// the deleter: what the config lacks for them, they leave out): the
	// collector makes one paginated pass per tap.
	Taps func(cfg *config.Config) []kube.Tap
	// InCluster kinds need no view beyond their own cluster (finished
	// Jobs and Pods, workflow PVCs): with fleet.snapshots, each cluster's
	// agent runs them, and the deleter, holding no kube credential, does
	// not.
	InCluster bool
	// Reads are the collector's shared reads the kind relies on when the
	// config turns it on (inventory.ReadImages, ReadWorkloads): evidence
	// several kinds use, read once through typed clients.
	Reads []string
	// Clouds name the registered cloud reads the kind relies on (Clouds):
	// each is opened and read when a kind the config turns on names it, and
	// New finds its client in Clients.Clouds[name].
	Clouds []string
	// Cloud, if set, is the kind's own read of a cloud no other kind
	// reads, named after the kind: its client is Clients.Clouds[Name], what
	// it read Snapshot.Clouds[Name].
	Cloud *Cloud
	// Permissions are what the kind's own calls need (its Reads declare
	// theirs): deploy/ must grant them (permissions_test.go).
	Permissions perms.Set
}

// Register adds a kind to Registered (a kind outside this list, like a
// test's): its name must be new.
func Register(r Registration) {
	if slices.ContainsFunc(Registered, func(o Registration) bool { return o.Name == r.Name }) {
		panic("app: kind " + r.Name + " is registered twice")
	}
	Registered = append(Registered, r)
}

// Taps are the taps of every registered kind the config turns on.
func Taps(cfg *config.Config) []kube.Tap {
	var out []kube.Tap
	for _, r := range Registered {
		if r.Taps != nil && r.New(cfg, &Clients{}) != nil {
			out = append(out, r.Taps(cfg)...)
		}
	}
	return out
}

// AllTaps are every registered kind's taps, on or not: what an agent
// reads, so that a deleter's kinds find theirs in its record.
func AllTaps(cfg *config.Config) []kube.Tap {
	var out []kube.Tap
	for _, r := range Registered {
		if r.Taps != nil {
			out = append(out, r.Taps(cfg)...)
		}
	}
	return out
}

// Reads says which of the collector's shared reads the kinds the config
// turns on rely on.
func Reads(cfg *config.Config) map[string]bool {
	out := map[string]bool{}
	for _, r := range Registered {
		if len(r.Reads) > 0 && r.New(cfg, &Clients{}) != nil {
			for _, x := range r.Reads {
				out[x] = true
			}
		}
	}
	return out
}

// KindNames are the names of every registered kind (for metrics that start at 0).
func KindNames() []string {
	out := make([]string, len(Registered))
	for i, r := range Registered {
		out[i] = r.Name
	}
	return out
}

// Enabled names the registered kinds the config turns on, in
// registration order (config check says them).
func Enabled(cfg *config.Config) []string {
	var out []string
	for _, r := range Registered {
		if r.New(cfg, &Clients{}) != nil {
			out = append(out, r.Name)
		}
	}
	return out
}

// Gauges are every registered kind's metric declarations.
func Gauges() []layout.GaugeDef {
	var out []layout.GaugeDef
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
func OwnerLabel(cfg *config.Config) string { return cfg.OwnerLabel() }

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
