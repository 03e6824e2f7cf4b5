package ec2interface

import (
	"sort"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// Holder says what holds an address.
type Holder string

const (
	HeldByRunningPod  Holder = "running-pods"
	HeldByFinishedPod Holder = "finished-pods"
	HeldByNode        Holder = "nodes"
	HeldByUnknown     Holder = "unknown"
)

// IPHolder is what holds one address of an interface.
type IPHolder struct {
	Holder    Holder
	Cluster   string
	Namespace string
	Pod       string
	PodUID    string
	Job       string // the pod's Job, if any
	JobUID    string
	CronJob   string // the Job's CronJob, if any
	Node      string
	Created   time.Time // the pod's creation
	// Stuck is the pod's inventory.Pod.Stuck: Running after its main
	// container exited (a Job whose sidecar never stops).
	Stuck string
}

// SubnetUse is who holds a subnet's addresses.
type SubnetUse struct {
	Subnet inventory.Subnet
	// Clusters are the configured clusters that could use the subnet; none
	// means its addresses are unattributed, not free.
	Clusters []string
	// Complete: the interfaces were all listed and every cluster that could
	// use the subnet listed its pods.
	Complete   bool
	Running    int
	Finished   int
	Nodes      int
	Unknown    int
	Interfaces int
	// FinishedHolders are the finished pods holding addresses, one entry per
	// address.
	FinishedHolders []IPHolder
	// StuckHolders are the Running pods holding addresses after their
	// main container exited (inventory.Pod.Stuck), one entry per address.
	StuckHolders []IPHolder
	// Recent counts addresses held by pods created within RecentWindow: the
	// rate at which new pods take addresses.
	Recent int
	// Addresses are every address an interface of the subnet shows, and
	// what holds it (a delegated prefix's addresses are counted, not listed).
	Addresses []Address
}

// Address is one address of a subnet and what holds it.
type Address struct {
	Subnet    string `json:"subnet"`
	IP        string `json:"ip"`
	Interface string `json:"interface"`
	Holder    Holder `json:"holder"`
	Cluster   string `json:"cluster,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Node      string `json:"node,omitempty"`
}

// Used is the addresses something holds (usable less available).
func (s *SubnetUse) Used() int { return s.Subnet.Usable - s.Subnet.Available }

// RecentWindow is how far back pod creations count toward the consumption rate.
const RecentWindow = 6 * time.Hour

// clusterIndex finds what holds an address in one cluster.
type clusterIndex struct {
	name       string
	complete   bool
	pods       map[string]*inventory.Pod
	nodes      map[string]*inventory.Node // by InternalIP
	instances  map[string]*inventory.Node // by EC2 instance id
	jobs       map[string]*inventory.Job  // by UID
	subnetsAny bool
	c          *inventory.ClusterRefs
}

func indexCluster(c *inventory.ClusterRefs) *clusterIndex {
	ix := &clusterIndex{name: c.Name, complete: c.Complete && c.WorkloadsListed, c: c,
		pods: make(map[string]*inventory.Pod, len(c.Pods)), nodes: map[string]*inventory.Node{}, instances: map[string]*inventory.Node{},
		jobs: make(map[string]*inventory.Job, len(c.Jobs))}
	for i := range c.Pods {
		p := &c.Pods[i]
		for _, ip := range p.IPs {
			// Two pods may show one address for a moment (one finished, its
			// successor starting): the running one is the holder.
			if old := ix.pods[ip]; old == nil || (old.Done() && !p.Done()) {
				ix.pods[ip] = p
			}
		}
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		for _, ip := range n.IPs {
			ix.nodes[ip] = n
		}
		if n.Instance != "" {
			ix.instances[n.Instance] = n
		}
	}
	for i := range c.Jobs {
		ix.jobs[c.Jobs[i].UID] = &c.Jobs[i]
	}
	return ix
}

// Attribution joins every interface's private addresses with the pods and
// nodes of every cluster that could use its subnet: never by guessing from
// an interface's description.
type Attribution struct {
	Subnets  []SubnetUse
	clusters []*clusterIndex
}

// Attribute attributes every address of every subnet in the snapshot.
func Attribute(snap *inventory.View, now time.Time) *Attribution {
	a := &Attribution{}
	for i := range snap.Clusters {
		a.clusters = append(a.clusters, indexCluster(&snap.Clusters[i]))
	}
	for _, l := range NetworksOf(snap) {
		bySubnet := map[string][]*inventory.NetInterface{}
		for i := range l.Interfaces {
			n := &l.Interfaces[i]
			bySubnet[n.Subnet] = append(bySubnet[n.Subnet], n)
		}
		for _, s := range l.Subnets {
			u := SubnetUse{Subnet: s, Complete: l.Complete}
			for _, cx := range a.clusters {
				if cx.c.CouldUseSubnet(s.ID) {
					u.Clusters = append(u.Clusters, cx.name)
					u.Complete = u.Complete && cx.complete
				}
			}
			attributed := 0
			for _, n := range bySubnet[s.ID] {
				u.Interfaces++
				for _, ip := range n.IPs {
					h := a.Holder(s.ID, n, ip)
					attributed++
					u.Addresses = append(u.Addresses, Address{Subnet: s.ID, IP: ip, Interface: n.ID, Holder: h.Holder,
						Cluster: h.Cluster, Namespace: h.Namespace, Pod: h.Pod, Node: h.Node})
					switch h.Holder {
					case HeldByRunningPod:
						u.Running++
						if h.Stuck != "" {
							u.StuckHolders = append(u.StuckHolders, h)
						}
					case HeldByFinishedPod:
						u.Finished++
						u.FinishedHolders = append(u.FinishedHolders, h)
					case HeldByNode:
						u.Nodes++
					default:
						u.Unknown++
					}
					if (h.Holder == HeldByRunningPod || h.Holder == HeldByFinishedPod) && now.Sub(h.Created) < RecentWindow {
						u.Recent++
					}
				}
				if n.Prefixes > 0 {
					// Delegated prefixes are a node's (prefix delegation):
					// pods inside them are not told apart here.
					held := n.Prefixes * 16
					attributed += held
					if a.nodeOf(s.ID, n) != nil {
						u.Nodes += held
					} else {
						u.Unknown += held
					}
				}
			}
			// Addresses in use that no listed interface showed (a listing
			// cut short, or held by something reclaim cannot see).
			if rest := u.Used() - attributed; rest > 0 {
				u.Unknown += rest
			}
			sort.Slice(u.FinishedHolders, func(i, j int) bool { return u.FinishedHolders[i].Created.Before(u.FinishedHolders[j].Created) })
			a.Subnets = append(a.Subnets, u)
		}
	}
	return a
}

// Holder says what holds an address of interface n in subnet: a pod of a
// cluster that could use the subnet (running before finished), else a node
// (its address, or an interface attached to its instance: the CNI's warm
// pool), else nothing reclaim knows.
func (a *Attribution) Holder(subnet string, n *inventory.NetInterface, ip string) IPHolder {
	var found *IPHolder
	for _, cx := range a.clusters {
		if !cx.c.CouldUseSubnet(subnet) {
			continue
		}
		p := cx.pods[ip]
		if p == nil {
			continue
		}
		h := IPHolder{Holder: HeldByRunningPod, Cluster: cx.name, Namespace: p.Namespace, Pod: p.Name, PodUID: p.UID, Node: p.Node, Created: p.Created, Stuck: p.Stuck}
		if p.Done() {
			h.Holder = HeldByFinishedPod
		}
		if p.Owner != nil && p.Owner.Kind == "Job" {
			h.Job, h.JobUID = p.Owner.Name, p.Owner.UID
			if j := cx.jobs[p.Owner.UID]; j != nil && j.CronJob != nil {
				h.CronJob = j.CronJob.Name
			}
		}
		if found == nil || (found.Holder == HeldByFinishedPod && h.Holder == HeldByRunningPod) {
			found = &h
		}
	}
	if found != nil {
		return *found
	}
	for _, cx := range a.clusters {
		if !cx.c.CouldUseSubnet(subnet) {
			continue
		}
		if nd := cx.nodes[ip]; nd != nil {
			return IPHolder{Holder: HeldByNode, Cluster: cx.name, Node: nd.Name}
		}
	}
	if nd := a.nodeOf(subnet, n); nd != nil {
		return IPHolder{Holder: HeldByNode, Node: nd.Name}
	}
	return IPHolder{Holder: HeldByUnknown}
}

func (a *Attribution) nodeOf(subnet string, n *inventory.NetInterface) *inventory.Node {
	if n.Instance == "" {
		return nil
	}
	for _, cx := range a.clusters {
		if cx.c.CouldUseSubnet(subnet) {
			if nd := cx.instances[n.Instance]; nd != nil {
				return nd
			}
		}
	}
	return nil
}

// PodWithIP returns a pod of any cluster (whatever subnets it is said to
// use: an interface is kept on any sighting) showing ip, and its cluster.
func (a *Attribution) PodWithIP(ip string) (*inventory.Pod, string) {
	for _, cx := range a.clusters {
		if p := cx.pods[ip]; p != nil {
			return p, cx.name
		}
	}
	return nil, ""
}

// ClustersFor are the clusters that could use the subnet.
func (a *Attribution) ClustersFor(subnet string) []*inventory.ClusterRefs {
	var out []*inventory.ClusterRefs
	for _, cx := range a.clusters {
		if cx.c.CouldUseSubnet(subnet) {
			out = append(out, cx.c)
		}
	}
	return out
}
