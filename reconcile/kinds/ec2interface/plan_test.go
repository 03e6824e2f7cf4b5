package ec2interface_test

import (
	"strings"
	"testing"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

const grace = time.Hour

func policy() ec2interface.Policy {
	return ec2interface.Policy{Delete: true, Ownership: []string{ec2interface.EvidenceVPCCNI, ec2interface.EvidenceBranch},
		Safety: config.Safety{ProtectTag: "reclaim.dev/protect", Grace: config.Duration(grace),
			Caps: config.Caps{MaxDeletesPerRun: 1000, MaxDeletePercent: 1, BreakerCandidates: 1000}},
		HeadroomWarning: 0.8, WarnBefore: 72 * time.Hour}
}

// cni is a detached interface the VPC CNI made (its tag and description).
func cni(id, subnet string, ips ...string) inventory.NetInterface {
	n := iface(id, subnet, "available", ips...)
	n.Tags = map[string]string{"node.k8s.amazonaws.com/instance_id": "i-0abc", "cluster.k8s.amazonaws.com/name": "prod"}
	n.Description = "aws-K8S-i-0abc"
	return n
}

// planSnap: cluster prod may use subnet-a and subnet-b, dev only subnet-d;
// nobody subnet-c. Both run a pod; the listing holds n.
func planSnap(ns ...inventory.NetInterface) *inventory.View {
	return &inventory.View{TakenAt: t0,
		Clusters: []inventory.ClusterRefs{
			{Name: "prod", Complete: true, WorkloadsListed: true, Subnets: []string{"subnet-a", "subnet-b"},
				Pods: []inventory.Pod{finishedPod("batch", "done", t0.Add(-48*time.Hour), nil, "10.0.1.10")}},
			{Name: "dev", Complete: true, WorkloadsListed: true, Subnets: []string{"subnet-d"},
				Pods: []inventory.Pod{runningPod("etl", "etl", t0.Add(-48*time.Hour), "10.0.5.5")}},
		},
		Clouds: map[string]any{ec2interface.Read: []inventory.NetworkListing{{Account: acct, Region: region, Complete: true,
			Subnets: []inventory.Subnet{
				subnet("subnet-a", "vpc-1", "us-east-1a", "10.0.0.0/20", usable20-100),
				subnet("subnet-b", "vpc-1", "us-east-1b", "10.0.16.0/20", usable20-100),
				subnet("subnet-c", "vpc-3", "us-east-1a", "10.2.0.0/20", usable20-100),
				subnet("subnet-d", "vpc-2", "us-east-1c", "10.0.0.0/20", usable20-100),
			},
			Interfaces: ns}}}}
}

func build(s *inventory.View, pol ec2interface.Policy, st engine.State, now time.Time) *engine.Plan {
	return enginetest.Build(s, []engine.Kind{&ec2interface.Kind{Policy: pol}}, st, now)
}

func find(p *engine.Plan, eni string) *engine.Decision {
	for i := range p.Decisions {
		if p.Decisions[i].ID == ec2interface.ID(acct, region, eni) {
			return &p.Decisions[i]
		}
	}
	return nil
}

func TestEligibility(t *testing.T) {
	mod := func(n inventory.NetInterface, f func(*inventory.NetInterface)) inventory.NetInterface {
		f(&n)
		return n
	}
	cases := []struct {
		name          string
		n             inventory.NetInterface
		pol           func(*ec2interface.Policy)
		first, second engine.Action // "" : no decision
		class         string
		evidence      string
	}{
		{"vpc-cni evidence", cni("eni-1", "subnet-a", "10.0.1.40"), nil, engine.Mark, engine.Delete, ec2interface.ClassLeaked, ec2interface.EvidenceVPCCNI},
		{"vpc-cni evidence, no type given", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.Type = "" }), nil,
			engine.Mark, engine.Delete, ec2interface.ClassLeaked, ec2interface.EvidenceVPCCNI},
		{"branch: owner tag", mod(iface("eni-1", "subnet-b", "available", "10.0.16.4"), func(n *inventory.NetInterface) {
			n.Type, n.Tags = "branch", map[string]string{"eks:eni:owner": "eks-vpc-resource-controller"}
		}), nil, engine.Mark, engine.Delete, ec2interface.ClassLeaked, ec2interface.EvidenceBranch},
		{"branch: description of a branch interface", mod(iface("eni-1", "subnet-b", "available", "10.0.16.4"), func(n *inventory.NetInterface) {
			n.Type, n.Description = "branch", "aws-k8s-branch-eni"
		}), nil, engine.Mark, engine.Delete, ec2interface.ClassLeaked, ec2interface.EvidenceBranch},
		{"branch description on a plain interface is not evidence", mod(iface("eni-1", "subnet-b", "available", "10.0.16.4"), func(n *inventory.NetInterface) {
			n.Description = "aws-k8s-branch-eni"
		}), nil, engine.Keep, engine.Keep, ec2interface.ClassNoEvidence, ""},
		{"branch evidence not configured", mod(iface("eni-1", "subnet-b", "available", "10.0.16.4"), func(n *inventory.NetInterface) {
			n.Type, n.Tags = "branch", map[string]string{"eks:eni:owner": "eks-vpc-resource-controller"}
		}), func(p *ec2interface.Policy) { p.Ownership = []string{ec2interface.EvidenceVPCCNI} }, engine.Keep, engine.Keep, ec2interface.ClassNoEvidence, ""},
		{"vpc-cni tag without its description", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.Description = "made by hand" }),
			nil, engine.Keep, engine.Keep, ec2interface.ClassNoEvidence, ""},
		{"vpc-cni description without its tag", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.Tags = nil }),
			nil, engine.Keep, engine.Keep, ec2interface.ClassNoEvidence, ""},
		{"no evidence", iface("eni-1", "subnet-a", "available", "10.0.1.40"), nil, engine.Keep, engine.Keep, ec2interface.ClassNoEvidence, ""},
		{"protect tag", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.Tags["reclaim.dev/protect"] = "true" }),
			nil, engine.Keep, engine.Keep, ec2interface.ClassProtected, ""},
		// The one opt-out rule: the tag protects whatever its value.
		{"protect tag false", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.Tags["reclaim.dev/protect"] = "false" }),
			nil, engine.Keep, engine.Keep, ec2interface.ClassProtected, ""},
		{"protect tag empty", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.Tags["reclaim.dev/protect"] = "" }),
			nil, engine.Keep, engine.Keep, ec2interface.ClassProtected, ""},
		{"requester-managed", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.RequesterManaged, n.RequesterID = true, "amazon-elb" }),
			nil, engine.Keep, engine.Keep, ec2interface.ClassRequesterManaged, ""},
		// Kept when planned, not only at the re-read: a requester-managed
		// interface whose requester EC2 does not name is still a service's.
		{"requester-managed, requester unknown", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.RequesterManaged, n.RequesterID = true, "" }),
			nil, engine.Keep, engine.Keep, ec2interface.ClassRequesterManaged, ""},
		{"operator-managed", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.OperatorManaged = true }),
			nil, engine.Keep, engine.Keep, ec2interface.ClassOperatorManaged, ""},
		{"type efa", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.Type = "efa" }),
			nil, engine.Keep, engine.Keep, ec2interface.ClassType, ""},
		{"type trunk", mod(iface("eni-1", "subnet-a", "available", "10.0.1.40"), func(n *inventory.NetInterface) {
			n.Type, n.Tags = "trunk", map[string]string{"eks:eni:owner": "eks-vpc-resource-controller"}
		}), nil, engine.Keep, engine.Keep, ec2interface.ClassType, ""},
		{"its address on a finished pod", cni("eni-1", "subnet-a", "10.0.1.41", "10.0.1.10"), nil, engine.Keep, engine.Keep, ec2interface.ClassPodIP, ec2interface.EvidenceVPCCNI},
		{"its address on a pod of a cluster that cannot use the subnet", cni("eni-1", "subnet-a", "10.0.5.5"), nil, engine.Keep, engine.Keep, ec2interface.ClassPodIP, ec2interface.EvidenceVPCCNI},
		{"a subnet no cluster could use", cni("eni-1", "subnet-c", "10.2.0.9"), nil, engine.Keep, engine.Keep, ec2interface.ClassNoCluster, ec2interface.EvidenceVPCCNI},
		{"in use: no decision", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.Status, n.Instance = "in-use", "i-1" }),
			nil, "", "", "", ""},
		{"attaching: no decision", mod(cni("eni-1", "subnet-a", "10.0.1.40"), func(n *inventory.NetInterface) { n.Status = "attaching" }),
			nil, "", "", "", ""},
		{"delete off: report only", cni("eni-1", "subnet-a", "10.0.1.40"), func(p *ec2interface.Policy) { p.Delete = false },
			engine.Report, engine.Report, ec2interface.ClassLeaked, ec2interface.EvidenceVPCCNI},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol := policy()
			if tc.pol != nil {
				tc.pol(&pol)
			}
			s := planSnap(tc.n)
			p1 := build(s, pol, engine.NewState(), t0)
			p2 := build(s, pol, p1.State, t0.Add(grace+time.Minute))
			for i, r := range []struct {
				p    *engine.Plan
				want engine.Action
			}{{p1, tc.first}, {p2, tc.second}} {
				d := find(r.p, "eni-1")
				if tc.first == "" {
					if d != nil {
						t.Fatalf("run %d: want no decision, got %+v", i+1, d)
					}
					continue
				}
				if d == nil || d.Action != r.want || d.Held {
					t.Fatalf("run %d: %+v, want %s", i+1, d, r.want)
				}
				if d.Class != tc.class || ec2interface.DetailOf(d).Evidence != tc.evidence {
					t.Fatalf("class %q evidence %q (%s), want %q %q", d.Class, ec2interface.DetailOf(d).Evidence, d.Why(), tc.class, tc.evidence)
				}
			}
		})
	}
}

func TestFrees(t *testing.T) {
	n := cni("eni-1", "subnet-a", "10.0.1.40", "10.0.1.41", "10.0.1.42")
	n.Prefixes = 1
	d := find(build(planSnap(n), policy(), engine.NewState(), t0), "eni-1")
	if d.Frees.Of(finished.Addresses) != 3+16 || d.Frees.Pool != "subnet-a" {
		t.Fatalf("%+v", d.Frees)
	}
	if det := ec2interface.DetailOf(d); det.Account != acct || det.Region != region || det.Subnet != "subnet-a" || det.IPs != 3 || det.Status != "available" {
		t.Fatalf("%+v", det)
	}
}

// Fail closed: an incomplete listing holds every interface of it, however
// long; an incomplete cluster holds the interfaces of subnets it could use.
func TestHolds(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*inventory.View)
		held bool
	}{
		{"everything complete", func(*inventory.View) {}, false},
		{"network listing incomplete", func(s *inventory.View) {
			ec2interface.NetworksOf(s)[0].Complete, ec2interface.NetworksOf(s)[0].Problem = false, "page 3: throttled"
		}, true},
		{"incomplete cluster that could use the subnet", func(s *inventory.View) { s.Clusters[0].Complete = false }, true},
		{"cluster that could use the subnet not asked for its pods", func(s *inventory.View) { s.Clusters[0].WorkloadsListed = false }, true},
		{"incomplete cluster whose awsSubnets leave the subnet out", func(s *inventory.View) { s.Clusters[1].Complete = false }, false},
		{"incomplete cluster that may use any subnet", func(s *inventory.View) { s.Clusters[1].Complete, s.Clusters[1].Subnets = false, nil }, true},
		// The interface's own tags name the clusters that may use it.
		{"a branch interface's kubernetes.io/cluster tag names a cluster nobody read", func(s *inventory.View) {
			ec2interface.NetworksOf(s)[0].Interfaces[0].Tags["kubernetes.io/cluster/batch"] = "owned"
		}, true},
		{"its kubernetes.io/cluster tag names a cluster read completely", func(s *inventory.View) {
			ec2interface.NetworksOf(s)[0].Interfaces[0].Tags["kubernetes.io/cluster/dev"] = "owned"
		}, false},
		{"EKS's cluster-name tag names a cluster nobody read", func(s *inventory.View) {
			ec2interface.NetworksOf(s)[0].Interfaces[0].Tags["eks:cluster-name"] = "batch"
		}, true},
		// With discovery on, a tag names a cluster of the interface's own
		// account and region.
		{"discovery covers the scope and knows the tagged cluster", func(s *inventory.View) { s.Fleet = fleetOf(acct + "/" + region) }, false},
		{"the tagged cluster is configured but does not say where it lives", func(s *inventory.View) {
			s.Fleet = fleetOf(acct + "/" + region)
			s.Fleet.Members[0].Where = inventory.Place{}
		}, true},
		{"the tagged cluster's name is a configured cluster's, but discovery lists it here unread", func(s *inventory.View) {
			s.Fleet = fleetOf(acct+"/"+region, inventory.FleetMember{Name: inventory.ScopedName("prod", acct+"/"+region), State: inventory.MemberConflict,
				Cloud: inventory.FleetCluster{Name: "prod", Platform: inventory.EKS, Account: acct, Location: region}})
		}, true},
		{"discovery does not look in the interface's region", func(s *inventory.View) { s.Fleet = fleetOf(acct + "/eu-west-1") }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := planSnap(cni("eni-1", "subnet-a", "10.0.1.40"))
			tc.mod(s)
			st := engine.NewState()
			var d *engine.Decision
			for _, at := range []time.Time{t0, t0.Add(grace + time.Minute), t0.Add(20 * grace)} {
				p := build(s, policy(), st, at)
				st = p.State
				d = find(p, "eni-1")
				if tc.held {
					if d.Action != engine.Mark || !d.Held || !strings.Contains(d.Why(), "held") {
						t.Fatalf("at %s: %s held %v %q", at, d.Action, d.Held, d.Why())
					}
				} else if d.Held {
					t.Fatalf("held: %q", d.Why())
				}
			}
			if !tc.held && d.Action != engine.Delete {
				t.Fatalf("%+v", d)
			}
		})
	}
}

// fleetOf is a discovered fleet: prod and dev configured (saying they live
// in acct/region), one complete discovery listing of scope, and more members.
func fleetOf(scope string, more ...inventory.FleetMember) *inventory.Fleet {
	return &inventory.Fleet{Discovery: true,
		Listings: []inventory.FleetListing{{Platform: inventory.EKS, Scope: scope, Complete: true}},
		Members: append([]inventory.FleetMember{
			{Name: "prod", CloudName: "prod", Configured: true, State: inventory.MemberRead, Where: inventory.Place{Platform: inventory.EKS, Account: acct, Location: region}},
			{Name: "dev", CloudName: "dev", Configured: true, State: inventory.MemberRead, Where: inventory.Place{Platform: inventory.EKS, Account: acct, Location: region}},
		}, more...)}
}

// A pending delete is settled by a complete listing only.
func TestPending(t *testing.T) {
	id := ec2interface.ID(acct, region, "eni-9")
	for _, complete := range []bool{true, false} {
		s := planSnap()
		ec2interface.NetworksOf(s)[0].Complete = complete
		st := engine.NewState()
		st.Pending[id] = engine.Pending{Kind: ec2interface.Name, Reason: "r"}
		p := build(s, policy(), st, t0)
		if got := len(p.Confirmed) == 1; got != complete {
			t.Fatalf("complete %v: confirmed %v", complete, p.Confirmed)
		}
	}
	k := &ec2interface.Kind{}
	if !k.Owns(id) || k.Owns("ec2:1/r/vol-1") || k.Owns("clusters/a/namespaces/b/jobs/c") || k.Owns("ec2:1/eni-1") {
		t.Fatal("Owns")
	}
}

// An interface says where it lives for notify.routes: its account/region,
// the cluster its VPC CNI tag names, its tags.
func TestInterfaceWhere(t *testing.T) {
	p := build(planSnap(cni("eni-1", "subnet-a", "10.0.1.40")), policy(), engine.NewState(), t0)
	w := find(p, "eni-1").Detail.(engine.Located).Where()
	if w.Scope != acct+"/"+region || w.Cluster != "prod" || w.Labels["node.k8s.amazonaws.com/instance_id"] != "i-0abc" {
		t.Fatalf("%+v", w)
	}
}
