package finished

import (
	"strings"
	"sync"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// ID names a Job or Pod across the fleet: clusters/C/namespaces/N/RESOURCE/NAME.
func ID(cluster, resource, namespace, name string) string {
	return "clusters/" + cluster + "/namespaces/" + namespace + "/" + resource + "/" + name
}

// The API resources in the ids of k8s-job and k8s-pod. ec2-interface
// finds by them what a delete of a Job or Pod frees, without importing
// either kind.
const (
	Jobs = "jobs"
	Pods = "pods"
)

// JobID is a Job's id (k8s-job's), PodID a Pod's (k8s-pod's).
func JobID(cluster, namespace, name string) string { return ID(cluster, Jobs, namespace, name) }
func PodID(cluster, namespace, name string) string { return ID(cluster, Pods, namespace, name) }

// Key names an object without building its id.
type Key struct{ Cluster, Namespace, Name string }

// ParseID is the inverse of ID for one resource.
func ParseID(id, resource string) (Key, bool) {
	p := strings.Split(id, "/")
	if len(p) != 6 || p[0] != "clusters" || p[2] != "namespaces" || p[4] != resource {
		return Key{}, false
	}
	return Key{p[1], p[3], p[5]}, true
}

// Cluster is one cluster's evidence, shared by its objects' proposals: the
// source keys the engine checks (the cluster, its workloads read).
type Cluster struct {
	*inventory.ClusterRefs
	Sources []string
	// Listing and JobsListing name the cluster's listings of the kind's
	// objects (under its policy) and of its Jobs, which a terminal candidate
	// names as its witnesses (engine.Proposal.Witnesses).
	Listing, JobsListing string
}

// Witness names a cluster's listing as the witness of an object at version
// (its resourceVersion).
func Witness(listing, version string) engine.Witness {
	return engine.Witness{Listing: listing, Version: version}
}

// Lister says what a kind lists of each cluster and how it names it.
type Lister[T any] struct {
	Resource string // in ids: "jobs", "pods"
	// Policy fingerprints what makes an object a candidate (Policy.Fingerprint):
	// a change starts every derived clock anew.
	Policy string
	Noun   string // in holds: "Jobs", "Pods"
	Items  func(c *inventory.ClusterRefs) []T
	// Version is the cluster's listing version of these objects.
	Version func(c *inventory.ClusterRefs) string
	// Listings, if set, names more listings of the cluster's objects
	// (suffixes of Cluster.Listing, read with it): what else a candidate's
	// clock depends on, such as the history limits of a Job's CronJob.
	Listings func(c *inventory.ClusterRefs) []string
	Key      func(o *T) (namespace, name, uid string)
	// Eligible: finished and in the policy's scope (the rest get no proposal).
	Eligible func(o *T) bool
	// Prepare makes the cluster's proposer (after indexing what it needs).
	Prepare func(c *Cluster) func(o *T) engine.Proposal
}

// Propose indexes every object of every cluster for the engine's Presence
// and Identity, counts the eligible ones, and streams their proposals as
// the engine decides them: a backlog of 100,000 finished Jobs never has its
// proposals all alive at once.
func Propose[T any](snap *inventory.View, l Lister[T]) engine.Proposals {
	out := engine.Proposals{Listings: map[string]engine.Read{}}
	listed := map[string]bool{}
	clusters := make([]Cluster, 0, len(snap.Clusters))
	for ci := range snap.Clusters {
		c := &snap.Clusters[ci]
		listed[c.Name] = c.Complete && c.WorkloadsListed
		key := inventory.ClusterKey(c.Name)
		// The engine holds them when the cluster was read without its
		// workloads (inventory.ReadWorkloads).
		users := engine.Users{Clusters: []string{c.Name}, Reads: []string{inventory.ReadWorkloads}}
		cl := Cluster{ClusterRefs: c, Sources: users.Keys(snap.Fleet),
			Listing: key + " " + l.Resource + " policy:" + l.Policy, JobsListing: key + " jobs"}
		out.Listings[cl.Listing] = engine.Read{Complete: listed[c.Name], Version: l.Version(c)}
		out.Listings[cl.JobsListing] = engine.Read{Complete: listed[c.Name], Version: c.JobsVersion}
		if l.Listings != nil {
			for _, sfx := range l.Listings(c) {
				out.Listings[cl.Listing+" "+sfx] = out.Listings[cl.Listing]
			}
		}
		clusters = append(clusters, cl)
		items := l.Items(c)
		for i := range items {
			if l.Eligible(&items[i]) {
				out.InScope++
				out.StreamSize++
			}
		}
	}
	// The UIDs by name are only asked for the few ids the state names (a
	// pending delete, a clock kept by an older version): made on the first
	// ask, since 100,000 objects' map would live through the whole plan.
	var uidsOnce sync.Once
	var uids map[Key]string
	uidOf := func(key Key) (string, bool) {
		uidsOnce.Do(func() {
			uids = map[Key]string{}
			for _, cl := range clusters {
				items := l.Items(cl.ClusterRefs)
				for i := range items {
					ns, name, uid := l.Key(&items[i])
					uids[Key{cl.Name, ns, name}] = uid
				}
			}
		})
		uid, ok := uids[key]
		return uid, ok
	}
	out.Stream = func(yield func(*engine.Proposal) bool) {
		for ci := range clusters {
			propose := l.Prepare(&clusters[ci])
			items := l.Items(clusters[ci].ClusterRefs)
			for i := range items {
				if !l.Eligible(&items[i]) {
					continue
				}
				p := propose(&items[i])
				if !yield(&p) {
					return
				}
			}
		}
	}
	out.Identity = func(id string) string {
		key, _ := ParseID(id, l.Resource)
		uid, _ := uidOf(key)
		return uid
	}
	out.Presence = engine.ListedBy(func(id string) bool {
		key, ok := ParseID(id, l.Resource)
		return ok && listed[key.Cluster]
	}, func(id string) bool {
		key, _ := ParseID(id, l.Resource)
		_, ok := uidOf(key)
		return ok
	})
	return out
}

// Names is what names a finished kind: its kind name and the API resource
// in its ids. A kind embeds it for engine.Kind's Name and Owns.
type Names struct {
	Kind     string // "k8s-job"
	Resource string // "jobs"
}

// Name implements engine.Kind.
func (n Names) Name() string { return n.Kind }

// Owns implements engine.Kind.
func (n Names) Owns(id string) bool { _, ok := ParseID(id, n.Resource); return ok }

// ID names one of the kind's objects across the fleet.
func (n Names) ID(cluster, namespace, name string) string {
	return ID(cluster, n.Resource, namespace, name)
}

// Proposal starts the proposal of the object det describes, before its
// verdict: its id across the fleet, its name, and the subnet addresses a
// delete frees.
func (n Names) Proposal(name string, det *Detail) engine.Proposal {
	return engine.Proposal{ID: n.ID(det.Cluster, det.Namespace, name), Name: name, Detail: det,
		Frees: amount.Free(int64(det.IPs), Addresses)}
}

// Keep is p kept, for reason, filed under class.
func Keep(p *engine.Proposal, class, reason string) engine.Proposal {
	p.Class, p.Reason = class, reason
	return *p
}
