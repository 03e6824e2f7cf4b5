package finished

import (
	"strings"

	"reclaim.dev/reclaim/engine"
	"reclaim.dev/reclaim/inventory"
)

// ID names a Job or Pod across the fleet: clusters/C/namespaces/N/RESOURCE/NAME.
func ID(cluster, resource, namespace, name string) string {
	return "clusters/" + cluster + "/namespaces/" + namespace + "/" + resource + "/" + name
}

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
// source key the engine checks, and a hold when the cluster was listed but
// not asked for its workloads.
type Cluster struct {
	*inventory.ClusterRefs
	Sources []string
	Hold    string
}

// Lister says what a kind lists of each cluster and how it names it.
type Lister[T any] struct {
	Resource string // in ids: "jobs", "pods"
	Noun     string // in holds: "Jobs", "Pods"
	Items    func(c *inventory.ClusterRefs) []T
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
func Propose[T any](snap *inventory.Snapshot, l Lister[T]) engine.Proposals {
	out := engine.Proposals{}
	uids := map[Key]string{}
	listed := map[string]bool{}
	clusters := make([]Cluster, 0, len(snap.Clusters))
	for ci := range snap.Clusters {
		c := &snap.Clusters[ci]
		listed[c.Name] = c.Complete && c.WorkloadsListed
		cl := Cluster{ClusterRefs: c, Sources: []string{engine.SourceKey("cluster", c.Name)}}
		if c.Complete && !c.WorkloadsListed {
			cl.Hold = "cluster " + c.Name + " was not asked for its " + l.Noun
		}
		clusters = append(clusters, cl)
		items := l.Items(c)
		for i := range items {
			ns, name, uid := l.Key(&items[i])
			uids[Key{c.Name, ns, name}] = uid
			if l.Eligible(&items[i]) {
				out.InScope++
			}
		}
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
		return uids[key]
	}
	out.Presence = func(id string) engine.Presence {
		key, ok := ParseID(id, l.Resource)
		if !ok || !listed[key.Cluster] {
			return engine.Unknown
		}
		if _, ok := uids[key]; ok {
			return engine.Present
		}
		return engine.Gone
	}
	return out
}
