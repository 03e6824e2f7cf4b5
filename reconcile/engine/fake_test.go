package engine_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// testGB is the fake kind's unit: what its deletions free.
var testGB = &amount.Unit{Name: "GB", Key: amount.KeySizeGB, Say: func(n int64) string { return fmt.Sprintf("%d GB", n) }}

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fakeKind is the smallest kind the engine's rules can be tested with: it
// proposes what it is given and records the applier's calls.
type fakeKind struct {
	lim      engine.Limits
	items    []engine.Proposal
	listings map[string]engine.Read // Proposals.Listings
	unknown  bool                   // Presence answers Unknown for every id

	// Recheck and Delete.
	recheckErr error                     // the re-read fails
	verdicts   map[string]engine.Verdict // by name; default Go
	deleteErr  error                     // the Delete call fails (outcome unknown)
	results    map[string]error          // by name: the Deleted.Err of one resource
	calls      []string
	onDelete   func() // called at each Delete call
	onRecheck  func() // called at each Recheck call
}

const fakeName = "fake"

func fakeID(name string) string { return "fake/" + name }

func (k *fakeKind) Name() string          { return fakeName }
func (k *fakeKind) Owns(id string) bool   { return strings.HasPrefix(id, "fake/") }
func (k *fakeKind) Limits() engine.Limits { return k.lim }

// Propose proposes every item; an id it does not list is gone.
func (k *fakeKind) Propose(*inventory.View, time.Time) engine.Proposals {
	listed := map[string]bool{}
	items := make([]engine.Proposal, len(k.items))
	for i, it := range k.items {
		listed[it.ID] = true
		items[i] = it
	}
	identity := map[string]string{}
	for _, it := range k.items {
		identity[it.ID] = it.Identity
	}
	return engine.Proposals{Items: items, InScope: len(items), Listings: k.listings, Identity: func(id string) string { return identity[id] }, Presence: func(id string) engine.Presence {
		if k.unknown {
			return engine.Unknown
		}
		if listed[id] {
			return engine.Present
		}
		return engine.Gone
	}}
}

func (k *fakeKind) Recheck(_ context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	if k.onRecheck != nil {
		k.onRecheck()
	}
	out := make([]engine.Verdict, len(batch))
	for i, d := range batch {
		k.calls = append(k.calls, "get "+d.Name)
		if k.recheckErr != nil {
			return nil, k.recheckErr
		}
		out[i] = k.verdicts[d.Name]
	}
	return out, nil
}

func (k *fakeKind) Delete(_ context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	if k.onDelete != nil {
		k.onDelete()
	}
	out := make([]engine.Deleted, len(batch))
	for i, d := range batch {
		k.calls = append(k.calls, "delete "+d.Name)
		if k.deleteErr != nil {
			return nil, k.deleteErr
		}
		out[i].Err = k.results[d.Name]
	}
	return out, nil
}

// testLimits are the limits of the old disk test policy.
func testLimits() engine.Limits {
	return engine.Limits{Grace: 6 * time.Hour, MinAge: 24 * time.Hour, MaxDeletes: 20, MaxDeletePercent: 1,
		BreakerCandidates: 200, BatchSize: 1, Wording: engine.Wording{Section: "fake", Noun: "fakes"}}
}

// orphan is a candidate of 100 GB, old enough, relying on no source.
func orphan(name string) engine.Proposal {
	return engine.Proposal{
		ID: fakeID(name), Name: name, Identity: "v1", Frees: amount.Free(100, testGB), Reason: "nobody uses it",
		Candidate: true, Created: t0.Add(-30 * 24 * time.Hour),
	}
}

func orphans(names ...string) []engine.Proposal {
	var out []engine.Proposal
	for _, n := range names {
		out = append(out, orphan(n))
	}
	return out
}

// inUse is a resource that is not a candidate.
func inUse(name string) engine.Proposal {
	return engine.Proposal{ID: fakeID(name), Name: name, Reason: "in use", Frees: amount.Free(100, testGB)}
}

func complete(name string) inventory.ClusterRefs {
	return inventory.ClusterRefs{Name: name, Complete: true}
}

func snap(clusters ...inventory.ClusterRefs) *inventory.View {
	return &inventory.View{TakenAt: t0, Clusters: clusters}
}

// seenSince returns state in which every item has been a candidate since t.
func seenSince(t time.Time, items ...engine.Proposal) engine.State {
	s := engine.NewState()
	for _, it := range items {
		s.Seen(it.ID, it.Identity, t)
	}
	return s
}

func build(k *fakeKind, st engine.State, now time.Time, clusters ...inventory.ClusterRefs) *engine.Plan {
	return engine.Build(snap(clusters...), []engine.Kind{k}, st, now)
}
