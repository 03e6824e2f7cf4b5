// Package examplekind is a whole kind in one package, as "Adding a kind"
// in docs/architecture.md describes: it deletes ConfigMaps labelled temporary once
// they are older than a maximum age. It is not part of reclaim (no binary
// links it); internal/app's TestAKindIsOnePackage registers it the way a
// real kind is registered and runs it against a real kube-apiserver, so the
// steps the doc gives stay true.
//
// What the package holds, and nothing outside it does: its config section
// (type, defaults, validation, docs), its tap (one paginated pass over
// ConfigMaps per cluster, with its own completeness), its proposals (what
// it says of each ConfigMap; the engine decides on them, enforcing every
// safety rule), and its delete through the shared Kubernetes delete path
// (re-read, UID precondition, pacing).
package examplekind

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/base/optout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Name is the kind; Key its config section; TapName its read of clusters.
const (
	Name    = "example-configmap"
	Key     = "exampleConfigMaps"
	TapName = "configmaps"
)

// Section is the kind's config section.
type Section struct {
	// Label marks a ConfigMap as temporary (value "true").
	Label string `json:"label"`
	// MaxAge is how old a temporary ConfigMap gets before it is a candidate.
	MaxAge config.Duration `json:"maxAge"`
	// Safety is grace and the per-run caps, written in the section, with
	// the floors every kind has (SectionSpec.Safety); maxAge stands for a
	// minimum age, and kubernetes.protectLabel for a protect tag.
	config.Safety
}

func init() {
	config.Register(config.SectionSpec[Section]{
		Key:    Key,
		Doc:    "deletes ConfigMaps labelled temporary once older than maxAge",
		Safety: func(s *Section) *config.Safety { return &s.Safety },
		SafetyRules: config.SafetyRules{
			Defaults: config.Safety{Grace: config.Duration(time.Hour),
				Caps: config.Caps{MaxDeletesPerRun: 10, MaxDeletePercent: config.Percent(0.5), BreakerCandidates: 100}},
			Without:  []string{config.KeyProtectTag, config.KeyMinAge, config.KeyMaxDeleteSizePerRun},
			GraceWhy: "a ConfigMap must be a candidate on more than one run before it is deleted",
		},
		Defaults: func(s *Section, set func(string) bool) {
			config.Fill(set, "label", &s.Label, "reclaim.dev/temporary")
			config.Fill(set, "maxAge", &s.MaxAge, config.Duration(24*time.Hour))
		},
		Validate: func(s *Section, report *config.Report) {
			if s.Label == "" {
				report.Add("label", "is empty — name the label that marks a ConfigMap temporary")
			}
			if s.MaxAge.Std() < time.Minute {
				report.Add("maxAge", "%s is too short — use at least 1m", s.MaxAge)
			}
		},
	})
}

// cm is what the tap keeps of one temporary ConfigMap.
type cm struct {
	ns, name, uid string
	created       time.Time
	protected     bool
}

// sink keeps the temporary ConfigMaps of one cluster's pass.
type sink struct {
	label, protect string
	items          []cm
}

func (s *sink) Add(u *unstructured.Unstructured) error {
	l := u.GetLabels()
	if l[s.label] != "true" {
		return nil
	}
	s.items = append(s.items, cm{ns: u.GetNamespace(), name: u.GetName(), uid: string(u.GetUID()),
		created: u.GetCreationTimestamp().Time, protected: isProtected(s.protect, l)})
	return nil
}

func (s *sink) Result() any { return s.items }

// Taps is the kind's read of each cluster; nil when the section is absent.
func Taps(cfg *config.Config) []kube.Tap {
	s := config.SectionOf[Section](cfg, Key)
	if s == nil {
		return nil
	}
	protect := cfg.Kubernetes.ProtectLabel
	return []kube.Tap{{Name: TapName, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		New: func(string) kube.TapSink { return &sink{label: s.Label, protect: protect} }}}
}

// isProtected is the opt-out rule (package optout), applied as the tap reads:
// the sink keeps no labels.
func isProtected(key string, labels map[string]string) bool {
	_, ok := optout.Protects(key, labels)
	return ok
}

// Kind plans and deletes temporary ConfigMaps.
type Kind struct {
	s       Section
	protect string
	del     *finished.Deleter[*corev1.ConfigMap]
}

// FromConfig makes the kind; nil when the section is absent.
func FromConfig(cfg *config.Config, client func(cluster string) (kubernetes.Interface, error)) *Kind {
	s := config.SectionOf[Section](cfg, Key)
	if s == nil {
		return nil
	}
	label := s.Label
	return &Kind{s: *s, protect: cfg.Kubernetes.ProtectLabel, del: &finished.Deleter[*corev1.ConfigMap]{
		Client: client, PerSecond: 10,
		API: finished.API[*corev1.ConfigMap]{Resource: "configmap",
			In: func(cs kubernetes.Interface, ns string) finished.Objects[*corev1.ConfigMap] {
				return cs.CoreV1().ConfigMaps(ns)
			},
			Still: func(c *corev1.ConfigMap) string {
				if c.Labels[label] != "true" {
					return "no longer labelled " + label
				}
				return ""
			},
		}}}
}

func (k *Kind) Name() string { return Name }

func (k *Kind) Owns(id string) bool { return strings.HasPrefix(id, Name+"/") }

func (k *Kind) Limits() engine.Limits {
	// The safety block's limits; a kind whose deletions free a size passes
	// its unit (ebsvolume.GiB), in which maxDeleteSizePerRun then counts.
	// A ConfigMap frees none: nil.
	l := kind.Limits(k.s.Safety, nil)
	l.BatchSize, l.OptOutKey = 50, k.protect
	l.Wording = engine.Wording{Section: Key, Noun: "ConfigMaps"}
	return l
}

// OptOut says how a person keeps one of the kind's resources from being
// deleted (report.OptOuter).
func (k *Kind) OptOut() string { return optout.Rule("label", k.protect, "ConfigMap") }

func id(cluster, ns, name string) string { return Name + "/" + cluster + "/" + ns + "/" + name }

// Propose proposes every temporary ConfigMap a tap read: a candidate once
// older than maxAge, protected when it carries the protect label, else not
// a candidate (the engine keeps it). A proposal says what the kind knows:
// what the engine decides (action, hold, clock, deadline, owner) is the
// Decision's, and a proposal has no field for it. It builds no hold of
// its own: each proposal names its cluster and its tap's pass, and the
// engine holds it when either is incomplete.
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	var out engine.Proposals
	listed := map[string]bool{}
	complete := map[string]bool{}
	for _, c := range snap.Clusters {
		t, ok := c.Taps[TapName]
		if !ok {
			continue
		}
		complete[c.Name] = t.Complete
		items, _ := t.Data.([]cm)
		for _, m := range items {
			p := engine.Proposal{ID: id(c.Name, m.ns, m.name), Name: m.name, Identity: m.uid,
				Detail:  &finished.Detail{Cluster: c.Name, Namespace: m.ns, UID: m.uid},
				Created: m.created, Sources: engine.Users{Clusters: []string{c.Name}, Reads: []string{TapName}}.Keys(snap.Fleet)}
			listed[p.ID] = true
			switch {
			case m.protected:
				p.Protected = "protected by label " + k.protect
			case now.Sub(m.created) >= k.s.MaxAge.Std():
				p.Candidate, p.Class, p.Reason = true, "expired", fmt.Sprintf("temporary and older than %s", k.s.MaxAge)
			default:
				p.Class, p.Reason = "young", fmt.Sprintf("temporary, younger than %s", k.s.MaxAge)
			}
			out.Items = append(out.Items, p)
		}
	}
	out.InScope = len(out.Items)
	out.Presence = engine.Listed(func(id string) (string, bool) {
		scope, _, ok := strings.Cut(strings.TrimPrefix(id, Name+"/"), "/")
		return scope, ok
	}, complete, listed)
	return out
}

// View makes the kind a report.Viewer: what reports show of the plan.
func (k *Kind) View(p *engine.Plan, _ *inventory.View) layout.View {
	return layout.View{Summary: fmt.Sprintf("%d temporary ConfigMap(s) to delete", p.Count(Name, engine.Delete))}
}

func (k *Kind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	return k.del.Recheck(ctx, batch)
}

func (k *Kind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	return k.del.Delete(ctx, batch)
}
