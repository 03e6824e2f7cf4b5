package gcedisk

import (
	"fmt"
	"sort"
	"strings"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// Headroom is one regional quota before and after the plan.
type Headroom struct {
	Project string  `json:"project"`
	Region  string  `json:"region"`
	Metric  string  `json:"metric"`
	Known   bool    `json:"known"`
	Problem string  `json:"problem,omitempty"`
	Limit   float64 `json:"limit"`
	Usage   float64 `json:"usage"`
	// PlanFrees is what this run's deletions free (of every kind).
	PlanFrees float64 `json:"planFreesGB"`
	// OrphanGB is held by every orphan disk, due or not yet.
	OrphanGB float64 `json:"orphanGB"`
	// FinishedWorkflowGB is held by PVCs of finished Argo Workflows.
	FinishedWorkflowGB float64 `json:"finishedWorkflowGB"`
	// Headroom is the used share now and after the plan, the warning, and
	// the usage trend (GB a day).
	layout.Headroom
}

// HeadroomOf returns the plan's quota headroom rows.
func HeadroomOf(p *engine.Plan) []Headroom {
	return layout.DataOf[[]Headroom](p.Sections, "headroom")
}

var quotaLabels = []string{"project", "region", "metric"}

// Gauges are the kind's metrics.
var Gauges = []layout.GaugeDef{
	{Name: "reclaim_gce_quota_limit", Labels: quotaLabels,
		Help: "Limit of a regional GCE quota in base units (bytes for the disk quotas, a count for the others), as read by the last run. No series while the quota is unknown."},
	{Name: "reclaim_gce_quota_usage", Labels: quotaLabels,
		Help: "Usage of a regional GCE quota in base units (bytes for the disk quotas, a count for the others), as read by the last run. No series while the quota is unknown."},
	{Name: "reclaim_gce_quota_used_ratio", Labels: quotaLabels,
		Help: "Usage divided by limit of a regional GCE quota (1 is full), as read by the last run. No series while the quota is unknown or its limit is 0."},
	{Name: "reclaim_gce_quota_plan_frees_bytes", Labels: quotaLabels,
		Help: "Bytes of a regional GCE disk quota (GCE's GB are GiB) that the last run's planned deletions free (disks, and PVCs whose disks go with them)."},
	{Name: "reclaim_gce_orphan_disks_bytes", Labels: quotaLabels,
		Help: "Bytes of a regional GCE disk quota held by orphan disks, due for deletion or not yet, in the last run."},
	{Name: "reclaim_gce_finished_workflow_pvcs_bytes", Labels: quotaLabels,
		Help: "Bytes of a regional GCE disk quota held by PVCs of finished Argo Workflows that no running pod mounts, in the last run."},
	{Name: "reclaim_gce_quota_growth_per_second", Labels: quotaLabels,
		Help: "Usage trend of a regional GCE quota over the last week of runs, in the quota's unit per second (bytes for the disk quotas). No series until there are three samples over three hours."},
	{Name: "reclaim_gce_quota_runs_out_timestamp_seconds", Labels: quotaLabels,
		Help: "Unix time a regional GCE quota reaches its limit at the current growth. No series while usage is flat or shrinking."},
}

const (
	secondsPerDay = 24 * 60 * 60
)

// quotaUnit is what one unit of a quota metric is in base units: bytes for
// the disk quotas (…_GB), 1 for a count.
func quotaUnit(metric string) float64 {
	if strings.HasSuffix(metric, "_GB") {
		return amount.GiB
	}
	return 1
}

// View shows the quota headroom, the disk decisions and the summary phrase.
func (k *Kind) View(p *engine.Plan, snap *inventory.View) layout.View {
	hs := k.headroom(p, snap)
	v := layout.View{Sections: []layout.Section{HeadroomSection(hs), DecisionSection(p)}, Warnings: Warnings(hs),
		Summary: fmt.Sprintf("disks delete %d, mark %d, report %d, keep %d", p.Count(Name, engine.Delete), p.Count(Name, engine.Mark),
			p.Count(Name, engine.Report), p.Count(Name, engine.Keep))}
	for _, h := range hs {
		l := []string{h.Project, h.Region, h.Metric}
		// Plan frees, orphan and workflow GB come from the listed disks and
		// PVCs, not from the quota, so they are known even when the quota is not.
		v.Gauges = append(v.Gauges,
			layout.Gauge{Name: "reclaim_gce_quota_plan_frees_bytes", Labels: l, Value: h.PlanFrees * amount.GiB},
			layout.Gauge{Name: "reclaim_gce_orphan_disks_bytes", Labels: l, Value: h.OrphanGB * amount.GiB},
			layout.Gauge{Name: "reclaim_gce_finished_workflow_pvcs_bytes", Labels: l, Value: h.FinishedWorkflowGB * amount.GiB})
		if !h.Known {
			continue // no series: 0 would read as plenty of headroom
		}
		if h.GrowthPerDay != 0 {
			v.Gauges = append(v.Gauges, layout.Gauge{Name: "reclaim_gce_quota_growth_per_second", Labels: l, Value: h.GrowthPerDay * quotaUnit(h.Metric) / secondsPerDay})
		}
		if h.RunsOutAt != nil {
			v.Gauges = append(v.Gauges, layout.Gauge{Name: "reclaim_gce_quota_runs_out_timestamp_seconds", Labels: l, Value: float64(h.RunsOutAt.Unix())})
		}
		v.Gauges = append(v.Gauges, layout.Gauge{Name: "reclaim_gce_quota_limit", Labels: l, Value: h.Limit * quotaUnit(h.Metric)},
			layout.Gauge{Name: "reclaim_gce_quota_usage", Labels: l, Value: h.Usage * quotaUnit(h.Metric)})
		if h.Limit > 0 {
			v.Gauges = append(v.Gauges, layout.Gauge{Name: "reclaim_gce_quota_used_ratio", Labels: l, Value: h.Usage / h.Limit})
		}
	}
	return v
}

// headroom puts each regional quota next to what the plan frees.
func (k *Kind) headroom(p *engine.Plan, snap *inventory.View) []Headroom {
	frees, orphan, wf := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for d := range p.All() {
		if d.Frees.Pool == "" {
			continue
		}
		if d.Action == engine.Delete {
			frees[d.Frees.Pool] += float64(d.Frees.Of(gcepd.GB))
		}
		if d.Kind == Name && d.OrphanSince != nil && d.Action != engine.Keep {
			orphan[d.Frees.Pool] += float64(d.Frees.Of(gcepd.GB))
		}
	}
	// PVCs of finished workflows hold their disk's quota.
	metricOf := map[string]string{} // disk name -> quota metric
	for _, l := range gcepd.ListingOf(snap).Disks {
		for _, d := range l.Disks {
			metricOf[d.Key.Name] = gcepd.QuotaMetricOf(d.Type)
		}
	}
	for _, c := range snap.Clusters {
		for _, pvc := range c.PVCs {
			if pvc.Disk == nil || pvc.Workflow == nil || !pvc.Workflow.Done() || anyRunning(pvc.Pods) {
				continue
			}
			if pool := gcepd.Pool(pvc.Disk.Project, pvc.Disk.QuotaRegion(), metricOf[pvc.Disk.Name]); pool != "" {
				wf[pool] += float64(pvc.CapacityGB)
			}
		}
	}
	out := []Headroom{}
	for _, q := range gcepd.ListingOf(snap).Quotas {
		if !RegionInScope(k.GCE.Regions, q.Region) {
			continue
		}
		key := gcepd.Pool(q.Project, q.Region, q.Metric)
		h := Headroom{Project: q.Project, Region: q.Region, Metric: q.Metric, Known: q.Known, Problem: q.Problem,
			Limit: q.Limit, Usage: q.Usage, PlanFrees: frees[key], OrphanGB: orphan[key], FinishedWorkflowGB: wf[key]}
		if q.Known {
			h.Headroom = layout.Measure(layout.Pool{Used: q.Usage, Limit: q.Limit, Frees: h.PlanFrees, WarnAt: k.GCE.HeadroomWarning.Fraction(), Trend: key}, &p.State.Usage, p.GeneratedAt)
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

// HeadroomSection shows the quota rows and their warnings (key "headroom").
func HeadroomSection(hs []Headroom) layout.Section {
	s := layout.Section{Key: "headroom", Data: hs, Place: layout.Overview, Title: "QUOTA HEADROOM"}
	return layout.Table(s, len(hs), layout.Block{Indent: 2, Header: []string{"PROJECT", "REGION", "METRIC", "USAGE/LIMIT GB", "USED", "PLAN FREES", "USED AFTER", "ORPHAN DISKS", "FINISHED-WORKFLOW PVCs"}}, func(b *layout.Block) {
		for _, h := range hs {
			if !h.Known {
				b.Rows = append(b.Rows, []string{h.Project, h.Region, h.Metric, "unknown", "", gb(h.PlanFrees), "", gb(h.OrphanGB), gb(h.FinishedWorkflowGB)})
				continue
			}
			b.Rows = append(b.Rows, []string{h.Project, h.Region, h.Metric, fmt.Sprintf("%.0f/%.0f", h.Usage, h.Limit), pct(h.UsedPct),
				gb(h.PlanFrees), pct(h.UsedPctAfter), gb(h.OrphanGB), gb(h.FinishedWorkflowGB)})
		}
		for _, h := range hs {
			switch {
			case !h.Known:
				b.Lines = append(b.Lines, fmt.Sprintf("  ? %s %s %s is unknown: %s", h.Project, h.Region, h.Metric, h.Problem))
			case h.Warning:
				b.Lines = append(b.Lines, "  ! "+usedText(h))
			}
			if h.RunsOutAt != nil {
				b.Lines = append(b.Lines, "  ! "+growsText(h))
			}
		}
	})
}

// usedText warns of a quota above its warning level.
func usedText(h Headroom) string {
	l := fmt.Sprintf("%s %s %s is %s used (%.0f of %.0f GB), %s after this plan.", h.Project, h.Region, h.Metric, pct(h.UsedPct), h.Usage, h.Limit, pct(h.UsedPctAfter))
	if h.FinishedWorkflowGB > 0 {
		l += fmt.Sprintf(" PVCs of finished workflows hold %s: deleting those workflows (or setting k8sPvcs.delete) frees it.", gb(h.FinishedWorkflowGB))
	}
	return l
}

// growsText says when a growing quota is full.
func growsText(h Headroom) string {
	return fmt.Sprintf("%s %s %s grows %.0f GB a day: full around %s at this rate.", h.Project, h.Region, h.Metric, h.GrowthPerDay, h.RunsOutAt.UTC().Format("2006-01-02 15:04 MST"))
}

// Warnings are the section's "!" lines as the plan's warnings, each with
// when its quota is full (if projected).
func Warnings(hs []Headroom) []layout.Warning {
	var out []layout.Warning
	for _, h := range hs {
		pool := &layout.Pool{Used: h.Usage, Limit: h.Limit, Frees: h.PlanFrees, Trend: gcepd.Pool(h.Project, h.Region, h.Metric),
			Name: h.Project + " " + h.Region + " " + h.Metric, Unit: "GB"}
		if h.Known && h.Warning {
			out = append(out, layout.Warning{Text: usedText(h), RunsOutAt: h.RunsOutAt, Pool: pool})
		}
		if h.RunsOutAt != nil {
			out = append(out, layout.Warning{Text: growsText(h), RunsOutAt: h.RunsOutAt, Pool: pool})
		}
	}
	return out
}

// DecisionSection lists the plan's disk decisions.
func DecisionSection(p *engine.Plan) layout.Section {
	s := layout.Section{Title: "GCE DISKS", Place: layout.Details}
	b := layout.Block{Indent: 2}
	for d := range p.Of(Name) {
		det := detail(d)
		extra := ""
		if det.Owner != "" && d.Action != engine.Keep {
			extra = " [" + det.Owner + "]"
		}
		b.Add(d, d.ID, d.Frees.String()+" "+det.Type, d.Why()+extra)
	}
	if len(b.Rows) == 0 {
		return layout.Section{}
	}
	s.Blocks = []layout.Block{b}
	return s
}

func anyRunning(pods []inventory.PodRef) bool {
	for _, p := range pods {
		if p.Running() {
			return true
		}
	}
	return false
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

func gb(f float64) string {
	if f == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f GB", f)
}
