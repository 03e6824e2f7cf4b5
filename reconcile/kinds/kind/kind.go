// Package kind is what a kind package exports to the wiring: one Module
// value, holding the kind's name, whether a config turns it on, how it is
// made, what it reads and the permissions it needs. internal/app
// registers a list of them, one line each (docs/architecture.md, "Adding
// a kind"). Limits reads every kind's safety settings.
package kind

import (
	"context"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/base/perms"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/records"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Module is one kind, as the wiring sees it.
type Module struct {
	// Name is the kind's (engine.Kind's Name).
	Name string
	// Section is the config section that turns the kind on: the kind is
	// on when the file has it.
	Section string
	// On, if set, says instead whether the config turns the kind on (a
	// kind that is always on).
	On func(cfg *config.Config) bool
	// New makes the kind from the config and the run's clients; the
	// wiring calls it only when On. Clients may be empty (a plan only, or
	// a question of its Limits): the kind then deletes nothing.
	New func(cfg *config.Config, c *Clients) engine.Kind
	// Taps, if set, are the kind's own reads of each cluster, made when
	// the kind is on (and by an agent whatever its config, for the
	// deleter: what the config lacks for them, they leave out): the
	// collector makes one paginated pass per tap.
	Taps func(cfg *config.Config) []kube.Tap
	// Reads are the collector's shared reads the kind relies on when it
	// is on (inventory.ReadImages, ReadWorkloads): evidence several kinds
	// use, read once through typed clients.
	Reads []string
	// Collect, if set, is what the kind asks of the collector's own
	// reads of each cluster when it is on (Jobs' and Pods' retention
	// annotation, their labels).
	Collect func(cfg *config.Config) Collect
	// Clouds name the shared cloud reads the kind relies on (app.Clouds):
	// each is opened and read when a kind that is on names it, and New
	// finds its client in Clients.Clouds[name].
	Clouds []string
	// Cloud, if set, is the kind's own read of its cloud, named after
	// the kind (or Cloud.Name, for a read other kinds rely on too: they
	// name it in their Clouds): its client is Clients.Clouds[name], what
	// it read View.Clouds[name].
	Cloud *Cloud
	// Evidence, if set, says what the kind's cloud read shows made for a
	// cluster, per class of evidence a record lists: a cluster's first
	// record listing none of a class the clouds show some of is held
	// until it has stood for fleet.records.dropSettle.
	Evidence records.Evidence
	// InCluster kinds need no view beyond their own cluster (finished
	// Jobs and Pods, workflow PVCs): with fleet.records, each cluster's
	// agent runs them, and the deleter, holding no kube credential, does
	// not.
	InCluster bool
	// Permissions are what the kind's own calls need (its Reads declare
	// theirs): deploy/ must grant them (internal/app permissions_test.go).
	Permissions perms.Set
	// Gauges are the metrics the kind's View samples.
	Gauges []layout.GaugeDef
}

// IsOn says whether cfg turns the kind on. The wiring asks it once per
// config, and then only of the kinds that are on makes them, taps
// clusters, opens clouds and reads what they rely on.
func (m Module) IsOn(cfg *config.Config) bool {
	if m.On != nil {
		return m.On(cfg)
	}
	return cfg != nil && m.Section != "" && cfg.Has(m.Section)
}

// OwnCloud is the kind's own read with its name set (OwnCloud().Name),
// nil when the kind has none.
func (m Module) OwnCloud() *Cloud {
	if m.Cloud == nil {
		return nil
	}
	c := *m.Cloud
	if c.Name == "" {
		c.Name = m.Name
	}
	return &c
}

// Clients are what kinds delete through, built once per run.
type Clients struct {
	// Kube returns a cluster's client.
	Kube func(cluster string) (kubernetes.Interface, error)
	// Clouds are the cloud reads' clients, by read name.
	Clouds map[string]any
}

// Cloud is one named read of a cloud: the client kinds delete through,
// and the read of the cloud for the snapshot (View.Clouds[Name]).
type Cloud struct {
	// Name is the read's; a kind's own read is named after the kind
	// unless it says otherwise (Module.OwnCloud).
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

// Collect is what a kind asks of the collector's own reads of each
// cluster (kube.Options).
type Collect struct {
	// RetentionAnnotation is the annotation whose value overrides an
	// object's retention; the kinds that name one name the same (config
	// check).
	RetentionAnnotation string
	// Labels: the kind's selectors need the objects' labels.
	Labels bool
}

// WithKube adapts a Kubernetes kind's FromConfig(cfg, kubeClient) to
// Module.New: a typed nil (its section absent) is a nil engine.Kind.
func WithKube[K interface {
	*T
	engine.Kind
}, T any](from func(cfg *config.Config, client func(cluster string) (kubernetes.Interface, error)) K) func(*config.Config, *Clients) engine.Kind {
	return func(cfg *config.Config, c *Clients) engine.Kind {
		return nilKind(from(cfg, c.Kube))
	}
}

// WithCloud adapts a cloud kind's FromConfig(cfg, client) to Module.New:
// client is the named read's (Clients.Clouds[name]), nil when none was
// opened; a typed nil (its section absent) is a nil engine.Kind.
func WithCloud[K interface {
	*T
	engine.Kind
}, T any](name string, from func(cfg *config.Config, client any) K) func(*config.Config, *Clients) engine.Kind {
	return func(cfg *config.Config, c *Clients) engine.Kind {
		return nilKind(from(cfg, c.Clouds[name]))
	}
}

// WithSection adapts a cloud kind whose section is its policy to
// Module.New: make is given the file's section under key and the named
// read's client as the kind's API (A's zero value when none was opened or
// it is not an A); without the section the kind is off (nil).
func WithSection[S, A any, K interface {
	*T
	engine.Kind
}, T any](read, key string, make func(s S, api A) K) func(*config.Config, *Clients) engine.Kind {
	return WithCloud(read, func(cfg *config.Config, client any) K {
		s := config.SectionOf[S](cfg, key)
		if s == nil {
			return nil
		}
		api, _ := client.(A)
		return make(*s, api)
	})
}

// nilKind turns a typed nil into a nil interface.
func nilKind[K interface {
	*T
	engine.Kind
}, T any](k K) engine.Kind {
	if k == nil {
		return nil
	}
	return k
}
