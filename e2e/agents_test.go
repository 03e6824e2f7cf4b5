package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/base/layout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/awsclient"
	"reclaim.dev/reclaim/providers/bucket"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/providers/gke/gkefake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
)

// Where the two clusters say they live: prod-a on EKS, prod-b on GKE.
var (
	placeA = inventory.Place{Platform: inventory.EKS, Account: account, Location: ec2Region}
	placeB = inventory.Place{Platform: inventory.GKE, Project: project, Location: "asia-northeast1"}
)

const recordBucket, recordPrefix = "fleet", "reclaim"

// The identities of the agents' tests, as shared-credentials profiles: each
// agent may write its own record only, the deleter read the prefix, and
// "partial" read prod-a's record only.
var profilesOnce sync.Once

func writeProfiles(t *testing.T) {
	t.Helper()
	profilesOnce.Do(func() {
		f, err := os.OpenFile(os.Getenv("AWS_SHARED_CREDENTIALS_FILE"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range []string{"agent-a", "agent-b", "deleter", "partial", "admin"} {
			fmt.Fprintf(f, "[%s]\naws_access_key_id = AKID%s\naws_secret_access_key = secret\n\n", p, strings.ToUpper(strings.ReplaceAll(p, "-", "")))
		}
	})
}

// agentWorld is a fleet of two clusters with an agent each, publishing to
// a real S3 implementation (testbins/s3server), and a deleter that reads
// the records and holds no kube credential: GCE disks, ECR images and EC2
// interfaces, some in use in one cluster, some leaked.
type agentWorld struct {
	*eksWorld
	gce    *gcefake.Server
	images *imageWorld
	s3     *testenv.S3Server
	admin  *bucket.Client
	// gcs, when set, holds the records instead of s3 (fleet.records.gcs):
	// each profile is a service account with its key file in gcsKeys.
	gcs     *testenv.GCSServer
	gcsKeys map[string]string
	// deleterProfile is the deleter's identity (default "deleter").
	deleterProfile string
}

func keyOf(place inventory.Place, name string) string {
	return published.Key(recordPrefix, place, name)
}

func newAgentWorld(t *testing.T) *agentWorld {
	t.Helper()
	writeProfiles(t)
	w := &agentWorld{eksWorld: newEKSWorld(t), gce: gcefake.New(gcefake.Options{}), images: newImageWorld(t, 20), deleterProfile: "deleter"}
	t.Cleanup(w.gce.Close)
	in := func(k string) string { return recordBucket + "/" + k }
	s3, err := testenv.StartS3(context.Background(), w.dir, map[string]testenv.S3Grant{
		"AKIDAGENTA":  {Read: []string{in(keyOf(placeA, "prod-a"))}, Write: []string{in(keyOf(placeA, "prod-a"))}},
		"AKIDAGENTB":  {Read: []string{in(keyOf(placeB, "prod-b"))}, Write: []string{in(keyOf(placeB, "prod-b"))}},
		"AKIDDELETER": {Read: []string{in(recordPrefix + "/")}},
		"AKIDPARTIAL": {Read: []string{in(keyOf(placeA, "prod-a"))}},
		"AKIDADMIN":   {Read: []string{in("")}, Write: []string{in("")}},
	}, recordBucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s3.Stop)
	w.s3 = s3
	w.admin, err = bucket.New(context.Background(), bucket.Options{Bucket: recordBucket, PathStyle: true,
		Service: awsclient.Service{Account: account, Region: ec2Region, Endpoint: s3.URL, Profile: "admin", MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// snapshotsYAML is the fleet.records section of an identity (profile).
// Its dropSettle is 6h, less than the 7h the tests step past a grace: a
// cluster's first records, accepted at one step, have settled at the next.
func (w *agentWorld) snapshotsYAML(profile string) string {
	if w.gcs != nil {
		return fmt.Sprintf("  records:\n    prefix: %s\n    dropSettle: 6h\n    gcs:\n      bucket: %s\n      endpoint: %s\n      credentialsFile: %s\n",
			recordPrefix, recordBucket, w.gcs.Endpoint(), w.gcsKeys[profile])
	}
	return fmt.Sprintf("  records:\n    bucket: %s\n    prefix: %s\n    dropSettle: 6h\n    account: \"%s\"\n    region: %s\n    endpoint: %s\n    profile: %s\n",
		recordBucket, recordPrefix, account, ec2Region, w.s3.URL, profile)
}

func placeYAML(p inventory.Place) string {
	if p.Platform == inventory.GKE {
		return fmt.Sprintf("    platform: gke\n    project: %s\n    location: %s\n", p.Project, p.Location)
	}
	return fmt.Sprintf("    platform: eks\n    account: \"%s\"\n    location: %s\n", p.Account, p.Location)
}

// agentConfig is the config of the agent reading c, publishing as name in
// place with profile: its own state and audit, its Jobs kind on the test's
// namespace.
func (w *agentWorld) agentConfig(c *testenv.Cluster, name string, place inventory.Place, profile string) string {
	w.t.Helper()
	y := fmt.Sprintf(`clusters:
  - name: %s
    kubeconfig: %s
    context: admin
    timeout: 30s
%sfleet:
  discover: false
%sjobs:
  namespaces:
    include: [%s]
  succeeded: 24h
  failed: 7d
  grace: 1h
state:
  file: %s
audit:
  file: %s
`, name, c.Kubeconfig, placeYAML(place), w.snapshotsYAML(profile), w.ns,
		filepath.Join(w.dir, "agent-"+c.Name+"-state.json"), filepath.Join(w.dir, "agent-"+c.Name+"-audit.jsonl"))
	p := filepath.Join(w.dir, "agent-"+c.Name+".yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// deleterConfig reads prod-a and prod-b from their records only: no
// kubeconfig, context or inCluster anywhere.
func (w *agentWorld) deleterConfig() string {
	w.t.Helper()
	y := fmt.Sprintf(`clusters:
  - name: prod-a
%s    awsSubnets: [%s, %s]
  - name: prod-b
%s    awsSubnets: [%s, %s]
fleet:
  discover: false
%s%secr:
  endpoint: %s
  registries:
    - account: "%s"
      region: %s
  consumers: []
  minAge: 1h
  grace: 1h
  maxDeletePercent: 100%%
  repositories:
    - match: "%s"
      limit: 20
      highWater: 50%%
      target: 50%%
      keepNewest: 1
ec2Interfaces:
  endpoint: %s
  networks:
    - account: "%s"
      region: %s
      subnets: [%s, %s, %s]
  interfaces:
    grace: 6h
    maxDeletePercent: 100%%
state:
  file: %s
audit:
  file: %s
`, placeYAML(placeA), w.subA, w.subAB, placeYAML(placeB), w.subAB, w.subB, w.snapshotsYAML(w.deleterProfile),
		w.disksYAML(), w.images.ecr.URL(), account, ecrRegion, w.images.repo,
		w.ec2.URL(), account, ec2Region, w.subA, w.subAB, w.subB, w.statePath(), w.auditPath())
	p := filepath.Join(w.dir, "deleter.yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// disksYAML is the gce and disks sections of the deleters here: the
// project's disks, past grace once seen for 6h.
func (w *agentWorld) disksYAML() string {
	return fmt.Sprintf(`gce:
  projects: [%s]
  endpoint: %s
  withoutAuthentication: true
disks:
  minAge: 24h
  grace: 6h
  minDetached: 1h
  maxDeletePercent: 100%%
`, project, w.gce.URL())
}

// gkeDisk adds a disk GKE made in the project's zone, detached for 30
// days: an orphan unless a PV names it.
func (w *agentWorld) gkeDisk(zone, name string) string {
	return w.gce.AddDisk(project, gcefake.Disk{Zone: zone, Name: w.prefix + "-" + name, SizeGB: 20, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": ""}, Created: w.now.Add(-60 * day), LastDetach: w.now.Add(-30 * day)})
}

// seenPastGrace writes a state that first saw the disks 7h ago, past the
// disks' 6h grace.
func (w *agentWorld) seenPastGrace(disks ...string) {
	writeSeen(w.t, w.statePath(), w.now.Add(-7*time.Hour), func(key string) string { d, _ := w.gce.Disk(key); return d.ID }, disks...)
}

// agent runs one agent pass over c at w.now, in process.
func (w *agentWorld) agent(c *testenv.Cluster, name string, place inventory.Place, profile string, apply bool) *report.Report {
	w.t.Helper()
	cfg, err := config.Load(w.agentConfig(c, name, place, profile))
	if err != nil {
		w.t.Fatalf("agent config: %v", err)
	}
	now := w.now
	w.storeAt(now)
	rep, err := app.Run(context.Background(), cfg, app.Deps{Agent: true, OutsideCluster: true, Now: func() time.Time { return now }}, app.Options{Apply: apply})
	if err != nil {
		w.t.Fatalf("agent %s: %v", c.Name, err)
	}
	return rep
}

// storeAt sets the records' store's clock to now: what it says of the
// objects written next (when it wrote them) agrees with the times in them.
func (w *agentWorld) storeAt(now time.Time) {
	w.t.Helper()
	var clock testenv.StoreClock
	if w.gcs != nil {
		clock = w.gcs.Clock
	} else {
		clock = w.s3.Clock
	}
	if err := clock.Set(now); err != nil {
		w.t.Fatal(err)
	}
}

// agents runs both clusters' agents at w.now.
func (w *agentWorld) agents() {
	w.t.Helper()
	for _, rep := range []*report.Report{w.agent(prodA, "prod-a", placeA, "agent-a", true), w.agent(prodB, "prod-b", placeB, "agent-b", true)} {
		if rep.ExitCode != report.ExitOK {
			w.t.Fatalf("agent exit %d\n%s", rep.ExitCode, text(rep))
		}
	}
}

// deleter runs the deleter at w.now, in process, with no kubeconfig to find.
func (w *agentWorld) deleter(apply bool) *report.Report {
	w.t.Helper()
	return runConfig(w.t, w.deleterConfig(), w.now, apply)
}

// The agents publish; a deleter holding no kube credential deletes exactly
// the leaked disk, image and interface, and keeps those in use in either
// cluster. The agents delete their own cluster's finished Jobs.
func TestAgentsPublishAndTheDeleterDeletesOnlyOrphans(t *testing.T) {
	w := newAgentWorld(t)
	t.Setenv("KUBECONFIG", filepath.Join(w.dir, "no-kubeconfig"))
	// Disks: one a PV in prod-b names, one nothing names.
	used := w.gkeDisk(zoneA, "used")
	orphan := w.gkeDisk(zoneA, "orphan")
	(&world{t: t, prefix: w.prefix}).pv(prodB, used)
	// Images: the oldest runs in prod-a, by digest; the rest are unused.
	img := w.images
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: w.ns}, Spec: podSpec(img.ref("@" + img.digest[0]))}
	if _, err := prodA.Client.CoreV1().Pods(w.ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Interfaces: a detached one whose address a running pod in prod-a
	// holds, and a leaked one.
	held := w.ec2.AddInterface(ec2fake.Interface{Subnet: w.subA, Description: "aws-K8S-i-0123456789abcdef0",
		Tags: map[string]string{"node.k8s.amazonaws.com/instance_id": "i-0123456789abcdef0", "cluster.k8s.amazonaws.com/name": "prod-a"}})
	iface, _ := w.ec2.Interface(held)
	heldIP := iface.IPs[0]
	w.pod(prodA, "holder", nil, corev1.PodRunning, 0, heldIP)
	leaked := w.cniInterface(w.subA)
	// A finished Job for prod-a's agent.
	w.job(prodA, "done", "Complete", 3*day, nil)

	start := w.now
	w.agents()
	rep := w.deleter(true)
	if rep.ExitCode != report.ExitOK {
		t.Fatalf("deleter exit %d\n%s", rep.ExitCode, text(rep))
	}
	want(t, rep, orphan, engine.Mark, "")
	want(t, rep, eniID(leaked), engine.Mark, ec2interface.ClassLeaked)
	want(t, rep, eniID(held), engine.Keep, ec2interface.ClassPodIP)
	if d := decision(t, rep, ecrimage.ID(repoKey(img.repo), img.digest[0])); d.Action != engine.Keep {
		t.Fatalf("the image prod-a runs: %+v", d)
	}
	for _, k := range rep.Plan.Decisions {
		if k.Kind == k8sjob.Name {
			t.Fatalf("the deleter planned an in-cluster kind: %+v", k)
		}
	}

	w.now = start.Add(7 * time.Hour)
	w.agents()
	rep = w.deleter(true)
	if rep.ExitCode != report.ExitOK {
		t.Fatalf("deleter exit %d\n%s", rep.ExitCode, text(rep))
	}
	if w.gce.HasDisk(orphan) || !w.gce.HasDisk(used) {
		t.Fatalf("disks: orphan left %v, used left %v; want false, true", w.gce.HasDisk(orphan), w.gce.HasDisk(used))
	}
	if w.ec2.Has(leaked) || !w.ec2.Has(held) {
		t.Fatalf("interfaces: leaked left %v, held left %v; want false, true", w.ec2.Has(leaked), w.ec2.Has(held))
	}
	if !img.ecr.Has(account, img.repo, img.digest[0]) || img.ecr.Has(account, img.repo, img.digest[1]) {
		t.Fatalf("images: in use left %v, unused left %v; want true, false", img.ecr.Has(account, img.repo, img.digest[0]), img.ecr.Has(account, img.repo, img.digest[1]))
	}
	if !w.jobGone(prodA, "done") {
		t.Fatal("prod-a's agent did not delete its finished Job")
	}

	// The real binary, as a CronJob would run it: no kubeconfig anywhere,
	// no HOME, the report planned from the records alone.
	w.now = time.Now().UTC()
	w.agents()
	cmd := reclaimCmd(context.Background(), t, testenv.CronJob, nil, "run", "--config", w.deleterConfig(), "-o", "json")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reclaim run from records: %v\n%s", err, out)
	}
}

// What the deleter cannot trust holds what prod-b could use: a stale
// record, one of the wrong cluster, a truncated one, one it may not read,
// one much smaller than the last, and no record at all. An agent killed
// mid-write leaves the record it was replacing.
func TestRecordsTheDeleterCannotTrustHold(t *testing.T) {
	w := newAgentWorld(t)
	orphan := w.gkeDisk(zoneA, "orphan")
	// Enough in prod-b that losing it all is a drop, not noise.
	for i := range 12 {
		w.pod(prodB, fmt.Sprintf("p%d", i), nil, corev1.PodRunning, 0, "")
	}
	disk := orphan
	ctx := context.Background()
	keyB := keyOf(placeB, "prod-b")
	// A baseline: both records accepted, prod-b's kube-system UID pinned,
	// the orphan's clock started 7 hours ago.
	start := w.now
	w.now = start.Add(-7 * time.Hour)
	w.agents()
	want(t, w.deleter(false), disk, engine.Mark, "")
	w.now = start
	held := func(name, because string) {
		t.Helper()
		rep := w.deleter(false)
		d := decision(t, rep, disk)
		if d.Action == engine.Delete || !strings.Contains(text(rep), because) {
			t.Fatalf("%s: the orphan is %s, or the report does not say %q:\n%s", name, d.Action, because, text(rep))
		}
		if rep.ExitCode != report.ExitIncomplete {
			t.Fatalf("%s: exit %d, want %d", name, rep.ExitCode, report.ExitIncomplete)
		}
	}

	// Stale: prod-b's agent stopped 7 hours ago.
	w.agent(prodA, "prod-a", placeA, "agent-a", false)
	held("stale", "fleet.records.maxAge")

	// The wrong cluster: prod-a's agent, misconfigured as prod-b.
	w.agent(prodA, "prod-b", placeB, "agent-b", false)
	held("wrong cluster", "kube-system namespace UID")

	// Truncated: half of a good record.
	w.agent(prodB, "prod-b", placeB, "agent-b", false)
	good, err := w.admin.Get(ctx, keyB)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.admin.Put(ctx, keyB, good[:len(good)/2]); err != nil {
		t.Fatal(err)
	}
	held("truncated", "cannot be read")

	// Much smaller than the last: a cluster that suddenly uses nothing.
	rec, err := published.Decode(bytes.NewReader(good), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.Refs = inventory.ClusterRefs{Name: rec.Refs.Name, Complete: true, ImagesListed: true, WorkloadsListed: true}
	var b bytes.Buffer
	if err := published.Encode(&b, rec); err != nil {
		t.Fatal(err)
	}
	if err := w.admin.Put(ctx, keyB, b.Bytes()); err != nil {
		t.Fatal(err)
	}
	held("a sudden drop", "fleet.records.maxDrop")

	// Written long ago, though it says it was read now: the store's clock
	// bounds the record's.
	replayed, err := published.Decode(bytes.NewReader(good), nil)
	if err != nil {
		t.Fatal(err)
	}
	replayed.TakenAt = w.now
	b.Reset()
	if err := published.Encode(&b, replayed); err != nil {
		t.Fatal(err)
	}
	w.storeAt(w.now.Add(-7 * time.Hour))
	if err := w.admin.Put(ctx, keyB, b.Bytes()); err != nil {
		t.Fatal(err)
	}
	w.storeAt(w.now)
	held("written long ago", "the store wrote the record 7h0m0s ago")

	// Denied: an identity that may read prod-a's record only.
	if err := w.admin.Put(ctx, keyB, good); err != nil {
		t.Fatal(err)
	}
	w.deleterProfile = "partial"
	held("denied", "was denied")
	w.deleterProfile = "deleter"

	// Missing.
	w.s3Delete(keyB)
	held("missing", "no record at")

	// Killed mid-write: the connection ends before the body does; the
	// record it was replacing stands, whole.
	if err := w.admin.Put(ctx, keyB, good); err != nil {
		t.Fatal(err)
	}
	w.cutPut(keyB, len(good))
	if got, err := w.admin.Get(ctx, keyB); err != nil || !bytes.Equal(got, good) {
		t.Fatalf("after a write cut off: %d bytes, %v; want the record it was replacing", len(got), err)
	}
	// And it is trusted while fresh: the orphan goes.
	w.agent(prodA, "prod-a", placeA, "agent-a", false)
	rep := w.deleter(true)
	if rep.ExitCode != report.ExitOK || w.gce.HasDisk(orphan) {
		t.Fatalf("with both records good: exit %d, orphan left %v\n%s", rep.ExitCode, w.gce.HasDisk(orphan), text(rep))
	}
}

// s3Delete removes an object, as an operator might.
func (w *agentWorld) s3Delete(key string) {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodDelete, w.s3.URL+"/"+recordBucket+"/"+key, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDADMIN/20261127/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		w.t.Fatalf("delete %s: %s", key, resp.Status)
	}
}

// cutPut starts a put of n bytes at key as prod-b's agent and closes the
// connection half-way, as a killed agent would.
func (w *agentWorld) cutPut(key string, n int) {
	w.t.Helper()
	u, _ := url.Parse(w.s3.URL)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		w.t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT /%s/%s HTTP/1.1\r\nHost: %s\r\nAuthorization: AWS4-HMAC-SHA256 Credential=AKIDAGENTB/20261127/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0\r\nX-Amz-Content-Sha256: UNSIGNED-PAYLOAD\r\nContent-Length: %d\r\n\r\n", recordBucket, key, u.Host, n)
	conn.Write(bytes.Repeat([]byte{0x1f}, n/2))
	conn.Close()
	time.Sleep(200 * time.Millisecond)
}

// Discovered clusters are read from their records too, and a record must
// carry the CA discovery lists for its cluster: prod-b's agent publishes
// prod-b's CA where discovery lists another, so what prod-b could use
// holds, while prod-a's leaked interface goes.
func TestDiscoveredClustersReadFromRecords(t *testing.T) {
	w := newAgentWorld(t)
	ekf := startEKS(t, ec2Region)
	ekf.Add(
		eksfake.Cluster{Name: "prod-a", Endpoint: prodA.URL, CAData: prodA.CAData, VPC: "vpc-0test", Subnets: []string{w.subA}},
		eksfake.Cluster{Name: "prod-b", Endpoint: prodB.URL, CAData: prodA.CAData, VPC: "vpc-0test", Subnets: []string{w.subB}},
	)
	inA, inB := w.cniInterface(w.subA), w.cniInterface(w.subB)
	eksB := inventory.Place{Platform: inventory.EKS, Account: account, Location: ec2Region}
	deleter := func(apply bool) *report.Report {
		t.Helper()
		y := fmt.Sprintf(`fleet:
  discover: true
  eks:
    - account: "%s"
      region: %s
      endpoint: %s
%sec2Interfaces:
  endpoint: %s
  networks:
    - account: "%s"
      region: %s
      subnets: [%s, %s]
  interfaces:
    grace: 6h
    maxDeletePercent: 100%%
state:
  file: %s
audit:
  file: %s
`, account, ec2Region, ekf.URL(), w.snapshotsYAML("deleter"), w.ec2.URL(), account, ec2Region, w.subA, w.subB, w.statePath(), w.auditPath())
		p := filepath.Join(w.dir, "discovering.yaml")
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return runConfig(t, p, w.now, apply)
	}
	publish := func() {
		t.Helper()
		w.agent(prodA, "prod-a", placeA, "agent-a", false)
		w.agent(prodB, "prod-b", eksB, "admin", false)
	}
	start := w.now
	publish()
	deleter(true)
	w.now = start.Add(7 * time.Hour)
	publish()
	rep := deleter(true)
	want(t, rep, eniID(inA), engine.Delete, ec2interface.ClassLeaked)
	if d := want(t, rep, eniID(inB), engine.Mark, ec2interface.ClassLeaked); !d.Held || !strings.Contains(text(rep), "CA") {
		t.Fatalf("prod-b's interface: %+v\n%s", d, text(rep))
	}
	if w.ec2.Has(inA) || !w.ec2.Has(inB) {
		t.Fatalf("left: prod-a's %v, prod-b's %v (want false, true)", w.ec2.Has(inA), w.ec2.Has(inB))
	}
}

// Same-name GKE clusters of one project are two clusters with agents too:
// the project lists a prod in asia-northeast1-a (prod-a's API server) and
// one in us-central1 (prod-b's), each named by its location. Each
// discovered prod is read from its own record: while us-central1's agent has not
// published, the disk bound there holds, whatever asia's record says; the
// orphan beside asia's goes under --apply past grace; once us-central1's
// record is there, its PV keeps its disk.
func TestSameNameGKEClustersOfOneProjectFromRecords(t *testing.T) {
	w := newAgentWorld(t)
	t.Setenv("KUBECONFIG", filepath.Join(w.dir, "no-kubeconfig"))
	g := gkefake.New()
	g.Start()
	t.Cleanup(g.Close)
	asia := inventory.Place{Platform: inventory.GKE, Project: project, Location: zoneA}
	central := inventory.Place{Platform: inventory.GKE, Project: project, Location: "us-central1"}
	g.Add(gkefake.Cluster{Project: project, Location: asia.Location, Name: "prod", Endpoint: prodA.URL, CAData: prodA.CAData},
		gkefake.Cluster{Project: project, Location: central.Location, Name: "prod", Endpoint: prodB.URL, CAData: prodB.CAData})
	usedAsia, usedCentral, orphan := w.gkeDisk(zoneA, "bound-in-asia"), w.gkeDisk("us-central1-a", "bound-in-central"), w.gkeDisk(zoneB, "orphan")
	(&world{t: t, prefix: w.prefix}).pv(prodA, usedAsia)
	(&world{t: t, prefix: w.prefix}).pv(prodB, usedCentral)
	w.seenPastGrace(usedAsia, usedCentral, orphan)
	y := fmt.Sprintf(`fleet:
  discover: true
  gke:
    projects: [%s]
    endpoint: %s
    withoutAuthentication: true
  eks: []
%s%sstate:
  file: %s
audit:
  file: %s
`, project, g.Endpoint(), w.snapshotsYAML("deleter"), w.disksYAML(), w.statePath(), w.auditPath())
	cfg := filepath.Join(w.dir, "same-name.yaml")
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	asiaName, centralName := "prod@"+project+"."+zoneA, "prod@"+project+".us-central1"

	// One agent per cluster: two records of one API server claim one
	// kube-system UID, which holds both. asia's first record is accepted 7
	// hours before (a dry run), so that it has settled by the run that
	// deletes.
	start := w.now
	w.now = start.Add(-7 * time.Hour)
	w.agent(prodA, "prod", asia, "admin", false)
	if rep := runConfig(t, cfg, w.now, false); !strings.Contains(text(rep), "records settle at") {
		t.Fatalf("asia's first record does not say when it settles:\n%s", text(rep))
	}
	w.now = start
	w.agent(prodA, "prod", asia, "admin", false)
	rep := runConfig(t, cfg, w.now, true)
	rows, _ := layout.Data(rep.Plan.Sections, "fleet").([]engine.FleetRow)
	names := map[string]bool{}
	for _, r := range rows {
		if names[r.Name] {
			t.Fatalf("the FLEET table has two rows named %s:\n%s", r.Name, text(rep))
		}
		names[r.Name] = true
	}
	if !names[asiaName] || !names[centralName] {
		t.Fatalf("the FLEET table lacks %s or %s:\n%s", asiaName, centralName, text(rep))
	}
	if d := want(t, rep, usedCentral, engine.Mark, ""); !d.Held || !strings.Contains(d.Why(), centralName) {
		t.Fatalf("the disk bound in %s, whose record is missing: %+v\n%s", centralName, d, text(rep))
	}
	want(t, rep, usedAsia, engine.Keep, "")
	want(t, rep, orphan, engine.Delete, "")
	if !w.gce.HasDisk(usedCentral) || !w.gce.HasDisk(usedAsia) || w.gce.HasDisk(orphan) {
		t.Fatalf("left: us-central1's %v, asia's %v, orphan %v (want true, true, false)", w.gce.HasDisk(usedCentral), w.gce.HasDisk(usedAsia), w.gce.HasDisk(orphan))
	}

	w.agent(prodB, "prod", central, "admin", false)
	rep = runConfig(t, cfg, w.now, true)
	if d := want(t, rep, usedCentral, engine.Keep, ""); !strings.Contains(d.Why(), centralName) {
		t.Fatalf("the disk bound in %s: %+v\n%s", centralName, d, text(rep))
	}
	if !w.gce.HasDisk(usedCentral) || !w.gce.HasDisk(usedAsia) {
		t.Fatalf("left: us-central1's %v, asia's %v (want true, true)", w.gce.HasDisk(usedCentral), w.gce.HasDisk(usedAsia))
	}
}
