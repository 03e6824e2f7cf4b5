package ec2interface

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
)

// Headroom is one subnet's (or one zone's) addresses and who holds them.
type Headroom struct {
	Account string `json:"account"`
	Region  string `json:"region"`
	Subnet  string `json:"subnet,omitempty"` // "" for a zone's total
	Name    string `json:"name,omitempty"`
	AZ      string `json:"availabilityZone"`
	CIDR    string `json:"cidr,omitempty"`
	Usable  int    `json:"usable"`
	Free    int    `json:"free"`
	// Held by: running pods, finished pods (the Jobs and Pods kinds'
	// to reclaim), nodes, and nothing reclaim knows.
	RunningPods  int `json:"runningPods"`
	FinishedPods int `json:"finishedPods"`
	Nodes        int `json:"nodes"`
	Unknown      int `json:"unknown"`
	// PlanFrees is what this plan's deletions free (finished Jobs' and
	// Pods' addresses, leaked interfaces).
	PlanFrees int     `json:"planFrees"`
	UsedPct   float64 `json:"usedPct"`
	// GrowthPerDay is the consumption rate (addresses a day); RateFrom says
	// whether it comes from the usage history or from pod creation times.
	GrowthPerDay float64    `json:"growthPerDay"`
	RateFrom     string     `json:"rateFrom,omitempty"`
	RunsOutAt    *time.Time `json:"runsOutAt,omitempty"`
	Warning      bool       `json:"warning"`
	// Attributed is false when an interface listing or a cluster that could
	// use the subnet was incomplete, or no cluster could use it: then
	// "unknown" includes what reclaim could not attribute.
	Attributed bool     `json:"attributed"`
	Clusters   []string `json:"clusters,omitempty"`
}

// FinishedHolder is a namespace's CronJob, its other Jobs, or its bare
// pods, whose finished pods hold addresses: the answer to "who holds the IPs".
type FinishedHolder struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	// Owner is "CronJob x", "Jobs of no CronJob" or "pods without a Job".
	Owner   string `json:"owner"`
	Jobs    int    `json:"jobs"`
	Subnets int    `json:"subnets"`
	IPs     int    `json:"ips"`
	// PlanFrees are the addresses this plan's deletions free.
	PlanFrees int `json:"planFrees"`
}

// HeadroomOf returns the plan's subnet headroom.
func HeadroomOf(p *engine.Plan) []Headroom {
	return layout.DataOf[[]Headroom](p.Sections, "subnets")
}

// FinishedHoldersOf returns the plan's holders of subnet addresses.
func FinishedHoldersOf(p *engine.Plan) []FinishedHolder {
	return layout.DataOf[[]FinishedHolder](p.Sections, "subnetHolders")
}

var subnetLabels = []string{"subnet", "availability_zone"}

// Gauges are the kind's metrics.
var Gauges = []layout.GaugeDef{
	{Name: "reclaim_subnet_usable_ips", Labels: subnetLabels, Help: "Usable addresses of a subnet (2^(32-prefix) - 5)."},
	{Name: "reclaim_subnet_ips", Labels: append(append([]string(nil), subnetLabels...), "holder"),
		Help: "Addresses of a subnet by holder (free, running-pods, finished-pods, nodes, unknown), as attributed by the last run."},
	{Name: "reclaim_subnet_used_ratio", Labels: subnetLabels, Help: "Used share of a subnet's usable addresses (1 is full)."},
	{Name: "reclaim_subnet_growth_ips_per_second", Labels: subnetLabels, Help: "Addresses a second a subnet's usage grows, from the usage history or pod creation times. No series until known."},
	{Name: "reclaim_subnet_runs_out_timestamp_seconds", Labels: subnetLabels, Help: "When a subnet is projected to run out of addresses (Unix time). No series when it does not grow."},
	{Name: "reclaim_subnet_plan_frees_ips", Labels: subnetLabels, Help: "Addresses of a subnet the last run's plan frees now."},
}

// View shows subnet headroom by subnet and zone, who holds the addresses,
// the interface decisions and the summary phrase.
func (k *Kind) View(p *engine.Plan, snap *inventory.View) layout.View {
	now := p.GeneratedAt
	a := k.attribution(snap, now)
	k.attrSnap, k.attr = nil, nil
	freedBy := freedByPlan(p)
	ifaceFrees := map[string]int{}
	for d := range p.Of(Name) {
		if d.Action == engine.Delete {
			ifaceFrees[d.Frees.Pool] += int(d.Frees.Of(finished.Addresses))
		}
	}
	var rows []Headroom
	var stuck []StuckHolder
	holders := holderBook{}
	for i := range a.Subnets {
		u := &a.Subnets[i]
		s := u.Subnet
		h := Headroom{Account: s.Account, Region: s.Region, Subnet: s.ID, Name: s.Name, AZ: s.AZ, CIDR: s.CIDR, Usable: s.Usable, Free: s.Available,
			RunningPods: u.Running, FinishedPods: u.Finished, Nodes: u.Nodes, Unknown: u.Unknown, Attributed: u.Complete && len(u.Clusters) > 0,
			Clusters: u.Clusters, PlanFrees: ifaceFrees[s.ID]}
		for _, sh := range u.StuckHolders {
			stuck = append(stuck, StuckHolder{Cluster: sh.Cluster, Namespace: sh.Namespace, Job: sh.Job, Pod: sh.Pod, Subnet: s.ID, Why: sh.Stuck})
		}
		for j := range u.FinishedHolders {
			fh := &u.FinishedHolders[j]
			freed := freedBy(fh)
			holders.add(fh, s.ID, freed)
			if freed {
				h.PlanFrees++
			}
		}
		k.project(&h, u, p)
		rows = append(rows, h)
	}
	v := layout.View{Sections: []layout.Section{HeadroomSection(rows, zones(rows, now)), HoldersSection(holders.list()), StuckSection(stuck), DecisionSection(p), AddressesSection(a)},
		Warnings: warnings(rows), Gauges: subnetGauges(rows)}
	if len(stuck) > 0 {
		v.Warnings = append(v.Warnings, layout.Warning{Text: stuckText(stuck)})
	}
	v.Summary = fmt.Sprintf("interfaces delete %d, report %d", p.Count(Name, engine.Delete), p.Count(Name, engine.Report))
	return v
}

// freedByPlan says whether the plan deletes what holds an address: its
// pod or its Job.
func freedByPlan(p *engine.Plan) func(h *IPHolder) bool {
	due := map[string]bool{} // ids this plan deletes
	for d := range p.All() {
		if d.Action == engine.Delete {
			due[d.ID] = true
		}
	}
	return func(h *IPHolder) bool {
		return due[finished.PodID(h.Cluster, h.Namespace, h.Pod)] || (h.Job != "" && due[finished.JobID(h.Cluster, h.Namespace, h.Job)])
	}
}

// project measures a subnet's use against its history, or without one
// against the pods created lately, and says when it runs out.
func (k *Kind) project(h *Headroom, u *SubnetUse, p *engine.Plan) {
	now, s := p.GeneratedAt, u.Subnet
	key := "subnet/" + s.Account + "/" + s.Region + "/" + s.ID
	m := layout.Measure(layout.Pool{Used: float64(u.Used()), Limit: float64(s.Usable), WarnAt: k.Policy.HeadroomWarning, Trend: key}, &p.State.Usage, p.GeneratedAt)
	h.UsedPct, h.GrowthPerDay, h.RunsOutAt, h.RateFrom = m.UsedPct, m.GrowthPerDay, m.RunsOutAt, "history"
	if !layout.Fits(p.State.Usage[key]) && u.Recent > 0 {
		// No history yet: the pods created lately that still hold an
		// address are the rate at which the subnet fills if nothing
		// is cleaned up.
		h.GrowthPerDay = float64(u.Recent) / RecentWindow.Hours() * 24
		h.RateFrom = "pod creations"
		if h.Free > 0 {
			t := now.Add(time.Duration(float64(h.Free) / h.GrowthPerDay * 24 * float64(time.Hour))).Truncate(time.Minute)
			h.RunsOutAt = &t
		}
	}
	if h.GrowthPerDay == 0 {
		h.RateFrom = ""
	}
	h.Warning = m.Warning || (h.RunsOutAt != nil && h.RunsOutAt.Sub(now) <= k.Policy.WarnBefore)
}

// holderBook adds up the finished holders of addresses by cluster,
// namespace and owner (a CronJob, Jobs of none, pods of no Job).
type holderBook map[[3]string]*heldBy

type heldBy struct {
	FinishedHolder
	subnets, jobs map[string]bool
}

func (b holderBook) add(fh *IPHolder, subnet string, freed bool) {
	owner := "pods without a Job"
	switch {
	case fh.CronJob != "":
		owner = "CronJob " + fh.CronJob
	case fh.Job != "":
		owner = "Jobs of no CronJob"
	}
	key := [3]string{fh.Cluster, fh.Namespace, owner}
	hd := b[key]
	if hd == nil {
		hd = &heldBy{FinishedHolder: FinishedHolder{Cluster: fh.Cluster, Namespace: fh.Namespace, Owner: owner}, subnets: map[string]bool{}, jobs: map[string]bool{}}
		b[key] = hd
	}
	if fh.JobUID != "" && !hd.jobs[fh.JobUID] {
		hd.jobs[fh.JobUID] = true
		hd.Jobs++
	}
	hd.IPs++
	hd.subnets[subnet] = true
	if freed {
		hd.PlanFrees++
	}
}

// list is the holders, most addresses first.
func (b holderBook) list() []FinishedHolder {
	hs := make([]FinishedHolder, 0, len(b))
	for _, hd := range b {
		hd.Subnets = len(hd.subnets)
		hs = append(hs, hd.FinishedHolder)
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].IPs != hs[j].IPs {
			return hs[i].IPs > hs[j].IPs
		}
		return hs[i].Cluster+hs[i].Namespace+hs[i].Owner < hs[j].Cluster+hs[j].Namespace+hs[j].Owner
	})
	return hs
}

// subnetGauges are the subnets' metrics.
func subnetGauges(rows []Headroom) []layout.Gauge {
	var gs []layout.Gauge
	for _, h := range rows {
		l := []string{h.Subnet, h.AZ}
		gs = append(gs,
			layout.Gauge{Name: "reclaim_subnet_usable_ips", Labels: l, Value: float64(h.Usable)},
			layout.Gauge{Name: "reclaim_subnet_plan_frees_ips", Labels: l, Value: float64(h.PlanFrees)})
		for _, by := range []struct {
			holder string
			n      int
		}{{"free", h.Free}, {string(HeldByRunningPod), h.RunningPods}, {string(HeldByFinishedPod), h.FinishedPods}, {string(HeldByNode), h.Nodes}, {string(HeldByUnknown), h.Unknown}} {
			gs = append(gs, layout.Gauge{Name: "reclaim_subnet_ips", Labels: append(append([]string(nil), l...), by.holder), Value: float64(by.n)})
		}
		if h.Usable > 0 {
			gs = append(gs, layout.Gauge{Name: "reclaim_subnet_used_ratio", Labels: l, Value: h.UsedPct})
		}
		if h.RateFrom != "" {
			gs = append(gs, layout.Gauge{Name: "reclaim_subnet_growth_ips_per_second", Labels: l, Value: h.GrowthPerDay / (24 * 60 * 60)})
		}
		if h.RunsOutAt != nil {
			gs = append(gs, layout.Gauge{Name: "reclaim_subnet_runs_out_timestamp_seconds", Labels: l, Value: float64(h.RunsOutAt.Unix())})
		}
	}
	return gs
}

// zones adds the subnets up per account, region and zone.
func zones(rows []Headroom, now time.Time) []Headroom {
	by := map[[3]string]*Headroom{}
	var order [][3]string
	for _, r := range rows {
		k := [3]string{r.Account, r.Region, r.AZ}
		z := by[k]
		if z == nil {
			z = &Headroom{Account: r.Account, Region: r.Region, AZ: r.AZ, Attributed: true}
			by[k] = z
			order = append(order, k)
		}
		z.Usable += r.Usable
		z.Free += r.Free
		z.RunningPods += r.RunningPods
		z.FinishedPods += r.FinishedPods
		z.Nodes += r.Nodes
		z.Unknown += r.Unknown
		z.PlanFrees += r.PlanFrees
		z.GrowthPerDay += r.GrowthPerDay
		z.Attributed = z.Attributed && r.Attributed
		z.Warning = z.Warning || r.Warning
	}
	sort.Slice(order, func(i, j int) bool { return strings.Join(order[i][:], "/") < strings.Join(order[j][:], "/") })
	out := make([]Headroom, 0, len(order))
	for _, k := range order {
		z := by[k]
		if z.Usable > 0 {
			z.UsedPct = float64(z.Usable-z.Free) / float64(z.Usable)
		}
		// The zone runs out when its subnets together do, at their
		// summed rate.
		if z.GrowthPerDay > 0 {
			t := now.Add(time.Duration(float64(z.Free) / z.GrowthPerDay * float64(24*time.Hour))).Truncate(time.Minute)
			z.RunsOutAt = &t
		}
		out = append(out, *z)
	}
	return out
}

// HeadroomSection shows every subnet and zone (key "subnets"), warnings first.
func HeadroomSection(rows, zones []Headroom) layout.Section {
	s := layout.Section{Key: "subnets", Data: rows, Place: layout.Overview}
	if len(rows) == 0 {
		return s
	}
	s.Title = "SUBNET IP HEADROOM: each subnet's addresses, counted by what holds them"
	var warn []string
	for _, h := range rows {
		if !h.Warning {
			continue
		}
		warn = append(warn, "  ! "+warningText(h))
	}
	counts := []string{"USABLE", "FREE", "USED", "RUNNING PODS", "FINISHED PODS", "NODES", "UNKNOWN", "PLAN FREES", "GROWTH/DAY", "RUNS OUT"}
	b := layout.Block{Indent: 2, Heading: "  by subnet:", Header: append([]string{"SUBNET", "AZ", "CIDR"}, counts...)}
	for _, h := range rows {
		b.Rows = append(b.Rows, append([]string{h.Subnet, h.AZ, h.CIDR}, headroomCounts(h)...))
	}
	zb := layout.Block{Indent: 2, Heading: "  by availability zone (its subnets together):", Header: append([]string{"AZ", "ACCOUNT/REGION"}, counts...)}
	for _, z := range zones {
		zb.Rows = append(zb.Rows, append([]string{z.AZ, z.Account + "/" + z.Region}, headroomCounts(z)...))
	}
	var notes []string
	for _, h := range rows {
		switch {
		case len(h.Clusters) == 0:
			notes = append(notes, "  "+h.Subnet+": no configured cluster could use it, so its addresses are unattributed (not free); list it in a cluster's awsSubnets.")
		case !h.Attributed:
			notes = append(notes, "  "+h.Subnet+": a listing was incomplete, so some addresses count as unknown.")
		}
	}
	b.Lines = notes
	s.Blocks = []layout.Block{{Lines: warn}, b, zb}
	return s
}

// warningText warns of a subnet above its warning level.
func warningText(h Headroom) string {
	l := fmt.Sprintf("%s (%s) is %s used: %d of %d addresses free; finished pods hold %d, this plan frees %d.",
		h.Subnet, h.AZ, pct(h.UsedPct), h.Free, h.Usable, h.FinishedPods, h.PlanFrees)
	if h.RunsOutAt != nil {
		l += fmt.Sprintf(" At %.0f a day (from %s) it runs out about %s.", h.GrowthPerDay, h.RateFrom, h.RunsOutAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	return l
}

// warnings are the subnets above their warning level, with when each runs out.
func warnings(rows []Headroom) []layout.Warning {
	var out []layout.Warning
	for _, h := range rows {
		if h.Warning {
			pool := &layout.Pool{Used: float64(h.Usable - h.Free), Limit: float64(h.Usable), Frees: float64(h.PlanFrees),
				Trend: "subnet/" + h.Account + "/" + h.Region + "/" + h.Subnet, Name: h.Subnet + " (" + h.AZ + ")", Unit: "addresses"}
			out = append(out, layout.Warning{Text: warningText(h), RunsOutAt: h.RunsOutAt, Pool: pool})
		}
	}
	return out
}

func headroomCounts(h Headroom) []string {
	runs, growth := "-", "-"
	if h.RunsOutAt != nil {
		runs = h.RunsOutAt.UTC().Format("2006-01-02 15:04")
	}
	if h.GrowthPerDay != 0 {
		growth = fmt.Sprintf("%.0f", h.GrowthPerDay)
	}
	return []string{fmt.Sprint(h.Usable), fmt.Sprint(h.Free), pct(h.UsedPct), fmt.Sprint(h.RunningPods),
		fmt.Sprint(h.FinishedPods), fmt.Sprint(h.Nodes), fmt.Sprint(h.Unknown), fmt.Sprint(h.PlanFrees), growth, runs}
}

// StuckHolder is an address a stuck pod holds: Running after its main
// container exited, so its Job never finishes (a sidecar that never stops).
type StuckHolder struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Job       string `json:"job,omitempty"`
	Pod       string `json:"pod"`
	Subnet    string `json:"subnet"`
	Why       string `json:"why"`
}

// stuckText is the warning about stuck pods.
func stuckText(hs []StuckHolder) string {
	pods := map[string]bool{}
	for _, h := range hs {
		pods[h.Cluster+"/"+h.Namespace+"/"+h.Pod] = true
	}
	n := fmt.Sprintf("%d pods are", len(pods))
	if len(pods) == 1 {
		n = "1 pod is"
	}
	a := fmt.Sprintf("%d subnet addresses", len(hs))
	if len(hs) == 1 {
		a = "1 subnet address"
	}
	return n + " Running after the main container exited, holding " + a + " (and on Fargate a node each) until someone stops them: see STUCK PODS"
}

// StuckSection names every address a stuck pod holds (key "stuckPods").
// Report only: deleting a running pod stays a person's decision.
func StuckSection(hs []StuckHolder) layout.Section {
	s := layout.Section{Key: "stuckPods", Data: hs, Place: layout.Overview, Title: "STUCK PODS: Running after their main container exited (a sidecar that never stops); reclaim only reports them"}
	return layout.Table(s, len(hs), layout.Block{Indent: 2, Header: []string{"CLUSTER", "NAMESPACE", "JOB", "POD", "SUBNET", "WHY"}}, func(b *layout.Block) {
		for _, h := range hs {
			job := h.Job
			if job == "" {
				job = "-"
			}
			b.Rows = append(b.Rows, []string{h.Cluster, h.Namespace, job, h.Pod, h.Subnet, h.Why})
		}
		b.Lines = []string{"  Stop the sidecar when the main container exits (a native sidecar: an init container with restartPolicy: Always), or delete the pod."}
	})
}

// AddressesSection names every address of every subnet and what holds it
// (key "subnetAddresses"): a pod (cluster, namespace, name), a node, or
// nothing reclaim knows. The text lists a few of each holder and counts
// the rest; -v lists them all.
func AddressesSection(a *Attribution) layout.Section {
	var all []Address
	for i := range a.Subnets {
		all = append(all, a.Subnets[i].Addresses...)
	}
	s := layout.Section{Key: "subnetAddresses", Data: all, Place: layout.Details, Title: "SUBNET ADDRESSES: every address and what holds it"}
	return layout.Table(s, len(all), layout.Block{Indent: 2, Header: []string{"SUBNET", "ADDRESS", "INTERFACE", "HELD BY", "CLUSTER", "WHAT"}, Counted: "HELD"}, func(b *layout.Block) {
		for _, ad := range all {
			what := "-"
			switch {
			case ad.Pod != "":
				what = "pod " + ad.Namespace + "/" + ad.Pod
			case ad.Node != "":
				what = "node " + ad.Node
			}
			b.Rows = append(b.Rows, []string{ad.Subnet, ad.IP, ad.Interface, string(ad.Holder), orDefault(ad.Cluster, "-"), what})
			b.Classes = append(b.Classes, string(ad.Holder))
		}
	})
}

// HoldersSection shows which Jobs, CronJobs and bare pods hold addresses
// through finished pods (key "subnetHolders").
func HoldersSection(hs []FinishedHolder) layout.Section {
	s := layout.Section{Key: "subnetHolders", Data: hs, Place: layout.Overview, Title: "WHO HOLDS THE SUBNET ADDRESSES: finished pods (each keeps its address until the Pod object is deleted)"}
	return layout.Table(s, len(hs), layout.Block{Indent: 2, Header: []string{"CLUSTER", "NAMESPACE", "OWNER", "JOBS", "SUBNETS", "ADDRESSES", "PLAN FREES"}}, func(b *layout.Block) {
		for i, h := range hs {
			if i == 15 {
				b.Rows = append(b.Rows, []string{"…", "", fmt.Sprintf("%d more", len(hs)-15), "", "", "", ""})
				break
			}
			b.Rows = append(b.Rows, []string{h.Cluster, h.Namespace, h.Owner, fmt.Sprint(h.Jobs), fmt.Sprint(h.Subnets), fmt.Sprint(h.IPs), fmt.Sprint(h.PlanFrees)})
		}
	})
}

// DecisionSection lists the detached interfaces and what the plan does with each.
func DecisionSection(p *engine.Plan) layout.Section {
	b := layout.Block{Indent: 2}
	for d := range p.Of(Name) {
		det := DetailOf(d)
		b.Add(d, det.Account+"/"+det.Region+"/"+d.Name, det.Subnet, d.Why())
	}
	if len(b.Rows) == 0 {
		return layout.Section{}
	}
	return layout.Section{Title: "DETACHED NETWORK INTERFACES", Place: layout.Details, Blocks: []layout.Block{b}}
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }
