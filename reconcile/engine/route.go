package engine

import (
	"cmp"
	"path"
	"slices"
)

// Where says where a resource lives, in the terms an owner is known by:
// what each kind knows of it without another API call. Empty fields are
// unknown, and match no route that asks for them.
type Where struct {
	Cluster   string
	Namespace string
	// Scope is the cloud scope: a GCE project, an AWS account/region.
	Scope string
	// Repository is an ECR repository's name.
	Repository string
	// Labels are the resource's own labels or tags (a GCE disk's labels,
	// an interface's tags); NamespaceLabels its namespace's, for the owner
	// label an object does not carry itself.
	Labels, NamespaceLabels map[string]string
}

// Located is a decision's Detail that says where its resource lives; a
// Detail that is not Located is owned by no route.
type Located interface {
	Where() Where
}

// Route names the owner of the candidates it matches (notify.routes): the
// reports of the owner's notify targets list those, and only those. Each
// list holds path.Match patterns ("etl-*"), any of which may match; every
// non-empty list must match. A route with no list matches nothing: it
// only gives the owner an owner label names its targets.
type Route struct {
	Owner        string
	Kinds        []string
	Clusters     []string
	Namespaces   []string
	Scopes       []string
	Repositories []string
	// Labels must all be present with these values ("*" patterns too).
	Labels map[string]string
}

// Match reports whether r matches a resource of kind at w.
func (r *Route) Match(kind string, w Where) bool {
	if len(r.Kinds)+len(r.Clusters)+len(r.Namespaces)+len(r.Scopes)+len(r.Repositories)+len(r.Labels) == 0 {
		return false
	}
	if !matchAny(r.Kinds, kind) || !matchAny(r.Clusters, w.Cluster) || !matchAny(r.Namespaces, w.Namespace) ||
		!matchAny(r.Scopes, w.Scope) || !matchAny(r.Repositories, w.Repository) {
		return false
	}
	for k, pat := range r.Labels {
		v, ok := w.Labels[k]
		if !ok || !match(pat, v) {
			return false
		}
	}
	return true
}

// matchAny: an empty list matches anything; else some pattern must match
// v, and an unknown (empty) v matches none.
func matchAny(pats []string, v string) bool {
	if len(pats) == 0 {
		return true
	}
	return v != "" && slices.ContainsFunc(pats, func(p string) bool { return match(p, v) })
}

// match is path.Match with a malformed pattern matching nothing (config
// check rejects those).
func match(pat, v string) bool {
	ok, err := path.Match(pat, v)
	return err == nil && ok
}

// owner is d's owner: its owner label's value, else the owner of the
// first route that matches it, else "".
func (o *options) owner(d *Decision) string {
	if len(o.routes) == 0 && o.ownerLabel == "" {
		return ""
	}
	l, ok := d.Detail.(Located)
	if !ok {
		return ""
	}
	w := l.Where()
	if o.ownerLabel != "" {
		if v := cmp.Or(w.Labels[o.ownerLabel], w.NamespaceLabels[o.ownerLabel]); v != "" {
			return v
		}
	}
	for i := range o.routes {
		if o.routes[i].Match(d.Kind, w) {
			return o.routes[i].Owner
		}
	}
	return ""
}
