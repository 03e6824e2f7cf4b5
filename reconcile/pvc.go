package reconcile

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// planPVCs decides about PVCs owned by finished Argo Workflows that no running
// pod mounts: the leak behind the SSD_TOTAL_GB story. Deleting them is off by
// default; when on, they follow the same grace, caps and breaker as disks.
// It returns the indexes of PVC decisions due for deletion.
func planPVCs(p *Plan, clusters []inventory.ClusterRefs, pol Policy, st *State, now time.Time) []int {
	var due []int
	for _, c := range clusters {
		for _, pvc := range c.PVCs {
			id := pvcID(c.Name, pvc.Namespace, pvc.Name)
			dec := Decision{Kind: KindPVC, ID: id, Cluster: c.Name, Location: pvc.Namespace, Name: pvc.Name,
				SizeGB: pvc.CapacityGB, UID: pvc.UID}
			if pvc.Disk != nil {
				dec.Project, dec.Region = pvc.Disk.Project, regionOfKey(*pvc.Disk)
			}
			w := pvc.Workflow
			running := runningPods(pvc.Pods)
			switch {
			case pvc.Terminating:
				// Deleted already (by reclaim or anyone): deleting it again
				// would change nothing and audit the same delete twice.
				st.forget(id)
				dec.Action, dec.Reason = Keep, "already being deleted (Terminating until no pod uses it)"
			case w == nil || !w.Done():
				st.forget(id)
				dec.Action, dec.Reason = Keep, "its Workflow has not finished"
				if w != nil && w.Phase != "" {
					dec.Reason = fmt.Sprintf("Workflow %s/%s is %s", w.Namespace, w.Name, w.Phase)
				}
			case len(running) > 0:
				st.forget(id)
				dec.Action, dec.Reason = Keep, fmt.Sprintf("mounted by pod %s (%s)", running[0].Namespace+"/"+running[0].Name, running[0].Phase)
			case pvc.Protected:
				st.forget(id)
				dec.Action, dec.Reason = Keep, "protected by label on the PVC or its PV"
			case !c.Complete:
				dec.Action, dec.Held = Mark, true
				dec.Reason = fmt.Sprintf("Workflow %s/%s %s, but cluster %s was not read completely: held", w.Namespace, w.Name, w.Phase, c.Name)
			default:
				since := st.observeAs(id, pvc.UID, now)
				after := since.Add(pol.Grace)
				dec.OrphanSince, dec.DeletableAfter = &since, &after
				what := fmt.Sprintf("Workflow %s/%s %s at %s and no running pod mounts it", w.Namespace, w.Name, w.Phase, fmtTime(w.Finished))
				switch {
				case !pol.DeleteWorkflowPVCs:
					dec.Action, dec.DeletableAfter = Report, nil
					dec.Reason = what + "; deleteWorkflowPVCs is off"
				case now.Before(after):
					dec.Action = Mark
					dec.Reason = fmt.Sprintf("%s; deletable after %s (grace %s)", what, fmtTime(after), pol.Grace)
				default:
					dec.Action = Delete
					dec.Reason = what
				}
			}
			p.Decisions = append(p.Decisions, dec)
			if dec.Action == Delete {
				due = append(due, len(p.Decisions)-1)
			}
		}
	}
	return due
}

// pvcID names a PVC across the fleet.
func pvcID(cluster, namespace, name string) string {
	return fmt.Sprintf("clusters/%s/namespaces/%s/persistentvolumeclaims/%s", cluster, namespace, name)
}

func runningPods(pods []inventory.PodRef) []inventory.PodRef {
	var out []inventory.PodRef
	for _, p := range pods {
		if p.Running() {
			out = append(out, p)
		}
	}
	return out
}

func regionOfKey(k inventory.DiskKey) string {
	if k.Region != "" {
		return k.Region
	}
	if k.Zone == inventory.Unspecified {
		return ""
	}
	return inventory.RegionOfZone(k.Zone)
}

// holders groups the GB held by finished-workflow PVCs by cluster, namespace and
// workflow: the answer to "who ate the SSD quota".
func holders(clusters []inventory.ClusterRefs) []Holder {
	type key struct{ c, ns, wf string }
	m := map[key]*Holder{}
	for _, c := range clusters {
		for _, pvc := range c.PVCs {
			w := pvc.Workflow
			if w == nil || !w.Done() || len(runningPods(pvc.Pods)) > 0 {
				continue
			}
			k := key{c.Name, pvc.Namespace, w.Name}
			h := m[k]
			if h == nil {
				h = &Holder{Cluster: c.Name, Namespace: pvc.Namespace, Workflow: w.Name, Phase: w.Phase}
				m[k] = h
			}
			h.PVCs++
			h.GB += pvc.CapacityGB
		}
	}
	out := make([]Holder, 0, len(m))
	for _, h := range m {
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GB != out[j].GB {
			return out[i].GB > out[j].GB
		}
		return out[i].Cluster+out[i].Namespace+out[i].Workflow < out[j].Cluster+out[j].Namespace+out[j].Workflow
	})
	return out
}

// headroom puts each regional quota next to what the plan frees.
func headroom(quotas []inventory.Quota, p *Plan, clusters []inventory.ClusterRefs, pol Policy) []Headroom {
	type key struct{ project, region, metric string }
	frees, orphan, wf := map[key]float64{}, map[key]float64{}, map[key]float64{}
	for _, d := range p.Decisions {
		switch {
		case d.Kind == KindDisk && d.QuotaMetric != "":
			k := key{d.Project, d.Region, d.QuotaMetric}
			if d.Action == Delete {
				frees[k] += float64(d.SizeGB)
			}
			if d.OrphanSince != nil && (d.Action == Delete || d.Action == Mark || d.Action == Report) {
				orphan[k] += float64(d.SizeGB)
			}
		}
	}
	// PVCs free their disk's quota once the PV's reclaim policy deletes the disk.
	diskMetric := map[string]string{}
	for _, d := range p.Decisions {
		if d.Kind == KindDisk {
			diskMetric[d.Name] = d.QuotaMetric
		}
	}
	pvcDisk := map[string]string{} // PVC id -> name of the disk behind it
	for _, c := range clusters {
		for _, pvc := range c.PVCs {
			if pvc.Disk == nil {
				continue
			}
			pvcDisk[pvcID(c.Name, pvc.Namespace, pvc.Name)] = pvc.Disk.Name
			if pvc.Workflow == nil || !pvc.Workflow.Done() || len(runningPods(pvc.Pods)) > 0 {
				continue
			}
			if m := diskMetric[pvc.Disk.Name]; m != "" {
				wf[key{pvc.Disk.Project, regionOfKey(*pvc.Disk), m}] += float64(pvc.CapacityGB)
			}
		}
	}
	for _, d := range p.Decisions {
		if d.Kind == KindPVC && d.Action == Delete {
			if m := diskMetric[pvcDisk[d.ID]]; m != "" {
				frees[key{d.Project, d.Region, m}] += float64(d.SizeGB)
			}
		}
	}
	var out []Headroom
	for _, q := range quotas {
		if !regionInScope(pol, q.Region) {
			continue
		}
		k := key{q.Project, q.Region, q.Metric}
		h := Headroom{Project: q.Project, Region: q.Region, Metric: q.Metric, Known: q.Known, Problem: q.Problem,
			Limit: q.Limit, Usage: q.Usage, PlanFrees: frees[k], OrphanGB: orphan[k], FinishedWorkflowGB: wf[k]}
		if q.Known && q.Limit > 0 {
			h.UsedPct = q.Usage / q.Limit
			h.UsedPctAfter = (q.Usage - h.PlanFrees) / q.Limit
			// Warn on usage now: a dry-run frees nothing, and a plan may be held.
			h.Warning = h.UsedPct >= pol.HeadroomWarning
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Project != b.Project {
			return a.Project < b.Project
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.Metric < b.Metric
	})
	return out
}

// jsonStringField reads one string field of a JSON object held in a string, as
// the PD CSI driver writes disk descriptions. Anything else yields "".
func jsonStringField(doc, field string) string {
	if len(doc) == 0 || doc[0] != '{' {
		return ""
	}
	var m map[string]any
	if json.Unmarshal([]byte(doc), &m) != nil {
		return ""
	}
	s, _ := m[field].(string)
	return s
}
