package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"reclaim.dev/reclaim/engine"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/kinds/gcedisk"
	"reclaim.dev/reclaim/kinds/netiface"
	"reclaim.dev/reclaim/providers/ec2/ec2fake"
	"reclaim.dev/reclaim/providers/gce/gcefake"
	"reclaim.dev/reclaim/report"
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
		d := want(t, rep, eniID(e), engine.Mark, netiface.ClassLeaked)
		if !d.Held || !strings.Contains(d.Reason, "cluster prod-b") {
			t.Fatalf("%s not held for prod-b: %+v", e, d)
		}
	}
	want(t, rep, eniID(plain), engine.Delete, netiface.ClassLeaked)
	if !w.ec2.Has(tagged) || !w.ec2.Has(byB) || w.ec2.Has(plain) {
		t.Fatalf("left: tagged %v, made by prod-b %v, plain %v (want true, true, false)", w.ec2.Has(tagged), w.ec2.Has(byB), w.ec2.Has(plain))
	}
	if rep.ExitCode != report.ExitIncomplete {
		t.Errorf("exit %d, want %d: a deletion was held back", rep.ExitCode, report.ExitIncomplete)
	}
	out := text(rep)
	for _, s := range []string{"cluster prod-b was not read", "fleet discovery is off"} {
		if !strings.Contains(out, s) {
			t.Fatalf("report lacks %q:\n%s", s, out)
		}
	}

	// Declared out of scope (here wrongly: the pod is real): the clocks the
	// hold never started run, the interfaces go past their grace, and every
	// report repeats the declaration.
	w.fleetYAML = "  discover: false\n  outOfScope:\n    - name: prod-b\n      reason: decommissioned, OPS-1234\n"
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
	if d.Action != engine.Mark || !d.Held || !strings.Contains(d.Reason, "cluster prod-c was not read") {
		t.Fatalf("labelled disk: %+v", d)
	}
	if !w.gce.HasDisk(labelled) || w.gce.HasDisk(plain) {
		t.Fatalf("left: labelled %v, plain %v (want true, false)", w.gce.HasDisk(labelled), w.gce.HasDisk(plain))
	}
	if out := text(rep); !strings.Contains(out, "prod-c") || !strings.Contains(out, "NOT READ") {
		t.Fatalf("the report does not name prod-c in its fleet section:\n%s", out)
	}
}
