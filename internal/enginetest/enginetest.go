// Package enginetest has the helpers the engine's and the kinds' tests share:
// an applier over a memory store with its audit in a buffer, the audit's
// results by id, and a plan's decision by name.
package enginetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// Applier returns an applier for kinds at the fixed time now, stopping after
// maxFails failures in a row, with its audit log and state store.
func Applier(now time.Time, maxFails int, kinds ...engine.Kind) (*engine.Applier, *bytes.Buffer, *state.MemoryStore) {
	var buf bytes.Buffer
	store := state.NewMemoryStore(engine.NewState())
	a := &engine.Applier{Kinds: kinds, Store: store, Audit: audit.New(&buf), Log: zap.NewNop(),
		Now: func() time.Time { return now }, RunID: "test", MaxConsecutiveFailures: maxFails}
	return a, &buf, store
}

// AuditResults returns the audit results of each id in the log, joined
// (one record: its result; two: both, so a test sees a double record).
func AuditResults(t *testing.T, b *bytes.Buffer) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		out[r.ID] += r.Result
	}
	return out
}

// DecisionFor returns the plan's decision for the resource named name.
func DecisionFor(t *testing.T, p *engine.Plan, name string) engine.Decision {
	t.Helper()
	for d := range p.All() {
		if d.Name == name {
			return *d
		}
	}
	t.Fatalf("no decision for %s", name)
	return engine.Decision{}
}

// LockedWriter serializes writes to W (an audit log read by a test while
// passes run).
type LockedWriter struct {
	Mu *sync.Mutex
	W  io.Writer
}

func (l LockedWriter) Write(p []byte) (int, error) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	return l.W.Write(p)
}

// DiskConfig is a config with one cluster "a" and the GCE project proj-one
// at gceURL (a fake), grace 6h and no percent cap: a runner over it deletes
// orphan disks of proj-one once their clock is 6 hours old. more are
// further sections of the file.
func DiskConfig(t testing.TB, gceURL string, more ...string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(append(fmt.Appendf(nil, `clusters:
  - name: a
    kubeconfig: unused
gce:
  projects: [proj-one]
  endpoint: %s
  withoutAuthentication: true
disks:
  grace: 6h
  maxDeletePercent: 100%%
`, gceURL), strings.Join(more, "")...), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Build is engine.Build as the runner does it: the plan, then what the
// kinds show of it (report.Show), so a kind's test reads its sections,
// summaries, gauges and warnings in the plan.
func Build(snap *inventory.View, kinds []engine.Kind, prev engine.State, now time.Time) *engine.Plan {
	return BuildWith(engine.Settings{}, snap, kinds, prev, now)
}

// BuildWith is Build with the run's settings.
func BuildWith(s engine.Settings, snap *inventory.View, kinds []engine.Kind, prev engine.State, now time.Time) *engine.Plan {
	p := s.Build(snap, kinds, prev, now)
	report.Show(p, kinds, snap)
	return p
}
