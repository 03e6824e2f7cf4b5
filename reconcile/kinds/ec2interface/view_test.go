package ec2interface_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/layout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/enginetest"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
)

const jobGrace = 6 * time.Hour

// headroomSnap: three /20 subnets of cluster prod. subnet-a (us-east-1a,
// 90% used) holds five Fargate pods of CronJob nightly's finished Jobs and
// a leaked interface; subnet-b (us-east-1b, 75% used) 60 pods created an
// hour before second and a finished bare pod; subnet-c (us-east-1a) nothing.
func headroomSnap(second time.Time) *inventory.View {
	nightly := &inventory.Owner{Kind: "CronJob", Name: "nightly", UID: "cj-1"}
	c := inventory.ClusterRefs{Name: "prod", Complete: true, WorkloadsListed: true,
		CronJobs: []inventory.CronJob{{Namespace: "batch", Name: "nightly", UID: "cj-1", SuccessfulLimit: 3, FailedLimit: 1}},
		Nodes:    []inventory.Node{{Name: "ip-10-0-16-4", IPs: []string{"10.0.16.4"}, Instance: "i-b"}}}
	var ifaces []inventory.NetInterface
	for i := 1; i <= 5; i++ {
		fin := t0.Add(-time.Duration(100-i) * time.Hour)
		uid := fmt.Sprintf("job-%d", i)
		c.Jobs = append(c.Jobs, inventory.Job{Namespace: "batch", Name: fmt.Sprintf("nightly-%d", i), UID: uid, Status: "Complete",
			Created: fin.Add(-time.Hour), Finished: fin, CronJob: nightly})
		ip := fmt.Sprintf("10.0.1.%d", i)
		c.Pods = append(c.Pods, finishedPod("batch", fmt.Sprintf("nightly-%d-pod", i), fin.Add(-time.Hour),
			&inventory.Owner{Kind: "Job", Name: fmt.Sprintf("nightly-%d", i), UID: uid}, ip))
		ifaces = append(ifaces, iface(fmt.Sprintf("eni-f%d", i), "subnet-a", "in-use", ip))
	}
	ifaces = append(ifaces, cni("eni-leaked", "subnet-a", "10.0.2.1", "10.0.2.2"))
	node := attached(iface("eni-node-b", "subnet-b", "in-use", "10.0.16.4"), "i-b")
	for i := range 60 {
		ip := fmt.Sprintf("10.0.17.%d", i+1)
		node.IPs = append(node.IPs, ip)
		c.Pods = append(c.Pods, runningPod("web", fmt.Sprintf("web-%d", i), second.Add(-time.Hour), ip))
	}
	node.IPs = append(node.IPs, "10.0.18.1")
	c.Pods = append(c.Pods, finishedPod("debug", "debug", t0.Add(-50*time.Hour), nil, "10.0.18.1"))
	ifaces = append(ifaces, node)
	return &inventory.View{TakenAt: t0, Clusters: []inventory.ClusterRefs{c},
		Clouds: map[string]any{ec2interface.Read: []inventory.NetworkListing{{Account: acct, Region: region, Complete: true,
			Subnets: []inventory.Subnet{
				subnet("subnet-a", "vpc-1", "us-east-1a", "10.0.0.0/20", 400),
				subnet("subnet-b", "vpc-1", "us-east-1b", "10.0.16.0/20", 1000),
				subnet("subnet-c", "vpc-1", "us-east-1a", "10.0.32.0/20", usable20),
			},
			Interfaces: ifaces}}}}
}

func headroomKinds(pol ec2interface.Policy) []engine.Kind {
	jobSafety := config.Safety{Grace: config.Duration(jobGrace), Caps: config.Caps{MaxDeletesPerRun: 100, MaxDeletePercent: 1, BreakerCandidates: 100}}
	jobs := k8sjob.New(k8sjob.Policy{Policy: finished.Policy{Succeeded: 24 * time.Hour, Failed: 72 * time.Hour,
		Safety: jobSafety}, KeepCronJobHistory: true}, nil)
	debug, _ := config.GlobRegexp("debug")
	pods := k8spod.New(k8spod.Policy{Policy: finished.Policy{Succeeded: time.Hour, Failed: time.Hour, Include: []*regexp.Regexp{debug},
		Safety: jobSafety}}, nil)
	return []engine.Kind{jobs, pods, &ec2interface.Kind{Policy: pol}}
}

func TestHeadroom(t *testing.T) {
	second := t0.Add(jobGrace + time.Minute)
	s := headroomSnap(second)
	p1 := enginetest.Build(s, headroomKinds(policy()), engine.NewState(), t0)
	p := enginetest.Build(s, headroomKinds(policy()), p1.State, second)

	// The two oldest Jobs of nightly go (history 3), the bare pod and the leaked interface.
	for _, id := range []string{k8sjob.ID("prod", "batch", "nightly-1"), k8sjob.ID("prod", "batch", "nightly-2"),
		k8spod.ID("prod", "debug", "debug"), ec2interface.ID(acct, region, "eni-leaked")} {
		if d := findID(p, id); d == nil || d.Action != engine.Delete {
			t.Fatalf("%s: %+v", id, d)
		}
	}
	if d := findID(p, k8sjob.ID("prod", "batch", "nightly-3")); d.Action != engine.Keep {
		t.Fatalf("%+v", d)
	}

	rows := map[string]ec2interface.Headroom{}
	for _, h := range ec2interface.HeadroomOf(p) {
		rows[h.Subnet] = h
	}
	a, b, c := rows["subnet-a"], rows["subnet-b"], rows["subnet-c"]
	if len(rows) != 3 {
		t.Fatalf("%+v", rows)
	}
	// subnet-a: 3691 used: 5 finished pods, 2 on the leaked interface and 3684 nobody listed
	if a.Usable != 4091 || a.Free != 400 || a.FinishedPods != 5 || a.RunningPods != 0 || a.Nodes != 0 || a.Unknown != 3686 ||
		a.PlanFrees != 2+2 || !a.Warning || !a.Attributed || a.UsedPct < 0.9 || a.UsedPct > 0.91 || a.RunsOutAt != nil || a.RateFrom != "" {
		t.Fatalf("subnet-a %+v", a)
	}
	// subnet-b: 60 pods in the last 6h: 240 a day; 1000 free: 100 hours
	wantOut := second.Add(100 * time.Hour).Truncate(time.Minute)
	if b.RunningPods != 60 || b.FinishedPods != 1 || b.Nodes != 1 || b.PlanFrees != 1 || b.GrowthPerDay != 240 || b.RateFrom != "pod creations" ||
		b.RunsOutAt == nil || !b.RunsOutAt.Equal(wantOut) || b.Warning {
		t.Fatalf("subnet-b %+v (runs out %v, want %v)", b, b.RunsOutAt, wantOut)
	}
	if c.Usable != 4091 || c.Free != 4091 || c.Warning || c.GrowthPerDay != 0 || c.RunsOutAt != nil || c.PlanFrees != 0 || c.UsedPct != 0 {
		t.Fatalf("subnet-c %+v", c)
	}

	hs := ec2interface.FinishedHoldersOf(p)
	want := []ec2interface.FinishedHolder{
		{Cluster: "prod", Namespace: "batch", Owner: "CronJob nightly", Jobs: 5, Subnets: 1, IPs: 5, PlanFrees: 2},
		{Cluster: "prod", Namespace: "debug", Owner: "pods without a Job", Subnets: 1, IPs: 1, PlanFrees: 1},
	}
	if len(hs) != len(want) || hs[0] != want[0] || hs[1] != want[1] {
		t.Fatalf("holders %+v", hs)
	}

	// by zone: us-east-1a is subnet-a and subnet-c
	var zone []string
	for _, sec := range p.Sections {
		if sec.Key != "subnets" {
			continue
		}
		for _, r := range sec.Blocks[2].Rows {
			if r[0] == "us-east-1a" {
				zone = r
			}
		}
		if !strings.Contains(strings.Join(sec.Blocks[0].Lines, "\n"), "subnet-a (us-east-1a) is 90% used") {
			t.Fatalf("warning lines %q", sec.Blocks[0].Lines)
		}
	}
	// Zone rows name the zone and its account/region under their own
	// headings, not under SUBNET.
	if zone == nil || zone[1] != "111122223333/us-east-1" || zone[2] != "8182" || zone[3] != "4491" || zone[9] != "4" {
		t.Fatalf("zone row %q", zone)
	}

	g := map[string]float64{}
	for _, x := range p.Gauges {
		g[x.Name+"{"+strings.Join(x.Labels, ",")+"}"] = x.Value
	}
	for k, v := range map[string]float64{
		"reclaim_subnet_usable_ips{subnet-a,us-east-1a}":                 4091,
		"reclaim_subnet_plan_frees_ips{subnet-a,us-east-1a}":             4,
		"reclaim_subnet_ips{subnet-a,us-east-1a,finished-pods}":          5,
		"reclaim_subnet_ips{subnet-a,us-east-1a,free}":                   400,
		"reclaim_subnet_ips{subnet-b,us-east-1b,running-pods}":           60,
		"reclaim_subnet_growth_ips_per_second{subnet-b,us-east-1b}":      240.0 / 86400,
		"reclaim_subnet_runs_out_timestamp_seconds{subnet-b,us-east-1b}": float64(wantOut.Unix()),
	} {
		if g[k] != v {
			t.Errorf("gauge %s = %v, want %v", k, g[k], v)
		}
	}
	for _, k := range []string{"reclaim_subnet_growth_ips_per_second{subnet-c,us-east-1a}", "reclaim_subnet_runs_out_timestamp_seconds{subnet-a,us-east-1a}"} {
		if _, ok := g[k]; ok {
			t.Errorf("gauge %s has a series", k)
		}
	}

	b2, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b2), `"subnets":[`) || !strings.Contains(string(b2), `"subnetHolders":[`) {
		t.Fatal("sections missing from the JSON plan")
	}

	// Warned once it runs out within warnBefore.
	pol := policy()
	pol.WarnBefore = 5 * 24 * time.Hour
	p = enginetest.Build(s, headroomKinds(pol), p1.State, second)
	for _, h := range ec2interface.HeadroomOf(p) {
		if h.Subnet == "subnet-b" && !h.Warning {
			t.Fatalf("runs out in 100h, warnBefore 5d: %+v", h)
		}
	}
}

// With a usage history, the projection is the history's.
func TestHeadroomFromHistory(t *testing.T) {
	s := &inventory.View{TakenAt: t0, Clusters: []inventory.ClusterRefs{{Name: "prod", Complete: true, WorkloadsListed: true}},
		Clouds: map[string]any{ec2interface.Read: []inventory.NetworkListing{{Account: acct, Region: region, Complete: true,
			Subnets: []inventory.Subnet{subnet("subnet-a", "vpc-1", "us-east-1a", "10.0.0.0/20", 1000)}}}}}
	st := engine.NewState()
	st.Usage = map[string][]layout.Sample{"subnet/" + acct + "/" + region + "/subnet-a": {
		{T: t0.Add(-6 * time.Hour), Usage: 3091 - 60}, {T: t0.Add(-3 * time.Hour), Usage: 3091 - 30}}}
	p := enginetest.Build(s, []engine.Kind{&ec2interface.Kind{Policy: policy()}}, st, t0)
	h := ec2interface.HeadroomOf(p)[0]
	// 10 an hour, 1000 free: 100 hours
	if h.RateFrom != "history" || h.GrowthPerDay < 239 || h.GrowthPerDay > 241 || h.RunsOutAt == nil ||
		h.RunsOutAt.Sub(t0) < 99*time.Hour || h.RunsOutAt.Sub(t0) > 101*time.Hour {
		t.Fatalf("%+v runs out %v", h, h.RunsOutAt)
	}
	if n := len(p.State.Usage["subnet/"+acct+"/"+region+"/subnet-a"]); n != 3 {
		t.Fatalf("history not recorded: %d samples", n)
	}
	// No interface was listed: every used address is unknown.
	if h.Unknown != 3091 || !h.Attributed || h.Warning {
		t.Fatalf("%+v", h)
	}
}

func findID(p *engine.Plan, id string) *engine.Decision {
	for i := range p.Decisions {
		if p.Decisions[i].ID == id {
			return &p.Decisions[i]
		}
	}
	return nil
}

// A flat usage history is a steady subnet: the pods created lately replace
// those cleaned up, so no run-out time is projected from them.
func TestHeadroomFlatHistoryIgnoresPodCreations(t *testing.T) {
	s := headroomSnap(t0) // subnet-b's 60 pods were created an hour ago
	st := engine.NewState()
	st.Usage = map[string][]layout.Sample{}
	for _, h := range ec2interface.Attribute(s, t0).Subnets {
		key := "subnet/" + acct + "/" + region + "/" + h.Subnet.ID
		used := float64(h.Used())
		st.Usage[key] = []layout.Sample{{T: t0.Add(-6 * time.Hour), Usage: used}, {T: t0.Add(-3 * time.Hour), Usage: used}}
	}
	p := enginetest.Build(s, headroomKinds(policy()), st, t0)
	for _, h := range ec2interface.HeadroomOf(p) {
		if h.RunsOutAt != nil || h.RateFrom == "pod creations" || h.GrowthPerDay != 0 {
			t.Errorf("%s: %+v", h.Subnet, h)
		}
	}
}

// A Running pod stuck after its main container exited is named with the
// address it holds, and warned of; the others running are not.
func TestStuckPodsAreNamed(t *testing.T) {
	second := t0.Add(jobGrace + time.Minute)
	s := headroomSnap(second)
	c := &s.Clusters[0]
	for i := range c.Pods {
		if c.Pods[i].Name == "web-0" {
			c.Pods[i].Stuck = "main exited 0 at 2026-11-01T00:00:00Z; istio-proxy still running"
		}
	}
	p := enginetest.Build(s, headroomKinds(policy()), engine.NewState(), second)
	stuck, _ := layout.Data(p.Sections, "stuckPods").([]ec2interface.StuckHolder)
	if len(stuck) != 1 || stuck[0].Pod != "web-0" || stuck[0].Subnet != "subnet-b" || !strings.Contains(stuck[0].Why, "istio-proxy still running") {
		t.Fatalf("stuck %+v", stuck)
	}
	found := false
	for _, w := range p.Warnings {
		found = found || strings.HasPrefix(w.Text, "1 pod is Running after the main container exited, holding 1 subnet address")
	}
	if !found {
		t.Fatalf("no warning of the stuck pod: %+v", p.Warnings)
	}
}
