package fleetsim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
	"reclaim.dev/reclaim/reconcile/kinds/k8spvc"
)

// checkRun checks what the fakes cannot see call by call: the caps, the
// breaker and dry-run.
func (f *fleet) checkRun(snap *inventory.View, due map[string]int) {
	if !f.apply && f.calls > 0 {
		f.violate("dry run made %d mutating calls", f.calls)
	}
	inScope := inventoryInScope(snap)
	for _, k := range f.kinds {
		name, lim := k.Name(), k.Limits()
		n := f.attempts[name]
		if n > lim.MaxDeletes {
			f.violate("%s: %d deletes in one run, more than maxDeletes %d", name, n, lim.MaxDeletes)
		}
		if lim.MaxDeletePercent > 0 {
			if most := max(int(math.Floor(lim.MaxDeletePercent*float64(inScope[name]))), 1); n > most {
				f.violate("%s: %d deletes in one run, more than %.0f%% of %d", name, n, lim.MaxDeletePercent*100, inScope[name])
			}
		}
		if lim.BreakerCandidates > 0 && due[name] > lim.BreakerCandidates && f.apply {
			f.stats.Breakers++
		}
		if lim.BreakerCandidates > 0 && due[name] > lim.BreakerCandidates && n > 0 {
			f.violate("%s: %d due > breaker %d, yet %d deleted", name, due[name], lim.BreakerCandidates, n)
		}
	}
}

// inventoryInScope is what each kind's percent cap is a share of.
func inventoryInScope(snap *inventory.View) map[string]int {
	out := map[string]int{}
	for _, l := range gcepd.ListingOf(snap).Disks {
		out[gcedisk.Name] += len(l.Disks)
	}
	for _, c := range snap.Clusters {
		out[k8spvc.Name] += len(c.PVCs)
	}
	for _, reg := range ecrimage.RegistriesOf(snap) {
		for _, rl := range reg.Repos {
			out[ecrimage.Name] += rl.Len()
		}
	}
	for _, c := range snap.Clusters {
		for _, j := range c.Jobs {
			if j.Done() && j.Namespace != systemNS {
				out[k8sjob.Name]++
			}
		}
		for _, p := range c.Pods {
			if p.Done() && p.Namespace != systemNS {
				out[k8spod.Name]++
			}
		}
	}
	for _, l := range ec2interface.NetworksOf(snap) {
		for _, n := range l.Interfaces {
			if n.Status == "available" {
				out[ec2interface.Name]++
			}
		}
	}
	return out
}

// dueCount counts a kind's candidates whose grace, min age and own wait are
// over and whose evidence was complete, less those that wait for one that
// is not due: what the breaker must count. A candidate of a class the kind
// says is quota-driven (a trim back to target) is a backlog, not a wave of
// orphans, and is not counted; the caps still bound it.
func dueCount(p *engine.Plan, k engine.Kind, now time.Time) int {
	kind, quota := k.Name(), k.Limits().QuotaClasses
	due := map[string]*engine.Decision{}
	for d := range p.All() {
		if slices.Contains(quota, d.Class) {
			continue
		}
		if d.Kind == kind && d.DeletableAfter != nil && !d.DeletableAfter.After(now) && (d.Action == engine.Delete || d.Action == engine.Mark) {
			due[d.ID] = d
		}
	}
	for changed := true; changed; {
		changed = false
		for id, d := range due {
			for _, a := range d.After {
				if due[a] == nil {
					delete(due, id)
					changed = true
					break
				}
			}
		}
	}
	return len(due)
}

// final checks, after the calm runs, that every delete is in the audit log
// exactly once as done, and that no pending mark is left.
func (f *fleet) final() {
	done, deleted := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(f.auditLog.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			f.violate("audit line %q: %v", sc.Text(), err)
			continue
		}
		if r.Action == "delete" && (r.Result == audit.Deleted || r.Result == audit.AlreadyGone || r.Result == "confirmed-deleted") {
			done[r.ID]++
		}
		if r.Action == "delete" && r.Result == audit.Deleted {
			deleted[r.ID]++
		}
	}
	ids := map[string]bool{}
	for id := range done {
		ids[id] = true
	}
	for id := range f.byReclaim {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		// Every delete of reclaim's is recorded done once. A record more is
		// right only for an object someone else removed while reclaim's
		// delete of it was due or pending (reclaim found it gone, or settled
		// its unconfirmed delete by the listing) and never says "deleted".
		extra := done[id] - f.byReclaim[id]
		if extra < 0 || extra > f.byOthers[id] || deleted[id] > f.byReclaim[id] {
			f.violate("audit: %s deleted %d times (removed by others %d), recorded done %d times (%d as deleted)",
				id, f.byReclaim[id], f.byOthers[id], done[id], deleted[id])
		}
	}
	st, err := f.store.Load(context.Background())
	if err != nil {
		f.violate("load state: %v", err)
		return
	}
	for _, id := range slices.Sorted(maps.Keys(st.Pending)) {
		f.violate("pending mark left after the calm runs: %s", id)
	}
}
