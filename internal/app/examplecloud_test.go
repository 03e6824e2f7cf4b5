package app_test

// A cloud kind is one package too: internal/examplecloud holds a whole kind
// that reads a cloud no other kind reads (its config section, its API and
// its read, proposals with the listings as sources, its re-read and
// delete). It is registered here the way internal/app/kinds.go registers
// reclaim's own, with its cloud (an in-memory one here; a provider's client
// in a real kind) in its Module's Cloud, and nothing edited in the
// config package, the collector, the snapshot or the engine.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/examplecloud"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// bucketCloud is an in-memory cloud of buckets with a precondition on
// delete, a listing that can be made to fail part-way, and a log of the
// deletes.
type bucketCloud struct {
	mu      sync.Mutex
	buckets map[string]examplecloud.Bucket // account/name
	failing map[string]bool                // accounts whose list fails
	deleted []string
}

func (c *bucketCloud) Buckets(_ context.Context, account string) ([]examplecloud.Bucket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []examplecloud.Bucket
	for k, b := range c.buckets {
		if strings.HasPrefix(k, account+"/") {
			out = append(out, b)
		}
	}
	if c.failing[account] {
		// A later page failed: what the first pages showed, and the error
		// (the dangerous case: a partial view).
		return out, fmt.Errorf("page 2: 503 service unavailable")
	}
	return out, nil
}

func (c *bucketCloud) Bucket(_ context.Context, account, name string) (examplecloud.Bucket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.buckets[account+"/"+name]
	if !ok {
		return b, fmt.Errorf("bucket %s: %w", name, outcome.ErrNotFound)
	}
	return b, nil
}

func (c *bucketCloud) DeleteBucket(_ context.Context, account, name, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.buckets[account+"/"+name]
	switch {
	case !ok:
		return fmt.Errorf("bucket %s: %w", name, outcome.ErrNotFound)
	case b.ID != id:
		return examplecloud.ErrChanged
	}
	delete(c.buckets, account+"/"+name)
	c.deleted = append(c.deleted, account+"/"+name)
	return nil
}

func TestACloudKindIsOnePackage(t *testing.T) {
	start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	tmp := map[string]string{"reclaim.dev/temporary": "true"}
	cloud := &bucketCloud{failing: map[string]bool{}, buckets: map[string]examplecloud.Bucket{
		"a/tmp":           {Name: "tmp", ID: "1", Created: start.Add(-48 * time.Hour), Labels: tmp},
		"a/tmp-protected": {Name: "tmp-protected", ID: "2", Created: start.Add(-48 * time.Hour), Labels: map[string]string{"reclaim.dev/temporary": "true", "reclaim.dev/protect": "true"}},
		"a/plain":         {Name: "plain", ID: "3", Created: start.Add(-48 * time.Hour)},
		"b/recreated":     {Name: "recreated", ID: "4", Created: start.Add(-48 * time.Hour), Labels: tmp},
	}}
	// The one line a kind adds to internal/app/kinds.go: its Module. Its
	// cloud is given as a harness gives a fake (Deps.Clients), in place of
	// the client its Open would build from its section.
	saved := app.Registered
	t.Cleanup(func() { app.Registered = saved })
	app.Register(examplecloud.Module)
	clients := map[string]any{examplecloud.Name: cloud}

	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`clusters:
  - name: prod
    context: prod
state: {file: %s}
audit: {file: %s}
exampleBuckets:
  accounts: [a, b]
  minAge: 1h
  grace: 1h
  maxDeletePercent: 100%%
`, filepath.Join(dir, "state.json"), filepath.Join(dir, "audit.jsonl"))), "reclaim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clusters := func(context.Context) []inventory.ClusterRefs {
		return []inventory.ClusterRefs{{Name: "prod", Complete: true}}
	}
	pass := func(at time.Duration) *engine.Plan {
		t.Helper()
		now := start.Add(at)
		rep, err := app.Run(context.Background(), cfg, app.Deps{Clients: clients, Clusters: clusters, Now: func() time.Time { return now }}, app.Options{Apply: true})
		if err != nil {
			t.Fatal(err)
		}
		cloud.mu.Lock()
		defer cloud.mu.Unlock()
		for _, k := range []string{"a/tmp-protected", "a/plain"} {
			if _, ok := cloud.buckets[k]; !ok {
				t.Fatalf("%s was deleted: it is protected or not temporary", k)
			}
		}
		return rep.Plan
	}
	action := func(p *engine.Plan, name string) engine.Action {
		t.Helper()
		for d := range p.All() {
			if d.Kind == examplecloud.Name && d.Name == name {
				return d.Action
			}
		}
		t.Fatalf("no decision for %s: %+v", name, p.Decisions)
		return ""
	}

	// Pass 1: candidates; their grace starts. The protected one is kept by
	// the engine, the unlabelled one is not the kind's.
	p := pass(0)
	if action(p, "tmp") != engine.Mark || action(p, "tmp-protected") != engine.Keep || action(p, "recreated") != engine.Mark {
		t.Fatalf("pass 1: %+v", p.Decisions)
	}
	// Pass 2, past the grace, but the listings fail part-way: their sources
	// are incomplete, so nothing they show is deleted.
	cloud.mu.Lock()
	cloud.failing["a"], cloud.failing["b"] = true, true
	cloud.mu.Unlock()
	p = pass(2 * time.Hour)
	if !p.Incomplete || len(cloud.deleted) != 0 {
		t.Fatalf("pass 2: incomplete=%v, deleted %v", p.Incomplete, cloud.deleted)
	}
	// Pass 3: a read again, b's bucket recreated between the plan and the
	// delete (another id): tmp is deleted, the recreated one skipped.
	cloud.mu.Lock()
	cloud.failing["a"], cloud.failing["b"] = false, false
	cloud.mu.Unlock()
	recreate := func() {
		cloud.mu.Lock()
		b := cloud.buckets["b/recreated"]
		b.ID = "5"
		cloud.buckets["b/recreated"] = b
		cloud.mu.Unlock()
	}
	now := start.Add(3 * time.Hour)
	r, err := app.New(context.Background(), cfg, app.Deps{Clients: clients, Clusters: func(ctx context.Context) []inventory.ClusterRefs {
		defer recreate() // after the clouds were listed: the plan names id 4
		return clusters(ctx)
	}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := r.Once(context.Background(), app.Options{Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	if action(rep.Plan, "tmp") != engine.Delete || len(cloud.deleted) != 1 || cloud.deleted[0] != "a/tmp" {
		t.Fatalf("pass 3: tmp %s, deleted %v", action(rep.Plan, "tmp"), cloud.deleted)
	}
	if _, ok := cloud.buckets["b/recreated"]; !ok || rep.Outcome == nil || rep.Outcome.Skipped != 1 {
		t.Fatalf("pass 3: the recreated bucket was not skipped: %+v", rep.Outcome)
	}
	audit, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil || !strings.Contains(string(audit), `"example-bucket/a/tmp"`) {
		t.Errorf("the audit log does not record the delete: %v\n%s", err, audit)
	}
}
