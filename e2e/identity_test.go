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

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/providers/gke/gkefake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
)

// The name collision on EKS: the config's prod-a reaches one API server,
// and discovery lists another cluster named prod-a (here the real
// apiserver prod-b, as a same-name cluster of another region or an
// in-cluster entry would be). They are not one cluster: the discovered one
// is not read, so the detached CNI interface whose secondary address is a
// running pod's in it survives --apply past grace with caps lifted, and so
// does everything the configured prod-a could use; the report names the
// conflict and how to resolve it. Told apart (prod-a says where it lives,
// elsewhere), the same-name cluster is read as a cluster of its own, its
// pod keeps the interface, and the orphan goes.
func TestSameNameClusterElsewhereHolds(t *testing.T) {
	w := newEKSWorld(t)
	w.omitProdB = true
	w.jobsYAML, w.podsYAML = "-", "-"
	ekf := startEKS(t, ec2Region)
	ekf.Add(eksfake.Cluster{Name: "prod-a", Endpoint: prodB.URL, CAData: prodB.CAData, VPC: "vpc-0other", Subnets: []string{w.subAB}})
	w.fleetYAML = fmt.Sprintf("  discover: true\n  readDiscovered: false\n  eks:\n    - account: \"%s\"\n      region: %s\n      endpoint: %s\n", account, ec2Region, ekf.URL())

	used := w.cniInterface(w.subAB) // its secondary address is a running pod's in the other prod-a
	in, _ := w.ec2.Interface(used)
	w.pod(prodB, "runs-on-other-prod-a", nil, corev1.PodRunning, 0, in.IPs[len(in.IPs)-1])
	orphan := w.cniInterface(w.subA) // only the configured prod-a may use subA

	start := w.now
	w.run(true)
	w.now = start.Add(7 * time.Hour) // past the 6h grace
	rep := w.run(true)
	for _, id := range []string{used, orphan} {
		if d := want(t, rep, eniID(id), engine.Mark, ec2interface.ClassLeaked); !d.Held {
			t.Fatalf("%s not held: %+v", id, d)
		}
	}
	if !w.ec2.Has(used) || !w.ec2.Has(orphan) {
		t.Fatalf("deleted under a name conflict: used %v, orphan %v left", w.ec2.Has(used), w.ec2.Has(orphan))
	}
	if rep.ExitCode != report.ExitIncomplete {
		t.Errorf("exit %d, want %d", rep.ExitCode, report.ExitIncomplete)
	}
	rows, _ := layout.Data(rep.Plan.Sections, "fleet").([]engine.FleetRow)
	states := map[string]engine.FleetRow{}
	for _, r := range rows {
		states[r.Name] = r
	}
	other := "prod-a@" + account + "." + ec2Region
	if r := states[other]; r.State != inventory.MemberConflict || states["prod-a"].Discovered {
		t.Fatalf("fleet %+v\n%s", rows, text(rep))
	}
	out := text(rep)
	for _, s := range []string{"is also clusters[0]", "nothing either could use is deleted", "give clusters[0] the kubeconfig context"} {
		if !strings.Contains(out, s) {
			t.Fatalf("report lacks %q:\n%s", s, out)
		}
	}

	// Told apart: prod-a lives in another region, so the discovered prod-a
	// is another cluster, read (with its kubeconfig here: the test's
	// apiserver takes no EKS token) as one of its own.
	w.omitProdB = false
	w.prodBContext = "admin"
	w.fleetYAML = fmt.Sprintf("  discover: true\n  eks:\n    - account: \"%s\"\n      region: %s\n      endpoint: %s\n", account, ec2Region, ekf.URL())
	w.editYAML = func(y string) string {
		y = strings.Replace(y, "  - name: prod-a\n", "  - name: prod-a\n    platform: eks\n    account: \""+account+"\"\n    location: eu-west-1\n", 1)
		return strings.Replace(y, "  - name: prod-b\n", "  - name: prod-b\n    cloudName: prod-a\n", 1)
	}
	w.now = w.now.Add(time.Hour)
	w.run(true)
	w.now = w.now.Add(7 * time.Hour)
	rep = w.run(true)
	want(t, rep, eniID(used), engine.Keep, ec2interface.ClassPodIP)
	want(t, rep, eniID(orphan), engine.Delete, ec2interface.ClassLeaked)
	if !w.ec2.Has(used) || w.ec2.Has(orphan) {
		t.Fatalf("told apart: used %v (want true), orphan %v (want false)\n%s", w.ec2.Has(used), w.ec2.Has(orphan), text(rep))
	}
}

// An interface's own cluster tag is evidence: a branch interface the VPC
// resource controller made for prod-b (kubernetes.io/cluster/prod-b:
// owned), with a running pod's address of prod-b, survives --apply while
// the config misses prod-b; an untagged branch interface beside it goes.
func TestBranchInterfaceClusterTagHolds(t *testing.T) {
	w := newEKSWorld(t)
	w.omitProdB = true
	w.jobsYAML, w.podsYAML = "-", "-"
	branch := func(tags map[string]string) string {
		tags["eks:eni:owner"] = "eks-vpc-resource-controller"
		return w.ec2.AddInterface(ec2fake.Interface{Subnet: w.subA, Type: "branch", Description: "aws-k8s-branch-eni", Tags: tags})
	}
	ofB := branch(map[string]string{"kubernetes.io/cluster/prod-b": "owned"})
	in, _ := w.ec2.Interface(ofB)
	w.pod(prodB, "sgp-pod", nil, corev1.PodRunning, 0, in.IPs[0])
	nobodys := branch(map[string]string{})

	start := w.now
	w.run(true)
	w.now = start.Add(7 * time.Hour)
	rep := w.run(true)
	if d := want(t, rep, eniID(ofB), engine.Mark, ec2interface.ClassLeaked); !d.Held || !strings.Contains(d.Why(), "cluster prod-b") {
		t.Fatalf("branch interface of prod-b not held: %+v", d)
	}
	want(t, rep, eniID(nobodys), engine.Delete, ec2interface.ClassLeaked)
	if !w.ec2.Has(ofB) || w.ec2.Has(nobodys) {
		t.Fatalf("left: prod-b's %v (want true), nobody's %v (want false)", w.ec2.Has(ofB), w.ec2.Has(nobodys))
	}
}

// A scope discovery does not look in: an explicit fleet.eks lists another
// region than the interfaces'. EKS no longer tags its subnets, so a
// cluster there is unseen: every interface of the region holds, and the
// report says to add the region. Listed, the orphan goes.
func TestUnlistedScopeHoldsInterfaces(t *testing.T) {
	w := newEKSWorld(t)
	w.declarePlaces = true // the CNI tags name prod-a, which discovery does not list
	w.jobsYAML, w.podsYAML = "-", "-"
	other := startEKS(t, "us-west-2")
	here := startEKS(t, ec2Region)
	w.fleetYAML = fmt.Sprintf("  discover: true\n  eks:\n    - account: \"%s\"\n      region: us-west-2\n      endpoint: %s\n", account, other.URL())
	leak := w.cniInterface(w.subA)
	start := w.now
	w.run(true)
	w.now = start.Add(7 * time.Hour)
	rep := w.run(true)
	if d := want(t, rep, eniID(leak), engine.Mark, ec2interface.ClassLeaked); !d.Held || !strings.Contains(d.Why(), "discovery does not look in eks "+account+"/"+ec2Region) {
		t.Fatalf("not held for the unlisted scope: %+v", d)
	}
	if !w.ec2.Has(leak) || !strings.Contains(text(rep), "add it to fleet.eks") {
		t.Fatalf("deleted, or the report does not say how to resolve it:\n%s", text(rep))
	}
	// Listed: the clock the hold never started runs, and the orphan goes
	// past its grace.
	w.fleetYAML += fmt.Sprintf("    - account: \"%s\"\n      region: %s\n      endpoint: %s\n", account, ec2Region, here.URL())
	w.now = w.now.Add(time.Hour)
	want(t, w.run(true), eniID(leak), engine.Mark, ec2interface.ClassLeaked)
	w.now = w.now.Add(7 * time.Hour)
	want(t, w.run(true), eniID(leak), engine.Delete, ec2interface.ClassLeaked)
	if w.ec2.Has(leak) {
		t.Fatal("the orphan stayed once its scope was listed")
	}
}

// A decommissioned cluster declared out of scope with its API server, and
// a live one rebuilt under the same name and region: the declaration does
// not cover the new cluster (another API server), so the interface whose
// address its running pod holds survives --apply, and the report says the
// cluster was rebuilt. Nor does one pinned by the old cluster's creation
// time (EKS's createdAt), nor one of its place without a pin: nothing tells
// it from a cluster rebuilt there.
func TestRebuiltClusterMatchingAnOutOfScopeNameHolds(t *testing.T) {
	place := fmt.Sprintf("      platform: eks\n      account: \"%s\"\n      location: %s\n", account, ec2Region)
	for decl, why := range map[string]string{
		place + fmt.Sprintf("      endpoint: https://OLD1234.gr7.%s.eks.amazonaws.com\n", ec2Region): "it was rebuilt or is another cluster",
		place + "      created: 2026-01-05T09:00:00Z\n":                                              "was created at 2026-11-02T08:30:00Z: it was rebuilt in its place",
		place: "cannot tell the declared cluster from one rebuilt in its place",
	} {
		w := newEKSWorld(t)
		w.omitProdB = true
		w.jobsYAML, w.podsYAML = "-", "-"
		ekf := startEKS(t, ec2Region)
		ekf.Add(eksfake.Cluster{Name: "legacy", Endpoint: prodB.URL, CAData: prodB.CAData, VPC: "vpc-0other", Subnets: []string{w.subAB},
			Created: time.Date(2026, 11, 2, 8, 30, 0, 0, time.UTC)})
		w.fleetYAML = fmt.Sprintf("  discover: true\n  readDiscovered: false\n  eks:\n    - account: \"%s\"\n      region: %s\n      endpoint: %s\n  outOfScope:\n    - name: legacy\n      reason: decommissioned, OPS-1234\n%s",
			account, ec2Region, ekf.URL(), decl)
		used := w.cniInterface(w.subAB)
		in, _ := w.ec2.Interface(used)
		w.pod(prodB, "runs-on-rebuilt", nil, corev1.PodRunning, 0, in.IPs[len(in.IPs)-1])
		start := w.now
		w.run(true)
		w.now = start.Add(7 * time.Hour)
		rep := w.run(true)
		if d := want(t, rep, eniID(used), engine.Mark, ec2interface.ClassLeaked); !d.Held || !strings.Contains(d.Why(), "legacy") {
			t.Fatalf("not held for the rebuilt cluster: %+v", d)
		}
		if !w.ec2.Has(used) {
			t.Fatal("deleted the interface of a rebuilt cluster's running pod")
		}
		if out := text(rep); !strings.Contains(out, why) {
			t.Fatalf("report lacks %q:\n%s", why, out)
		}
	}
}

// A central registry whose repository policy lets a workload account pull:
// the trim holds while reclaim reads no cluster or consumer of that
// account, and the report names it; declared in ecr.outOfScopePullers the
// trim resumes and the report repeats the reason.
func TestCrossAccountPullerHoldsImages(t *testing.T) {
	const workload = "444455556666"
	w := newImageWorld(t, 200)
	w.seen(w.now.Add(-2 * time.Hour))
	w.ecr.SetRepositoryPolicy(account, w.repo, `{"Version":"2012-10-17","Statement":[{"Sid":"workloads","Effect":"Allow",
		"Principal":{"AWS":["arn:aws:iam::`+workload+`:root"]},"Action":["ecr:BatchGetImage","ecr:GetDownloadUrlForLayer","ecr:BatchCheckLayerAvailability"]}]}`)
	rep := w.run(true)
	if s := w.repoSummary(rep); w.ecr.MutatingCalls() != 0 || s.Delete != 0 || !strings.Contains(s.Blocked, "lets account "+workload+" pull") {
		t.Fatalf("mutating %d, summary %+v\n%s", w.ecr.MutatingCalls(), s, text(rep))
	}
	if len(w.ecr.Images(account, w.repo)) != 200 {
		t.Fatal("images were deleted that an unread account may pull")
	}
	w.extraECRYAML = "  outOfScopePullers:\n    - principal: \"" + workload + "\"\n      reason: the vendor pulls only tags kept by keepTags\n"
	rep = w.run(true)
	if s := w.repoSummary(rep); s.Delete != 100 || len(w.ecr.Images(account, w.repo)) != 100 {
		t.Fatalf("declared: summary %+v, %d images left\n%s", s, len(w.ecr.Images(account, w.repo)), text(rep))
	}
	if !strings.Contains(text(rep), "the vendor pulls only tags kept by keepTags") {
		t.Fatalf("the report does not repeat the declaration:\n%s", text(rep))
	}
}

// newCA is a CA bundle (PEM) of a cluster of its own: each EKS and GKE
// cluster has its own CA, and reclaim joins clusters by it.
func newCA(t *testing.T) []byte {
	t.Helper()
	_, bundle, err := testenv.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	return bundle
}

// The name collision on GKE: discovery lists a prod-a in the project whose
// API server is not the configured prod-a's. The disk a PV of that other
// cluster binds survives --apply past grace, the configured prod-a's
// orphans hold too, and the report names the conflict.
func TestSameNameGKEClusterElsewhereHolds(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	other, err := testenv.StartCluster(ctx, "other-prod-a", testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Stop)
	g := gkefake.New()
	g.Start()
	t.Cleanup(g.Close)
	g.Add(gkefake.Cluster{Project: project, Location: "asia-northeast1", Name: "prod-a", Endpoint: other.URL, CAData: other.CAData})
	w.fleetYAML = fmt.Sprintf("  gke:\n    projects: [%s]\n    endpoint: %s\n    withoutAuthentication: true\n  eks: []\n  readDiscovered: false\n", project, g.Endpoint())

	used := w.orphan(zoneA, "bound-in-other-prod-a")
	w.pv(other, used)
	free := w.orphan(zoneB, "free")
	w.seen(w.now.Add(-7*time.Hour), used, free)
	rep := w.run(true)
	for _, key := range []string{used, free} {
		if d := decision(t, rep, key); d.Action == engine.Delete || !d.Held {
			t.Fatalf("%s not held under the name conflict: %+v", key, d)
		}
		if !w.gce.HasDisk(key) {
			t.Fatalf("%s deleted under the name conflict", key)
		}
	}
	if out := text(rep); !strings.Contains(out, `its name "prod-a" is also clusters[0]`) || !strings.Contains(out, "CONFLICT") {
		t.Fatalf("the report does not name the conflict:\n%s", out)
	}
}

// GKE names are unique per location, not per project: the project lists
// two prod-a clusters, one in asia-northeast1-a and one in us-central1,
// while the config's prod-a is an EKS cluster, so the name is taken. They
// are two members with names of their own, each read with its own token
// and API server, each keeping the disk its PV binds; the orphan beside
// them, labelled for prod-a, goes under --apply past grace, and the FLEET
// table shows two distinct names.
func TestSameNameGKEClustersOfOneProjectAreTwoClusters(t *testing.T) {
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
	start := func(name string, asked *atomic.Int64) *testenv.Cluster {
		c, err := testenv.StartCluster(ctx, name, testenv.Options{Authenticate: func(token string) (string, []string, bool) {
			email, err := g.Verify(token)
			if err != nil || email != sa {
				return "", nil, false
			}
			asked.Add(1)
			return email, []string{"system:masters"}, true
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Stop)
		return c
	}
	var askedAsia, askedCentral atomic.Int64
	asia, central := start("prod-a-asia", &askedAsia), start("prod-a-central", &askedCentral)
	g.Add(gkefake.Cluster{Project: project, Location: zoneA, Name: "prod-a", Endpoint: asia.URL, CAData: asia.CAData},
		gkefake.Cluster{Project: project, Location: "us-central1", Name: "prod-a", Endpoint: central.URL, CAData: central.CAData})
	w.fleetYAML = fmt.Sprintf("  gke:\n    projects: [%s]\n    endpoint: %s\n    credentialsFile: %s\n  eks: []\n  timeout: 10s\n", project, g.Endpoint(), key)

	usedAsia := w.orphan(zoneA, "bound-in-asia")
	w.pv(asia, usedAsia)
	usedCentral := w.gce.AddDisk(project, gcefake.Disk{Zone: "us-central1-a", Name: w.name("bound-in-central"), SizeGB: 20, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": ""}, Created: w.now.Add(-60 * 24 * time.Hour), LastDetach: w.now.Add(-30 * 24 * time.Hour)})
	w.pv(central, usedCentral)
	orphan := w.gce.AddDisk(project, gcefake.Disk{Zone: zoneB, Name: w.name("orphan"), SizeGB: 20, Type: "pd-balanced",
		Labels: map[string]string{"goog-gke-volume": "", "goog-k8s-cluster-name": "prod-a"}, Created: w.now.Add(-60 * 24 * time.Hour), LastDetach: w.now.Add(-30 * 24 * time.Hour)})
	w.seen(w.now.Add(-7*time.Hour), usedAsia, usedCentral, orphan)

	// The config's prod-a lives on EKS: the GKE namesakes are other clusters.
	p := w.configPath()
	y, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	y = []byte(strings.Replace(string(y), "  - name: prod-a\n", "  - name: prod-a\n    platform: eks\n    account: \""+account+"\"\n    location: us-east-1\n", 1))
	if err := os.WriteFile(p, y, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := runConfig(t, p, w.now, true)

	if askedAsia.Load() == 0 || askedCentral.Load() == 0 {
		t.Fatalf("not both API servers were read with a token: asia %d, us-central1 %d requests\n%s", askedAsia.Load(), askedCentral.Load(), text(rep))
	}
	rows, _ := layout.Data(rep.Plan.Sections, "fleet").([]engine.FleetRow)
	byName := map[string]engine.FleetRow{}
	for _, r := range rows {
		if _, dup := byName[r.Name]; dup {
			t.Fatalf("the FLEET table has two rows named %s:\n%s", r.Name, text(rep))
		}
		byName[r.Name] = r
	}
	asiaName, centralName := "prod-a@"+project+"."+zoneA, "prod-a@"+project+".us-central1"
	for name, loc := range map[string]string{asiaName: zoneA, centralName: "us-central1"} {
		if r := byName[name]; r.State != inventory.MemberRead || r.Location != loc {
			t.Fatalf("fleet row %s: %+v\n%s", name, r, text(rep))
		}
		if !strings.Contains(text(rep), name) {
			t.Fatalf("the report does not name %s:\n%s", name, text(rep))
		}
	}
	for key, cluster := range map[string]string{usedAsia: asiaName, usedCentral: centralName} {
		if d := decision(t, rep, key); d.Action != engine.Keep || !strings.Contains(d.Why(), cluster) {
			t.Fatalf("%s, bound in %s: %+v\n%s", key, cluster, d, text(rep))
		}
	}
	if d := decision(t, rep, orphan); d.Action != engine.Delete {
		t.Fatalf("orphan: %+v\n%s", d, text(rep))
	}
	if !w.gce.HasDisk(usedAsia) || !w.gce.HasDisk(usedCentral) || w.gce.HasDisk(orphan) {
		t.Fatalf("left: asia's %v, us-central1's %v, orphan %v (want true, true, false)", w.gce.HasDisk(usedAsia), w.gce.HasDisk(usedCentral), w.gce.HasDisk(orphan))
	}
}
