package fleet

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
)

func outOfScopeRule(i int) string { return fmt.Sprintf("fleet.outOfScope[%d]", i) }

func expiredWhy(i int, o config.OutOfScope) string {
	return fmt.Sprintf("fleet.outOfScope[%d] expired on %s (it said: %s), so it holds again as not read — read it, or renew the declaration", i, o.Expires, o.Reason)
}

// outOfScope matches a discovered cluster against the declarations: the
// state it takes (out of scope, or a conflict for a declaration that has
// expired, does not pin the cluster, or pins another), the rule and the
// reason; "" when none names it. A declaration names one cluster (its
// platform, account or project, location and name are required), but a
// cluster rebuilt in its place has all of them too: only its endpoint and
// creation time tell the declared cluster from its successor, so a live
// cluster a declaration pinning neither matches holds, and the reason
// gives the values to pin.
func outOfScope(decls []config.OutOfScope, c inventory.FleetCluster, now time.Time) (rule, state, reason string) {
	// A declaration that pins c covers it, whatever another of its name
	// and place (the cluster it replaced) says.
	for i, o := range decls {
		// The location exactly: a region declared is a regional cluster,
		// not a zonal namesake in that region.
		if o.Name != c.Name || !declaredPlace(o).Agrees(c) || o.Location != c.Location {
			continue
		}
		why := ""
		switch exp := o.ExpiresAt(); {
		case !exp.IsZero() && !now.Before(exp):
			why = expiredWhy(i, o)
		case o.Endpoint == "" && o.Created == "":
			why = fmt.Sprintf("fleet.outOfScope[%d] declares %q in %s without its endpoint or creation time, and a live cluster of that name is there: reclaim cannot tell the declared cluster from one rebuilt in its place, so it holds — if it is the declared cluster, pin it with %s; else remove the declaration to read the cluster", i, o.Name, declaredPlace(o), pins(c))
		case o.Endpoint != "" && hostOf(o.Endpoint) != hostOf(c.Endpoint):
			why = fmt.Sprintf("fleet.outOfScope[%d] declares %q with the API server %s, but the live cluster of that name in %s %s serves %s: it was rebuilt or is another cluster, so it holds — update the declaration, or remove it to read the cluster", i, o.Name, hostOf(o.Endpoint), c.Platform, c.Scope(), cmp.Or(hostOf(c.Endpoint), "no API server yet"))
		case o.Created != "" && !o.CreatedAt().Truncate(time.Second).Equal(c.Created.Truncate(time.Second)):
			why = fmt.Sprintf("fleet.outOfScope[%d] declares %q created at %s, but the live cluster of that name in %s %s %s: it was rebuilt in its place or is another cluster, so it holds — update the declaration, or remove it to read the cluster", i, o.Name, o.CreatedAt().UTC().Format(time.RFC3339), c.Platform, c.Scope(), createdWhen(c))
		default:
			return outOfScopeRule(i), inventory.MemberOutOfScope, o.Reason
		}
		if state == "" {
			rule, state, reason = outOfScopeRule(i), inventory.MemberConflict, why
		}
	}
	return rule, state, reason
}

// pins are the declaration fields that would pin a discovered cluster.
func pins(c inventory.FleetCluster) string {
	var out []string
	if c.Endpoint != "" {
		out = append(out, "endpoint: "+c.Endpoint)
	}
	if !c.Created.IsZero() {
		out = append(out, "created: "+c.Created.UTC().Format(time.RFC3339))
	}
	if len(out) == 0 {
		return "its endpoint or created (discovery lists neither yet)"
	}
	return strings.Join(out, " or ")
}

// createdWhen says when discovery says c was created.
func createdWhen(c inventory.FleetCluster) string {
	if c.Created.IsZero() {
		return "has no creation time discovery reports"
	}
	return "was created at " + c.Created.UTC().Format(time.RFC3339)
}

// PlaceOf is where a configured cluster says it lives.
func PlaceOf(cl config.Cluster) inventory.Place {
	return inventory.Place{Platform: platformOf(cl.Platform, cl.Account, cl.Project), Account: cl.Account, Project: cl.Project, Location: cl.Location}
}

// declaredPlace is where an out-of-scope declaration says its cluster lives.
func declaredPlace(o config.OutOfScope) inventory.Place {
	return inventory.Place{Platform: platformOf(o.Platform, o.Account, o.Project), Account: o.Account, Project: o.Project, Location: o.Location}
}

// platformOf: an account is AWS's, a project GCP's.
func platformOf(platform, account, project string) string {
	switch {
	case platform != "":
		return platform
	case account != "":
		return inventory.EKS
	case project != "":
		return inventory.GKE
	}
	return ""
}
