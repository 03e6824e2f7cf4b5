package gcedisk

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/amount"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func testKind() *Kind {
	return &Kind{GCE: gcepd.GCE{HeadroomWarning: 0.85}, Disks: gcepd.Disks{
		Safety: config.Safety{MinAge: config.Duration(24 * time.Hour), Grace: config.Duration(6 * time.Hour),
			Caps: config.Caps{MaxDeletesPerRun: 20, MaxDeletePercent: 1, BreakerCandidates: 200}},
		MinDetached: config.Duration(time.Hour), ProtectLabel: "reclaim-protect",
		Ownership: gcepd.Ownership{LabelKeys: []string{"goog-gke-volume"}, DescriptionContains: []string{"kubernetes.io/created-for/pv/name"}}}}
}

// orphan is a Kubernetes-made disk, old enough, detached long ago.
func orphan(name string) gce.Disk {
	return gce.Disk{
		Key:    inventory.DiskKey{Project: "p1", Zone: "asia-northeast1-a", Name: name},
		ID:     "4711" + name,
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

func snap(disks []gce.Disk, clusters ...inventory.ClusterRefs) inventory.View {
	return inventory.View{TakenAt: t0, Clouds: map[string]any{gcepd.Read: gcepd.Listing{Disks: []gce.Listing{{Project: "p1", Disks: disks, Complete: true}}}}, Clusters: clusters}
}

// setQuotas sets the quotas the gce read returned.
func setQuotas(s *inventory.View, qs []gce.Quota) {
	s.Clouds[gcepd.Read] = gcepd.Listing{Disks: gcepd.ListingOf(s).Disks, Quotas: qs}
}

// seenSince returns state in which every named disk has been an orphan since t.
func seenSince(t time.Time, disks ...gce.Disk) engine.State {
	s := engine.NewState()
	for _, d := range disks {
		s.Seen(d.Key.String(), d.ID, t)
	}
	return s
}

func build(s inventory.View, k *Kind, st engine.State, now time.Time) *engine.Plan {
	return enginetest.Build(&s, []engine.Kind{k}, st, now)
}

func TestPlanDisk(t *testing.T) {
	old := t0.Add(-7 * time.Hour) // orphan for longer than the 6h grace
	mod := func(f func(*gce.Disk)) gce.Disk { d := orphan("d"); f(&d); return d }
	ref := func(k inventory.DiskKey) inventory.PVRef {
		return inventory.PVRef{Cluster: "prod-b", Disk: k, PV: "pv-1", Phase: "Released", ClaimNamespace: "ns", Claim: "claim"}
	}
	cases := []struct {
		name     string
		disk     gce.Disk
		clusters []inventory.ClusterRefs
		state    engine.State
		want     engine.Action
		reason   string
	}{
		{"orphan past grace is deleted", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Delete, "no users, no PV in any of 1 clusters"},
		{"first sight starts the clock", orphan("d"), []inventory.ClusterRefs{complete("a")}, engine.NewState(), engine.Mark, "orphan since 2026-11-01T12:00:00Z, deletable after 2026-11-01T18:00:00Z"},
		{"grace not elapsed", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(t0.Add(-5*time.Hour), orphan("d")), engine.Mark, "grace 6h"},
		{"attached", mod(func(d *gce.Disk) {
			d.Users = []string{"https://www.googleapis.com/compute/v1/projects/p1/zones/asia-northeast1-a/instances/gke-node-1"}
		}), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Keep, "attached to instance gke-node-1"},
		{"referenced by a PV in another cluster", orphan("d"), []inventory.ClusterRefs{complete("a"), complete("prod-b", ref(orphan("d").Key))},
			seenSince(old, orphan("d")), engine.Keep, "referenced by PV pv-1 in cluster prod-b (Released, bound to ns/claim)"},
		{"UNSPECIFIED project and zone still match", orphan("d"), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: "UNSPECIFIED", Zone: "UNSPECIFIED", Name: "d"}))},
			seenSince(old, orphan("d")), engine.Keep, "referenced by PV pv-1"},
		{"regional reference of the disk's region matches", orphan("d"), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: "p1", Region: "asia-northeast1", Name: "d"}))},
			seenSince(old, orphan("d")), engine.Keep, "referenced by PV"},
		// An in-tree PV (gcePersistentDisk) of a regional disk whose zone
		// label or node affinity names one zone of the region: the PV names
		// a zone, the disk a region, and it is the same disk.
		{"zonal reference to a regional disk of its region matches", mod(func(d *gce.Disk) {
			d.Key = inventory.DiskKey{Project: "p1", Region: "asia-northeast1", Name: "d"}
			d.ReplicaZones = []string{"https://www.googleapis.com/compute/v1/projects/p1/zones/asia-northeast1-a", "https://www.googleapis.com/compute/v1/projects/p1/zones/asia-northeast1-b"}
		}), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: inventory.Unspecified, Zone: "asia-northeast1-a", Name: "d"}))},
			seenSince(old, gce.Disk{Key: inventory.DiskKey{Project: "p1", Region: "asia-northeast1", Name: "d"}, ID: orphan("d").ID}), engine.Keep, "referenced by PV pv-1"},
		{"zonal reference of another region is another disk", mod(func(d *gce.Disk) {
			d.Key = inventory.DiskKey{Project: "p1", Region: "asia-northeast1", Name: "d"}
		}), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: inventory.Unspecified, Zone: "us-east1-b", Name: "d"}))},
			seenSince(old, gce.Disk{Key: inventory.DiskKey{Project: "p1", Region: "asia-northeast1", Name: "d"}, ID: orphan("d").ID}), engine.Delete, ""},
		{"same name in another zone is another disk", orphan("d"), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: "p1", Zone: "us-east1-b", Name: "d"}))},
			seenSince(old, orphan("d")), engine.Delete, ""},
		{"same name in another project is another disk", orphan("d"), []inventory.ClusterRefs{complete("prod-b", ref(inventory.DiskKey{Project: "p2", Zone: "asia-northeast1-a", Name: "d"}))},
			seenSince(old, orphan("d")), engine.Delete, ""},
		{"inline pod volume", orphan("d"), []inventory.ClusterRefs{complete("a", inventory.PVRef{Cluster: "a", Disk: inventory.DiskKey{Project: "UNSPECIFIED", Zone: "UNSPECIFIED", Name: "d"},
			Pods: []inventory.PodRef{{Namespace: "ns", Name: "p", Phase: "Running"}}})}, seenSince(old, orphan("d")), engine.Keep, "mounted inline (gcePersistentDisk) by pod ns/p"},
		{"protected", mod(func(d *gce.Disk) { d.Labels["reclaim-protect"] = "true" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Keep, "protected by label reclaim-protect=true"},
		{"protect label with empty value still protects", mod(func(d *gce.Disk) { d.Labels["reclaim-protect"] = "" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Keep, "protected by label"},
		{"no ownership marker is only reported", mod(func(d *gce.Disk) { d.Labels = nil; d.Description = "" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Report, "nothing proves Kubernetes created it"},
		{"ownership by description alone", mod(func(d *gce.Disk) { d.Labels = nil }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Delete, ""},
		{"younger than min age", mod(func(d *gce.Disk) { d.Created = t0.Add(-2 * time.Hour); d.LastDetach = time.Time{} }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Mark, "younger than min age 24h"},
		{"detached too recently", mod(func(d *gce.Disk) { d.LastDetach = t0.Add(-10 * time.Minute) }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Mark, "detached 10m0s ago"},
		{"not READY", mod(func(d *gce.Disk) { d.Status = "RESTORING" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Mark, "status is RESTORING"},
		{"being deleted", mod(func(d *gce.Disk) { d.Status = "DELETING" }), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Keep, "already being deleted"},
		{"incomplete cluster holds", orphan("d"), []inventory.ClusterRefs{complete("a"), {Name: "prod-b", Problems: []string{"list persistentvolumes: forbidden"}}},
			seenSince(old, orphan("d")), engine.Mark, "held: cluster prod-b could not be read completely"},
		{"an unread cluster is not counted as evidence", orphan("d"), []inventory.ClusterRefs{complete("a"), {Name: "prod-b", Problems: []string{"dial tcp: i/o timeout"}}},
			seenSince(old, orphan("d")), engine.Mark, "no users, no PV in the 1 of 2 clusters read completely"},
		{"incomplete cluster of another project does not hold", orphan("d"), []inventory.ClusterRefs{complete("a"), {Name: "prod-b", Projects: []string{"other"}}},
			seenSince(old, orphan("d")), engine.Delete, ""},
		{"out of region scope", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Keep, "outside the configured scope"},
		{"out of zone scope", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Keep, "outside the configured scope"},
		{"in zone scope", orphan("d"), []inventory.ClusterRefs{complete("a")}, seenSince(old, orphan("d")), engine.Delete, ""},
		{"regional disk with a replica out of zone scope", mod(func(d *gce.Disk) {
			d.Key = inventory.DiskKey{Project: "p1", Region: "asia-northeast1", Name: "d"}
			d.ReplicaZones = []string{"https://www.googleapis.com/compute/v1/projects/p1/zones/asia-northeast1-a", "https://www.googleapis.com/compute/v1/projects/p1/zones/asia-northeast1-c"}
		}), []inventory.ClusterRefs{complete("a")}, engine.State{}, engine.Keep, "outside the configured scope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := testKind()
			switch {
			case strings.HasPrefix(c.name, "out of region"):
				k.GCE.Regions = []string{"us-east1"}
			case strings.HasPrefix(c.name, "out of zone"):
				k.GCE.Zones = []string{"asia-northeast1-b"}
			case strings.HasPrefix(c.name, "in zone"), strings.HasPrefix(c.name, "regional disk"):
				k.GCE.Zones = []string{"asia-northeast1-a", "asia-northeast1-b"}
			}
			p := build(snap([]gce.Disk{c.disk}, c.clusters...), k, c.state, t0)
			d := enginetest.DecisionFor(t, p, "d")
			if d.Action != c.want || !strings.Contains(d.Why(), c.reason) {
				t.Fatalf("got %s %q, want %s containing %q", d.Action, d.Why(), c.want, c.reason)
			}
		})
	}
}

func TestUnknownScopeKeepsClock(t *testing.T) {
	d := orphan("d")
	st := seenSince(t0.Add(-time.Hour), d)
	s := inventory.View{Clouds: map[string]any{gcepd.Read: gcepd.Listing{Disks: []gce.Listing{{Project: "p1", Complete: true,
		UnknownScopes: map[string]string{"zones/asia-northeast1-a": "UNREACHABLE: zone unavailable"}}}}}, Clusters: []inventory.ClusterRefs{complete("a")}}
	p := build(s, testKind(), st, t0)
	if _, ok := p.State.Resources[d.Key.String()]; !ok {
		t.Fatal("disk in an unknown scope was forgotten as if gone")
	}
	gcepd.ListingOf(&s).Disks[0].UnknownScopes = nil
	p = build(s, testKind(), st, t0)
	if _, ok := p.State.Resources[d.Key.String()]; ok {
		t.Fatal("disk absent from a complete listing was not forgotten")
	}
}

// The caps and the breaker are the engine's (engine.TestCapsAndBreaker);
// the disk policy is what feeds them.
func TestLimitsFollowPolicy(t *testing.T) {
	k := testKind()
	k.Disks.MaxDeletesPerRun, k.Disks.MaxDeletePercent, k.Disks.MaxDeleteSizePerRun, k.Disks.BreakerCandidates = 3, 0.2, 250<<30, 9
	got := k.Limits()
	want := engine.Limits{Grace: 6 * time.Hour, MinAge: 24 * time.Hour, MaxDeletes: 3, MaxDeletePercent: 0.2, MaxFrees: amount.Amount{N: 250, Unit: gcepd.GB},
		BreakerCandidates: 9, BatchSize: 1, OptOutKey: "reclaim-protect",
		Wording: engine.Wording{Section: "disks", Noun: "disks", Guarded: "disk it could reference"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestHeadroom(t *testing.T) {
	ssd := orphan("a")
	std := orphan("b")
	std.Type = "pd-standard"
	s := snap([]gce.Disk{ssd, std}, complete("c"))
	setQuotas(&s, []gce.Quota{
		{Project: "p1", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Limit: 1500, Usage: 1455, Known: true},
		{Project: "p1", Region: "asia-northeast1", Metric: "DISKS_TOTAL_GB", Known: false, Problem: "regions.get returned no DISKS_TOTAL_GB quota"},
	})
	p := build(s, testKind(), seenSince(t0.Add(-7*time.Hour), ssd, std), t0)
	var got Headroom
	for _, h := range HeadroomOf(p) {
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

// The projection itself is layout.Trend (base/layout/trend_test.go); the
// headroom carries it from run to run through the plan's state.
func TestHeadroomProjection(t *testing.T) {
	st := engine.NewState()
	s := snap(nil, complete("a"))
	var p *engine.Plan
	// 40 GB a day, hourly runs for 12 hours, from 1200 of 1500 GB.
	for h := 0; h <= 12; h++ {
		setQuotas(&s, []gce.Quota{{Project: "p1", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Limit: 1500, Usage: 1200 + 40*float64(h)/24, Known: true}})
		p = build(s, testKind(), st, t0.Add(time.Duration(h)*time.Hour))
		st = p.State
	}
	h := HeadroomOf(p)[0]
	if h.GrowthPerDay < 39.9 || h.GrowthPerDay > 40.1 || h.RunsOutAt == nil {
		t.Fatalf("%+v", h)
	}
	if n := len(st.Usage["p1/asia-northeast1/SSD_TOTAL_GB"]); n != 13 {
		t.Fatalf("%d samples kept", n)
	}
}

func TestPendingConfirmedOnce(t *testing.T) {
	d := orphan("d")
	st := engine.NewState()
	st.Pending[d.Key.String()] = engine.Pending{Kind: Name, Reason: "r", SizeGB: 100}
	// Still DELETING: not settled yet.
	del := d
	del.Status = "DELETING"
	p := build(snap([]gce.Disk{del}, complete("a")), testKind(), st, t0)
	if len(p.Confirmed) != 0 || len(p.State.Pending) != 1 {
		t.Fatalf("in-flight delete settled early: %+v", p.Confirmed)
	}
	// Gone from a complete listing: confirmed once, and only once.
	p = build(snap(nil, complete("a")), testKind(), p.State, t0)
	if len(p.Confirmed) != 1 || len(p.State.Pending) != 0 {
		t.Fatalf("confirmed %v pending %v", p.Confirmed, p.State.Pending)
	}
	p = build(snap(nil, complete("a")), testKind(), p.State, t0)
	if len(p.Confirmed) != 0 {
		t.Fatal("confirmed twice")
	}
	// Still there and READY: the delete did not happen; pending is dropped.
	st.Pending[d.Key.String()] = engine.Pending{Kind: Name}
	p = build(snap([]gce.Disk{d}, complete("a")), testKind(), st, t0)
	if len(p.Confirmed) != 0 || len(p.State.Pending) != 0 {
		t.Fatal("present disk confirmed as deleted")
	}
}

func TestSnapshotName(t *testing.T) {
	n := gcepd.SnapshotName(strings.Repeat("pvc-0123456789abcdef", 4), t0)
	if len(n) > 63 || !strings.HasSuffix(n, "-20261101-120000") || !strings.HasPrefix(n, "reclaim-pvc-") {
		t.Fatal(n)
	}
}

// A quota above the threshold warns even when the plan would bring it below:
// a dry-run frees nothing.
func TestHeadroomWarnsOnUsageNow(t *testing.T) {
	d := orphan("a")
	d.SizeGB = 300
	s := snap([]gce.Disk{d}, complete("c"))
	setQuotas(&s, []gce.Quota{{Project: "p1", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Limit: 1500, Usage: 1455, Known: true}})
	h := HeadroomOf(build(s, testKind(), seenSince(t0.Add(-7*time.Hour), d), t0))[0]
	if h.UsedPctAfter >= 0.85 || !h.Warning {
		t.Fatalf("%+v", h)
	}
}

// A disk's clock belongs to its numeric id: a disk recreated under the same
// name, or a clock written before clocks had an identity (state version 1),
// starts over.
func TestDiskClockIsKeyedByID(t *testing.T) {
	d := orphan("d")
	for _, identity := range []string{"another-id", ""} {
		st := engine.NewState()
		st.Seen(d.Key.String(), identity, t0.Add(-7*time.Hour))
		p := build(snap([]gce.Disk{d}, complete("a")), testKind(), st, t0)
		if got := enginetest.DecisionFor(t, p, "d"); got.Action != engine.Mark || !got.OrphanSince.Equal(t0) {
			t.Fatalf("identity %q: %s since %v, want a new clock", identity, got.Action, got.OrphanSince)
		}
	}
}

// A disk says where it lives for notify.routes: its project, the namespace
// of the PVC it was made for, its labels.
func TestDiskWhere(t *testing.T) {
	d := orphan("d")
	d.Labels["team"] = "etl"
	p := build(snap([]gce.Disk{d}, complete("a")), testKind(), engine.NewState(), t0)
	w := enginetest.DecisionFor(t, p, "d").Detail.(engine.Located).Where()
	if w.Scope != "p1" || w.Namespace != "argo" || w.Labels["team"] != "etl" || w.Cluster != "" {
		t.Fatalf("%+v", w)
	}
}

// The guards of a disk's project and region are computed once and shared,
// but a labelled disk adds the cluster its label names: planned after an
// unlabelled disk of the same scope, it is still held by that cluster.
func TestLabelledDiskAfterAnUnlabelledOneKeepsItsGuard(t *testing.T) {
	plain := orphan("a-plain")
	labelled := orphan("b-labelled")
	labelled.Labels[ClusterLabel] = "ghost" // a cluster nobody read
	s := snap([]gce.Disk{plain, labelled}, complete("a"))
	p := build(s, testKind(), seenSince(t0.Add(-7*time.Hour), plain, labelled), t0)
	if d := enginetest.DecisionFor(t, p, "a-plain"); d.Action != engine.Delete {
		t.Fatalf("the unlabelled disk: %s %q, want delete", d.Action, d.Why())
	}
	if d := enginetest.DecisionFor(t, p, "b-labelled"); d.Action == engine.Delete || !d.Held || !strings.Contains(d.Why(), "ghost") {
		t.Fatalf("the labelled disk: %s held=%v %q, want held by cluster ghost", d.Action, d.Held, d.Why())
	}
}
