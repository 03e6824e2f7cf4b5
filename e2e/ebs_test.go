package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ebs/ebsfake"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/eks/stsfake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
	"reclaim.dev/reclaim/reconcile/kinds/ebssnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/ebsvolume"
)

// ebsWorld is an eksWorld whose only cloud section is ebs, over an EBS fake
// (volumes and Service Quotas) of the EC2 fake's account and region.
type ebsWorld struct {
	*eksWorld
	ebs *ebsfake.Server
}

func newEBSWorld(t *testing.T) *ebsWorld {
	w := &ebsWorld{eksWorld: newEKSWorld(t), ebs: ebsfake.New(ebsfake.Options{Region: ec2Region, Account: account})}
	w.ebs.Start()
	t.Cleanup(w.ebs.Close)
	w.ebs.SetQuota(account, "L-7A658B76", "Storage for General Purpose SSD (gp3) volumes, in TiB", 1, "None")
	w.ec2YAML, w.jobsYAML, w.podsYAML = "-", "-", "-"
	w.editYAML = func(y string) string { // no ec2Interfaces section: no subnets either
		var out []string
		for _, l := range strings.Split(y, "\n") {
			if !strings.Contains(l, "awsSubnets:") {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	w.extraYAML = fmt.Sprintf(`ebs:
  endpoint: %s
  quotasEndpoint: %s
  regions:
    - account: "%s"
      region: %s
  requestsPerSecond: 20
  burst: 100
  deletesPerSecond: 5
  deleteBurst: 100
  maxAttempts: 3
  grace: 6h
  snapshotBeforeDelete: true
  caps: {maxDeletePercent: 100%%}
`, w.ebs.URL(), w.ebs.URL(), account, ec2Region)
	return w
}

// volume seeds an available volume the EBS CSI driver made for a claim of
// the test's namespace, a month ago.
func (w *ebsWorld) volume(name string, tags map[string]string) string {
	all := map[string]string{ebsvolume.TagCSICluster: "true", ebsvolume.TagCreatedForPV: "pvc-" + name,
		ebsvolume.TagCreatedForPVC: name, ebsvolume.TagCreatedForNS: w.ns}
	for k, v := range tags {
		all[k] = v
	}
	return w.ebs.AddVolume(account, ebsfake.Volume{ID: fmt.Sprintf("vol-%017x", volumeSeq.Add(1)), SizeGiB: 100, Type: "gp3", Created: w.now.Add(-30 * 24 * time.Hour), Tags: all})
}

// volumeSeq numbers the volumes of every EBS world of the process: the
// clusters are shared, and a PV an earlier test left (its deletion waits
// for pv-protection's finalizer, which no controller here removes) must
// not name a later test's volume. It starts far above the fakes' own ids.
var volumeSeq = func() *atomic.Uint64 { var n atomic.Uint64; n.Store(1 << 40); return &n }()

// pv makes a PV of the EBS CSI driver naming the volume in c.
func (w *ebsWorld) pv(c *testenv.Cluster, vol string) {
	w.t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + w.prefix + "-" + vol},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: w.ns, Name: "data-" + vol},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: ebsvolume.CSIDriver, VolumeHandle: vol}},
		}}
	ctx := context.Background()
	if _, err := c.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("create pv in %s: %v", c.Name, err)
	}
	w.t.Cleanup(func() {
		_ = c.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
}

// inlinePod makes a pod in c mounting the volume inline (the in-tree
// awsElasticBlockStore source, aws://AZ/vol-… form).
func (w *ebsWorld) inlinePod(c *testenv.Cluster, vol string) {
	w.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "inline-" + vol}, Spec: jobPodSpec()}
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://" + ec2Region + "a/" + vol}}}}
	if _, err := c.Client.CoreV1().Pods(w.ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("create pod in %s: %v", c.Name, err)
	}
}

func volID(vol string) string { return ebsvolume.ID(account, ec2Region, vol) }

// The EBS twin of the disk story, on real apiservers: a volume a PV in
// prod-b names, one a pod in prod-a mounts inline, a protected one and one
// no provisioner made are kept; the orphan is marked, then deleted past its
// grace, with the report's quota headroom; and one tagged for a cluster
// nobody reads is held.
func TestEBSVolumesDeletedOnlyWhenNoClusterUsesThem(t *testing.T) {
	w := newEBSWorld(t)
	inPV := w.volume("in-pv", nil)
	w.pv(prodB, inPV)
	inline := w.volume("inline", nil)
	w.inlinePod(prodA, inline)
	orphan := w.volume("orphan", nil)
	protected := w.volume("protected", map[string]string{"reclaim.dev/protect": "false"})
	ghost := w.volume("ghost", map[string]string{"kubernetes.io/cluster/ghost": "owned"})
	handMade := w.ebs.AddVolume(account, ebsfake.Volume{SizeGiB: 10, Created: w.now.Add(-30 * 24 * time.Hour), Tags: map[string]string{"team": "x"}})

	start := w.now
	rep := w.run(true)
	// The ghost cluster holds what it may use, and the run says so.
	if rep.ExitCode != report.ExitIncomplete || !strings.Contains(text(rep), "cluster ghost@"+account+".us-east-1 is named by the cloud's evidence but not read") {
		t.Fatalf("first run: exit %d\n%s", rep.ExitCode, text(rep))
	}
	want(t, rep, volID(orphan), engine.Mark, ebsvolume.ClassOrphan)
	if w.ebs.MutatingCalls() != 0 {
		t.Fatalf("first run: %d mutating calls before the grace", w.ebs.MutatingCalls())
	}

	w.now = start.Add(7 * time.Hour)
	rep = w.run(true)
	if d := want(t, rep, volID(inPV), engine.Keep, ebsvolume.ClassPV); !strings.Contains(d.Why(), "in cluster prod-b (PVC "+w.ns+"/data-"+inPV) {
		t.Fatalf("in-pv: %s", d.Why())
	}
	want(t, rep, volID(inline), engine.Keep, ebsvolume.ClassInline)
	want(t, rep, volID(protected), engine.Keep, ebsvolume.ClassProtected)
	want(t, rep, volID(handMade), engine.Keep, ebsvolume.ClassNoEvidence)
	if d := want(t, rep, volID(ghost), engine.Mark, ebsvolume.ClassOrphan); !d.Held || !strings.Contains(d.Why(), "ghost") {
		t.Fatalf("a volume its tag gives to a cluster nobody read is not held: %+v (%s)", d, d.Why())
	}
	if d := want(t, rep, volID(orphan), engine.Delete, ebsvolume.ClassOrphan); !strings.Contains(d.Why(), "PVC "+w.ns+"/orphan") {
		t.Fatalf("orphan's root cause: %s", d.Why())
	}
	if rep.Outcome == nil || rep.Outcome.Deleted != 1 || w.ebs.Has(orphan) {
		t.Fatalf("outcome %+v, orphan left %v\n%s", rep.Outcome, w.ebs.Has(orphan), text(rep))
	}
	for _, v := range []string{inPV, inline, protected, ghost, handMade} {
		if !w.ebs.Has(v) {
			t.Fatalf("%s was deleted", v)
		}
	}
	if snaps := w.ebs.Snapshots(); len(snaps) != 1 || snaps[0].VolumeID != orphan || snaps[0].Tags["reclaim.dev/snapshot-of"] != orphan {
		t.Fatalf("snapshots before delete: %+v", snaps)
	}
	if w.deletes(volID(orphan)) != 1 {
		t.Fatalf("audit: %+v", w.audit())
	}
	hs, _ := layout.Data(rep.Plan.Sections, "ebsHeadroom").([]ebsvolume.Headroom)
	if len(hs) != 1 || !hs[0].Known || hs[0].LimitGiB != 1024 || hs[0].PlanFreesGiB != 100 {
		t.Fatalf("headroom %+v", hs)
	}
	if out := text(rep); !strings.Contains(out, "EBS STORAGE QUOTA HEADROOM") || !strings.Contains(out, "EBS VOLUMES") {
		t.Fatalf("report:\n%s", out)
	}
}

// Fail closed: prod-b cannot be reached, so no volume it could attach is
// deleted; and a cluster discovery finds in the volume's region, which
// reclaim cannot read, holds it as well.
func TestEBSUnreadClustersHold(t *testing.T) {
	w := newEBSWorld(t)
	kc, err := testenv.UnreachableKubeconfig(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.prodBKubeconfig, w.prodBContext = kc, "unreachable"
	orphan := w.volume("orphan", nil)
	start := w.now
	w.run(true)
	w.now = start.Add(7 * time.Hour)
	rep := w.run(true)
	if rep.ExitCode != report.ExitIncomplete || w.ebs.MutatingCalls() != 0 || !w.ebs.Has(orphan) {
		t.Fatalf("unreachable prod-b: exit %d, %d mutating calls\n%s", rep.ExitCode, w.ebs.MutatingCalls(), text(rep))
	}
	if d := want(t, rep, volID(orphan), engine.Mark, ebsvolume.ClassOrphan); !d.Held || !strings.Contains(d.Why(), "prod-b") {
		t.Fatalf("held for prod-b? %+v (%s)", d, d.Why())
	}

	// prod-b back, but discovery finds an EKS cluster in the region that
	// cannot be reached: it could attach the volume, so it holds it.
	w2 := newEBSWorld(t)
	w2.omitProdB, w2.declarePlaces = true, true
	sts := stsfake.New(stsfake.Identity{AccessKeyID: "AKIDE2ETEST", SecretAccessKey: "e2e-secret",
		ARN: "arn:aws:sts::" + account + ":assumed-role/reclaim/reclaim", Account: account, UserID: "AROAE2E:reclaim"})
	sts.Start()
	t.Cleanup(sts.Close)
	ekf := startEKS(t, ec2Region)
	ekf.Add(eksfake.Cluster{Name: "gone-eks", Endpoint: "https://127.0.0.1:1", CAData: prodB.CAData, VPC: "vpc-0other", Subnets: []string{w2.subB}})
	w2.fleetYAML = fmt.Sprintf("  discover: true\n  eks:\n    - account: \"%s\"\n      region: %s\n      endpoint: %s\n      stsEndpoint: %s\n  timeout: 10s\n",
		account, ec2Region, ekf.URL(), sts.URL())
	orphan2 := w2.volume("orphan", nil)
	start = w2.now
	w2.run(true)
	w2.now = start.Add(7 * time.Hour)
	rep = w2.run(true)
	if d := want(t, rep, volID(orphan2), engine.Mark, ebsvolume.ClassOrphan); !d.Held || !strings.Contains(d.Why(), "gone-eks") {
		t.Fatalf("held for gone-eks? %+v (%s)\n%s", d, d.Why(), text(rep))
	}
	if w2.ebs.MutatingCalls() != 0 || !w2.ebs.Has(orphan2) {
		t.Fatal("deleted a volume an unread discovered cluster could attach")
	}
}

// The binary, as the CronJob's pod runs it (built as the image is, a pod's
// environment: no AWS_CA_BUNDLE, no HOME), deletes an orphaned volume past
// its grace through EC2 and Service Quotas, and keeps the one a PV names.
func TestEBSBinaryAsAPod(t *testing.T) {
	w := newEBSWorld(t)
	inPV := w.volume("in-pv", nil)
	w.pv(prodB, inPV)
	orphan := w.volume("orphan", nil)
	writeSeen(t, w.statePath(), time.Now().Add(-7*time.Hour), func(id string) string { return strings.TrimPrefix(id, volID("")) },
		volID(orphan), volID(inPV))
	c := reclaimCmd(context.Background(), t, testenv.CronJob, nil, "run", "--apply", "--config", w.configPath(), "-o", "json")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	var rep report.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if w.ebs.Has(orphan) || !w.ebs.Has(inPV) || w.deletes(volID(orphan)) != 1 {
		t.Fatalf("orphan left %v, in-pv left %v, audit %+v\n%s", w.ebs.Has(orphan), w.ebs.Has(inPV), w.audit(), stderr.Bytes())
	}
	if w.ebs.Calls("ListServiceQuotas")+w.ebs.Calls("GetServiceQuota") == 0 {
		t.Fatalf("no Service Quotas call: %v", w.ebs.CallCounts())
	}
}

func snapID(snap string) string { return ebssnapshot.ID(account, ec2Region, snap) }

// reclaim's own backups expire: ebs-volume snapshots the orphan before
// deleting it; past ebsSnapshots.retention (30 days) and its grace, that
// snapshot is deleted, while a look-alike reclaim did not make (its
// description without its tag) and one of reclaim's an AMI was registered
// from are kept, each with its reason.
func TestEBSSnapshotsReclaimMadeExpire(t *testing.T) {
	w := newEBSWorld(t)
	w.extraYAML += "ebsSnapshots:\n  maxDeletePercent: 100%\n"
	orphan := w.volume("orphan", nil)
	start := w.now
	w.run(true)
	w.now = start.Add(7 * time.Hour)
	if rep := w.run(true); rep.Outcome == nil || rep.Outcome.Deleted != 1 || w.ebs.Has(orphan) {
		t.Fatalf("the orphan volume was not deleted: %+v\n%s", rep.Outcome, text(rep))
	}
	snaps := w.ebs.Snapshots()
	if len(snaps) != 1 || snaps[0].VolumeID != orphan {
		t.Fatalf("snapshots before delete: %+v", snaps)
	}
	backup := snaps[0].ID
	// The look-alike: reclaim's description, no tag. The used one: all
	// three, and an AMI registered from it.
	lookAlike := w.ebs.AddSnapshot(account, ebsfake.Snapshot{VolumeID: "vol-0000000000000a11", Started: start, SizeGiB: 50,
		Description: ebsbase.SnapshotDescription("vol-0000000000000a11", "")})
	used := w.ebs.AddSnapshot(account, ebsfake.Snapshot{VolumeID: "vol-0000000000000b22", Started: start, SizeGiB: 50,
		Description: ebsbase.SnapshotDescription("vol-0000000000000b22", ""), Tags: map[string]string{"reclaim.dev/snapshot-of": "vol-0000000000000b22"}})
	ami := w.ebs.AddImage(account, ebsfake.Image{Name: "golden", Snapshots: []string{used}})

	// Within retention: kept, and said so.
	w.now = start.Add(10 * 24 * time.Hour)
	rep := w.run(true)
	want(t, rep, snapID(backup), engine.Keep, ebssnapshot.ClassRetained)
	if !w.ebs.HasSnapshot(backup) {
		t.Fatal("deleted within retention")
	}

	// Past retention: first seen, its grace starts.
	w.now = start.Add(31 * 24 * time.Hour)
	rep = w.run(true)
	want(t, rep, snapID(backup), engine.Mark, ebssnapshot.ClassExpired)
	if !w.ebs.HasSnapshot(backup) {
		t.Fatal("deleted on first sight past retention")
	}

	// Past its grace: deleted; the others kept with their reasons.
	w.now = w.now.Add(25 * time.Hour)
	rep = w.run(true)
	if d := want(t, rep, snapID(backup), engine.Delete, ebssnapshot.ClassExpired); !strings.Contains(d.Why(), "past its retention of 30 days") {
		t.Fatalf("backup: %s", d.Why())
	}
	if d := want(t, rep, snapID(lookAlike), engine.Keep, ebssnapshot.ClassNotReclaims); !strings.Contains(d.Why(), "has no reclaim.dev/snapshot-of tag") {
		t.Fatalf("look-alike: %s", d.Why())
	}
	if d := want(t, rep, snapID(used), engine.Keep, ebssnapshot.ClassInUse); !strings.Contains(d.Why(), "AMI "+ami) {
		t.Fatalf("used: %s", d.Why())
	}
	if w.ebs.HasSnapshot(backup) || !w.ebs.HasSnapshot(lookAlike) || !w.ebs.HasSnapshot(used) || w.deletes(snapID(backup)) != 1 {
		t.Fatalf("after: backup %v, look-alike %v, used %v; audit %+v", w.ebs.HasSnapshot(backup), w.ebs.HasSnapshot(lookAlike), w.ebs.HasSnapshot(used), w.audit())
	}
	if out := text(rep); !strings.Contains(out, "EBS SNAPSHOTS") || !strings.Contains(out, "100 GiB") {
		t.Fatalf("report:\n%s", out)
	}
}
