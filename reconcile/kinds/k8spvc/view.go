package k8spvc

import (
	"fmt"
	"sort"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Holder is a namespace or workflow holding quota through finished-workflow PVCs.
type Holder struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Workflow  string `json:"workflow"`
	Phase     string `json:"phase"`
	PVCs      int    `json:"pvcs"`
	GB        int64  `json:"gb"`
}

// HoldersOf returns the plan's holders.
func HoldersOf(p *engine.Plan) []Holder {
	return layout.DataOf[[]Holder](p.Sections, "holders")
}

// View shows who holds the quota, the PVC decisions and the summary phrase.
func (k *Kind) View(p *engine.Plan, snap *inventory.View) layout.View {
	return layout.View{Sections: []layout.Section{HoldersSection(holders(snap.Clusters)), DecisionSection(p)},
		Summary: fmt.Sprintf("PVCs delete %d, report %d", p.Count(Name, engine.Delete), p.Count(Name, engine.Report))}
}

// holders groups the GB held by finished-workflow PVCs by cluster, namespace and
// workflow: the answer to "who ate the SSD quota".
func holders(clusters []inventory.ClusterRefs) []Holder {
	type key struct{ c, ns, wf string }
	m := map[key]*Holder{}
	for _, c := range clusters {
		for _, pvc := range c.PVCs {
			w := pvc.Workflow
			if w == nil || !w.Done() || running(pvc.Pods) != nil {
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

// HoldersSection shows who holds the quota (key "holders").
func HoldersSection(hs []Holder) layout.Section {
	s := layout.Section{Key: "holders", Data: hs, Place: layout.Overview, Title: "WHO HOLDS THE QUOTA: PVCs of finished Argo Workflows that no running pod mounts"}
	return layout.Table(s, len(hs), layout.Block{Indent: 2, Header: []string{"CLUSTER", "NAMESPACE", "WORKFLOW", "PHASE", "PVCs", "GB"}}, func(b *layout.Block) {
		type nsKey struct{ c, ns string }
		byNS := map[nsKey]int64{}
		for i, h := range hs {
			byNS[nsKey{h.Cluster, h.Namespace}] += h.GB
			if i < 15 {
				b.Rows = append(b.Rows, []string{h.Cluster, h.Namespace, h.Workflow, h.Phase, fmt.Sprint(h.PVCs), fmt.Sprint(h.GB)})
			}
		}
		if len(hs) > 15 {
			b.Rows = append(b.Rows, []string{"…", "", fmt.Sprintf("%d more workflows", len(hs)-15), "", "", ""})
		}
		keys := make([]nsKey, 0, len(byNS))
		for k := range byNS {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return byNS[keys[i]] > byNS[keys[j]] })
		line := "  by namespace:"
		for _, k := range keys {
			line += fmt.Sprintf(" %s/%s %d GB;", k.c, k.ns, byNS[k])
		}
		b.Lines = []string{line}
	})
}

// DecisionSection lists the plan's PVC decisions.
func DecisionSection(p *engine.Plan) layout.Section {
	b := layout.Block{Indent: 2}
	reports := 0
	for d := range p.Of(Name) {
		det := detailOf(d)
		b.Add(d, det.Cluster+"/"+det.Location+"/"+d.Name, d.Frees.String()+" ", d.Why())
		if d.Action == engine.Report {
			reports++
		}
	}
	if len(b.Rows) == 0 {
		return layout.Section{}
	}
	if reports > 0 {
		b.Lines = []string{"",
			"  PVCs marked REPORT are only reported: set k8sPvcs.delete: true to let reclaim delete them after the grace period",
			"  (their PVs and disks follow when the reclaim policy is Delete), or delete the finished Workflows."}
	}
	return layout.Section{Title: "PVCs OF FINISHED ARGO WORKFLOWS", Place: layout.Details, Blocks: []layout.Block{b}}
}
