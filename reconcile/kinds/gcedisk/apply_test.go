package gcedisk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/state"
)

// memDisks is an in-memory API that records what was called.
type memDisks struct {
	disks     map[string]gce.Disk
	failGet   error
	failDel   map[string]error
	failSnap  error
	calls     []string
	snapshots []string
	// snaps are the snapshots by name; reads is how many reads each
	// stays CREATING (below 0: forever).
	snaps map[string]gce.Snapshot
	reads map[string]int
}

func (m *memDisks) GetDisk(_ context.Context, k inventory.DiskKey) (gce.Disk, error) {
	m.calls = append(m.calls, "get "+k.Name)
	if m.failGet != nil {
		return gce.Disk{}, m.failGet
	}
	d, ok := m.disks[k.String()]
	if !ok {
		return d, fmt.Errorf("get %s: %w", k, outcome.ErrNotFound)
	}
	return d, nil
}

func (m *memDisks) StartSnapshot(_ context.Context, k inventory.DiskKey, name string, labels map[string]string) error {
	m.calls = append(m.calls, "snapshot "+k.Name)
	if m.failSnap != nil {
		return m.failSnap
	}
	m.snapshots = append(m.snapshots, name+" "+labels["reclaim-snapshot-of"])
	if m.snaps == nil {
		m.snaps = map[string]gce.Snapshot{}
	}
	m.snaps[name] = gce.Snapshot{Name: name, Status: "CREATING", Created: t0, SourceDisk: "https://www.googleapis.com/compute/v1/" + k.String()}
	return nil
}

func (m *memDisks) GetSnapshot(_ context.Context, _, name string) (gce.Snapshot, error) {
	m.calls = append(m.calls, "read "+name)
	s, ok := m.snaps[name]
	if !ok {
		return s, fmt.Errorf("snapshots.get %s: %w", name, outcome.ErrNotFound)
	}
	if s.Status == "CREATING" {
		if m.reads[name] == 0 {
			s.Status = "READY"
			m.snaps[name] = s
		} else if m.reads[name] > 0 {
			m.reads[name]--
		}
	}
	return s, nil
}

func (m *memDisks) DeleteDisk(_ context.Context, k inventory.DiskKey) error {
	m.calls = append(m.calls, "delete "+k.Name)
	if err := m.failDel[k.Name]; err != nil {
		return err
	}
	if _, ok := m.disks[k.String()]; !ok {
		return fmt.Errorf("delete %s: %w", k, outcome.ErrNotFound)
	}
	delete(m.disks, k.String())
	return nil
}

// applyFixture plans every disk for deletion (orphans past grace) and
// returns an applier for the plan. pol may change the test policy.
func applyFixture(pol func(*Kind), disks ...gce.Disk) (*memDisks, *engine.Plan, *engine.Applier, *bytes.Buffer, *state.MemoryStore) {
	m := &memDisks{disks: map[string]gce.Disk{}, failDel: map[string]error{}}
	for _, d := range disks {
		m.disks[d.Key.String()] = d
	}
	k := testKind()
	k.API, k.Disks.SnapshotLabel, k.Now = m, "reclaim-snapshot-of", func() time.Time { return t0 }
	if pol != nil {
		pol(k)
	}
	s := snap(disks, complete("a"))
	p := enginetest.Build(&s, []engine.Kind{k}, seenSince(t0.Add(-7*time.Hour), disks...), t0)
	a, buf, store := enginetest.Applier(t0, 3, k)
	return m, p, a, buf, store
}

func hasDelete(calls []string) bool {
	for _, c := range calls {
		if strings.HasPrefix(c, "delete") {
			return true
		}
	}
	return false
}

func snapshotFirst(k *Kind) { k.Disks.SnapshotBeforeDelete = true }

func TestApplySnapshotFailureBlocksDelete(t *testing.T) {
	m, p, a, _, _ := applyFixture(snapshotFirst, orphan("a"))
	m.failSnap = errors.New("quota exceeded for snapshots")
	out, _ := a.Apply(context.Background(), p, true)
	if out.Failed != 1 {
		t.Fatalf("%+v", out)
	}
	if hasDelete(m.calls) {
		t.Fatal("deleted a disk whose snapshot failed")
	}
}

// The snapshot is named for the disk's orphan period (its start, seven
// hours before the run), started, read until READY, and only then is the
// disk re-read and deleted.
func TestApplySnapshotThenDelete(t *testing.T) {
	m, p, a, buf, _ := applyFixture(snapshotFirst, orphan("a"))
	name := gcepd.SnapshotName("a", t0.Add(-7*time.Hour))
	out, _ := a.Apply(context.Background(), p, true)
	if out.Deleted != 1 || len(m.snapshots) != 1 || m.snapshots[0] != name+" a" {
		t.Fatalf("%+v %v", out, m.snapshots)
	}
	if want := "read " + name + ",snapshot a,read " + name + ",get a,delete a"; strings.Join(m.calls, ",") != want {
		t.Fatalf("order: %v, want %s", m.calls, want)
	}
	if got := enginetest.AuditResults(t, buf)[orphan("a").Key.String()]; got != "createddeleted" {
		t.Fatalf("audit: %q", got)
	}
}

// A run of the same orphan period finds the snapshot an earlier one
// started and waits on it, audited as reused; one still CREATING past
// disks.snapshotTimeout is deferred, not failed, and the disk stays.
func TestApplySnapshotDeferredThenReused(t *testing.T) {
	timeout := func(k *Kind) {
		k.Disks.SnapshotBeforeDelete, k.Disks.SnapshotTimeout = true, config.Duration(5*time.Millisecond)
	}
	m, p, a, buf, store := applyFixture(timeout, orphan("a"))
	a.SnapshotPoll = time.Millisecond
	name := gcepd.SnapshotName("a", t0.Add(-7*time.Hour))
	m.reads = map[string]int{name: -1}
	out, _ := a.Apply(context.Background(), p, true)
	if out.Deferred != 1 || out.Failed != 0 || hasDelete(m.calls) || out.Results[0].Result != audit.Deferred {
		t.Fatalf("%+v calls %v", out, m.calls)
	}
	id := orphan("a").Key.String()
	if got := enginetest.AuditResults(t, buf)[id]; got != "created"+audit.Deferred {
		t.Fatalf("audit: %q", got)
	}
	if st, _ := store.Load(context.Background()); len(st.Pending) != 0 {
		t.Fatalf("a deferral left a pending mark: %v", st.Pending)
	}
	// The next run: the same snapshot, READY now.
	m.reads[name] = 0
	m.calls = nil
	buf.Reset()
	out, _ = a.Apply(context.Background(), p, true)
	if out.Deleted != 1 || len(m.snapshots) != 1 {
		t.Fatalf("%+v snapshots %v", out, m.snapshots)
	}
	if got := enginetest.AuditResults(t, buf)[id]; got != "reuseddeleted" {
		t.Fatalf("audit: %q", got)
	}
}

// A disk attached, written and detached between two runs stays in its
// orphan period (neither run saw it attached), and GCE's lastDetachTimestamp
// is the only witness: the snapshot an earlier run started for the period
// lacks what was written, so it is not reused; a new one, named for the
// last use, is made and relied on. A snapshot of that name started before
// the use (not reclaim's) keeps the disk.
func TestApplySnapshotBeforeLastUseNotReused(t *testing.T) {
	used := orphan("a")
	used.LastAttach, used.LastDetach = t0.Add(-5*time.Hour), t0.Add(-4*time.Hour)
	src := "https://www.googleapis.com/compute/v1/" + used.Key.String()
	period, since := gcepd.SnapshotName("a", t0.Add(-7*time.Hour)), gcepd.SnapshotName("a", used.LastDetach)

	m, p, a, buf, _ := applyFixture(snapshotFirst, used)
	m.snaps = map[string]gce.Snapshot{period: {Name: period, Status: "READY", Created: t0.Add(-6 * time.Hour), SourceDisk: src}}
	out, _ := a.Apply(context.Background(), p, true)
	if out.Deleted != 1 || len(m.snapshots) != 1 || m.snapshots[0] != since+" a" {
		t.Fatalf("%+v snapshots %v calls %v", out, m.snapshots, m.calls)
	}
	if got := enginetest.AuditResults(t, buf)[used.Key.String()]; got != "createddeleted" {
		t.Fatalf("audit: %q, want a new snapshot relied on", got)
	}

	m, p, a, _, _ = applyFixture(snapshotFirst, used)
	m.snaps = map[string]gce.Snapshot{since: {Name: since, Status: "READY", Created: used.LastDetach.Add(-time.Minute), SourceDisk: src}}
	out, _ = a.Apply(context.Background(), p, true)
	if out.Failed != 1 || hasDelete(m.calls) || !strings.Contains(out.Results[0].Error, "before the disk was last used") {
		t.Fatalf("%+v calls %v", out.Results, m.calls)
	}
}

func TestApplyRereadSkipsChangedDisk(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*gce.Disk)
		want   string
	}{
		{"attached", func(d *gce.Disk) { d.Users = []string{"projects/p1/zones/z/instances/vm-1"} }, "attached to vm-1"},
		{"relabelled", func(d *gce.Disk) { d.LabelFingerprint = "new" }, "labels changed"},
		{"protected", func(d *gce.Disk) { d.Labels = map[string]string{"reclaim-protect": ""} }, "protected by reclaim-protect= since"},
		{"not ready", func(d *gce.Disk) { d.Status = "RESTORING" }, "status is RESTORING"},
		{"recreated under the same name", func(d *gce.Disk) { d.ID = "9999" }, "recreated since it was planned"},
		{"attached and detached again", func(d *gce.Disk) { d.LastAttach, d.LastDetach = t0.Add(-2*time.Minute), t0.Add(-time.Minute) },
			"attached and detached since it was planned (last used 2026"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, p, a, _, _ := applyFixture(nil, orphan("a"))
			d := m.disks[orphan("a").Key.String()]
			c.change(&d)
			m.disks[d.Key.String()] = d
			out, _ := a.Apply(context.Background(), p, true)
			if out.Skipped != 1 || !strings.Contains(out.Results[0].Reason, c.want) {
				t.Fatalf("%+v", out.Results)
			}
			if hasDelete(m.calls) {
				t.Fatal("deleted a disk that changed since it was planned")
			}
		})
	}
}

// How the disk kind turns what GCE answers into results; the applier's
// generic handling of each is tested in reconcile/engine/apply_test.go.
func TestApplyDiskErrors(t *testing.T) {
	id := orphan("a").Key.String()
	cases := []struct {
		name        string
		setup       func(*memDisks)
		result      string
		stayPending bool
		deleteCall  bool
	}{
		{"gone before the re-read is success", func(m *memDisks) { delete(m.disks, id) }, audit.AlreadyGone, false, false},
		{"not found on delete is success", func(m *memDisks) { m.failDel["a"] = fmt.Errorf("delete: %w", outcome.ErrNotFound) }, audit.AlreadyGone, false, true},
		{"failed delete stays pending", func(m *memDisks) { m.failDel["a"] = errors.New("googleapi: Error 503: backend unavailable") }, audit.Failed, true, true},
		{"re-read error is not a delete", func(m *memDisks) { m.failGet = errors.New("googleapi: Error 500") }, audit.Failed, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, p, a, buf, store := applyFixture(nil, orphan("a"))
			c.setup(m)
			out, err := a.Apply(context.Background(), p, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Results) != 1 || out.Results[0].Result != c.result {
				t.Fatalf("%+v", out)
			}
			if got := enginetest.AuditResults(t, buf)[id]; got != c.result {
				t.Fatalf("audit: %q", got)
			}
			st, _ := store.Load(context.Background())
			if _, pending := st.Pending[id]; pending != c.stayPending {
				t.Fatalf("pending %v, want %v", pending, c.stayPending)
			}
			if hasDelete(m.calls) != c.deleteCall {
				t.Fatalf("calls: %v", m.calls)
			}
		})
	}
}

// The re-read and the delete name the disk as it was listed, carried in
// the decision; a decision that carries none is never sent, whatever its
// ID says.
func TestDeleteNamesTheDiskListed(t *testing.T) {
	m, p, _, _, _ := applyFixture(nil, orphan("a"))
	k := testKind()
	k.API = m
	var planned *engine.Decision
	for i := range p.Decisions {
		if p.Decisions[i].Action == engine.Delete {
			planned = &p.Decisions[i]
		}
	}
	if planned == nil {
		t.Fatal("nothing planned for deletion")
	}
	if key, err := keyOf(planned); err != nil || key.String() != planned.ID {
		t.Fatalf("keyOf = %v, %v; want %s", key, err, planned.ID)
	}
	bare := &engine.Decision{Kind: Name, ID: planned.ID}
	out, err := k.Delete(context.Background(), []*engine.Decision{bare})
	if err != nil || len(out) != 1 || outcome.Of(out[0].Err) != outcome.Refused {
		t.Fatalf("Delete of a decision with no disk planned = %+v, %v; want refused", out, err)
	}
	if hasDelete(m.calls) {
		t.Fatalf("sent a delete with no disk planned: %v", m.calls)
	}
}
