package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/smithy-go"

	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
)

// The truth's EC2 network: subnets per account and the network interfaces
// in them, for the ec2-interface kind.

const (
	cniTag       = "node.k8s.amazonaws.com/instance_id"
	cniDesc      = "aws-K8S-"
	branchTag    = "eks:eni:owner"
	branchVal    = "eks-vpc-resource-controller"
	branchDescPf = "aws-k8s-branch-eni"
)

type subnet struct {
	id, account, region string
	octet, used         int
	// tagged are the clusters its kubernetes.io/cluster/NAME tags name.
	tagged []string
}

// iface is a network interface of the truth.
type iface struct {
	id, account, region string
	subnet              string
	status              string // available, in-use
	typ                 string
	requester, operator bool
	tags                map[string]string
	desc                string
	ips                 []string
	instance            string
	clocks
}

func (c *cluster) couldUseSubnet(id string) bool {
	return len(c.subnets) == 0 || slices.Contains(c.subnets, id)
}

func (w *world) ifaceByID(account, id string) *iface {
	for _, n := range w.ifaces {
		if n.account == account && n.id == id {
			return n
		}
	}
	return nil
}

func (w *world) subnetByID(id string) *subnet {
	for _, s := range w.subnets {
		if s.id == id {
			return s
		}
	}
	return nil
}

// podsWithIP are the pods of any cluster, seen or not, that show ip; but
// a cluster declared out of scope protects nothing, unless declared.
func (w *world) podsWithIP(ip string, declared bool) (out []struct {
	c *cluster
	p *wpod
}) {
	for _, c := range w.all() {
		if c.outOfScope() && !declared {
			continue
		}
		for _, p := range c.wpods {
			if slices.Contains(p.ips, ip) {
				out = append(out, struct {
					c *cluster
					p *wpod
				}{c, p})
			}
		}
	}
	return out
}

// setupNetwork makes each account's subnets, scopes some clusters to some
// of them, and makes interfaces of every sort.
func (f *fleet) setupNetwork() {
	w := f.w
	for _, a := range w.accounts {
		for range 1 + f.rng.IntN(3) {
			n := w.next()
			w.subnets = append(w.subnets, &subnet{id: fmt.Sprintf("subnet-%05d", n), account: a, region: ecrRegion, octet: n % 250})
		}
	}
	for _, c := range w.clusters {
		if f.chance(0.4) {
			c.subnets = []string{pick(f, w.subnets).id}
			if f.chance(0.3) {
				c.subnets = append(c.subnets, pick(f, w.subnets).id)
			}
		}
	}
	for range 2 + f.rng.IntN(5) {
		f.newIface()
	}
}

// newIface makes an interface of a random sort.
func (f *fleet) newIface() *iface {
	s := pick(f, f.w.subnets)
	inst := fmt.Sprintf("i-%08x", f.w.next())
	n := &iface{id: fmt.Sprintf("eni-%08x", f.w.next()), account: s.account, region: s.region, subnet: s.id, status: "available", typ: "interface",
		tags: map[string]string{cniTag: inst}, desc: cniDesc + inst}
	for range 1 + f.rng.IntN(3) {
		n.ips = append(n.ips, f.ip(s))
	}
	switch x := f.rng.IntN(13); {
	case x < 2:
		n.status, n.instance = "in-use", inst
	case x < 5: // leaked by the VPC CNI
	case x == 5:
		n.typ, n.tags, n.desc = "branch", map[string]string{branchTag: branchVal}, branchDescPf
	case x == 6:
		n.requester = true
	case x == 7:
		n.operator = true
	case x == 8:
		n.typ = pick(f, []string{"efa", "trunk"})
	case x == 9:
		n.tags, n.desc = map[string]string{"team": "data"}, "made by hand"
	case x == 10: // its address is still on a finished pod of another cluster
		c := pick(f, f.w.clusters)
		p := f.newPod(c, batchNS, fmt.Sprintf("stale-%d", f.w.next()), nil, "Succeeded")
		p.ips = []string{n.ips[0]}
		f.age(p)
	case x == 11: // or of a running pod of a cluster that could use the subnet
		for _, c := range f.w.clusters {
			if c.couldUseSubnet(s.id) {
				p := f.newPod(c, batchNS, fmt.Sprintf("fargate-%d", f.w.next()), nil, "Running")
				p.ips = []string{n.ips[len(n.ips)-1]}
				break
			}
		}
	case x == 12: // or of a running pod of a cluster the config misses, which tags the subnet
		c := f.unseenCluster(s)
		c.wpods = append(c.wpods, &wpod{ns: "ml", name: fmt.Sprintf("train-%d", f.w.next()), uid: f.uid(), phase: "Running",
			created: f.now, ips: []string{n.ips[len(n.ips)-1]}})
	}
	f.w.ifaces = append(f.w.ifaces, n)
	return n
}

// unseenCluster returns a cluster the config misses (self-managed: no
// discovery lists it) that uses subnet s and says so with its tag, made on
// first need.
func (f *fleet) unseenCluster(s *subnet) *cluster {
	for _, c := range f.w.unseen {
		if strings.HasPrefix(c.name, "unseen-") && slices.Contains(s.tagged, c.name) {
			return c
		}
	}
	c := &cluster{name: fmt.Sprintf("unseen-%d", f.w.next()), subnets: []string{s.id}, home: home{platform: selfManaged, account: s.account, region: s.region}}
	f.w.unseen = append(f.w.unseen, c)
	s.tagged = append(s.tagged, c.name)
	return c
}

// mutateNetwork changes the network between runs.
func (f *fleet) mutateNetwork() {
	for range f.rng.IntN(3) {
		switch f.rng.IntN(5) {
		case 0:
			f.newIface()
		case 1:
			if len(f.w.ifaces) > 0 {
				n := pick(f, f.w.ifaces)
				if n.status == "available" {
					n.status, n.instance = "in-use", fmt.Sprintf("i-%08x", f.w.next())
				} else {
					n.status, n.instance = "available", ""
				}
			}
		case 2: // evidence lost
			if len(f.w.ifaces) > 0 {
				delete(pick(f, f.w.ifaces).tags, cniTag)
			}
		case 3: // deleted by someone else (the CNI's own cleanup)
			if len(f.w.ifaces) > 0 {
				f.removeIface(pick(f, f.w.ifaces), false)
			}
		case 4: // a pod of any cluster shows an address of an interface
			if len(f.w.ifaces) > 0 {
				n := pick(f, f.w.ifaces)
				p := f.newPod(pick(f, f.w.clusters), batchNS, fmt.Sprintf("late-ip-%d", f.w.next()), nil, "Running")
				p.ips = []string{pick(f, n.ips)}
			}
		}
	}
}

func (f *fleet) removeIface(n *iface, byReclaim bool) {
	f.w.ifaces = slices.DeleteFunc(f.w.ifaces, func(x *iface) bool { return x == n })
	if !byReclaim {
		f.byOthers[ec2interface.ID(n.account, n.region, n.id)]++
	}
}

// ifaceEvidence: what the configured ownership evidence finds, or "".
func (f *fleet) ifaceEvidence(n *iface) string {
	for _, o := range f.netPol.Ownership {
		switch o {
		case ec2interface.EvidenceVPCCNI:
			if n.tags[cniTag] != "" && strings.HasPrefix(n.desc, cniDesc) {
				return o
			}
		case ec2interface.EvidenceBranch:
			if n.tags[branchTag] == branchVal && n.typ == "branch" {
				return o
			}
		}
	}
	return ""
}

// ifaceKept says why the truth keeps an interface, or "". lateOK ignores
// pods that took an address after the snapshot; unseenOK pods this run
// could not list of a cluster its awsSubnets scope away from the subnet.
func (f *fleet) ifaceKept(n *iface, lateOK, unseenOK bool) string {
	switch {
	case n.status != "available":
		return "attached (" + n.status + ")"
	case n.requester:
		return "requester-managed"
	case n.operator:
		return "operator-managed"
	case n.typ != "interface" && n.typ != "branch" && n.typ != "":
		return "of type " + n.typ
	case f.ifaceEvidence(n) == "":
		return "without ownership evidence"
	case !f.netPol.Delete:
		return "with ec2Interfaces.interfaces.delete off"
	}
	for _, ip := range n.ips {
		for _, cp := range f.w.podsWithIP(ip, false) {
			if lateOK && cp.p.late || unseenOK && f.rf.clusters[cp.c.name] != "" && !cp.c.couldUseSubnet(n.subnet) {
				continue
			}
			return fmt.Sprintf("its address %s is on pod %s/%s/%s", ip, cp.c.name, cp.p.ns, cp.p.name)
		}
	}
	for _, c := range f.w.clusters {
		if f.reaches(c, n.subnet) {
			return ""
		}
	}
	return "in a subnet no cluster could use"
}

// reaches says whether reclaim reads c this run as a cluster that could
// use subnet: a discovered one as internal/app reads it (any subnet when
// none of its VPC is listed).
func (f *fleet) reaches(c *cluster, subnet string) bool {
	switch {
	case f.rf.clusters[c.name] == "not read":
		return false
	case c.configured:
		return c.couldUseSubnet(subnet)
	}
	_, _, subnets := f.discoveredReach(c)
	return len(subnets) == 0 || slices.Contains(subnets, subnet)
}

// netEvidence says which source an interface relies on was incomplete this
// run: the account's EC2 listing, a cluster that could use its subnet, a
// cluster its subnet's or its own tags name in its scope, or (discovery
// on) its scope's discovery or a cluster discovery lists there.
func (f *fleet) netEvidence(n *iface) string {
	if f.rf.ec2[n.account] {
		return "EC2 listing of " + n.account + " incomplete"
	}
	for _, c := range f.w.clusters {
		if why := f.rf.clusters[c.name]; why != "" && c.couldUseSubnet(n.subnet) {
			return "cluster " + c.name + " (could use " + n.subnet + ") " + why
		}
	}
	scope := n.account + "/" + n.region
	var names []string
	if s := f.w.subnetByID(n.subnet); s != nil {
		names = s.tagged
	}
	for _, name := range slices.Concat(names, tagged(n.tags)) {
		if why := f.namedEvidence(inventory.EKS, scope, name); why != "" {
			return why
		}
	}
	return f.scopeEvidence(inventory.EKS, scope)
}

func (f *fleet) checkIface(n *iface) {
	what := "interface " + ec2interface.ID(n.account, n.region, n.id)
	switch {
	case f.ifaceKept(n, true, true) != "":
		f.violate("deleted %s %s", what, f.ifaceKept(n, true, true))
	case f.ifaceKept(n, true, false) != "":
		// A pod of a cluster scoped away from the subnet (awsSubnets) that
		// this run could not list: the configuration says it cannot hold the
		// address, and reclaim keeps an interface only on a sighting of it.
		f.stats.Races["address on an unlisted pod of a cluster awsSubnets scopes away"]++
	case f.ifaceKept(n, false, false) != "":
		f.stats.Races["pod took an interface's address after the snapshot"]++
	}
	if why := f.netEvidence(n); why != "" {
		f.violate("deleted %s while %s", what, why)
	}
	for _, ip := range n.ips {
		if cps := f.w.podsWithIP(ip, true); len(cps) > 0 && cps[0].c.outOfScope() {
			f.stats.Declared["interface a cluster declared out of scope uses"]++
			break
		}
	}
	if f.w.twinIn(inventory.EKS, n.account+"/"+n.region) {
		f.stats.Covered["interface deleted in a same-name cluster's scope"]++
	}
	f.grace(what, n.clocks, f.netPol.Grace.Std())
}

// observeNetwork starts and resets the truth's clocks of interfaces.
func (f *fleet) observeNetwork(snap *inventory.View) {
	listed := map[string]bool{}
	for _, l := range ec2interface.NetworksOf(snap) {
		for _, n := range l.Interfaces {
			listed[l.Account+"/"+n.ID] = true
		}
	}
	for _, n := range f.w.ifaces {
		visible := listed[n.account+"/"+n.id] && f.netEvidence(n) == ""
		switch {
		case f.ifaceKept(n, false, false) == "":
			n.clocks.observe(true, visible, f.now)
		case f.ifaceKept(n, false, true) == "":
			// Only a pod this run could not list, of a cluster scoped away
			// from the subnet, holds it: reclaim may see an orphan.
			n.clocks.observe(false, false, f.now)
			if n.lenient.IsZero() {
				n.lenient = f.now
			}
		default:
			n.clocks.observe(false, visible, f.now)
		}
	}
}

// networks is the EC2 collection: an incomplete listing misses some.
func (f *fleet) networks() []inventory.NetworkListing {
	var out []inventory.NetworkListing
	for _, a := range f.w.accounts {
		for _, rg := range f.w.regions {
			out = append(out, f.network(a, rg))
		}
	}
	return out
}

// network is one account and region's EC2 listing.
func (f *fleet) network(a, rg string) inventory.NetworkListing {
	l := inventory.NetworkListing{Account: a, Region: rg, Complete: !f.rf.ec2[a]}
	if !l.Complete {
		l.Problem = "DescribeNetworkInterfaces page 2: RequestLimitExceeded: Request limit exceeded."
	}
	for _, s := range f.w.subnets {
		if s.account != a || s.region != rg {
			continue
		}
		sub := inventory.Subnet{Account: a, Region: rg, ID: s.id, VPC: vpcOf(a, rg), AZ: rg + "a",
			CIDR: fmt.Sprintf("10.%d.0.0/16", s.octet), Usable: 65531, Available: 65531, Clusters: slices.Clone(s.tagged)}
		for _, n := range f.w.ifaces {
			if n.subnet == s.id {
				sub.Available -= len(n.ips)
			}
		}
		l.Subnets = append(l.Subnets, sub)
	}
	for _, n := range f.w.ifaces {
		if n.account != a || n.region != rg || (!l.Complete && f.chance(0.4)) {
			continue
		}
		l.Interfaces = append(l.Interfaces, inventoryIface(n))
	}
	return l
}

func inventoryIface(n *iface) inventory.NetInterface {
	return inventory.NetInterface{ID: n.id, Subnet: n.subnet, VPC: vpcOf(n.account, n.region), AZ: n.region + "a", Description: n.desc, Status: n.status,
		Type: n.typ, RequesterManaged: n.requester, OperatorManaged: n.operator, Tags: copyMap(n.tags), IPs: slices.Clone(n.ips),
		Instance: n.instance}
}

// ec2API is ec2interface.API over the truth. In a run with races on, the world
// moves between a re-read and the delete that follows it.
type ec2API struct{ f *fleet }

func (e ec2API) Interfaces(ctx context.Context, account, region string, ids []string) ([]inventory.NetInterface, error) {
	f := e.f
	if err := f.alive(ctx); err != nil {
		return nil, err
	}
	var out []inventory.NetInterface
	for _, id := range ids {
		n := f.w.ifaceByID(account, id)
		if n == nil {
			continue
		}
		out = append(out, inventoryIface(n))
		if !f.rf.ec2Races || n.status != "available" {
			continue
		}
		switch x := f.rng.Float64(); {
		case x < 0.15:
			n.status, n.instance = "in-use", fmt.Sprintf("i-%08x", f.w.next())
			f.stats.Faults["window: interface attached after its re-read"]++
		case x < 0.25:
			f.removeIface(n, false)
			f.stats.Faults["window: interface deleted after its re-read"]++
		}
	}
	return out, nil
}

func (e ec2API) DeleteInterface(ctx context.Context, account, region, id string) error {
	f := e.f
	if err := f.begin(ctx, "delete interface "+id); err != nil {
		return err
	}
	defer f.end()
	n := f.w.ifaceByID(account, id)
	if n == nil {
		return fmt.Errorf("ec2 DeleteNetworkInterface %s: InvalidNetworkInterfaceID.NotFound: %w", id, outcome.ErrNotFound)
	}
	if n.status != "available" {
		return fmt.Errorf("ec2 DeleteNetworkInterface %s: InvalidNetworkInterface.InUse: %w", id, outcome.ErrInUse)
	}
	f.attempts[ec2interface.Name]++
	if f.failCall() {
		return &smithy.GenericAPIError{Code: "RequestLimitExceeded", Message: "Request limit exceeded."}
	}
	f.checkIface(n)
	f.removeIface(n, true)
	f.deleted(ec2interface.Name, ec2interface.ID(account, region, id))
	if f.loseResponse() {
		return errors.New("operation error EC2: DeleteNetworkInterface: context deadline exceeded")
	}
	return nil
}
