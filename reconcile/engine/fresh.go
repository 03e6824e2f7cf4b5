package engine

import "time"

// freshViews is what a plan keeps so that the applier checks FreshViews
// again right before each delete call, after the re-read and any snapshot
// wait (which can last Limits.SnapshotTimeout): the bound, when the plan
// was made, and the oldest cluster view each due delete relies on. A
// decision keeps only the index of its view (Decision.view, 0 for none,
// in padding it had anyway), a row its look's: the views themselves are
// the fleet's clusters, a few.
type freshViews struct {
	*freshness
	planned time.Time
	views   []view
	at      map[view]uint32 // views' indexes, while the plan is built
}

// viewOf is the index (Decision.view) of the oldest cluster view a due
// candidate relies on, with FreshViews; 0 for none.
func (r *rules) viewOf(it *Proposal) uint32 {
	v := r.oldest(it)
	if v.name == "" {
		return 0
	}
	f := r.p.fresh
	if f == nil {
		f = &freshViews{freshness: r.opt.fresh, planned: r.now, at: map[view]uint32{}}
		r.p.fresh = f
	}
	i, ok := f.at[v]
	if !ok {
		f.views = append(f.views, v)
		i = uint32(len(f.views))
		f.at[v] = i
	}
	return i
}

// staleAt says why d may not be deleted at now on the cluster views its
// plan relied on (FreshViews): the rule Build applied, applied again with
// the applier's clock. "" when they are still fresh, or d relies on none.
func (p *Plan) staleAt(d *Decision, now time.Time) string {
	f := p.fresh
	if f == nil || d.view == 0 || int(d.view) > len(f.views) {
		return ""
	}
	var since time.Time
	if d.OrphanSince != nil {
		since = *d.OrphanSince
	}
	return f.why(f.views[d.view-1], since, f.planned, now)
}

// staleDeferral is why a delete is deferred when its views went stale
// between the plan and the delete call.
func staleDeferral(why string) string {
	return "deferred: " + why + " — found right before the delete call, after the re-read and any snapshot wait; the resource is kept, its clock runs on, and a later run deletes it on a fresher view"
}
