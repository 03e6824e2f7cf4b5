package ec2interface_test

import (
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

const (
	acct   = "111122223333"
	region = "us-east-1"
	// a /20 has 4096 addresses, AWS reserves five
	usable20 = 1<<(32-20) - 5
)

func subnet(id, vpc, az, cidr string, available int) inventory.Subnet {
	return inventory.Subnet{Account: acct, Region: region, ID: id, VPC: vpc, AZ: az, CIDR: cidr, Usable: usable20, Available: available}
}

func iface(id, subnet, status string, ips ...string) inventory.NetInterface {
	return inventory.NetInterface{ID: id, Subnet: subnet, Status: status, Type: "interface", IPs: ips}
}

func attached(n inventory.NetInterface, instance string) inventory.NetInterface {
	n.Instance = instance
	return n
}

func runningPod(ns, name string, created time.Time, ips ...string) inventory.Pod {
	return inventory.Pod{Namespace: ns, Name: name, UID: "uid-" + name, Phase: "Running", IPs: ips, Created: created}
}

func finishedPod(ns, name string, created time.Time, owner *inventory.Owner, ips ...string) inventory.Pod {
	return inventory.Pod{Namespace: ns, Name: name, UID: "uid-" + name, Phase: "Succeeded", IPs: ips, Created: created,
		Finished: created.Add(time.Minute), Owner: owner}
}

// attributionSnap: cluster prod may use subnet-a and subnet-b (vpc-1), dev
// only subnet-d (vpc-2, whose CIDR overlaps vpc-1's); nobody subnet-c.
func attributionSnap() *inventory.View {
	nightly := &inventory.Owner{Kind: "CronJob", Name: "nightly", UID: "cj-1"}
	jobNightly := &inventory.Owner{Kind: "Job", Name: "nightly-1", UID: "job-1"}
	jobRun := &inventory.Owner{Kind: "Job", Name: "ingest-7", UID: "job-7"}
	jobETL := &inventory.Owner{Kind: "Job", Name: "etl", UID: "job-etl"}
	old := t0.Add(-48 * time.Hour)
	prod := inventory.ClusterRefs{Name: "prod", Complete: true, WorkloadsListed: true, Subnets: []string{"subnet-a", "subnet-b"},
		Jobs: []inventory.Job{
			{Namespace: "batch", Name: "nightly-1", UID: "job-1", Status: "Complete", Finished: old, CronJob: nightly},
			{Namespace: "batch", Name: "ingest-7", UID: "job-7", Active: 1},
		},
		Pods: []inventory.Pod{
			// Fargate: each pod its own interface, and a node whose InternalIP is the pod's
			finishedPod("batch", "nightly-1-abcde", old, jobNightly, "10.0.1.10"),
			func() inventory.Pod {
				p := runningPod("batch", "ingest-7-xyz", t0.Add(-time.Hour), "10.0.1.11")
				p.Owner = jobRun
				return p
			}(),
			// an address reused: the finished pod listed first, its successor running
			finishedPod("web", "old-web", old, nil, "10.0.1.22"),
			runningPod("web", "new-web", old, "10.0.1.22"),
			// and the other way round
			runningPod("web", "cur-web", old, "10.0.1.23"),
			finishedPod("web", "prev-web", old, nil, "10.0.1.23"),
			// overlapping CIDRs with dev
			runningPod("web", "web-50", old, "10.0.0.50"),
			finishedPod("web", "job-60", old, nil, "10.0.0.60"),
			// in a subnet prod cannot use: never attributed there
			runningPod("web", "elsewhere", old, "10.2.0.5"),
		},
		Nodes: []inventory.Node{
			{Name: "fargate-ip-10-0-1-10", IPs: []string{"10.0.1.10"}},
			{Name: "ip-10-0-1-20", IPs: []string{"10.0.1.20"}, Instance: "i-node1"},
		},
	}
	dev := inventory.ClusterRefs{Name: "dev", Complete: true, WorkloadsListed: true, Subnets: []string{"subnet-d"},
		Jobs: []inventory.Job{{Namespace: "etl", Name: "etl", UID: "job-etl", Status: "Failed", Finished: old}},
		Pods: []inventory.Pod{
			finishedPod("etl", "etl-pod", old, jobETL, "10.0.0.50"),
			runningPod("etl", "dev-60", t0.Add(-2*time.Hour), "10.0.0.60"),
		},
		Nodes: []inventory.Node{{Name: "dev-node", IPs: []string{"10.0.1.20"}, Instance: "i-dev"}},
	}
	// A cluster being retired shares subnet-a; its finished pod shows prod's
	// running pod's address.
	retired := inventory.ClusterRefs{Name: "retired", Complete: true, WorkloadsListed: true, Subnets: []string{"subnet-a"},
		Pods: []inventory.Pod{finishedPod("batch", "stale", old, nil, "10.0.1.11")}}
	nodeENI := attached(iface("eni-node1", "subnet-a", "in-use", "10.0.1.20", "10.0.1.21", "10.0.1.22", "10.0.1.23"), "i-node1")
	nodeENI.Prefixes = 1
	return &inventory.View{TakenAt: t0, Clusters: []inventory.ClusterRefs{prod, dev, retired}, Clouds: map[string]any{ec2interface.Read: []inventory.NetworkListing{{
		Account: acct, Region: region, Complete: true,
		Subnets: []inventory.Subnet{
			// 27 addresses on interfaces (one a /28 prefix: 16), and 7 held by something nobody listed
			subnet("subnet-a", "vpc-1", "us-east-1a", "10.0.0.0/20", usable20-27-7),
			subnet("subnet-b", "vpc-1", "us-east-1b", "10.0.16.0/20", usable20),
			subnet("subnet-c", "vpc-3", "us-east-1a", "10.2.0.0/20", usable20-3),
			subnet("subnet-d", "vpc-2", "us-east-1a", "10.0.0.0/20", usable20-2),
		},
		Interfaces: []inventory.NetInterface{
			attached(iface("eni-fargate1", "subnet-a", "in-use", "10.0.1.10"), ""),
			iface("eni-fargate2", "subnet-a", "in-use", "10.0.1.11"),
			nodeENI,
			attached(iface("eni-warm", "subnet-a", "in-use", "10.0.1.30", "10.0.1.31"), "i-node1"),
			iface("eni-stray", "subnet-a", "available", "10.0.1.40"),
			iface("eni-overlap", "subnet-a", "in-use", "10.0.0.50", "10.0.0.60"),
			iface("eni-c", "subnet-c", "in-use", "10.2.0.5", "10.2.0.6"),
			iface("eni-dev", "subnet-d", "in-use", "10.0.0.50", "10.0.0.60"),
		},
	}}}}
}

func TestHolder(t *testing.T) {
	s := attributionSnap()
	a := ec2interface.Attribute(s, t0)
	ifaces := map[string]*inventory.NetInterface{}
	for i := range ec2interface.NetworksOf(s)[0].Interfaces {
		n := &ec2interface.NetworksOf(s)[0].Interfaces[i]
		ifaces[n.ID] = n
	}
	cases := []struct {
		name, eni, ip string
		want          ec2interface.IPHolder
	}{
		{"Fargate finished pod of a CronJob's Job (its node's address is the pod's)", "eni-fargate1", "10.0.1.10",
			ec2interface.IPHolder{Holder: ec2interface.HeldByFinishedPod, Cluster: "prod", Namespace: "batch", Pod: "nightly-1-abcde", PodUID: "uid-nightly-1-abcde",
				Job: "nightly-1", JobUID: "job-1", CronJob: "nightly", Created: t0.Add(-48 * time.Hour)}},
		{"Fargate running pod of a running Job (another cluster's finished pod shows the address)", "eni-fargate2", "10.0.1.11",
			ec2interface.IPHolder{Holder: ec2interface.HeldByRunningPod, Cluster: "prod", Namespace: "batch", Pod: "ingest-7-xyz", PodUID: "uid-ingest-7-xyz",
				Job: "ingest-7", JobUID: "job-7", Created: t0.Add(-time.Hour)}},
		{"node InternalIP", "eni-node1", "10.0.1.20", ec2interface.IPHolder{Holder: ec2interface.HeldByNode, Cluster: "prod", Node: "ip-10-0-1-20"}},
		{"warm-pool secondary address on the node's interface", "eni-node1", "10.0.1.21", ec2interface.IPHolder{Holder: ec2interface.HeldByNode, Node: "ip-10-0-1-20"}},
		{"reused address: the running pod holds it", "eni-node1", "10.0.1.22",
			ec2interface.IPHolder{Holder: ec2interface.HeldByRunningPod, Cluster: "prod", Namespace: "web", Pod: "new-web", PodUID: "uid-new-web", Created: t0.Add(-48 * time.Hour)}},
		{"reused address, running pod listed first", "eni-node1", "10.0.1.23",
			ec2interface.IPHolder{Holder: ec2interface.HeldByRunningPod, Cluster: "prod", Namespace: "web", Pod: "cur-web", PodUID: "uid-cur-web", Created: t0.Add(-48 * time.Hour)}},
		{"warm-pool interface attached to the node's instance", "eni-warm", "10.0.1.30", ec2interface.IPHolder{Holder: ec2interface.HeldByNode, Node: "ip-10-0-1-20"}},
		{"an address nobody has", "eni-stray", "10.0.1.40", ec2interface.IPHolder{Holder: ec2interface.HeldByUnknown}},
		{"overlap: prod's running pod in prod's subnet", "eni-overlap", "10.0.0.50",
			ec2interface.IPHolder{Holder: ec2interface.HeldByRunningPod, Cluster: "prod", Namespace: "web", Pod: "web-50", PodUID: "uid-web-50", Created: t0.Add(-48 * time.Hour)}},
		{"overlap: prod's finished pod, not dev's running one", "eni-overlap", "10.0.0.60",
			ec2interface.IPHolder{Holder: ec2interface.HeldByFinishedPod, Cluster: "prod", Namespace: "web", Pod: "job-60", PodUID: "uid-job-60", Created: t0.Add(-48 * time.Hour)}},
		{"overlap: dev's finished pod in dev's subnet, not prod's running one", "eni-dev", "10.0.0.50",
			ec2interface.IPHolder{Holder: ec2interface.HeldByFinishedPod, Cluster: "dev", Namespace: "etl", Pod: "etl-pod", PodUID: "uid-etl-pod", Job: "etl", JobUID: "job-etl", Created: t0.Add(-48 * time.Hour)}},
		{"overlap: dev's running pod", "eni-dev", "10.0.0.60",
			ec2interface.IPHolder{Holder: ec2interface.HeldByRunningPod, Cluster: "dev", Namespace: "etl", Pod: "dev-60", PodUID: "uid-dev-60", Created: t0.Add(-2 * time.Hour)}},
		{"subnet no cluster could use: a pod elsewhere with the address does not count", "eni-c", "10.2.0.5", ec2interface.IPHolder{Holder: ec2interface.HeldByUnknown}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := ifaces[tc.eni]
			if got := a.Holder(n.Subnet, n, tc.ip); got != tc.want {
				t.Fatalf("Holder(%s) =\n  %+v\nwant\n  %+v", tc.ip, got, tc.want)
			}
		})
	}
}

func TestSubnetUse(t *testing.T) {
	a := ec2interface.Attribute(attributionSnap(), t0)
	by := map[string]ec2interface.SubnetUse{}
	for _, u := range a.Subnets {
		by[u.Subnet.ID] = u
	}
	type counts struct{ running, finished, nodes, unknown, ifaces, recent, used int }
	cases := []struct {
		subnet   string
		clusters []string
		complete bool
		want     counts
	}{
		// running: 10.0.1.11, .22, .23, 10.0.0.50; finished: 10.0.1.10, 10.0.0.60;
		// nodes: .20, .21, .30, .31 and a /28 prefix (16); unknown: .40 and 7 unlisted
		{"subnet-a", []string{"prod", "retired"}, true, counts{running: 4, finished: 2, nodes: 20, unknown: 8, ifaces: 6, recent: 1, used: 34}},
		{"subnet-b", []string{"prod"}, true, counts{}},
		{"subnet-c", nil, true, counts{unknown: 3, ifaces: 1, used: 3}},
		{"subnet-d", []string{"dev"}, true, counts{running: 1, finished: 1, ifaces: 1, recent: 1, used: 2}},
	}
	for _, tc := range cases {
		u, ok := by[tc.subnet]
		if !ok {
			t.Fatalf("no use of %s", tc.subnet)
		}
		got := counts{u.Running, u.Finished, u.Nodes, u.Unknown, u.Interfaces, u.Recent, u.Used()}
		if got != tc.want || u.Complete != tc.complete || !equal(u.Clusters, tc.clusters) {
			t.Errorf("%s: %+v clusters %v complete %v, want %+v %v %v", tc.subnet, got, u.Clusters, u.Complete, tc.want, tc.clusters, tc.complete)
		}
	}
	if u := by["subnet-a"]; u.Subnet.Usable != 4091 || len(u.FinishedHolders) != 2 || u.FinishedHolders[0].Pod != "nightly-1-abcde" {
		t.Fatalf("%+v", u)
	}
}

// Incomplete inputs make a subnet's attribution incomplete: the listing,
// or a cluster that could use the subnet; not a cluster that could not.
func TestSubnetUseComplete(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*inventory.View)
		want map[string]bool
	}{
		{"listing incomplete", func(s *inventory.View) { ec2interface.NetworksOf(s)[0].Complete = false },
			map[string]bool{"subnet-a": false, "subnet-b": false, "subnet-c": false, "subnet-d": false}},
		{"prod incomplete", func(s *inventory.View) { s.Clusters[0].Complete = false },
			map[string]bool{"subnet-a": false, "subnet-b": false, "subnet-c": true, "subnet-d": true}},
		{"dev did not list workloads", func(s *inventory.View) { s.Clusters[1].WorkloadsListed = false },
			map[string]bool{"subnet-a": true, "subnet-b": true, "subnet-c": true, "subnet-d": false}},
		{"prod may use any subnet", func(s *inventory.View) { s.Clusters[0].Subnets = nil; s.Clusters[0].Complete = false },
			map[string]bool{"subnet-a": false, "subnet-b": false, "subnet-c": false, "subnet-d": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := attributionSnap()
			tc.mod(s)
			for _, u := range ec2interface.Attribute(s, t0).Subnets {
				if u.Complete != tc.want[u.Subnet.ID] {
					t.Errorf("%s complete %v", u.Subnet.ID, u.Complete)
				}
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Every address an interface shows is named with what holds it, for the
// JSON report and -v (ec2interface.AddressesSection).
func TestEveryAddressIsNamed(t *testing.T) {
	s := attributionSnap()
	a := ec2interface.Attribute(s, t0)
	want := 0
	for _, n := range ec2interface.NetworksOf(s)[0].Interfaces {
		want += len(n.IPs)
	}
	sec := ec2interface.AddressesSection(a)
	all, _ := sec.Data.([]ec2interface.Address)
	if sec.Key != "subnetAddresses" || len(all) != want || len(sec.Blocks) != 1 || len(sec.Blocks[0].Rows) != want {
		t.Fatalf("key %q, %d addresses named, want %d", sec.Key, len(all), want)
	}
	got := map[string]ec2interface.Address{}
	for _, ad := range all {
		got[ad.Interface+" "+ad.IP] = ad
	}
	for k, w := range map[string]ec2interface.Address{
		"eni-fargate1 10.0.1.10": {Holder: ec2interface.HeldByFinishedPod, Cluster: "prod", Namespace: "batch", Pod: "nightly-1-abcde"},
		"eni-node1 10.0.1.22":    {Holder: ec2interface.HeldByRunningPod, Cluster: "prod", Namespace: "web", Pod: "new-web"},
		"eni-node1 10.0.1.21":    {Holder: ec2interface.HeldByNode, Node: "ip-10-0-1-20"},
		"eni-stray 10.0.1.40":    {Holder: ec2interface.HeldByUnknown},
	} {
		g := got[k]
		if g.Holder != w.Holder || g.Cluster != w.Cluster || g.Namespace != w.Namespace || g.Pod != w.Pod || g.Node != w.Node {
			t.Errorf("%s: %+v, want %+v", k, g, w)
		}
	}
}
