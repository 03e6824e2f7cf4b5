package k8spvc

import (
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func testPolicy() Policy {
	return Policy{ProtectLabel: "reclaim-protect",
		Safety: config.Safety{Grace: config.Duration(6 * time.Hour), Caps: config.Caps{MaxDeletesPerRun: 20, MaxDeletePercent: 1, BreakerCandidates: 200}}}
}

// diskKind plans the disks next to the PVCs: headroom is the disk kind's.
func diskKind() *gcedisk.Kind {
	return &gcedisk.Kind{GCE: gcepd.GCE{HeadroomWarning: 0.85}, Disks: gcepd.Disks{
		Safety: config.Safety{MinAge: config.Duration(24 * time.Hour), Grace: config.Duration(6 * time.Hour),
			Caps: config.Caps{MaxDeletesPerRun: 20, MaxDeletePercent: 1, BreakerCandidates: 200}},
		MinDetached: config.Duration(time.Hour), ProtectLabel: "reclaim-protect",
		Ownership: gcepd.Ownership{LabelKeys: []string{"goog-gke-volume"}, DescriptionContains: []string{"kubernetes.io/created-for/pv/name"}}}}
}

// orphanDisk is a Kubernetes-made disk, old enough, detached long ago.
func orphanDisk(name string) gce.Disk {
	return gce.Disk{
		Key:    inventory.DiskKey{Project: "p1", Zone: "asia-northeast1-a", Name: name},
		ID:     "4711" + name,
		SizeGB: 100, Type: "pd-balanced", Status: "READY",
		Labels:     map[string]string{"goog-gke-volume": ""},
		Created:    t0.Add(-30 * 24 * time.Hour),
		LastDetach: t0.Add(-10 * 24 * time.Hour),
	}
}

// snap is a snapshot of the disks and the clusters; a cluster whose
// workflows tap is not set was read by it, completely.
func snap(disks []gce.Disk, clusters ...inventory.ClusterRefs) *inventory.View {
	for i := range clusters {
		if _, ok := clusters[i].Taps[TapName]; !ok && clusters[i].Complete {
			clusters[i].Taps = map[string]inventory.Tapped{TapName: {Complete: true}}
		}
	}
	return &inventory.View{TakenAt: t0, Clouds: map[string]any{gcepd.Read: gcepd.Listing{Disks: []gce.Listing{{Project: "p1", Disks: disks, Complete: true}}}}, Clusters: clusters}
}

func build(s *inventory.View, pol Policy, st engine.State, now time.Time) *engine.Plan {
	return enginetest.Build(s, []engine.Kind{diskKind(), &Kind{Policy: pol}}, st, now)
}

func TestWorkflowPVCs(t *testing.T) {
	failed := &inventory.WorkflowRef{Namespace: "argo", Name: "wf-1", Phase: "Failed", Finished: t0.Add(-48 * time.Hour)}
	running := &inventory.WorkflowRef{Namespace: "argo", Name: "wf-2", Phase: "Running"}
	key := orphanDisk("pvc-1").Key
	c := inventory.ClusterRefs{Name: "a", Complete: true, PVs: []inventory.PVRef{{Cluster: "a", Disk: key, PV: "pv-1", Phase: "Bound", ClaimNamespace: "argo", Claim: "wf-1-workdir", Workflow: failed}}, PVCs: []inventory.PVCRef{
		{Namespace: "argo", Name: "wf-1-workdir", CapacityGB: 100, Workflow: failed, Disk: &key, UID: "u1"},
		{Namespace: "argo", Name: "wf-2-workdir", CapacityGB: 100, Workflow: running},
		{Namespace: "argo", Name: "wf-3-workdir", CapacityGB: 100, Workflow: failed, Pods: []inventory.PodRef{{Namespace: "argo", Name: "debug", Phase: "Running"}}},
	}}
	s := snap([]gce.Disk{orphanDisk("pvc-1")}, c)
	s.Clouds[gcepd.Read] = gcepd.Listing{Disks: gcepd.ListingOf(s).Disks, Quotas: []gce.Quota{{Project: "p1", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Limit: 1500, Usage: 1455, Known: true}}}

	p := build(s, testPolicy(), engine.NewState(), t0)
	if d := enginetest.DecisionFor(t, p, "wf-1-workdir"); d.Action != engine.Report || !strings.Contains(d.Why(), "k8sPvcs.delete is off") {
		t.Fatalf("default must only report: %+v", d)
	}
	if d := enginetest.DecisionFor(t, p, "wf-2-workdir"); d.Action != engine.Keep {
		t.Fatalf("running workflow: %+v", d)
	}
	if d := enginetest.DecisionFor(t, p, "wf-3-workdir"); d.Action != engine.Keep {
		t.Fatalf("mounted: %+v", d)
	}
	if hs := HoldersOf(p); len(hs) != 1 || hs[0].GB != 100 || hs[0].Workflow != "wf-1" {
		t.Fatalf("holders: %+v", hs)
	}
	h := gcedisk.HeadroomOf(p)[0]
	if !h.Warning || h.FinishedWorkflowGB != 100 || h.UsedPct < 0.97 {
		t.Fatalf("headroom: %+v", h)
	}

	pol := testPolicy()
	pol.Delete = true
	st := p.State
	p = build(s, pol, st, t0.Add(7*time.Hour))
	if d := enginetest.DecisionFor(t, p, "wf-1-workdir"); d.Action != engine.Delete {
		t.Fatalf("switch on, grace elapsed: %+v", d)
	}
	if h := gcedisk.HeadroomOf(p)[0]; h.PlanFrees != 100 {
		t.Fatalf("plan frees: %+v", h)
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
	pol.Delete = true
	id := ID("a", "argo", "wf-1-workdir")
	st := engine.NewState()
	st.Seen(id, "u1", t0.Add(-48*time.Hour))
	st.Pending[id] = engine.Pending{Kind: Name, Reason: "r", SizeGB: 20}
	p := build(snap(nil, c), pol, st, t0)
	if d := enginetest.DecisionFor(t, p, "wf-1-workdir"); d.Action != engine.Keep || !strings.Contains(d.Why(), "already being deleted") {
		t.Fatalf("%+v", d)
	}
	if len(p.Confirmed) != 1 || len(p.State.Pending) != 0 {
		t.Fatalf("pending delete of a Terminating PVC: confirmed %v, pending %v", p.Confirmed, p.State.Pending)
	}
	if p = build(snap(nil, c), pol, p.State, t0.Add(time.Hour)); len(p.Confirmed) != 0 {
		t.Fatal("confirmed twice")
	}
}
