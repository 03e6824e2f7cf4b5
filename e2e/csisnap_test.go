package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/ebssnapshot"
)

// contentCRD is external-snapshotter's VolumeSnapshotContent CRD, as
// released (testdata/crds: its source and version are noted there).
const contentCRD = "testdata/crds/snapshot.storage.k8s.io_volumesnapshotcontents.yaml"

var installContentCRD sync.Once

// withContentCRD installs the VolumeSnapshotContent CRD in c, once per
// process: the clusters are shared, and prod-b never gets it.
func withContentCRD(t *testing.T, c *testenv.Cluster) {
	t.Helper()
	var err error
	installContentCRD.Do(func() {
		var b []byte
		if b, err = os.ReadFile(contentCRD); err != nil {
			return
		}
		crd := &unstructured.Unstructured{}
		if err = yaml.Unmarshal(b, &crd.Object); err != nil {
			return
		}
		err = c.InstallCRD(context.Background(), crd, csisnapshot.Resource)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// csiContent makes a VolumeSnapshotContent in c naming the snapshot, for
// the VolumeSnapshot ns/name: a pre-provisioned one
// (spec.source.snapshotHandle, a restore from it), or one the snapshotter
// made, whose handle is in its status. Its name is prefix-name.
func csiContent(t *testing.T, c *testenv.Cluster, prefix, ns, name, snap string, preProvisioned bool) {
	t.Helper()
	ctx := context.Background()
	source := map[string]any{"volumeHandle": "vol-0000000000000c5c"}
	if preProvisioned {
		source = map[string]any{"snapshotHandle": snap}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshotContent",
		"metadata": map[string]any{"name": prefix + "-" + name},
		"spec": map[string]any{"deletionPolicy": "Retain", "driver": "ebs.csi.aws.com", "source": source,
			"volumeSnapshotRef": map[string]any{"namespace": ns, "name": name, "uid": "0f1e2d3c-0000-4000-8000-00000000c5c1"}}}}
	ri := c.Dynamic.Resource(csisnapshot.Resource)
	got, err := ri.Create(ctx, u, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("create content %s in %s: %v", name, c.Name, err)
	}
	t.Cleanup(func() { _ = ri.Delete(context.Background(), got.GetName(), metav1.DeleteOptions{}) })
	if !preProvisioned {
		got.Object["status"] = map[string]any{"snapshotHandle": snap, "readyToUse": true}
		if _, err := ri.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("content %s status: %v", name, err)
		}
	}
}

// csiSnapshot seeds a completed snapshot the EBS CSI driver made, tagged
// as the driver tags it with --k8s-tag-cluster-id cluster ("" for
// untagged), a month before now.
func csiSnapshot(f *ebsfake.Server, now time.Time, cluster string) string {
	tags := map[string]string{ebssnapshot.TagCSIName: "snapshot-0f1e2d3c-0000-4000-8000-" + fmt.Sprintf("%012x", volumeSeq.Add(1)), ebssnapshot.TagCSIDriver: "true"}
	if cluster != "" {
		tags["kubernetes.io/cluster/"+cluster], tags[ebssnapshot.TagCSIClusterName] = "owned", cluster
	}
	return f.AddSnapshot(account, ebsfake.Snapshot{VolumeID: "vol-0000000000000c5c", Started: now.Add(-30 * 24 * time.Hour), SizeGiB: 20,
		Description: "Created by AWS EBS CSI driver for volume vol-0000000000000c5c", Tags: tags})
}

// The CSI snapshots on real apiservers, the CRD installed in prod-a only:
// one a VolumeSnapshotContent in prod-a made and one prod-a restores from
// (a pre-provisioned content) stay; an orphan of prod-a's, one of
// prod-b's (which does not serve the CRD, so has no content: decided an
// orphan too) and an untagged one no content names go past their grace;
// one tagged for a cluster nobody reads is held.
func TestEBSCSISnapshots(t *testing.T) {
	w := newEBSWorld(t)
	withContentCRD(t, prodA)
	if _, err := prodB.Dynamic.Resource(csisnapshot.Resource).List(context.Background(), metav1.ListOptions{Limit: 1}); err == nil {
		t.Fatal("prod-b serves volumesnapshotcontents: the test needs a cluster without the CRD")
	}
	w.extraYAML += "ebsSnapshots:\n  maxDeletePercent: 100%\n  csi:\n    delete: true\n"
	snap := func(cluster string) string { return csiSnapshot(w.ebs, w.now, cluster) }
	made, restored := snap("prod-a"), snap("prod-b")
	csiContent(t, prodA, w.prefix, w.ns, "nightly", made, false)
	csiContent(t, prodA, w.prefix, w.ns, "restore", restored, true)
	orphan, noCRD, untagged, ghost := snap("prod-a"), snap("prod-b"), snap(""), snap("ghost")

	start := w.now
	rep := w.run(true)
	want(t, rep, snapID(orphan), engine.Mark, ebssnapshot.ClassCSIOrphan)
	if w.ebs.MutatingCalls() != 0 {
		t.Fatalf("first run: %d mutating calls before the grace", w.ebs.MutatingCalls())
	}

	w.now = start.Add(25 * time.Hour)
	rep = w.run(true)
	for id, who := range map[string]string{made: "VolumeSnapshotContent " + w.prefix + "-nightly of VolumeSnapshot " + w.ns + "/nightly, deletionPolicy Retain",
		restored: "VolumeSnapshotContent " + w.prefix + "-restore"} {
		if d := want(t, rep, snapID(id), engine.Keep, ebssnapshot.ClassCSIInUse); !strings.Contains(d.Why(), "in use by cluster prod-a ("+who) {
			t.Fatalf("%s: %s", id, d.Why())
		}
	}
	for id, owners := range map[string]string{orphan: "prod-a", noCRD: "prod-b", untagged: "prod-a, prod-b"} {
		if d := want(t, rep, snapID(id), engine.Delete, ebssnapshot.ClassCSIOrphan); !strings.Contains(d.Why(), "no VolumeSnapshotContent in any read cluster names it (could own it: "+owners+")") {
			t.Fatalf("%s: %s", id, d.Why())
		}
	}
	if d := want(t, rep, snapID(ghost), engine.Mark, ebssnapshot.ClassCSIOrphan); !d.Held || !strings.Contains(d.Why(), "ghost") {
		t.Fatalf("a snapshot its tag gives to a cluster nobody read is not held: %+v (%s)", d, d.Why())
	}
	for id, kept := range map[string]bool{made: true, restored: true, ghost: true, orphan: false, noCRD: false, untagged: false} {
		if w.ebs.HasSnapshot(id) != kept {
			t.Fatalf("%s: kept %v, want %v; audit %+v\n%s", id, !kept, kept, w.audit(), text(rep))
		}
	}
	if out := text(rep); !strings.Contains(out, "CSI snapshots: 2 named by a VolumeSnapshotContent") {
		t.Fatalf("report:\n%s", out)
	}
}

// From agents' records: prod-a's agent publishes its VolumeSnapshotContents
// and the deleter, holding no kube credential, keeps the snapshot one
// names and deletes prod-a's orphan. A first record listing no content,
// where the cloud shows CSI snapshots tagged for prod-a, is not believed
// until it has stood for dropSettle.
func TestEBSCSISnapshotsFromRecords(t *testing.T) {
	w := newAgentWorld(t)
	t.Setenv("KUBECONFIG", filepath.Join(w.dir, "no-kubeconfig"))
	withContentCRD(t, prodA)
	f := ebsfake.New(ebsfake.Options{Region: ec2Region, Account: account})
	f.Start()
	t.Cleanup(f.Close)
	used, orphan := csiSnapshot(f, w.now, "prod-a"), csiSnapshot(f, w.now, "prod-a")
	deleter := func() *report.Report {
		p := w.deleterConfig()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = fmt.Appendf(b, "ebs:\n  endpoint: %s\n  quotasEndpoint: %s\n  regions:\n    - account: \"%s\"\n      region: %s\n  maxAttempts: 3\n"+
			"ebsSnapshots:\n  grace: 6h\n  maxDeletePercent: 100%%\n  csi:\n    delete: true\n", f.URL(), f.URL(), account, ec2Region)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return runConfig(t, p, w.now, true)
	}

	// The first records: prod-a lists no content yet.
	start := w.now
	w.agents()
	rep := deleter()
	for _, id := range []string{used, orphan} {
		if d := want(t, rep, snapID(id), engine.Mark, ebssnapshot.ClassCSIOrphan); !d.Held || !strings.Contains(d.Why(), "cluster prod-a") {
			t.Fatalf("%s on prod-a's first record without contents: %+v (%s)", id, d, d.Why())
		}
	}
	if out := text(rep); !strings.Contains(out, "the record lists no tap volumesnapshotcontents, where the clouds show EBS snapshot "+used) {
		t.Fatalf("the report does not say why prod-a's record is not believed:\n%s", out)
	}

	// A content names one; past the orphan's grace, it goes.
	csiContent(t, prodA, w.prefix, w.ns, "nightly", used, false)
	w.now = start.Add(7 * time.Hour)
	w.agents()
	rep = deleter()
	if d := want(t, rep, snapID(used), engine.Keep, ebssnapshot.ClassCSIInUse); !strings.Contains(d.Why(), "in use by cluster prod-a (VolumeSnapshotContent "+w.prefix+"-nightly") {
		t.Fatalf("used: %s", d.Why())
	}
	want(t, rep, snapID(orphan), engine.Mark, ebssnapshot.ClassCSIOrphan)
	w.now = start.Add(14 * time.Hour)
	w.agents()
	rep = deleter()
	want(t, rep, snapID(orphan), engine.Delete, ebssnapshot.ClassCSIOrphan)
	if f.HasSnapshot(orphan) || !f.HasSnapshot(used) {
		t.Fatalf("orphan left %v, used left %v; want false, true\n%s", f.HasSnapshot(orphan), f.HasSnapshot(used), text(rep))
	}
}
