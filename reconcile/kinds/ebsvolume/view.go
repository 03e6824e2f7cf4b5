package ebsvolume

import (
	"fmt"
	"sort"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Headroom is one volume type's storage quota in an account and region,
// before and after the plan (the AWS twin of gce-disk's SSD_TOTAL_GB row).
type Headroom struct {
	Account    string `json:"account"`
	Region     string `json:"region"`
	VolumeType string `json:"volumeType"`
	// Known: both the quota and the region's listing were read; Problem
	// says why not.
	Known    bool    `json:"known"`
	Problem  string  `json:"problem,omitempty"`
	LimitGiB float64 `json:"limitGiB"`
	// UsageGiB is the size of every listed volume of the type, any state.
	UsageGiB float64 `json:"usageGiB"`
	// PlanFreesGiB is what this run's deletions free; OrphanGiB is held by
	// orphan volumes, due or not yet.
	PlanFreesGiB float64 `json:"planFreesGiB"`
	OrphanGiB    float64 `json:"orphanGiB"`
	// Headroom is the used share now and after the plan, the warning, and
	// the usage trend (GiB a day).
	layout.Headroom
}

// HeadroomOf returns a plan's EBS quota rows.
func HeadroomOf(p *engine.Plan) []Headroom {
	return layout.DataOf[[]Headroom](p.Sections, "ebsHeadroom")
}

var quotaLabels = []string{"account", "region", "volume_type"}

// Gauges are the kind's metrics.
var Gauges = []layout.GaugeDef{
	{Name: "reclaim_ebs_quota_limit_bytes", Labels: quotaLabels,
		Help: "Limit of an EBS storage quota (Service Quotas) for one volume type, as read by the last run. No series while it is unknown."},
	{Name: "reclaim_ebs_quota_usage_bytes", Labels: quotaLabels,
		Help: "Size of every EBS volume of the type in the account and region, as listed by the last run. No series while the quota is unknown."},
	{Name: "reclaim_ebs_quota_used_ratio", Labels: quotaLabels,
		Help: "Usage divided by limit of an EBS storage quota (1 is full), as read by the last run. No series while unknown or its limit is 0."},
	{Name: "reclaim_ebs_orphan_volumes_bytes", Labels: quotaLabels,
		Help: "Bytes of EBS volumes of the type that no PV or pod names, due for deletion or not yet, in the last run."},
	{Name: "reclaim_ebs_quota_runs_out_timestamp_seconds", Labels: quotaLabels,
		Help: "Unix time an EBS storage quota reaches its limit at the current growth. No series while usage is flat or shrinking."},
}

const gibBytes = 1 << 30

// View shows the quota headroom, the volume decisions and the summary.
func (k *Kind) View(p *engine.Plan, snap *inventory.View) layout.View {
	hs := k.headroom(p, snap)
	v := layout.View{Sections: []layout.Section{headroomSection(hs), decisionSection(p)},
		Summary: fmt.Sprintf("volumes delete %d, mark %d, report %d, keep %d", p.Count(Name, engine.Delete), p.Count(Name, engine.Mark),
			p.Count(Name, engine.Report), p.Count(Name, engine.Keep))}
	for _, h := range hs {
		l := []string{h.Account, h.Region, h.VolumeType}
		v.Gauges = append(v.Gauges, layout.Gauge{Name: "reclaim_ebs_orphan_volumes_bytes", Labels: l, Value: h.OrphanGiB * gibBytes})
		if !h.Known {
			continue // no series: 0 would read as plenty of headroom
		}
		v.Gauges = append(v.Gauges, layout.Gauge{Name: "reclaim_ebs_quota_limit_bytes", Labels: l, Value: h.LimitGiB * gibBytes},
			layout.Gauge{Name: "reclaim_ebs_quota_usage_bytes", Labels: l, Value: h.UsageGiB * gibBytes})
		if h.LimitGiB > 0 {
			v.Gauges = append(v.Gauges, layout.Gauge{Name: "reclaim_ebs_quota_used_ratio", Labels: l, Value: h.UsageGiB / h.LimitGiB})
		}
		if h.RunsOutAt != nil {
			v.Gauges = append(v.Gauges, layout.Gauge{Name: "reclaim_ebs_quota_runs_out_timestamp_seconds", Labels: l, Value: float64(h.RunsOutAt.Unix())})
		}
		if h.Warning || h.RunsOutAt != nil {
			pool := &layout.Pool{Used: h.UsageGiB, Limit: h.LimitGiB, Frees: h.PlanFreesGiB, Trend: trendKey(h.Account, h.Region, h.VolumeType),
				Name: "EBS " + h.VolumeType + " storage in " + h.Account + "/" + h.Region, Unit: "GiB"}
			v.Warnings = append(v.Warnings, layout.Warning{Kind: Name, Text: warningText(h), RunsOutAt: h.RunsOutAt, Pool: pool})
		}
	}
	return v
}

// headroom puts each storage quota next to what the listed volumes use and
// what the plan frees. A region whose listing is incomplete has unknown
// usage: its rows are not Known.
func (k *Kind) headroom(p *engine.Plan, snap *inventory.View) []Headroom {
	read := inventory.CloudOf[Read](snap, Name)
	frees, orphan := map[string]float64{}, map[string]float64{}
	for d := range p.All() {
		if d.Kind != Name || d.Frees.Pool == "" {
			continue
		}
		if d.Action == engine.Delete {
			frees[d.Frees.Pool] += float64(d.Frees.Of(GiB))
		}
		if d.OrphanSince != nil && d.Action != engine.Keep {
			orphan[d.Frees.Pool] += float64(d.Frees.Of(GiB))
		}
	}
	usage := map[string]float64{}
	listing := map[string]*ebs.Listing{}
	for i := range read.Listings {
		l := &read.Listings[i]
		listing[l.Account+"/"+l.Region] = l
		for _, v := range l.Volumes {
			usage[Pool(l.Account, l.Region, v.Type)] += float64(v.SizeGiB)
		}
	}
	out := []Headroom{}
	for _, ql := range read.Quotas {
		if ql.Problem != "" {
			out = append(out, Headroom{Account: ql.Account, Region: ql.Region, VolumeType: "*", Problem: ql.Problem})
			continue
		}
		for _, q := range ql.Quotas {
			key := Pool(q.Account, q.Region, q.VolumeType)
			h := Headroom{Account: q.Account, Region: q.Region, VolumeType: q.VolumeType, LimitGiB: q.LimitGiB, UsageGiB: usage[key],
				PlanFreesGiB: frees[key], OrphanGiB: orphan[key]}
			switch l := listing[q.Account+"/"+q.Region]; {
			case l == nil:
				h.Problem = "its volumes were not listed"
			case !l.Complete:
				h.Problem = "its volumes could not all be listed: " + l.Problem
			default:
				h.Known = true
			}
			if h.Known {
				h.Headroom = layout.Measure(layout.Pool{Used: h.UsageGiB, Limit: h.LimitGiB, Frees: h.PlanFreesGiB,
					WarnAt: k.s.HeadroomWarning.Fraction(), Trend: trendKey(q.Account, q.Region, q.VolumeType)}, &p.State.Usage, p.GeneratedAt)
			}
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.VolumeType < b.VolumeType
	})
	return out
}

func warningText(h Headroom) string {
	s := fmt.Sprintf("EBS %s storage in %s/%s is %.0f%% used (%.0f of %.0f GiB); orphan volumes hold %.0f GiB, this run frees %.0f GiB",
		h.VolumeType, h.Account, h.Region, h.UsedPct*100, h.UsageGiB, h.LimitGiB, h.OrphanGiB, h.PlanFreesGiB)
	if h.RunsOutAt != nil {
		s += fmt.Sprintf("; at %.0f GiB a day it runs out %s", h.GrowthPerDay, h.RunsOutAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	return s
}

// headroomSection shows the quota rows (key "ebsHeadroom").
func headroomSection(hs []Headroom) layout.Section {
	s := layout.Section{Key: "ebsHeadroom", Data: hs, Place: layout.Overview, Title: "EBS STORAGE QUOTA HEADROOM"}
	return layout.Table(s, len(hs), layout.Block{Indent: 2, Header: []string{"ACCOUNT", "REGION", "TYPE", "USAGE/LIMIT GiB", "USED", "PLAN FREES", "USED AFTER", "ORPHAN VOLUMES"}}, func(b *layout.Block) {
		for _, h := range hs {
			if !h.Known {
				b.Rows = append(b.Rows, []string{h.Account, h.Region, h.VolumeType, "unknown", "", gib(h.PlanFreesGiB), "", gib(h.OrphanGiB)})
				b.Lines = append(b.Lines, fmt.Sprintf("  ? %s %s %s is unknown: %s", h.Account, h.Region, h.VolumeType, h.Problem))
				continue
			}
			b.Rows = append(b.Rows, []string{h.Account, h.Region, h.VolumeType, fmt.Sprintf("%.0f/%.0f", h.UsageGiB, h.LimitGiB), pct(h.UsedPct),
				gib(h.PlanFreesGiB), pct(h.UsedPctAfter), gib(h.OrphanGiB)})
			if h.Warning || h.RunsOutAt != nil {
				b.Lines = append(b.Lines, "  ! "+warningText(h))
			}
		}
	})
}

// decisionSection lists every volume decision.
func decisionSection(p *engine.Plan) layout.Section {
	b := layout.Block{Indent: 2, Header: []string{"ACTION", "VOLUME", "ACCOUNT/REGION", "TYPE", "SIZE", "WHY"}}
	n := 0
	for d := range p.All() {
		if d.Kind != Name {
			continue
		}
		det := detailOf(d)
		b.Add(d, d.Name, det.Account+"/"+det.Region, det.Type, gib(float64(det.SizeGiB)), d.Why())
		n++
	}
	return layout.Table(layout.Section{Title: "EBS VOLUMES", Place: layout.Details}, n, b, func(*layout.Block) {})
}

func gib(n float64) string { return fmt.Sprintf("%.0f GiB", n) }

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// trendKey is the key of a storage quota's usage history.
func trendKey(account, region, volumeType string) string {
	return "ebs/" + Pool(account, region, volumeType)
}
