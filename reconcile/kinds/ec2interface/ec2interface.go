// Package ec2interface is the ec2-interface kind and the subnet headroom view:
// every address of every subnet in scope attributed to a running pod, a
// finished pod (with its Job and CronJob), a node or nothing reclaim knows;
// and leaked network interfaces (detached, made by the VPC CNI or the VPC
// resource controller, no address on any pod) deleted after a grace period.
package ec2interface

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/optout"
	"reclaim.dev/reclaim/base/outcome"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Name is the kind as reports and the audit log spell it.
const Name = "ec2-interface"

// BatchSize: interfaces are re-read in one call per batch, deleted one by one.
const BatchSize = 50

// Classes of interface decisions.
const (
	ClassProtected        = "protected"
	ClassRequesterManaged = "requester-managed"
	ClassOperatorManaged  = "operator-managed"
	ClassType             = "interface-type"
	ClassNoEvidence       = "no-ownership-evidence"
	ClassPodIP            = "address-on-pod"
	ClassNoCluster        = "no-cluster"
	ClassLeaked           = "leaked"
)

// Evidence names.
const (
	EvidenceVPCCNI  = "vpc-cni"
	EvidenceBranch  = "vpc-resource-controller"
	cniInstanceTag  = "node.k8s.amazonaws.com/instance_id"
	cniDescription  = "aws-K8S-"
	branchOwnerTag  = "eks:eni:owner"
	branchOwnerVal  = "eks-vpc-resource-controller"
	branchDescPrefx = "aws-k8s-branch-eni"
)

var madeBy = map[string]string{EvidenceVPCCNI: "VPC CNI", EvidenceBranch: "VPC resource controller"}

// Policy is the ec2Interfaces section.
type Policy struct {
	Delete    bool
	Ownership []string
	// Safety is ec2Interfaces.interfaces': protectTag (an interface tagged with it,
	// any value, is never deleted), grace, the caps and the breaker.
	config.Safety
	HeadroomWarning float64
	WarnBefore      time.Duration
}

// API re-reads and deletes interfaces. The EC2 provider satisfies it.
type API interface {
	// Interfaces returns those of ids that exist (a gone one is absent).
	Interfaces(ctx context.Context, account, region string, ids []string) ([]inventory.NetInterface, error)
	// DeleteInterface's error says the outcome (outcome.Of): it
	// wraps outcome.ErrNotFound when it is gone, outcome.ErrInUse when EC2 says
	// it is attached again, and is Refused for EC2's other answers.
	DeleteInterface(ctx context.Context, account, region, id string) error
}

// Kind plans and deletes leaked interfaces, and shows subnet headroom.
type Kind struct {
	Policy Policy
	API    API // nil: plan only

	// The attribution Propose made, for View of the same snapshot: it
	// indexes every pod of the fleet, so it is made once a pass.
	attrSnap *inventory.View
	attr     *Attribution
}

// attribution returns the snapshot's attribution, made once for Propose and
// View; View lets go of it.
func (k *Kind) attribution(snap *inventory.View, now time.Time) *Attribution {
	if k.attrSnap != snap || k.attr == nil {
		k.attrSnap, k.attr = snap, Attribute(snap, now)
	}
	return k.attr
}

// FromConfig makes the kind from the ec2Interfaces section; nil without one.
func FromConfig(cfg *config.Config, client any) *Kind {
	e := SectionOf(cfg)
	if e == nil {
		return nil
	}
	i := e.Interfaces
	api, _ := client.(API)
	return &Kind{API: api, Policy: Policy{Delete: i.Delete, Ownership: i.Ownership, Safety: i.Safety,
		HeadroomWarning: e.HeadroomWarning.Fraction(), WarnBefore: e.WarnBefore.Std()}}
}

// Detail is what an interface decision says beyond the envelope.
type Detail struct {
	Account     string `json:"account"`
	Region      string `json:"region"`
	Subnet      string `json:"subnet"`
	AZ          string `json:"availabilityZone"`
	Type        string `json:"interfaceType"`
	Status      string `json:"status"`
	Description string `json:"description,omitempty"`
	Evidence    string `json:"evidence,omitempty"`
	IPs         int    `json:"ips"`
	// tags route it to its owner (Where).
	tags map[string]string
}

var _ engine.Located = (*Detail)(nil) // routed by notify.routes

// Where is the interface's account/region, the cluster its VPC CNI tag
// names and its tags.
func (d *Detail) Where() engine.Where {
	return engine.Where{Scope: d.Account + "/" + d.Region, Cluster: d.tags[inventory.InterfaceClusterTag], Labels: d.tags}
}

// DetailOf returns an interface decision's detail.
func DetailOf(d *engine.Decision) *Detail {
	if det, ok := d.Detail.(*Detail); ok {
		return det
	}
	return &Detail{}
}

// ID names an interface in decisions, state and the audit log.
func ID(account, region, eni string) string { return "ec2:" + account + "/" + region + "/" + eni }

func parseID(id string) (account, region, eni string, ok bool) {
	rest, ok := strings.CutPrefix(id, "ec2:")
	p := strings.Split(rest, "/")
	if !ok || len(p) != 3 || !strings.HasPrefix(p[2], "eni-") {
		return "", "", "", false
	}
	return p[0], p[1], p[2], true
}

func (k *Kind) Name() string { return Name }

func (k *Kind) Owns(id string) bool { _, _, _, ok := parseID(id); return ok }

func (k *Kind) Limits() engine.Limits {
	l := kind.Limits(k.Policy.Safety, nil)
	l.BatchSize = BatchSize
	l.Wording = engine.Wording{Section: "ec2Interfaces.interfaces", Noun: "interfaces", Guarded: "network interface in a subnet it could use"}
	return l
}

// OptOut says how a person keeps one of the kind's resources from being
// deleted (report.OptOuter).
func (k *Kind) OptOut() string { return optOut(k.Policy.ProtectTag) }

func optOut(tag string) string {
	if tag == "" {
		return "set ec2Interfaces.interfaces.delete: false"
	}
	return optout.Rule("tag", tag, "interface") + ", or set ec2Interfaces.interfaces.delete: false"
}

// NetworkSource is the source key of an account and region's EC2 listing.
func NetworkSource(account, region string) string {
	return inventory.SourceKey("ec2-network", account+"/"+region)
}

// Propose gives every detached interface a proposal: a candidate when it
// carries the configured ownership evidence and no address of it is on any
// pod; a keep with the reason otherwise. Attached interfaces get none (the
// headroom counts them).
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	out := engine.Proposals{}
	a := k.attribution(snap, now)
	listed := map[string]bool{}  // account/region listed completely
	present := map[string]bool{} // ids listed
	nets := NetworksOf(snap)
	for li := range nets {
		l := &nets[li]
		src := engine.Source{Kind: "ec2-network", Name: l.Account + "/" + l.Region, Complete: l.Complete, Items: len(l.Interfaces), Unit: "network interfaces"}
		if !l.Complete {
			src.Problems = []string{l.Problem}
			out.Blocked = append(out.Blocked, fmt.Sprintf("EC2 %s/%s could not be listed completely (%s): no interface there is deleted this run", l.Account, l.Region, l.Problem))
		}
		out.Sources = append(out.Sources, src)
		listed[l.Account+"/"+l.Region] = l.Complete
		subnets := make(map[string]*inventory.Subnet, len(l.Subnets))
		for i := range l.Subnets {
			subnets[l.Subnets[i].ID] = &l.Subnets[i]
		}
		for i := range l.Interfaces {
			n := &l.Interfaces[i]
			present[ID(l.Account, l.Region, n.ID)] = true
			if n.Status != "available" {
				continue
			}
			out.InScope++
			out.Items = append(out.Items, k.propose(snap.Fleet, l, n, subnets[n.Subnet], a))
		}
	}
	out.Presence = engine.Listed(func(id string) (string, bool) {
		acct, region, _, ok := parseID(id)
		return acct + "/" + region, ok
	}, listed, present)
	return out
}

// cloudUsers are the clusters the cloud says may use an interface's
// addresses, read or not: the EKS clusters of its VPC or subnet, the
// clusters its subnet's kubernetes.io/cluster/NAME tags name, the clusters
// its own tags name (the VPC CNI's, the VPC resource controller's
// kubernetes.io/cluster/NAME on a branch interface, EKS's); and the account
// and region's discovery. A tag names a cluster of the interface's own
// account and region. Any of them not read completely, pods included
// (inventory.ReadWorkloads), holds the interface.
func cloudUsers(f *inventory.Fleet, l *inventory.NetworkListing, n *inventory.NetInterface, sn *inventory.Subnet) engine.Users {
	scope := l.Account + "/" + l.Region
	u := engine.Users{Members: f.EKSIn(l.Account, n.VPC, n.Subnet), Scopes: []string{inventory.EKS + " " + scope},
		Reads: []string{inventory.ReadWorkloads}}
	if sn != nil {
		for _, c := range sn.Clusters {
			u.Clusters = append(u.Clusters, f.Resolve(inventory.EKS, scope, c)...)
		}
	}
	for _, c := range inventory.ClustersTagged(n.Tags) {
		u.Clusters = append(u.Clusters, f.Resolve(inventory.EKS, scope, c)...)
	}
	return u
}

// Evidence says which configured ownership evidence an interface carries, or "".
func (p *Policy) Evidence(n *inventory.NetInterface) string {
	for _, o := range p.Ownership {
		switch o {
		case EvidenceVPCCNI:
			if n.Tags[cniInstanceTag] != "" && strings.HasPrefix(n.Description, cniDescription) {
				return o
			}
		case EvidenceBranch:
			if n.Tags[branchOwnerTag] == branchOwnerVal || (strings.HasPrefix(n.Description, branchDescPrefx) && n.Type == "branch") {
				return o
			}
		}
	}
	return ""
}

func (k *Kind) propose(f *inventory.Fleet, l *inventory.NetworkListing, n *inventory.NetInterface, sn *inventory.Subnet, a *Attribution) engine.Proposal {
	det := &Detail{Account: l.Account, Region: l.Region, Subnet: n.Subnet, AZ: n.AZ, Type: n.Type, Status: n.Status, Description: n.Description, IPs: len(n.IPs), tags: n.Tags}
	p := engine.Proposal{ID: ID(l.Account, l.Region, n.ID), Name: n.ID, Detail: det,
		Frees: amount.Free(int64(len(n.IPs)+16*n.Prefixes), finished.Addresses).In(n.Subnet)}
	keep := func(class, reason string) engine.Proposal {
		p.Class, p.Reason = class, reason
		return p
	}
	if v, ok := optout.Protects(k.Policy.ProtectTag, n.Tags); ok {
		p.Class, p.Protected = ClassProtected, optout.Reason("tag", k.Policy.ProtectTag, v)
		return p
	}
	switch {
	case n.RequesterManaged:
		return keep(ClassRequesterManaged, fmt.Sprintf("requester-managed (by %s): the service that made it owns it", orDefault(n.RequesterID, "an AWS service")))
	case n.OperatorManaged:
		return keep(ClassOperatorManaged, fmt.Sprintf("managed by %s (operator.managed)", orDefault(n.OperatorPrincipal, "a service provider")))
	case !deletableType(n.Type):
		return keep(ClassType, "interface type "+n.Type+": not one Kubernetes networking makes")
	}
	ev := k.Policy.Evidence(n)
	if ev == "" {
		return keep(ClassNoEvidence, fmt.Sprintf("detached, but no ownership evidence (%s) says the fleet made it: look at it", strings.Join(k.Policy.Ownership, ", ")))
	}
	det.Evidence = ev
	for _, ip := range n.IPs {
		if pod, cluster := a.PodWithIP(ip); pod != nil {
			return keep(ClassPodIP, fmt.Sprintf("its address %s is pod %s/%s's in cluster %s", ip, pod.Namespace, pod.Name, cluster))
		}
	}
	clusters := a.ClustersFor(n.Subnet)
	if len(clusters) == 0 {
		return keep(ClassNoCluster, "no configured cluster could use subnet "+n.Subnet+", so no pod evidence covers it (add awsSubnets to the cluster that does)")
	}
	p.Candidate, p.Class = true, ClassLeaked
	// The configured clusters that could use the subnet, and those the
	// cloud says may.
	u := cloudUsers(f, l, n, sn)
	names := make([]string, 0, len(clusters)+len(u.Clusters))
	for _, c := range clusters {
		names = append(names, c.Name)
	}
	u.Clusters = append(names, u.Clusters...)
	p.Sources = append([]string{NetworkSource(l.Account, l.Region)}, u.Keys(f)...)
	p.Reason = fmt.Sprintf("detached since listed, type %s, made by the %s (evidence: %s); none of its %d address(es) is on a pod of any cluster",
		orDefault(n.Type, "interface"), madeBy[ev], ev, len(n.IPs))
	if !k.Policy.Delete {
		p.ReportOnly = true
		p.Reason += "; ec2Interfaces.interfaces.delete is off"
	}
	return p
}

// Recheck re-reads each batch's interfaces in one call per account and
// region: gone is gone; attached, managed, of another type or with lost
// evidence is a skip. The engine checks the opt-out tag in what it saw.
func (k *Kind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	if k.API == nil {
		return nil, errors.New("no EC2 client")
	}
	// One call per account and region reads the batch's interfaces; one
	// the answer leaves out is gone.
	type reg struct{ account, region string }
	groups := map[reg][]string{}
	for _, d := range batch {
		det := DetailOf(d)
		groups[reg{det.Account, det.Region}] = append(groups[reg{det.Account, det.Region}], d.Name)
	}
	// The same id in another account or region is another interface.
	byID := map[reg]map[string]*inventory.NetInterface{}
	for g, ids := range groups {
		cur, err := k.API.Interfaces(ctx, g.account, g.region, ids)
		if err != nil {
			return nil, fmt.Errorf("re-read interfaces in %s/%s: %w", g.account, g.region, err)
		}
		byID[g] = map[string]*inventory.NetInterface{}
		for i := range cur {
			byID[g][cur[i].ID] = &cur[i]
		}
	}
	return engine.RecheckEach(batch, func(_ int, d *engine.Decision) (*inventory.NetInterface, error) {
		det := DetailOf(d)
		if n := byID[reg{det.Account, det.Region}][d.Name]; n != nil {
			return n, nil
		}
		return nil, fmt.Errorf("interface %s: %w", d.Name, outcome.ErrNotFound)
	}, func(_ *engine.Decision, n *inventory.NetInterface) engine.Verdict {
		switch {
		case n.Status != "available":
			return engine.Changed(n.Status)
		case n.RequesterManaged || n.OperatorManaged:
			return engine.Verdict{Result: engine.Skip, Reason: "skipped: managed by a service"}
		case !deletableType(n.Type):
			return engine.Changed("interface type " + n.Type)
		case k.Policy.Evidence(n) == "":
			return engine.Changed("its ownership evidence changed")
		}
		return engine.Pass(n.Tags) // the engine checks the opt-out tag
	})
}

// Delete deletes each interface; EC2 refuses one that is attached again. The
// provider's errors say each outcome, and the first unknown one (no answer)
// fails the call.
func (k *Kind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	if k.API == nil {
		return nil, errors.New("no EC2 client")
	}
	return engine.DeleteEach(batch, func(_ int, d *engine.Decision) engine.Deleted {
		det := DetailOf(d)
		return engine.Deleted{Err: k.API.DeleteInterface(ctx, det.Account, det.Region, d.Name)}
	})
}

// deletableType says whether an interface type is one Kubernetes networking
// makes (the VPC CNI's "interface", its pod ENIs' "branch").
func deletableType(t string) bool {
	return t == "interface" || t == "branch" || t == ""
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
