package fleetsim

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/finished"
	"reclaim.dev/reclaim/reconcile/kinds/k8sjob"
	"reclaim.dev/reclaim/reconcile/kinds/k8spod"
)

// The workloads of a cluster's truth: Jobs (some of CronJobs), their pods,
// bare pods, pods of ReplicaSets and nodes, for the k8s-job and k8s-pod
// kinds and the interface kind's pod evidence.

const (
	retentionAnn = "reclaim.dev/retention"
	batchNS      = "batch"
	systemNS     = "kube-system" // excluded by the jobs and pods sections
)

// annotations are the retention annotations a fleet uses, with what the
// truth reads them as: a duration, never (-1) or malformed (-2).
var annotations = map[string]time.Duration{
	"never": -1, "90m": 90 * time.Minute, "1h": time.Hour, "3h": 3 * time.Hour, "2d": 48 * time.Hour,
	"soon": -2, "5x": -2, "3 days": -2,
}

type cronJob struct {
	name, uid        string
	succLim, failLim int32
	late             bool // a Job of it changed after the snapshot
}

// job is a batch/v1 Job of the truth. A recreated Job is a new *job under
// the same name with a new UID. late: it changed between a run's snapshot
// and its apply (a restart reclaim's re-read of a pod cannot see).
type job struct {
	ns, name, uid string
	created       time.Time
	status        string // "" running, Complete, Failed
	finished      time.Time
	ttl           *int32
	retention     string
	protected     bool
	cron          *cronJob
	late          bool
	// was is the status a Job restarted after the snapshot had: the plan's
	// CronJob history counted it so.
	was string
	clocks
	versioned
}

func (j *job) done() bool { return j.status == "Complete" || j.status == "Failed" }

// wpod is a pod of the truth's workloads (the PVC part's pods are pod).
type wpod struct {
	ns, name, uid string
	phase         string
	ips           []string
	node          string
	created       time.Time
	finished      time.Time
	owner         *inventory.Owner // Job, ReplicaSet or nil (bare)
	protected     bool
	retention     string
	late          bool // made, or its IP taken, after the snapshot
	clocks
	versioned
}

func (p *wpod) done() bool { return p.phase == "Succeeded" || p.phase == "Failed" }

type node struct {
	name, instance string
	ips            []string
}

func (c *cluster) jobNamed(ns, name string) *job {
	for _, j := range c.jobs {
		if j.ns == ns && j.name == name {
			return j
		}
	}
	return nil
}

func (c *cluster) jobUID(uid string) *job {
	for _, j := range c.jobs {
		if j.uid == uid {
			return j
		}
	}
	return nil
}

func (c *cluster) wpodNamed(ns, name string) *wpod {
	for _, p := range c.wpods {
		if p.ns == ns && p.name == name {
			return p
		}
	}
	return nil
}

func (f *fleet) uid() string { return fmt.Sprintf("uid-%d", f.w.next()) }

// ip hands out an address of the subnet (or of a made-up one when no subnet
// exists: a pod that holds none reclaim lists).
func (f *fleet) ip(s *subnet) string {
	if s == nil {
		return fmt.Sprintf("192.168.%d.%d", f.w.next()%250, 1+f.rng.IntN(250))
	}
	s.used++
	return fmt.Sprintf("10.%d.%d.%d", s.octet, s.used/250, 1+s.used%250)
}

// subnetFor picks a subnet the cluster's pods could be given addresses in.
func (f *fleet) subnetFor(c *cluster) *subnet {
	var can []*subnet
	for _, s := range f.w.subnets {
		if c.couldUseSubnet(s.id) {
			can = append(can, s)
		}
	}
	if len(can) == 0 {
		return nil
	}
	return pick(f, can)
}

func (f *fleet) newPod(c *cluster, ns, name string, owner *inventory.Owner, phase string) *wpod {
	p := &wpod{ns: ns, name: name, uid: f.uid(), phase: phase, created: f.now, owner: owner, node: fmt.Sprintf("node-%d", f.rng.IntN(4))}
	if f.chance(0.85) { // else hostNetwork: no address of its own
		p.ips = []string{f.ip(f.subnetFor(c))}
	}
	if phase != "Running" {
		p.finished = f.now
		if f.chance(0.1) { // evicted: no container finish time
			p.finished = time.Time{}
		}
	}
	c.wpods = append(c.wpods, p)
	return p
}

func (f *fleet) retentionValue() string {
	if !f.chance(0.25) {
		return ""
	}
	return pick(f, []string{"never", "90m", "1h", "3h", "2d", "soon", "5x", "3 days"})
}

// newJob starts a Job (of cron, if not nil) and its running pod; some have
// failed attempts already.
func (f *fleet) newJob(c *cluster, cron *cronJob) *job {
	ns := batchNS
	if cron == nil && f.chance(0.1) {
		ns = systemNS
	}
	j := &job{ns: ns, name: fmt.Sprintf("job-%d", f.w.next()), uid: f.uid(), created: f.now.Add(time.Duration(f.w.next()) * time.Millisecond),
		retention: f.retentionValue(), protected: f.chance(0.08), cron: cron}
	if cron != nil {
		j.name = fmt.Sprintf("%s-%d", cron.name, f.w.next())
	}
	if f.chance(0.25) {
		ttl := int32(pick(f, []int{0, 1800, 3600, 4 * 3600}))
		j.ttl = &ttl
	}
	c.jobs = append(c.jobs, j)
	f.jobPods(c, j)
	return j
}

// jobPods starts a Job's pod, perhaps after a failed attempt.
func (f *fleet) jobPods(c *cluster, j *job) {
	owner := &inventory.Owner{Kind: "Job", Name: j.name, UID: j.uid}
	if f.chance(0.2) {
		f.newPod(c, j.ns, fmt.Sprintf("%s-%d", j.name, f.w.next()), owner, "Failed")
	}
	f.newPod(c, j.ns, fmt.Sprintf("%s-%d", j.name, f.w.next()), owner, "Running")
}

// finishJob ends a running Job: its running pods end too.
func (f *fleet) finishJob(c *cluster, j *job) {
	j.status = pick(f, []string{"Complete", "Complete", "Failed"})
	j.finished = f.now
	for _, p := range c.wpods {
		if p.owner != nil && p.owner.UID == j.uid && p.phase == "Running" {
			p.phase, p.finished = map[bool]string{true: "Succeeded", false: "Failed"}[j.status == "Complete"], f.now
		}
	}
}

// removeJob removes a Job and, as the garbage collector does, its pods;
// byReclaim: reclaim's delete did it (the fake counts that one).
func (f *fleet) removeJob(c *cluster, j *job, byReclaim bool) {
	c.jobs = slices.DeleteFunc(c.jobs, func(x *job) bool { return x == j })
	if !byReclaim {
		f.byOthers[k8sjob.ID(c.name, j.ns, j.name)]++
	}
	for _, p := range slices.Clone(c.wpods) {
		if p.owner != nil && p.owner.UID == j.uid {
			f.removePod(c, p, false)
		}
	}
}

func (f *fleet) removePod(c *cluster, p *wpod, byReclaim bool) {
	c.wpods = slices.DeleteFunc(c.wpods, func(x *wpod) bool { return x == p })
	if !byReclaim {
		f.byOthers[k8spod.ID(c.name, p.ns, p.name)]++
	}
}

// setupWorkloads gives each cluster Jobs (some of CronJobs, some finished
// long ago), bare pods, pods of ReplicaSets and nodes.
func (f *fleet) setupWorkloads() {
	for _, c := range f.w.clusters {
		if f.chance(0.4) { // a cluster without batch workloads
			continue
		}
		for i := range 1 + f.rng.IntN(2) {
			s := f.subnetFor(c)
			n := &node{name: fmt.Sprintf("node-%d", i), instance: fmt.Sprintf("i-%08x", f.w.next())}
			n.ips = []string{f.ip(s)}
			c.nodes = append(c.nodes, n)
		}
		if f.chance(0.4) {
			cj := &cronJob{name: fmt.Sprintf("cron-%d", f.w.next()), uid: f.uid(), succLim: int32(f.rng.IntN(4)), failLim: int32(f.rng.IntN(2))}
			c.crons = append(c.crons, cj)
			for range 1 + f.rng.IntN(4) {
				f.agedJob(c, cj)
			}
		}
		for range 1 + f.rng.IntN(2) {
			f.agedJob(c, nil)
		}
		for range f.rng.IntN(2) {
			p := f.newPod(c, batchNS, fmt.Sprintf("bare-%d", f.w.next()), nil, pick(f, []string{"Running", "Succeeded", "Failed"}))
			p.retention, p.protected = f.retentionValue(), f.chance(0.1)
			f.age(p)
		}
		for range f.rng.IntN(2) {
			rs := &inventory.Owner{Kind: "ReplicaSet", Name: fmt.Sprintf("web-%d", f.w.next()), UID: f.uid()}
			p := f.newPod(c, batchNS, rs.Name+"-x", rs, pick(f, []string{"Running", "Failed", "Succeeded"}))
			f.age(p)
		}
	}
}

func (f *fleet) age(p *wpod) {
	back := time.Duration(f.rng.IntN(30)) * time.Hour
	p.created = p.created.Add(-back - time.Hour)
	if !p.finished.IsZero() {
		p.finished = p.finished.Add(-back)
	}
}

// agedJob is a Job started and perhaps finished hours ago.
func (f *fleet) agedJob(c *cluster, cron *cronJob) {
	j := f.newJob(c, cron)
	back := time.Duration(f.rng.IntN(40)) * time.Hour
	j.created = j.created.Add(-back - time.Hour)
	if f.chance(0.8) {
		f.finishJob(c, j)
		j.finished = j.finished.Add(-back)
		for _, p := range c.wpods {
			if p.owner != nil && p.owner.UID == j.uid {
				f.age(p)
				p.finished = j.finished
			}
		}
	}
}

// mutateWorkloads changes the clusters' workloads between runs.
func (f *fleet) mutateWorkloads() {
	for _, c := range f.w.clusters {
		for _, j := range c.jobs {
			j.late, j.was = false, ""
		}
		for _, cj := range c.crons {
			cj.late = false
		}
		for _, p := range c.wpods {
			p.late = false
		}
	}
	for range f.rng.IntN(3) {
		c := pick(f, f.w.clusters)
		switch f.rng.IntN(10) {
		case 0:
			f.newJob(c, nil)
		case 1:
			if len(c.crons) > 0 {
				f.newJob(c, pick(f, c.crons))
			}
		case 2, 3:
			if i := slices.IndexFunc(c.jobs, func(j *job) bool { return !j.done() }); i >= 0 {
				f.finishJob(c, c.jobs[i])
			}
		case 4: // the TTL controller does its job, or the CronJob controller trims
			for _, j := range slices.Clone(c.jobs) {
				if j.done() && j.ttl != nil && !f.now.Before(j.finished.Add(time.Duration(*j.ttl)*time.Second)) && f.chance(0.5) {
					f.removeJob(c, j, false)
				}
			}
		case 5:
			if len(c.jobs) > 0 {
				j := pick(f, c.jobs)
				j.protected = !j.protected
			}
		case 6:
			if len(c.jobs) > 0 {
				pick(f, c.jobs).retention = f.retentionValue()
			}
		case 7:
			f.recreateJob(c, nil)
		case 8:
			p := f.newPod(c, batchNS, fmt.Sprintf("bare-%d", f.w.next()), nil, "Running")
			p.retention = f.retentionValue()
		case 9:
			for _, p := range c.wpods {
				if p.owner == nil && p.phase == "Running" {
					p.phase, p.finished = pick(f, []string{"Succeeded", "Failed"}), f.now
					break
				}
			}
		}
	}
}

// recreateJob deletes a Job (j, or a random one) and makes another under its
// name: a new UID, running, with new pods.
func (f *fleet) recreateJob(c *cluster, j *job) *job {
	if j == nil {
		if len(c.jobs) == 0 {
			return nil
		}
		j = pick(f, c.jobs)
	}
	f.removeJob(c, j, false)
	n := &job{ns: j.ns, name: j.name, uid: f.uid(), created: f.now.Add(time.Duration(f.w.next()) * time.Millisecond), retention: j.retention, protected: j.protected, cron: j.cron, ttl: j.ttl}
	c.jobs = append(c.jobs, n)
	f.jobPods(c, n)
	f.stats.Faults["recreated Job"]++
	f.tracef("recreated Job %s/%s/%s", c.name, j.ns, j.name)
	return n
}

// retention is what the truth says of a finished object's retention: "" and
// when it ends, or why it is kept for good.
func (f *fleet) retention(succeeded bool, finished time.Time, ann string, pol interface {
	durations() (time.Duration, time.Duration)
}) (string, time.Time) {
	s, fl := pol.durations()
	d := fl
	if succeeded {
		d = s
	}
	if ann != "" {
		switch v := annotations[ann]; v {
		case -1:
			return "annotation never", time.Time{}
		case -2:
			return "malformed annotation " + ann, time.Time{}
		default:
			d = v
		}
	}
	return "", finished.Add(d)
}

type jobDurations struct{ s, f time.Duration }

func (d jobDurations) durations() (time.Duration, time.Duration) { return d.s, d.f }

// jobKept says why the truth keeps a Job from deletion, or "".
func (f *fleet) jobKept(c *cluster, j *job) string {
	pol := f.jobPol
	switch {
	case !j.done():
		return "running"
	case j.protected:
		return "protected"
	case j.ns == systemNS:
		return "in an excluded namespace"
	}
	if why := f.cronHistory(c, j); why != "" {
		return why
	}
	if j.ttl != nil {
		if due := j.finished.Add(time.Duration(*j.ttl) * time.Second).Add(pol.TTLGrace); f.now.Before(due) {
			return "ttlSecondsAfterFinished not past due with grace"
		}
		return ""
	}
	why, until := f.retention(j.status == "Complete", j.finished, j.retention, jobDurations{pol.Succeeded, pol.Failed})
	if why != "" {
		return why
	}
	if f.now.Before(until) {
		return "within its retention"
	}
	return ""
}

// cronHistory: the newest limit Jobs of a CronJob, per outcome, are its.
func (f *fleet) cronHistory(c *cluster, j *job) string {
	if j.cron == nil || !f.jobPol.KeepCronJobHistory {
		return ""
	}
	var same []*job
	for _, o := range c.jobs {
		status := o.status
		if o.late && status == "" {
			status = o.was
		}
		if o.cron == j.cron && status == j.status {
			same = append(same, o)
		}
	}
	sort.Slice(same, func(a, b int) bool { return same[a].created.After(same[b].created) })
	limit := j.cron.succLim
	if j.status == "Failed" {
		limit = j.cron.failLim
	}
	if i := slices.Index(same, j); i < int(limit) {
		return fmt.Sprintf("one of the newest %d of CronJob %s", limit, j.cron.name)
	}
	return ""
}

// podKept says why the truth keeps a pod from deletion, or "".
func (f *fleet) podKept(c *cluster, p *wpod) string {
	switch {
	case !p.done():
		return "not finished"
	case p.ns == systemNS:
		return "in an excluded namespace"
	}
	if o := p.owner; o != nil {
		switch o.Kind {
		case "Job":
			if j := c.jobUID(o.UID); j != nil && !j.done() {
				return "its Job " + j.name + " is running"
			}
		default:
			return "owned by " + o.Kind
		}
	}
	if p.protected {
		return "protected"
	}
	fin := p.finished
	if fin.IsZero() {
		fin = p.created
	}
	why, until := f.retention(p.phase == "Succeeded", fin, p.retention, jobDurations{f.podPol.Succeeded, f.podPol.Failed})
	if why != "" {
		return why
	}
	if f.now.Before(until) {
		return "within its retention"
	}
	return ""
}

// workloadsEvidence says why a cluster's workloads were not all seen this run.
func (f *fleet) workloadsEvidence(c *cluster) string {
	if why := f.rf.clusters[c.name]; why != "" {
		return "cluster " + c.name + " " + why
	}
	return ""
}

func (f *fleet) checkJob(c *cluster, j *job) {
	what := fmt.Sprintf("Job %s/%s/%s (uid %s)", c.name, j.ns, j.name, j.uid)
	switch why := f.jobKept(c, j); {
	case strings.HasPrefix(why, "one of the newest") && j.cron.late:
		// Another Job of its CronJob went or restarted since the snapshot:
		// the re-read of this one cannot see its history change.
		f.stats.Races["CronJob history changed after the snapshot"]++
	case why != "":
		f.violate("deleted %s: %s", what, why)
	}
	if why := f.workloadsEvidence(c); why != "" {
		f.violate("deleted %s while %s", what, why)
	}
	f.grace(what, j.clocks, f.jobPol.Grace.Std())
}

func (f *fleet) checkWPod(c *cluster, p *wpod) {
	what := fmt.Sprintf("pod %s/%s/%s (uid %s)", c.name, p.ns, p.name, p.uid)
	if why := f.podKept(c, p); why != "" {
		if j := c.jobOf(p); j != nil && j.late && !j.done() {
			f.stats.Races["pod's Job restarted after the snapshot"]++
		} else {
			f.violate("deleted %s: %s", what, why)
		}
	}
	if why := f.workloadsEvidence(c); why != "" {
		f.violate("deleted %s while %s", what, why)
	}
	f.grace(what, p.clocks, f.podPol.Grace.Std())
}

func (c *cluster) jobOf(p *wpod) *job {
	if p.owner == nil || p.owner.Kind != "Job" {
		return nil
	}
	return c.jobUID(p.owner.UID)
}

// observeWorkloads starts and resets the truth's clocks of Jobs and pods.
func (f *fleet) observeWorkloads(snap *inventory.View) {
	listed := map[string]bool{}
	for _, cr := range snap.Clusters {
		for _, j := range cr.Jobs {
			listed[j.UID] = true
		}
		for _, p := range cr.Pods {
			listed[p.UID] = true
		}
	}
	for _, c := range f.w.clusters {
		seen := f.rf.clusters[c.name] == ""
		for _, j := range c.jobs {
			j.clocks.observe(f.jobKept(c, j) == "", seen && listed[j.uid], f.now)
		}
		for _, p := range c.wpods {
			p.clocks.observe(f.podKept(c, p) == "", seen && listed[p.uid], f.now)
		}
	}
}

// workloadRefs adds a cluster's workloads to its collection (keep says
// whether a partial listing shows an object).
func (f *fleet) workloadRefs(c *cluster, cr *inventory.ClusterRefs, keep func() bool) {
	for _, j := range c.jobs {
		v := j.version(c, fmt.Sprint(j.status, j.finished, ptrValue(j.ttl), j.retention, j.protected, j.cron != nil))
		if !keep() {
			continue
		}
		ij := inventory.Job{Namespace: j.ns, Name: j.name, UID: j.uid, Version: v, Labels: map[string]string{"app": "batch"}, Protected: j.protected,
			Retention: j.retention, Created: j.created, Status: j.status, Finished: j.finished, TTL: j.ttl}
		if j.protected {
			ij.Labels[protectLabel] = "true"
		}
		if !j.done() {
			ij.Active = 1
		}
		if j.cron != nil {
			ij.CronJob = &inventory.Owner{Kind: "CronJob", Name: j.cron.name, UID: j.cron.uid}
		}
		cr.Jobs = append(cr.Jobs, ij)
	}
	for _, cj := range c.crons {
		cr.CronJobs = append(cr.CronJobs, inventory.CronJob{Namespace: batchNS, Name: cj.name, UID: cj.uid, SuccessfulLimit: cj.succLim, FailedLimit: cj.failLim})
	}
	for _, p := range c.wpods {
		v := p.version(c, fmt.Sprint(p.phase, p.ips, p.node, p.finished, p.owner, p.protected, p.retention))
		if !keep() {
			continue
		}
		ip := inventory.Pod{Namespace: p.ns, Name: p.name, UID: p.uid, Version: v, Protected: p.protected, Retention: p.retention, Phase: p.phase,
			IPs: slices.Clone(p.ips), Node: p.node, Created: p.created, Finished: p.finished}
		if p.owner != nil {
			o := *p.owner
			ip.Owner = &o
		}
		cr.Pods = append(cr.Pods, ip)
	}
	cr.JobsVersion = strconv.FormatUint(c.rv, 10)
	cr.PodsVersion = cr.JobsVersion
	for _, n := range c.nodes {
		cr.Nodes = append(cr.Nodes, inventory.Node{Name: n.name, IPs: slices.Clone(n.ips), Instance: n.instance})
	}
}

// raceNew changes, between plan and apply, what a Job, pod or interface
// decision deletes.
func (f *fleet) raceNew(d *engine.Decision, event func(string)) {
	switch d.Kind {
	case k8sjob.Name:
		det := finished.DetailOf(d)
		c := f.w.clusterNamed(det.Cluster)
		j := c.jobNamed(det.Namespace, d.Name)
		if j == nil {
			return
		}
		if j.cron != nil {
			j.cron.late = true
		}
		switch f.rng.IntN(4) {
		case 0:
			f.recreateJob(c, j).late = true
			event("Job recreated")
		case 1:
			j.protected = true
			event("Job protected")
		case 2:
			j.retention = "never"
			event("Job annotated never")
		case 3:
			f.removeJob(c, j, false)
			event("Job deleted by its TTL controller")
		}
	case k8spod.Name:
		det := finished.DetailOf(d)
		c := f.w.clusterNamed(det.Cluster)
		p := c.wpodNamed(det.Namespace, d.Name)
		if p == nil {
			return
		}
		if j := c.jobOf(p); j != nil && j.cron != nil {
			j.cron.late = true
		}
		switch f.rng.IntN(4) {
		case 0:
			if j := c.jobOf(p); j != nil {
				// Not what Kubernetes does to a Job once finished; a person
				// recreating it is (case 1). Tells whether the re-read looks.
				j.was, j.status, j.finished, j.late = j.status, "", time.Time{}, true
				event("pod's Job restarted")
				return
			}
			fallthrough
		case 1:
			if j := c.jobOf(p); j != nil {
				f.recreateJob(c, j).late = true
				event("pod's Job recreated")
				return
			}
			f.removePod(c, p, false)
			np := f.newPod(c, p.ns, p.name, nil, "Running")
			np.late = true
			event("pod recreated")
		case 2:
			p.protected = true
			event("pod protected")
		case 3:
			p.retention = "never"
			event("pod annotated never")
		}
	case ec2interface.Name:
		det := ec2interface.DetailOf(d)
		n := f.w.ifaceByID(det.Account, d.Name)
		if n == nil {
			return
		}
		switch f.rng.IntN(3) {
		case 0:
			n.status, n.instance = "in-use", fmt.Sprintf("i-%08x", f.w.next())
			event("interface attached")
		case 1:
			f.removeIface(n, false)
			event("interface deleted meanwhile")
		case 2:
			var p *wpod
			for _, c := range f.w.clusters {
				if c.couldUseSubnet(n.subnet) {
					p = f.newPod(c, batchNS, fmt.Sprintf("late-%d", f.w.next()), nil, "Running")
					break
				}
			}
			if p != nil {
				p.ips, p.late = []string{n.ips[0]}, true
				event("pod took the interface's address")
			}
		}
	}
}

func ptrValue[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
