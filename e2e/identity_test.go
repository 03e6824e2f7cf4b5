package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/eks/eksfake"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/netiface"
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
	ekf := eksfake.New(eksfake.Options{Account: account, Region: ec2Region})
	ekf.Start()
	t.Cleanup(ekf.Close)
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
		if d := want(t, rep, eniID(id), engine.Mark, netiface.ClassLeaked); !d.Held {
			t.Fatalf("%s not held: %+v", id, d)
		}
	}
	if !w.ec2.Has(used) || !w.ec2.Has(orphan) {
		t.Fatalf("deleted under a name conflict: used %v, orphan %v left", w.ec2.Has(used), w.ec2.Has(orphan))
	}
	if rep.ExitCode != report.ExitIncomplete {
		t.Errorf("exit %d, want %d", rep.ExitCode, report.ExitIncomplete)
	}
	rows, _ := rep.Plan.Section("fleet").([]engine.FleetRow)
	states := map[string]engine.FleetRow{}
	for _, r := range rows {
		states[r.Name] = r
	}
	other := "prod-a@" + account + "/" + ec2Region
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
	want(t, rep, eniID(used), engine.Keep, netiface.ClassPodIP)
	want(t, rep, eniID(orphan), engine.Delete, netiface.ClassLeaked)
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
	if d := want(t, rep, eniID(ofB), engine.Mark, netiface.ClassLeaked); !d.Held || !strings.Contains(d.Why(), "cluster prod-b") {
		t.Fatalf("branch interface of prod-b not held: %+v", d)
	}
	want(t, rep, eniID(nobodys), engine.Delete, netiface.ClassLeaked)
	if !w.ec2.Has(ofB) || w.ec2.Has(nobodys) {
		t.Fatalf("left: prod-b's %v (want true), nobody's %v (want false)", w.ec2.Has(ofB), w.ec2.Has(nobodys))
	}
}
