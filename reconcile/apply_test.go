package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/inventory"
)

// memDisks is an in-memory DiskAPI that records what was called.
type memDisks struct {
	disks     map[string]inventory.Disk
	failGet   error
	failDel   map[string]error
	failSnap  error
	calls     []string
	snapshots []string
}

func (m *memDisks) GetDisk(_ context.Context, k inventory.DiskKey) (inventory.Disk, error) {
	m.calls = append(m.calls, "get "+k.Name)
	if m.failGet != nil {
		return inventory.Disk{}, m.failGet
	}
	d, ok := m.disks[k.String()]
	if !ok {
		return d, fmt.Errorf("get %s: %w", k, ErrNotFound)
	}
	return d, nil
}

func (m *memDisks) SnapshotDisk(_ context.Context, k inventory.DiskKey, name string, labels map[string]string) error {
	m.calls = append(m.calls, "snapshot "+k.Name)
	if m.failSnap != nil {
		return m.failSnap
	}
	m.snapshots = append(m.snapshots, name+" "+labels["reclaim-snapshot-of"])
	return nil
}

func (m *memDisks) DeleteDisk(_ context.Context, k inventory.DiskKey) error {
	m.calls = append(m.calls, "delete "+k.Name)
	if err := m.failDel[k.Name]; err != nil {
		return err
	}
	if _, ok := m.disks[k.String()]; !ok {
		return fmt.Errorf("delete %s: %w", k, ErrNotFound)
	}
	delete(m.disks, k.String())
	return nil
}

func applyFixture(disks ...inventory.Disk) (*memDisks, *Plan, *Applier, *bytes.Buffer, *MemoryStore) {
	m := &memDisks{disks: map[string]inventory.Disk{}, failDel: map[string]error{}}
	for _, d := range disks {
		m.disks[d.Key.String()] = d
	}
	p := Build(snap(disks, complete("a")), testPolicy(), seenSince(t0.Add(-7*time.Hour), disks...), t0)
	var audit bytes.Buffer
	store := NewMemoryStore(NewState())
	a := &Applier{Disks: m, Store: store, Audit: NewAudit(&audit), Log: zap.NewNop(), Policy: testPolicy(),
		SnapshotLabel: "reclaim-snapshot-of", Now: func() time.Time { return t0 }, RunID: "test", MaxConsecutiveFailures: 3}
	return m, p, a, &audit, store
}

func auditResults(t *testing.T, b *bytes.Buffer) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var r AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		out[r.ID] += r.Result
	}
	return out
}

func TestApplyDryRunCallsNothing(t *testing.T) {
	m, p, a, audit, store := applyFixture(orphan("a"), orphan("b"))
	out, err := a.Finish(context.Background(), p, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 0 || audit.Len() != 0 || len(out.Results) != 0 {
		t.Fatalf("dry-run called %v, audited %q", m.calls, audit.String())
	}
	if store.Saves != 1 {
		t.Fatalf("dry-run must save the orphan clocks once, saved %d times", store.Saves)
	}
}

func TestApplyNotFoundIsSuccess(t *testing.T) {
	m, p, a, audit, _ := applyFixture(orphan("a"))
	delete(m.disks, orphan("a").Key.String()) // gone before the re-read
	out, err := a.Finish(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Deleted != 1 || out.Failed != 0 || out.Results[0].Result != "already-gone" {
		t.Fatalf("%+v", out)
	}
	if got := auditResults(t, audit)[orphan("a").Key.String()]; got != "already-gone" {
		t.Fatalf("audit: %q", got)
	}
}

func TestApplyDeleteNotFoundAfterReread(t *testing.T) {
	m, p, a, _, store := applyFixture(orphan("a"))
	m.failDel["a"] = fmt.Errorf("delete: %w", ErrNotFound) // raced with someone else's delete
	out, _ := a.Finish(context.Background(), p, true)
	if out.Deleted != 1 || out.Results[0].Result != "already-gone" {
		t.Fatalf("%+v", out)
	}
	st, _ := store.Load(context.Background())
	if len(st.Pending) != 0 {
		t.Fatalf("pending left: %v", st.Pending)
	}
}

func TestApplyFailedDeleteStaysPending(t *testing.T) {
	m, p, a, audit, store := applyFixture(orphan("a"))
	m.failDel["a"] = errors.New("googleapi: Error 503: backend unavailable")
	out, _ := a.Finish(context.Background(), p, true)
	if out.Failed != 1 {
		t.Fatalf("%+v", out)
	}
	st, _ := store.Load(context.Background())
	if _, ok := st.Pending[orphan("a").Key.String()]; !ok {
		t.Fatal("a failed delete must stay pending: it may have happened after all")
	}
	if got := auditResults(t, audit)[orphan("a").Key.String()]; got != "failed" {
		t.Fatalf("audit: %q", got)
	}
}

func TestApplySnapshotFailureBlocksDelete(t *testing.T) {
	m, p, a, _, _ := applyFixture(orphan("a"))
	p.Decisions[0].Snapshot = true
	m.failSnap = errors.New("quota exceeded for snapshots")
	out, _ := a.Finish(context.Background(), p, true)
	if out.Failed != 1 {
		t.Fatalf("%+v", out)
	}
	for _, c := range m.calls {
		if strings.HasPrefix(c, "delete") {
			t.Fatal("deleted a disk whose snapshot failed")
		}
	}
}

func TestApplySnapshotThenDelete(t *testing.T) {
	m, p, a, _, _ := applyFixture(orphan("a"))
	p.Decisions[0].Snapshot = true
	out, _ := a.Finish(context.Background(), p, true)
	if out.Deleted != 1 || len(m.snapshots) != 1 || !strings.HasSuffix(m.snapshots[0], " a") {
		t.Fatalf("%+v %v", out, m.snapshots)
	}
	if strings.Join(m.calls, ",") != "get a,snapshot a,delete a" {
		t.Fatalf("order: %v", m.calls)
	}
}

func TestApplyRereadSkipsChangedDisk(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*inventory.Disk)
		want   string
	}{
		{"attached", func(d *inventory.Disk) { d.Users = []string{"projects/p1/zones/z/instances/vm-1"} }, "attached to vm-1"},
		{"relabelled", func(d *inventory.Disk) { d.LabelFingerprint = "new" }, "labels changed"},
		{"protected", func(d *inventory.Disk) { d.Labels = map[string]string{"reclaim-protect": ""} }, "protected by label"},
		{"not ready", func(d *inventory.Disk) { d.Status = "RESTORING" }, "status is RESTORING"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, p, a, _, _ := applyFixture(orphan("a"))
			d := m.disks[orphan("a").Key.String()]
			c.change(&d)
			m.disks[d.Key.String()] = d
			out, _ := a.Finish(context.Background(), p, true)
			if out.Skipped != 1 || !strings.Contains(out.Results[0].Reason, c.want) {
				t.Fatalf("%+v", out.Results)
			}
			for _, call := range m.calls {
				if strings.HasPrefix(call, "delete") {
					t.Fatal("deleted a disk that changed since it was planned")
				}
			}
		})
	}
}

func TestApplyStopsAfterFailureStreak(t *testing.T) {
	var disks []inventory.Disk
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		disks = append(disks, orphan(n))
	}
	m, p, a, _, _ := applyFixture(disks...)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		m.failDel[n] = errors.New("permission denied")
	}
	out, _ := a.Finish(context.Background(), p, true)
	if out.Failed != 3 || out.Stopped == "" {
		t.Fatalf("%+v", out)
	}
	if n := strings.Count(strings.Join(m.calls, ","), "delete"); n != 3 {
		t.Fatalf("%d delete calls after the breaker: %v", n, m.calls)
	}
}

func TestApplyRereadErrorIsNotADelete(t *testing.T) {
	m, p, a, _, _ := applyFixture(orphan("a"))
	m.failGet = errors.New("googleapi: Error 500")
	out, _ := a.Finish(context.Background(), p, true)
	if out.Failed != 1 || strings.Contains(strings.Join(m.calls, ","), "delete") {
		t.Fatalf("%+v %v", out, m.calls)
	}
}
