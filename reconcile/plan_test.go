package reconcile

import (
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func testPolicy() Policy {
	return Policy{
		MinAge: 24 * time.Hour, Grace: 6 * time.Hour, MinDetached: time.Hour,
		ProtectLabel: "reclaim-protect", OwnerLabelKeys: []string{"goog-gke-volume"},
		OwnerDescriptionContains: []string{"kubernetes.io/created-for/pv/name"},
		MaxDeletes:               20, MaxDeletePercent: 1, BreakerCandidates: 200,
		QuotaMetrics: []string{"SSD_TOTAL_GB"}, HeadroomWarning: 0.85,
	}
}

// orphan is a Kubernetes-made disk, old enough, detached long ago.
func orphan(name string) inventory.Disk {
	return inventory.Disk{
		Key:    inventory.DiskKey{Project: "p1", Zone: "asia-northeast1-a", Name: name},
		SizeGB: 100, Type: "pd-balanced", Status: "READY",
		Labels:      map[string]string{"goog-gke-volume": ""},
		Created:     t0.Add(-30 * 24 * time.Hour),
		LastDetach:  t0.Add(-10 * 24 * time.Hour),
		Description: `{"kubernetes.io/created-for/pv/name":"pvc-1","kubernetes.io/created-for/pvc/name":"wf-1-workdir","kubernetes.io/created-for/pvc/namespace":"argo"}`,
	}
}

func complete(name string, pvs ...inventory.PVRef) inventory.ClusterRefs {
	return inventory.ClusterRefs{Name: name, Complete: true, PVs: pvs}
}

func snap(disks []inventory.Disk, clusters ...inventory.ClusterRefs) inventory.Snapshot {
	return inventory.Snapshot{TakenAt: t0, Disks: []inventory.DiskListing{{Project: "p1", Disks: disks, Complete: true}}, Clusters: clusters}
}

// seenSince returns state in which every named disk has been an orphan since t.
func seenSince(t time.Time, disks ...inventory.Disk) State {
	s := emptyState()
	for _, d := range disks {
		s.Resources[d.Key.String()] = Entry{FirstSeen: t, LastSeen: t}
	}
	return s
}

func decisionFor(t *testing.T, p *Plan, name string) Decision {
	t.Helper()
	for _, d := range p.Decisions {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no decision for %s", name)
	return Decision{}
}

func TestPlanDisk(t *testing.T) {
	old := t0.Add(-7 * time.Hour) // orphan for longer than the 6h grace
	mod := func(f func(*inventory.Disk)) inventory.Disk { d := orphan("d"); f(&d); return d }
	ref := func(k inventory.DiskKey) inventory.PVRef {
		return inventory.PVRef{Cluster: "prod-b", Disk: k, PV: "pv-1", Phase: "Released", ClaimNamespace: "ns", Claim: "claim"}
	}
	cases := []struct {
		name     string
		disk     inventory.Disk
		clusters []inventory.ClusterRefs
		state    State
		want     Action
		reason   string
	}{
		{"orphan past grace is deleted", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Delete, "no users, no PV in any of 1 clusters"},
		{"first sight starts the clock", orphan("d"), []inventory.ClusterRefs{complete("a")}, emptyState(), Mark, "orphan since 2026-11-01T12:00:00Z, deletable after 2026-11-01T18:00:00Z"},
		{"grace not elapsed", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(t0.Add(-5*time.Hour), orphan("d")), Mark, "grace 6h0m0s"},
		{"attached", mod(func(d *inventory.Disk) {
			d.Users = []string{"https://www.googleapis.com/compute/v1/projects/p1/zones/asia-northeast1-a/instances/gke-node-1"}
		}), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Keep, "attached to instance gke-node-1"},
		{"referenced by a PV in another cluster", orphan("d"), []inventory.ClusterRefs{complete("a"), complete("prod-b", ref(orphan("d").Key))},
			seenSince(old, orphan("d")), Keep, "referenced by PV pv-1 in cluster prod-b (Released, bound to ns/claim)"},
		{"UNSPECIFIED project and zone still match", orphan("d"), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: "UNSPECIFIED", Zone: "UNSPECIFIED", Name: "d"}))},
			seenSince(old, orphan("d")), Keep, "referenced by PV pv-1"},
		{"regional reference of the disk's region matches", orphan("d"), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: "p1", Region: "asia-northeast1", Name: "d"}))},
			seenSince(old, orphan("d")), Keep, "referenced by PV"},
		{"same name in another zone is another disk", orphan("d"), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: "p1", Zone: "us-east1-b", Name: "d"}))},
			seenSince(old, orphan("d")), Delete, ""},
		{"same name in another project is another disk", orphan("d"), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: "p2", Zone: "asia-northeast1-a", Name: "d"}))},
			seenSince(old, orphan("d")), Delete, ""},
		{"inline pod volume", orphan("d"), []inventory.ClusterRefs{complete("a", inventory.PVRef{Cluster: "a", Disk: inventory.DiskKey{Project: "UNSPECIFIED", Zone: "UNSPECIFIED", Name: "d"},
			Pods: []inventory.PodRef{{Namespace: "ns", Name: "p", Phase: "Running"}}})}, seenSince(old, orphan("d")), Keep, "mounted inline (gcePersistentDisk) by pod ns/p"},
		{"protected", mod(func(d *inventory.Disk) { d.Labels["reclaim-protect"] = "true" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Keep, "protected by label reclaim-protect=true"},
		{"protect label with empty value still protects", mod(func(d *inventory.Disk) { d.Labels["reclaim-protect"] = "" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Keep, "protected by label"},
		{"no ownership marker is only reported", mod(func(d *inventory.Disk) { d.Labels = nil; d.Description = "" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Report, "nothing proves Kubernetes created it"},
		{"ownership by description alone", mod(func(d *inventory.Disk) { d.Labels = nil }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Delete, ""},
		{"younger than min age", mod(func(d *inventory.Disk) { d.Created = t0.Add(-2 * time.Hour); d.LastDetach = time.Time{} }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Mark, "younger than min age 24h0m0s"},
		{"detached too recently", mod(func(d *inventory.Disk) { d.LastDetach = t0.Add(-10 * time.Minute) }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Mark, "detached 10m0s ago"},
		{"not READY", mod(func(d *inventory.Disk) { d.Status = "RESTORING" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Mark, "status is RESTORING"},
		{"being deleted", mod(func(d *inventory.Disk) { d.Status = "DELETING" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Keep, "already being deleted"},
		{"incomplete cluster holds", orphan("d"), []inventory.ClusterRefs{complete("a"), {Name: "prod-b", Problems: []string{"list persistentvolumes: forbidden"}}},
			seenSince(old, orphan("d")), Mark, "cluster prod-b could not be read completely: held"},
		{"incomplete cluster of another project does not hold", orphan("d"), []inventory.ClusterRefs{complete("a"), {Name: "prod-b", Projects: []string{"other"}}},
			seenSince(old, orphan("d")), Delete, ""},
		{"out of region scope", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Keep, "outside the configured scope"},
		{"out of zone scope", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Keep, "outside the configured scope"},
		{"in zone scope", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), Delete, ""},
		{"regional disk with a replica out of zone scope", mod(func(d *inventory.Disk) {
			d.Key = inventory.DiskKey{Project: "p1", Region: "asia-northeast1", Name: "d"}
			d.ReplicaZones = []string{"https://www.googleapis.com/compute/v1/projects/p1/zones/asia-northeast1-a", "https://www.googleapis.com/compute/v1/projects/p1/zones/asia-northeast1-c"}
		}), []inventory.ClusterRefs{complete("a")}, State{}, Keep, "outside the configured scope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pol := testPolicy()
			switch {
			case strings.HasPrefix(c.name, "out of region"):
				pol.Regions = []string{"us-east1"}
			case strings.HasPrefix(c.name, "out of zone"):
				pol.Zones = []string{"asia-northeast1-b"}
			case strings.HasPrefix(c.name, "in zone"), strings.HasPrefix(c.name, "regional disk"):
				pol.Zones = []string{"asia-northeast1-a", "asia-northeast1-b"}
			}
			p := Build(snap([]inventory.Disk{c.disk}, c.clusters...), pol, c.state, t0)
			d := decisionFor(t, p, "d")
			if d.Action != c.want || !strings.Contains(d.Reason, c.reason) {
				t.Fatalf("got %s %q, want %s containing %q", d.Action, d.Reason, c.want, c.reason)
			}
		})
	}
}

func TestGraceClock(t *testing.T) {
	d := orphan("d")
	pol := testPolicy()
	st := emptyState()
	// Orphan at t0, t0+3h, t0+6h: deletable only at t0+6h.
	for i, want := range []Action{Mark, Mark, Delete} {
		now := t0.Add(time.Duration(i) * 3 * time.Hour)
		p := Build(snap([]inventory.Disk{d}, complete("a")), pol, st, now)
		if got := decisionFor(t, p, "d").Action; got != want {
			t.Fatalf("run %d: got %s want %s", i, got, want)
		}
		st = p.State
	}
	// A PV appears: the clock resets; gone again: starts over.
	withRef := complete("a", inventory.PVRef{Cluster: "a", Disk: d.Key, PV: "pv"})
	p := Build(snap([]inventory.Disk{d}, withRef), pol, st, t0.Add(7*time.Hour))
	if decisionFor(t, p, "d").Action != Keep {
		t.Fatal("referenced disk not kept")
	}
	p = Build(snap([]inventory.Disk{d}, complete("a")), pol, p.State, t0.Add(8*time.Hour))
	if got := decisionFor(t, p, "d"); got.Action != Mark || !got.OrphanSince.Equal(t0.Add(8*time.Hour)) {
		t.Fatalf("clock did not restart: %+v", got)
	}
}

func TestIncompleteClusterDoesNotStartClock(t *testing.T) {
	d := orphan("d")
	bad := inventory.ClusterRefs{Name: "b", Problems: []string{"timed out"}}
	p := Build(snap([]inventory.Disk{d}, complete("a"), bad), testPolicy(), emptyState(), t0)
	if _, ok := p.State.Resources[d.Key.String()]; ok {
		t.Fatal("an orphan clock started while a cluster was unreadable")
	}
	if !p.Incomplete || len(p.Blocked) == 0 {
		t.Fatal("plan does not say it is incomplete")
	}
}

func TestUnknownScopeKeepsClock(t *testing.T) {
	d := orphan("d")
	st := seenSince(t0.Add(-time.Hour), d)
	s := inventory.Snapshot{Disks: []inventory.DiskListing{{Project: "p1", Complete: true,
		UnknownScopes: map[string]string{"zones/asia-northeast1-a": "UNREACHABLE: zone unavailable"}}}, Clusters: []inventory.ClusterRefs{complete("a")}}
	p := Build(s, testPolicy(), st, t0)
	if _, ok := p.State.Resources[d.Key.String()]; !ok {
		t.Fatal("disk in an unknown scope was forgotten as if gone")
	}
	s.Disks[0].UnknownScopes = nil
	p = Build(s, testPolicy(), st, t0)
	if _, ok := p.State.Resources[d.Key.String()]; ok {
		t.Fatal("disk absent from a complete listing was not forgotten")
	}
}

func TestCapsAndBreaker(t *testing.T) {
	var disks []inventory.Disk
	for i := 0; i < 10; i++ {
		disks = append(disks, orphan(string(rune('a'+i))))
	}
	st := seenSince(t0.Add(-48*time.Hour), disks...)
	// The oldest orphan goes first when capped.
	e := st.Resources[disks[9].Key.String()]
	e.FirstSeen = t0.Add(-100 * time.Hour)
	st.Resources[disks[9].Key.String()] = e

	pol := testPolicy()
	pol.MaxDeletes = 3
	p := Build(snap(disks, complete("a")), pol, st, t0)
	if n := p.Count(KindDisk, Delete); n != 3 {
		t.Fatalf("count cap: %d deletes, want 3", n)
	}
	if decisionFor(t, p, "j").Action != Delete {
		t.Fatal("oldest orphan was not first")
	}

	pol = testPolicy()
	pol.MaxDeletePercent = 0.2 // of 10 disks
	if n := Build(snap(disks, complete("a")), pol, st, t0).Count(KindDisk, Delete); n != 2 {
		t.Fatalf("percent cap: %d deletes, want 2", n)
	}

	pol = testPolicy()
	pol.MaxDeleteGB = 250
	if n := Build(snap(disks, complete("a")), pol, st, t0).Count(KindDisk, Delete); n != 2 {
		t.Fatalf("size cap: %d deletes, want 2", n)
	}

	pol = testPolicy()
	pol.BreakerCandidates = 9
	p = Build(snap(disks, complete("a")), pol, st, t0)
	if n := p.Count(KindDisk, Delete); n != 0 || !p.BreakerTripped {
		t.Fatalf("breaker: %d deletes, tripped %v", n, p.BreakerTripped)
	}
	if !strings.Contains(decisionFor(t, p, "a").Reason, "breaker tripped (10 due > 9)") {
		t.Fatal(decisionFor(t, p, "a").Reason)
	}
}

func TestWorkflowPVCs(t *testing.T) {
	failed := &inventory.WorkflowRef{Namespace: "argo", Name: "wf-1", Phase: "Failed", Finished: t0.Add(-48 * time.Hour)}
	running := &inventory.WorkflowRef{Namespace: "argo", Name: "wf-2", Phase: "Running"}
	key := orphan("pvc-1").Key
	c := inventory.ClusterRefs{Name: "a", Complete: true, PVs: []inventory.PVRef{{Cluster: "a", Disk: key, PV: "pv-1", Phase: "Bound", ClaimNamespace: "argo", Claim: "wf-1-workdir", Workflow: failed}}, PVCs: []inventory.PVCRef{
		{Namespace: "argo", Name: "wf-1-workdir", CapacityGB: 100, Workflow: failed, Disk: &key, UID: "u1"},
		{Namespace: "argo", Name: "wf-2-workdir", CapacityGB: 100, Workflow: running},
		{Namespace: "argo", Name: "wf-3-workdir", CapacityGB: 100, Workflow: failed, Pods: []inventory.PodRef{{Namespace: "argo", Name: "debug", Phase: "Running"}}},
	}}
	disk := orphan("pvc-1")
	s := snap([]inventory.Disk{disk}, c)
	s.Quotas = []inventory.Quota{{Project: "p1", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Limit: 1500, Usage: 1455, Known: true}}

	p := Build(s, testPolicy(), emptyState(), t0)
	if d := decisionFor(t, p, "wf-1-workdir"); d.Action != Report || !strings.Contains(d.Reason, "deleteWorkflowPVCs is off") {
		t.Fatalf("default must only report: %+v", d)
	}
	if d := decisionFor(t, p, "wf-2-workdir"); d.Action != Keep {
		t.Fatalf("running workflow: %+v", d)
	}
	if d := decisionFor(t, p, "wf-3-workdir"); d.Action != Keep {
		t.Fatalf("mounted: %+v", d)
	}
	if len(p.Holders) != 1 || p.Holders[0].GB != 100 || p.Holders[0].Workflow != "wf-1" {
		t.Fatalf("holders: %+v", p.Holders)
	}
	h := p.Headroom[0]
	if !h.Warning || h.FinishedWorkflowGB != 100 || h.UsedPct < 0.97 {
		t.Fatalf("headroom: %+v", h)
	}

	pol := testPolicy()
	pol.DeleteWorkflowPVCs = true
	st := p.State
	p = Build(s, pol, st, t0.Add(7*time.Hour))
	if d := decisionFor(t, p, "wf-1-workdir"); d.Action != Delete {
		t.Fatalf("switch on, grace elapsed: %+v", d)
	}
	if h := p.Headroom[0]; h.PlanFrees != 100 {
		t.Fatalf("plan frees: %+v", h)
	}
}

func TestHeadroom(t *testing.T) {
	ssd := orphan("a")
	std := orphan("b")
	std.Type = "pd-standard"
	s := snap([]inventory.Disk{ssd, std}, complete("c"))
	s.Quotas = []inventory.Quota{
		{Project: "p1", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Limit: 1500, Usage: 1455, Known: true},
		{Project: "p1", Region: "asia-northeast1", Metric: "DISKS_TOTAL_GB", Known: false, Problem: "regions.get returned no DISKS_TOTAL_GB quota"},
	}
	p := Build(s, testPolicy(), seenSince(t0.Add(-7*time.Hour), ssd, std), t0)
	var got Headroom
	for _, h := range p.Headroom {
		if h.Metric == "SSD_TOTAL_GB" {
			got = h
		}
		if h.Metric == "DISKS_TOTAL_GB" && (h.Known || h.Warning) {
			t.Fatalf("unknown quota treated as known: %+v", h)
		}
	}
	if got.PlanFrees != 100 || got.Usage != 1455 || got.UsedPctAfter != (1455.0-100)/1500 || !got.Warning {
		t.Fatalf("%+v", got)
	}
}

func TestPendingConfirmedOnce(t *testing.T) {
	d := orphan("d")
	st := emptyState()
	st.Pending[d.Key.String()] = Pending{Kind: KindDisk, Reason: "r", SizeGB: 100}
	// Still DELETING: not settled yet.
	del := d
	del.Status = "DELETING"
	p := Build(snap([]inventory.Disk{del}, complete("a")), testPolicy(), st, t0)
	if len(p.Confirmed) != 0 || len(p.State.Pending) != 1 {
		t.Fatalf("in-flight delete settled early: %+v", p.Confirmed)
	}
	// Gone from a complete listing: confirmed once, and only once.
	p = Build(snap(nil, complete("a")), testPolicy(), p.State, t0)
	if len(p.Confirmed) != 1 || len(p.State.Pending) != 0 {
		t.Fatalf("confirmed %v pending %v", p.Confirmed, p.State.Pending)
	}
	p = Build(snap(nil, complete("a")), testPolicy(), p.State, t0)
	if len(p.Confirmed) != 0 {
		t.Fatal("confirmed twice")
	}
	// Still there and READY: the delete did not happen; pending is dropped.
	st.Pending[d.Key.String()] = Pending{Kind: KindDisk}
	p = Build(snap([]inventory.Disk{d}, complete("a")), testPolicy(), st, t0)
	if len(p.Confirmed) != 0 || len(p.State.Pending) != 0 {
		t.Fatal("present disk confirmed as deleted")
	}
}

func TestBuildIsPure(t *testing.T) {
	d := orphan("d")
	st := seenSince(t0.Add(-7*time.Hour), d)
	before := len(st.Resources)
	s := snap([]inventory.Disk{d}, complete("a"))
	p1 := Build(s, testPolicy(), st, t0)
	p2 := Build(s, testPolicy(), st, t0)
	if len(st.Resources) != before || len(p1.Decisions) != len(p2.Decisions) || p1.Decisions[0].Reason != p2.Decisions[0].Reason {
		t.Fatal("Build changed its input or is not deterministic")
	}
}

func TestSnapshotName(t *testing.T) {
	n := SnapshotName(strings.Repeat("pvc-0123456789abcdef", 4), t0)
	if len(n) > 63 || !strings.HasSuffix(n, "-20261101-120000") || !strings.HasPrefix(n, "reclaim-pvc-") {
		t.Fatal(n)
	}
}

// A quota above the threshold warns even when the plan would bring it below:
// a dry-run frees nothing.
func TestHeadroomWarnsOnUsageNow(t *testing.T) {
	d := orphan("a")
	d.SizeGB = 300
	s := snap([]inventory.Disk{d}, complete("c"))
	s.Quotas = []inventory.Quota{{Project: "p1", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Limit: 1500, Usage: 1455, Known: true}}
	h := Build(s, testPolicy(), seenSince(t0.Add(-7*time.Hour), d), t0).Headroom[0]
	if h.UsedPctAfter >= 0.85 || !h.Warning {
		t.Fatalf("%+v", h)
	}
}

// A PVC already deleted (Terminating, held by pvc-protection) is not deleted
// again on every run, and a pending delete of it counts as done, once.
func TestTerminatingPVC(t *testing.T) {
	failed := &inventory.WorkflowRef{Namespace: "argo", Name: "wf-1", Phase: "Failed", Finished: t0.Add(-48 * time.Hour)}
	c := inventory.ClusterRefs{Name: "a", Complete: true, PVCs: []inventory.PVCRef{
		{Namespace: "argo", Name: "wf-1-workdir", CapacityGB: 20, Workflow: failed, UID: "u1", Terminating: true},
	}}
	pol := testPolicy()
	pol.DeleteWorkflowPVCs = true
	id := pvcID("a", "argo", "wf-1-workdir")
	st := seenSince(t0.Add(-48 * time.Hour))
	st.Resources[id] = Entry{FirstSeen: t0.Add(-48 * time.Hour)}
	st.Pending[id] = Pending{Kind: KindPVC, Reason: "r", SizeGB: 20}
	p := Build(snap(nil, c), pol, st, t0)
	if d := decisionFor(t, p, "wf-1-workdir"); d.Action != Keep || !strings.Contains(d.Reason, "already being deleted") {
		t.Fatalf("%+v", d)
	}
	if len(p.Confirmed) != 1 || len(p.State.Pending) != 0 {
		t.Fatalf("pending delete of a Terminating PVC: confirmed %v, pending %v", p.Confirmed, p.State.Pending)
	}
	if p = Build(snap(nil, c), pol, p.State, t0.Add(time.Hour)); len(p.Confirmed) != 0 {
		t.Fatal("confirmed twice")
	}
}
