package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/eks/stsfake"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/providers/gke/gkefake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
)

// The failure this rule exists for: two EKS clusters share a VPC and the
// config names only the first. A detached CNI interface whose address is a
// running pod's in the second cluster must survive --apply, because the
// cloud says the second cluster uses the subnet (its kubernetes.io/cluster
// tag) or made the interface (the CNI's cluster tag); the report names the
// cluster and how to resolve it. Declared out of scope, deletions resume
// and every report repeats the declaration.
func TestUnconfiguredClusterHoldsWhatTheCloudSaysItUses(t *testing.T) {
	w := newEKSWorld(t)
	w.omitProdB = true
	w.jobsYAML, w.podsYAML = "-", "-"
	// subAB carries prod-b's subnet tag, as EKS requires of its subnets.
	for _, sn := range w.ec2.Subnets() {
		if sn.ID == w.subAB {
			sn.Tags = map[string]string{inventory.SubnetClusterTagPrefix + "prod-b": "shared"}
			w.ec2.AddSubnet(sn)
		}
	}
	tagged := w.cniInterface(w.subAB)
	// In subA (no tag), an interface the CNI of prod-b made.
	byB := w.ec2.AddInterface(ec2fake.Interface{Subnet: w.subA, Description: "aws-K8S-i-0123456789abcdef0",
		Tags: map[string]string{"node.k8s.amazonaws.com/instance_id": "i-0123456789abcdef0", inventory.InterfaceClusterTag: "prod-b"}})
	plain := w.cniInterface(w.subA) // only prod-a could use it
	// The tagged interface's secondary address is a running pod's in prod-b.
	in, _ := w.ec2.Interface(tagged)
	ips := in.IPs
	w.pod(prodB, "runs-on-b", nil, corev1.PodRunning, 0, ips[len(ips)-1])

	start := w.now
	w.run(true)
	w.now = start.Add(7 * time.Hour) // past the 6h grace
	rep := w.run(true)
	for _, e := range []string{tagged, byB} {
		d := want(t, rep, eniID(e), engine.Mark, ec2interface.ClassLeaked)
		if !d.Held || !strings.Contains(d.Why(), "cluster prod-b") {
			t.Fatalf("%s not held for prod-b: %+v", e, d)
		}
	}
	want(t, rep, eniID(plain), engine.Delete, ec2interface.ClassLeaked)
	if !w.ec2.Has(tagged) || !w.ec2.Has(byB) || w.ec2.Has(plain) {
		t.Fatalf("left: tagged %v, made by prod-b %v, plain %v (want true, true, false)", w.ec2.Has(tagged), w.ec2.Has(byB), w.ec2.Has(plain))
	}
	if rep.ExitCode != report.ExitIncomplete {
		t.Errorf("exit %d, want %d: a deletion was held back", rep.ExitCode, report.ExitIncomplete)
	}
	out := text(rep)
	// A tag names the cluster of the interface's own account and region.
	for _, s := range []string{"cluster prod-b@" + account + "." + ec2Region + " was not read", "fleet discovery is off"} {
		if !strings.Contains(out, s) {
			t.Fatalf("report lacks %q:\n%s", s, out)
		}
	}

	// Declared out of scope (here wrongly: the pod is real): the clocks the
	// hold never started run, the interfaces go past their grace, and every
	// report repeats the declaration.
	w.fleetYAML = fmt.Sprintf("  discover: false\n  outOfScope:\n    - name: prod-b\n      reason: decommissioned, OPS-1234\n      platform: eks\n      account: \"%s\"\n      location: %s\n", account, ec2Region)
	w.now = w.now.Add(time.Hour)
	want(t, w.run(true), eniID(tagged), engine.Mark, "")
	w.now = w.now.Add(7 * time.Hour)
	rep = w.run(true)
	want(t, rep, eniID(tagged), engine.Delete, "")
	if w.ec2.Has(tagged) || w.ec2.Has(byB) {
		t.Fatal("deletions did not resume once prod-b was declared out of scope")
	}
	if out := text(rep); !strings.Contains(out, "decommissioned, OPS-1234") {
		t.Fatalf("report does not repeat the declaration:\n%s", out)
	}
}

// A disk GKE labelled for a cluster the config misses (goog-k8s-cluster-name)
// is held under --apply past its grace, with the cluster named; an orphan
// beside it without the label goes.
func TestDiskOfAnUnconfiguredClusterIsHeld(t *testing.T) {
	w := newWorld(t)
	plain := w.orphan(zoneA, "plain")
	labelled := w.gce.AddDisk(project, gcefake.Disk{Zone: zoneA, Name: w.name("of-prod-c"), SizeGB: 20, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": "", gcedisk.ClusterLabel: "prod-c"}, Created: w.now.Add(-90 * 24 * time.Hour)})
	w.seen(w.now.Add(-7*time.Hour), plain, labelled)
	rep := w.run(true)
	d := decision(t, rep, labelled)
	if d.Action != engine.Mark || !d.Held || !strings.Contains(d.Why(), "cluster prod-c@"+project+" was not read") {
		t.Fatalf("labelled disk: %+v", d)
	}
	if !w.gce.HasDisk(labelled) || w.gce.HasDisk(plain) {
		t.Fatalf("left: labelled %v, plain %v (want true, false)", w.gce.HasDisk(labelled), w.gce.HasDisk(plain))
	}
	if out := text(rep); !strings.Contains(out, "prod-c") || !strings.Contains(out, "NOT READ") {
		t.Fatalf("the report does not name prod-c in its fleet section:\n%s", out)
	}
}

// Discovery end to end: the EKS fake lists three clusters besides the
// configured prod-a. disc-eks is a real kube-apiserver that accepts only
// EKS tokens (a webhook verifying them against the STS fake, as EKS's
// authenticator does): reclaim reads it with the token it mints in process,
// and finds the running pod that holds an interface's address. gone-eks
// cannot be reached and sandbox-eks is excluded by a rule: each holds the
// interfaces of its subnet, and the report's fleet section says why. The
// interface no cluster uses goes.
func TestDiscoveredClustersReadWithInProcessTokens(t *testing.T) {
	w := newEKSWorld(t)
	w.omitProdB = true
	w.declarePlaces = true // the CNI tags name prod-a, which discovery does not list
	w.jobsYAML, w.podsYAML = "-", "-"
	ctx := context.Background()

	sts := stsfake.New(stsfake.Identity{AccessKeyID: "AKIDE2ETEST", SecretAccessKey: "e2e-secret",
		ARN: "arn:aws:sts::" + account + ":assumed-role/reclaim/reclaim", Account: account, UserID: "AROAE2E:reclaim"})
	sts.Start()
	t.Cleanup(sts.Close)
	verified := atomic.Int64{}
	disc, err := testenv.StartCluster(ctx, "disc-eks", testenv.Options{Authenticate: func(token string) (string, []string, bool) {
		arn, err := sts.Verify(ctx, token, "disc-eks")
		if err != nil || arn != "arn:aws:sts::"+account+":assumed-role/reclaim/reclaim" {
			return "", nil, false
		}
		verified.Add(1)
		return arn, []string{"system:masters"}, true // an access entry would map it to a group
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(disc.Stop)
	if _, err := disc.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ekf := startEKS(t, ec2Region)
	ekf.Add(
		eksfake.Cluster{Name: "disc-eks", Endpoint: disc.URL, CAData: disc.CAData, VPC: "vpc-0other", Subnets: []string{w.subAB}},
		eksfake.Cluster{Name: "gone-eks", Endpoint: "https://127.0.0.1:1", CAData: disc.CAData, VPC: "vpc-0other", Subnets: []string{w.subB}},
		eksfake.Cluster{Name: "sandbox-eks", Endpoint: "https://127.0.0.1:1", CAData: disc.CAData, VPC: "vpc-0other", Subnets: []string{w.subA}},
	)
	w.fleetYAML = fmt.Sprintf(`  discover: true
  eks:
    - account: "%s"
      region: %s
      endpoint: %s
      stsEndpoint: %s
  exclude: ["sandbox-*"]
  timeout: 10s
`, account, ec2Region, ekf.URL(), sts.URL())

	used := w.cniInterface(w.subAB) // its address is a running pod's in disc-eks
	free := w.cniInterface(w.subAB) // nobody's
	inB := w.cniInterface(w.subB)   // gone-eks may use subB
	inA := w.cniInterface(w.subA)   // sandbox-eks may use subA
	in, _ := w.ec2.Interface(used)
	w.pod(disc, "runs-on-disc", nil, corev1.PodRunning, 0, in.IPs[len(in.IPs)-1])

	start := w.now
	w.run(true)
	w.now = start.Add(7 * time.Hour)
	rep := w.run(true)
	if verified.Load() == 0 {
		t.Fatal("disc-eks was never asked with an EKS token")
	}
	if d := want(t, rep, eniID(used), engine.Keep, ec2interface.ClassPodIP); !strings.Contains(d.Why(), "disc-eks") {
		t.Fatalf("used interface: %+v", d)
	}
	want(t, rep, eniID(free), engine.Delete, ec2interface.ClassLeaked)
	for id, who := range map[string]string{inB: "gone-eks", inA: "sandbox-eks"} {
		if d := want(t, rep, eniID(id), engine.Mark, ec2interface.ClassLeaked); !d.Held || !strings.Contains(d.Why(), who) {
			t.Fatalf("%s not held for %s: %+v", id, who, d)
		}
	}
	if w.ec2.Has(free) || !w.ec2.Has(used) || !w.ec2.Has(inA) || !w.ec2.Has(inB) {
		t.Fatalf("left: free %v used %v inA %v inB %v (want false, true, true, true)", w.ec2.Has(free), w.ec2.Has(used), w.ec2.Has(inA), w.ec2.Has(inB))
	}
	rows, _ := layout.Data(rep.Plan.Sections, "fleet").([]engine.FleetRow)
	states := map[string]string{}
	for _, r := range rows {
		states[r.Name] = r.State
	}
	if states["prod-a"] != "read" || states["disc-eks"] != "read" || states["gone-eks"] != engine.StateFailed || states["sandbox-eks"] != inventory.MemberExcluded {
		t.Fatalf("fleet states %v\n%s", states, text(rep))
	}
	if n := strings.Count(text(rep), "cluster gone-eks is incomplete"); n != 1 {
		t.Errorf("gone-eks is held back %d times in the report, want once", n)
	}
	// One list and one describe per cluster, per run.
	if l, d := ekf.Calls(eksfake.OpListClusters), ekf.Calls(eksfake.OpDescribeCluster); l != 2 || d != 6 {
		t.Errorf("discovery made %d ListClusters and %d DescribeCluster calls over two runs, want 2 and 6", l, d)
	}
}

// Discovery that is not permitted holds every interface of the account and
// region, and says what to grant.
func TestForbiddenDiscoveryHolds(t *testing.T) {
	w := newEKSWorld(t)
	w.omitProdB = true
	w.jobsYAML, w.podsYAML = "-", "-"
	ekf := startEKS(t, ec2Region)
	ekf.Deny(true)
	w.fleetYAML = fmt.Sprintf("  discover: true\n  eks:\n    - account: \"%s\"\n      region: %s\n      endpoint: %s\n", account, ec2Region, ekf.URL())
	leak := w.cniInterface(w.subA)
	writeSeen(t, w.statePath(), w.now.Add(-7*time.Hour), func(string) string { return "" }, eniID(leak))
	rep := w.run(true)
	if d := want(t, rep, eniID(leak), engine.Mark, ec2interface.ClassLeaked); !d.Held || !strings.Contains(d.Why(), "discovery eks") {
		t.Fatalf("not held by the failed discovery: %+v", d)
	}
	if !w.ec2.Has(leak) {
		t.Fatal("deleted while discovery was forbidden")
	}
	if out := text(rep); !strings.Contains(out, "eks:ListClusters and eks:DescribeCluster") {
		t.Fatalf("the report does not say what to grant:\n%s", out)
	}
}

// GKE discovery end to end: the container API fake lists disc-gke, a real
// kube-apiserver that accepts only Google access tokens (a webhook checking
// them with the fake issuer, as GKE does), and gone-gke in another region,
// which cannot be reached. reclaim reads disc-gke with the token it mints
// from its service-account key: the PV there keeps its disk. gone-gke holds
// the disk in its region; an orphan in disc-gke's region goes.
func TestDiscoveredGKEClustersReadWithInProcessTokens(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	g := gkefake.New()
	g.Start()
	t.Cleanup(g.Close)
	const sa = "reclaim@e2e-project.iam.gserviceaccount.com"
	key := filepath.Join(w.dir, "reclaim-sa.json")
	if err := os.WriteFile(key, g.ServiceAccountKey(sa), 0o600); err != nil {
		t.Fatal(err)
	}
	verified := atomic.Int64{}
	disc, err := testenv.StartCluster(ctx, "disc-gke", testenv.Options{Authenticate: func(token string) (string, []string, bool) {
		email, err := g.Verify(token)
		if err != nil || email != sa {
			return "", nil, false
		}
		verified.Add(1)
		return email, []string{"system:masters"}, true // GKE: IAM plus an RBAC binding of the email
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(disc.Stop)
	g.Add(gkefake.Cluster{Project: project, Location: "asia-northeast1", Name: "disc-gke", Endpoint: disc.URL, CAData: disc.CAData},
		gkefake.Cluster{Project: project, Location: "us-central1", Name: "gone-gke", Endpoint: "127.0.0.1:1", CAData: disc.CAData})
	w.fleetYAML = fmt.Sprintf("  gke:\n    projects: [%s]\n    endpoint: %s\n    credentialsFile: %s\n  eks: []\n  timeout: 10s\n", project, g.Endpoint(), key)

	used := w.orphan(zoneA, "used-by-disc")
	w.pv(disc, used)
	free := w.orphan(zoneA, "free")
	far := w.gce.AddDisk(project, gcefake.Disk{Zone: "us-central1-a", Name: w.name("in-us-central1"), SizeGB: 20, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": ""}, Created: w.now.Add(-60 * 24 * time.Hour), LastDetach: w.now.Add(-30 * 24 * time.Hour)})
	w.seen(w.now.Add(-7*time.Hour), used, free, far)
	rep := w.run(true)
	if verified.Load() == 0 {
		t.Fatal("disc-gke was never asked with a Google token")
	}
	if d := decision(t, rep, used); d.Action != engine.Keep || !strings.Contains(d.Why(), "disc-gke") {
		t.Fatalf("disk with a PV in disc-gke: %+v", d)
	}
	if d := decision(t, rep, far); d.Action != engine.Mark || !d.Held || !strings.Contains(d.Why(), "gone-gke") {
		t.Fatalf("disk in gone-gke's region: %+v", d)
	}
	if d := decision(t, rep, free); d.Action != engine.Delete {
		t.Fatalf("free disk: %+v\n%s", d, text(rep))
	}
	if !w.gce.HasDisk(used) || !w.gce.HasDisk(far) || w.gce.HasDisk(free) {
		t.Fatalf("left: used %v, far %v, free %v (want true, true, false)", w.gce.HasDisk(used), w.gce.HasDisk(far), w.gce.HasDisk(free))
	}
	if n := g.Calls(gkefake.OpListClusters); n != 1 {
		t.Errorf("%d clusters.list calls, want 1 (one per project)", n)
	}
}

// Images: every EKS cluster of the registry's account can pull from it. A
// discovered cluster reclaim cannot read (unreachable), or may not read
// (readDiscovered off: not in the config), holds every trim of the
// registry, and the report names it; declared out of scope, the trim
// resumes and the report repeats the declaration.
func TestUnseenClusterOfTheRegistryAccountHoldsImages(t *testing.T) {
	for _, tc := range []struct{ name, readDiscovered, state string }{
		{"unreachable", "true", engine.StateFailed},
		{"not in the config", "false", inventory.MemberUnlisted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newImageWorld(t, 200)
			w.seen(w.now.Add(-2 * time.Hour))
			w.readOwnConsumers()
			ekf := startEKS(t, ecrRegion)
			// A CA of its own: a cluster with prod-a's CA would be prod-a.
			ekf.Add(eksfake.Cluster{Name: "ml-batch", Endpoint: "https://127.0.0.1:1", CAData: newCA(t), VPC: "vpc-0ml"})
			fleet := fmt.Sprintf("  discover: true\n  readDiscovered: %s\n  timeout: 10s\n  eks:\n    - account: \"%s\"\n      region: %s\n      endpoint: %s\n",
				tc.readDiscovered, account, ecrRegion, ekf.URL())
			w.fleetYAML = fleet
			rep := w.run(true)
			s := w.repoSummary(rep)
			if w.ecr.MutatingCalls() != 0 || s.Delete != 0 || s.Mark != 100 {
				t.Fatalf("mutating %d, summary %+v\n%s", w.ecr.MutatingCalls(), s, text(rep))
			}
			if len(w.ecr.Images(account, w.repo)) != 200 {
				t.Fatal("images were deleted while ml-batch was not read")
			}
			rows, _ := layout.Data(rep.Plan.Sections, "fleet").([]engine.FleetRow)
			state := ""
			for _, r := range rows {
				if r.Name == "ml-batch" {
					state = r.State
				}
			}
			if state != tc.state || !strings.Contains(text(rep), "ml-batch") {
				t.Fatalf("ml-batch state %q, want %q\n%s", state, tc.state, text(rep))
			}

			// Declared by identity and pinned by its endpoint: without
			// the endpoint a declaration cannot tell a live discovered
			// cluster from one rebuilt in its place.
			w.fleetYAML = fleet + fmt.Sprintf("  outOfScope:\n    - name: ml-batch\n      reason: runs only public images\n      platform: eks\n      account: \"%s\"\n      location: %s\n      endpoint: https://127.0.0.1:1\n", account, ecrRegion)
			rep = w.run(true)
			if s := w.repoSummary(rep); s.Delete != 100 || len(w.ecr.Images(account, w.repo)) != 100 {
				t.Fatalf("out of scope: summary %+v, %d images left\n%s", s, len(w.ecr.Images(account, w.repo)), text(rep))
			}
			if !strings.Contains(text(rep), "runs only public images") {
				t.Fatalf("the report does not repeat the declaration:\n%s", text(rep))
			}
		})
	}
}
