package config

import (
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Route names the owner of the candidates it matches and the notify
// targets that owner reads: those targets' reports list that owner's
// candidates only. A candidate belongs to the first route that matches
// it; one no route matches is told only to the targets no route names (the
// fleet's). Each list holds patterns (path.Match: *, ?, [a-z]; * stops at
// a /), any of which may match; every list given must match, and an empty
// list matches anything. What a kind knows: k8s-job, k8s-pod and k8s-pvc
// their cluster and namespace; gce-disk its project (scope), the namespace
// of the PVC it was made for, and its labels; ecr-image its
// account/region (scope) and repository; ec2-interface its account/region
// (scope), the cluster its tags name, and its tags.
type Route struct {
	// Owner names the team ("data-eng"): it heads the team's reports and is
	// each candidate's owner in the JSON report.
	Owner string `json:"owner"`
	// Targets are names of notify.slack and notify.email targets.
	Targets      []string `json:"targets"`
	Kinds        []string `json:"kinds,omitempty"`
	Clusters     []string `json:"clusters,omitempty"`
	Namespaces   []string `json:"namespaces,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	Repositories []string `json:"repositories,omitempty"`
	Labels       Tags     `json:"labels,omitempty"`
}

// RoutedOwners gives, per target name, the owners whose routes name it;
// a target not in the map gets the whole report.
func (n *Notify) RoutedOwners() map[string][]string {
	if n == nil || len(n.Routes) == 0 {
		return nil
	}
	out := map[string][]string{}
	for _, r := range n.Routes {
		for _, t := range r.Targets {
			if !slices.Contains(out[t], r.Owner) {
				out[t] = append(out[t], r.Owner)
			}
		}
	}
	return out
}

func (n *Notify) validateRoutes(ps *problems, path string, targets map[string]bool) {
	if len(n.Routes) == 0 {
		return
	}
	routed := n.RoutedOwners()
	fleet := 0
	for name := range targets {
		if routed[name] == nil {
			fleet++
		}
	}
	if fleet == 0 {
		ps.add(path+".routes", "every target is named by a route — keep one target out of every route: the candidates no route matches, the fleet's warnings and the quota and subnet tables go to the targets no route names")
	}
	if n.OwnerLabel != "" && !labelKey.MatchString(n.OwnerLabel) {
		ps.add(path+".ownerLabel", "%q is not a label or tag key — write e.g. team or example.com/team", n.OwnerLabel)
	}
	for i := range n.Routes {
		r, p := &n.Routes[i], index(path+".routes", i)
		switch {
		case r.Owner == "":
			ps.add(p+".owner", "is required — the team's name, such as data-eng")
		case !isDNSLabel(r.Owner):
			ps.add(p+".owner", "%q is not a valid owner name — %s", r.Owner, clusterHint)
		}
		if len(r.Targets) == 0 {
			ps.add(p+".targets", "is required — the names of the notify targets this owner reads")
		}
		for j, t := range r.Targets {
			if !targets[t] {
				ps.add(index(p+".targets", j), "%q is not the name of a notify.slack or notify.email target — one of %s", t, strings.Join(slices.Sorted(maps.Keys(targets)), ", "))
			}
		}
		if len(r.Kinds)+len(r.Clusters)+len(r.Namespaces)+len(r.Scopes)+len(r.Repositories)+len(r.Labels) == 0 && n.OwnerLabel == "" {
			ps.add(p, "matches nothing — give clusters, namespaces, scopes, repositories, labels or kinds, or set notify.ownerLabel (such as team) so that what carries team=%s is this owner's", r.Owner)
		}
		for _, l := range []struct {
			key  string
			pats []string
		}{{"kinds", r.Kinds}, {"clusters", r.Clusters}, {"namespaces", r.Namespaces}, {"scopes", r.Scopes}, {"repositories", r.Repositories}} {
			for j, pat := range l.pats {
				if msg := patternProblem(pat); msg != "" {
					ps.add(index(p+"."+l.key, j), "%q %s", pat, msg)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
			if k == "" {
				ps.add(p+".labels", "has an empty key — write the label or tag key, such as team")
			} else if msg := patternProblem(r.Labels[k]); msg != "" {
				ps.add(p+".labels."+k, "%q %s", r.Labels[k], msg)
			}
		}
	}
}

// labelKey is a Kubernetes label key, a GCE label key or an AWS tag key:
// no spaces, nothing an owner's name would not be read from.
var labelKey = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/:+=@-]{0,126}[A-Za-z0-9])?$`)

// patternProblem says what is wrong with a route pattern, "" when nothing.
func patternProblem(pat string) string {
	if pat == "" {
		return "is empty — write a name or a pattern such as etl-*"
	}
	if _, err := path.Match(pat, ""); err != nil {
		return "is not a valid pattern (" + err.Error() + ") — use *, ? and [a-z], with \\ before a literal one"
	}
	return ""
}
