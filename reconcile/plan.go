// Package reconcile turns a snapshot into a plan (a pure function), applies the
// plan (the only code that deletes), and keeps reclaim's state and audit log.
package reconcile

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// SchemaVersion is the version of the JSON plan/report. Bump it on any
// incompatible change to the JSON shape.
const SchemaVersion = "reclaim.dev/v1"

// KindDisk and KindPVC are the kinds of resource a decision is about.
const (
	KindDisk  = "gce-disk"
	KindPVC   = "k8s-pvc"
	KindImage = "ecr-image"
)

// Action is what the plan does with a resource.
type Action string

const (
	// Keep: in use, protected, or out of scope. Nothing will happen.
	Keep Action = "keep"
	// Report: nobody uses it, but reclaim will never delete it (no proof of
	// ownership, or a policy switch is off). A person should look.
	Report Action = "report"
	// Mark: an orphan whose clock is running, or a deletion held back this run
	// (incomplete evidence, caps, breaker). It may be deleted in a later run.
	Mark Action = "mark"
	// Delete: apply deletes it (only with --apply).
	Delete Action = "delete"
)

// Policy is what the operator decided, already validated.
type Policy struct {
	Regions                  []string // empty: every region
	Zones                    []string // empty: every zone
	MinAge                   time.Duration
	Grace                    time.Duration
	MinDetached              time.Duration
	ProtectLabel             string
	OwnerLabelKeys           []string
	OwnerDescriptionContains []string
	SnapshotBeforeDelete     bool
	DeleteWorkflowPVCs       bool
	MaxDeletes               int
	MaxDeletePercent         float64 // fraction 0..1 of the disks listed in scope
	MaxDeleteGB              float64 // 0: no size cap
	BreakerCandidates        int
	QuotaMetrics             []string
	HeadroomWarning          float64 // fraction 0..1
	// Images is the ECR policy; nil when no registry is configured.
	Images *ImagePolicy
}

// Decision is the plan for one resource, with a reason a person understands.
type Decision struct {
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	Cluster  string `json:"cluster,omitempty"` // PVCs only
	Project  string `json:"project,omitempty"`
	Location string `json:"location,omitempty"` // zone or region of a disk; namespace of a PVC
	Name     string `json:"name"`
	SizeGB   int64  `json:"sizeGB"`
	Type     string `json:"type,omitempty"`
	// QuotaMetric is the regional quota the disk counts against, if known.
	QuotaMetric string `json:"quotaMetric,omitempty"`
	Region      string `json:"region,omitempty"`
	Action      Action `json:"action"`
	Reason      string `json:"reason"`
	// Held is set when a deletion was due but held back this run (caps, breaker,
	// incomplete evidence); Reason then says why.
	Held           bool       `json:"held,omitempty"`
	OrphanSince    *time.Time `json:"orphanSince,omitempty"`
	DeletableAfter *time.Time `json:"deletableAfter,omitempty"`
	// Owner explains where an orphan came from (the PVC it was created for).
	Owner string `json:"owner,omitempty"`
	// Snapshot asks apply to snapshot the disk before deleting it.
	Snapshot bool `json:"snapshot,omitempty"`
	// What the resource looked like when planned; apply re-reads and compares.
	LabelFingerprint string `json:"labelFingerprint,omitempty"`
	UID              string `json:"uid,omitempty"` // PVCs

	// Images: the repository (host/name), digest and tags, what deleting it
	// frees, and the times apply compares on re-read.
	Account    string     `json:"account,omitempty"`
	Repository string     `json:"repository,omitempty"`
	Digest     string     `json:"digest,omitempty"`
	Tags       []string   `json:"tags,omitempty"`
	Bytes      int64      `json:"bytes,omitempty"`
	PushedAt   *time.Time `json:"pushedAt,omitempty"`
	PulledAt   *time.Time `json:"pulledAt,omitempty"`
	// Parents are the indexes an image is a child of; it is deleted after them.
	Parents []string `json:"parents,omitempty"`
	// Class is the kind of reason, for counting: in-use, index-child, ...
	Class string `json:"class,omitempty"`
}

// Source is the completeness of one input of the plan.
type Source struct {
	Kind     string        `json:"kind"` // cluster, gce-project
	Name     string        `json:"name"`
	Complete bool          `json:"complete"`
	Problems []string      `json:"problems,omitempty"`
	Items    int           `json:"items"`
	Duration time.Duration `json:"durationNs,omitempty"`
}

// Headroom is one regional quota before and after the plan.
type Headroom struct {
	Project string  `json:"project"`
	Region  string  `json:"region"`
	Metric  string  `json:"metric"`
	Known   bool    `json:"known"`
	Problem string  `json:"problem,omitempty"`
	Limit   float64 `json:"limit"`
	Usage   float64 `json:"usage"`
	// PlanFrees is what this run's deletions free (disks and PVCs due now).
	PlanFrees float64 `json:"planFreesGB"`
	// OrphanGB is held by every orphan disk, due or not yet.
	OrphanGB float64 `json:"orphanGB"`
	// FinishedWorkflowGB is held by PVCs of finished Argo Workflows.
	FinishedWorkflowGB float64 `json:"finishedWorkflowGB"`
	UsedPct            float64 `json:"usedPct"`
	UsedPctAfter       float64 `json:"usedPctAfter"`
	Warning            bool    `json:"warning"`
	// GrowthPerDay is the usage trend over the recorded history (GB a day),
	// and RunsOutAt when usage reaches the limit at that rate, if it grows.
	GrowthPerDay float64    `json:"growthPerDay"`
	RunsOutAt    *time.Time `json:"runsOutAt,omitempty"`
}

// Holder is a namespace or workflow holding quota through finished-workflow PVCs.
type Holder struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Workflow  string `json:"workflow"`
	Phase     string `json:"phase"`
	PVCs      int    `json:"pvcs"`
	GB        int64  `json:"gb"`
}

// Plan is the whole outcome of planning one run. It is data: dry-run prints it.
type Plan struct {
	Version     string     `json:"version"`
	GeneratedAt time.Time  `json:"generatedAt"`
	Sources     []Source   `json:"sources"`
	Decisions   []Decision `json:"decisions"`
	Headroom    []Headroom `json:"headroom"`
	Holders     []Holder   `json:"holders"`
	// Repositories is one line per ECR repository: count against limit and
	// what the plan removes.
	Repositories []RepoSummary `json:"repositories,omitempty"`
	// Blocked lists why some deletions were held back for the whole run.
	Blocked []string `json:"blocked,omitempty"`
	// BreakerTripped is set when too many resources were due at once.
	BreakerTripped bool `json:"breakerTripped"`
	// Incomplete is true if any source was incomplete.
	Incomplete bool `json:"incomplete"`
	// State is the state to save after this run (first-seen times).
	State State `json:"-"`
	// Confirmed are deletions of an earlier, interrupted run now known to be done.
	Confirmed []string `json:"confirmed,omitempty"`
	confirmed []confirmation
}

type confirmation struct {
	id      string
	pending Pending
}

// Count returns how many decisions have the action.
func (p *Plan) Count(kind string, a Action) (n int) {
	for _, d := range p.Decisions {
		if d.Kind == kind && d.Action == a {
			n++
		}
	}
	return n
}

// QuotaMetricOf maps a disk type to the regional quota it counts against, as
// Google documents it: pd-balanced, pd-ssd and pd-extreme are SSD-backed and count
// against SSD_TOTAL_GB (GKE's default standard-rwo class makes pd-balanced disks,
// which is why the Argo leak exhausts SSD_TOTAL_GB); pd-standard counts against
// DISKS_TOTAL_GB. Hyperdisks have quotas of their own that reclaim does not map.
func QuotaMetricOf(diskType string) string {
	switch diskType {
	case "pd-balanced", "pd-ssd", "pd-extreme":
		return "SSD_TOTAL_GB"
	case "pd-standard":
		return "DISKS_TOTAL_GB"
	}
	return ""
}

// Build makes the plan. It is pure: no I/O, no clock but now.
func Build(snap inventory.Snapshot, pol Policy, prev State, now time.Time) *Plan {
	p := &Plan{Version: SchemaVersion, GeneratedAt: now}
	next := prev.clone()
	refs := indexRefs(snap.Clusters)

	for _, c := range snap.Clusters {
		p.Sources = append(p.Sources, Source{Kind: "cluster", Name: c.Name, Complete: c.Complete,
			Problems: c.Problems, Items: len(c.PVs), Duration: c.Duration})
		if !c.Complete {
			p.Incomplete = true
			what := "no disk it could reference"
			if pol.Images != nil {
				what = "no disk it could reference and no image it could pull"
			}
			p.Blocked = append(p.Blocked, fmt.Sprintf("cluster %s is incomplete (%s): %s is deleted this run",
				c.Name, strings.Join(c.Problems, "; "), what))
		}
	}
	inScope := 0
	seen := map[string]bool{}
	deleting := map[string]bool{} // a delete in flight: settle it next run
	var candidates []int
	for _, l := range snap.Disks {
		var problems []string
		if !l.Complete {
			problems = append(problems, l.Problem)
			p.Incomplete = true
		}
		for _, scope := range sortedKeys(l.UnknownScopes) {
			problems = append(problems, fmt.Sprintf("%s: %s (its disks are unknown, not absent)", scope, l.UnknownScopes[scope]))
			p.Incomplete = true
		}
		p.Sources = append(p.Sources, Source{Kind: "gce-project", Name: l.Project, Complete: l.Complete && len(l.UnknownScopes) == 0,
			Problems: problems, Items: len(l.Disks)})
		for _, d := range l.Disks {
			id := d.Key.String()
			seen[id] = true
			if d.Status == "DELETING" {
				deleting[id] = true
			}
			if diskInScope(pol, d) {
				inScope++
			}
			dec := planDisk(d, snap.Clusters, refs, pol, &next, now)
			p.Decisions = append(p.Decisions, dec)
			if dec.Action == Delete {
				candidates = append(candidates, len(p.Decisions)-1)
			}
		}
	}
	forgetGone(&next, snap.Disks, seen)
	p.resolvePending(&next, snap, seen, deleting)

	pvcsBefore := len(p.Decisions)
	pvcCandidates := planPVCs(p, snap.Clusters, pol, &next, now)
	capDeletes(p, candidates, inScope, "disks", pol)
	capDeletes(p, pvcCandidates, len(p.Decisions)-pvcsBefore, "PVCs", pol)
	planImages(p, snap, pol.Images, &next, now)
	p.Headroom = headroom(snap.Quotas, p, snap.Clusters, pol)
	project(p.Headroom, &next, now)
	p.Holders = holders(snap.Clusters)
	sort.SliceStable(p.Decisions, func(i, j int) bool { return decisionLess(p.Decisions[i], p.Decisions[j]) })
	p.State = next
	return p
}

var actionOrder = map[Action]int{Delete: 0, Mark: 1, Report: 2, Keep: 3}

func decisionLess(a, b Decision) bool {
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if actionOrder[a.Action] != actionOrder[b.Action] {
		return actionOrder[a.Action] < actionOrder[b.Action]
	}
	if a.Kind == KindImage {
		// Per repository, oldest pushed first: the order trimming goes.
		if a.Repository != b.Repository {
			return a.Repository < b.Repository
		}
		if pa, pb := a.PushedAt, b.PushedAt; pa != nil && pb != nil && !pa.Equal(*pb) {
			return pa.Before(*pb)
		}
	}
	return a.ID < b.ID
}

// refIndex finds the PV references that could point at a disk, by disk name.
type refIndex map[string][]inventory.PVRef

func indexRefs(clusters []inventory.ClusterRefs) refIndex {
	idx := refIndex{}
	for _, c := range clusters {
		for _, r := range c.PVs {
			idx[r.Disk.Name] = append(idx[r.Disk.Name], r)
		}
	}
	return idx
}

// matching returns the references that may mean this disk. UNSPECIFIED project
// or zone (written by csi-translation-lib) matches anything: keeping a disk by a
// vague reference is cheap, deleting it by a vague non-match is not.
func (idx refIndex) matching(k inventory.DiskKey) []inventory.PVRef {
	var out []inventory.PVRef
	for _, r := range idx[k.Name] {
		rk := r.Disk
		if rk.Project != inventory.Unspecified && rk.Project != "" && rk.Project != k.Project {
			continue
		}
		if !locationMatches(rk, k) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func locationMatches(ref, disk inventory.DiskKey) bool {
	switch {
	case ref.Zone == inventory.Unspecified || (ref.Zone == "" && ref.Region == ""):
		return true
	case ref.Zone != "":
		return disk.Zone == ref.Zone || disk.Region == inventory.RegionOfZone(ref.Zone)
	default: // ref names a region
		return disk.Region == ref.Region || inventory.RegionOfZone(disk.Zone) == ref.Region
	}
}

func describeRef(r inventory.PVRef) string {
	if r.PV == "" {
		pods := make([]string, 0, len(r.Pods))
		for _, p := range r.Pods {
			pods = append(pods, p.Namespace+"/"+p.Name)
		}
		return fmt.Sprintf("mounted inline (gcePersistentDisk) by pod %s in cluster %s", strings.Join(pods, ", "), r.Cluster)
	}
	s := fmt.Sprintf("referenced by PV %s in cluster %s (%s", r.PV, r.Cluster, orDefault(r.Phase, "phase unknown"))
	if r.Claim != "" {
		s += fmt.Sprintf(", bound to %s/%s", r.ClaimNamespace, r.Claim)
	}
	s += ")"
	if len(r.Pods) > 0 {
		s += fmt.Sprintf(", mounted by pod %s/%s (%s)", r.Pods[0].Namespace, r.Pods[0].Name, r.Pods[0].Phase)
		if len(r.Pods) > 1 {
			s += fmt.Sprintf(" and %d more", len(r.Pods)-1)
		}
	}
	if w := r.Workflow; w != nil {
		s += fmt.Sprintf(", owned by Workflow %s/%s (%s)", w.Namespace, w.Name, orDefault(w.Phase, "gone"))
	}
	return s
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func planDisk(d inventory.Disk, clusters []inventory.ClusterRefs, refs refIndex, pol Policy, st *State, now time.Time) Decision {
	id := d.Key.String()
	dec := Decision{Kind: KindDisk, ID: id, Project: d.Key.Project, Location: d.Key.Location(), Name: d.Key.Name,
		SizeGB: d.SizeGB, Type: d.Type, QuotaMetric: QuotaMetricOf(d.Type), Region: d.Region(),
		LabelFingerprint: d.LabelFingerprint, Owner: createdFor(d.Description)}
	keep := func(reason string) Decision {
		st.forget(id)
		dec.Action, dec.Reason = Keep, reason
		return dec
	}
	if !diskInScope(pol, d) {
		return keep(fmt.Sprintf("outside the configured scope (regions %v, zones %v)", pol.Regions, pol.Zones))
	}
	if len(d.Users) > 0 {
		return keep("attached to instance " + strings.Join(shortUsers(d.Users), ", "))
	}
	if d.Status == "DELETING" {
		return keep("already being deleted")
	}
	if rs := refs.matching(d.Key); len(rs) > 0 {
		reason := describeRef(rs[0])
		if len(rs) > 1 {
			reason += fmt.Sprintf("; %d more references", len(rs)-1)
		}
		return keep(reason)
	}
	if v, ok := d.Labels[pol.ProtectLabel]; ok && pol.ProtectLabel != "" {
		return keep(fmt.Sprintf("protected by label %s=%s", pol.ProtectLabel, v))
	}
	// No cluster we could read references it. If a cluster that could reference
	// it was not read completely, we do not know: hold, and do not start the clock.
	var unknown []string
	for _, c := range clusters {
		if !c.Complete && c.CouldReference(d.Key.Project) {
			unknown = append(unknown, c.Name)
		}
	}
	if len(unknown) > 0 {
		dec.Action, dec.Held = Mark, true
		dec.Reason = fmt.Sprintf("no users and no PV in the clusters read, but cluster %s could not be read completely: held", strings.Join(unknown, ", "))
		if e, ok := st.Resources[id]; ok {
			t := e.FirstSeen
			dec.OrphanSince = &t
		}
		return dec
	}

	since := st.observeOrphan(id, now)
	dec.OrphanSince = &since
	after := latest(since.Add(pol.Grace), d.Created.Add(pol.MinAge))
	if !d.LastDetach.IsZero() {
		after = latest(after, d.LastDetach.Add(pol.MinDetached))
	}
	dec.DeletableAfter = &after

	if !owned(d, pol) {
		dec.Action = Report
		dec.Reason = fmt.Sprintf("no users and no PV references it, but nothing proves Kubernetes created it (no label %s, no description containing %s): reported, never deleted",
			strings.Join(pol.OwnerLabelKeys, "/"), strings.Join(pol.OwnerDescriptionContains, "/"))
		dec.DeletableAfter = nil
		return dec
	}
	dec.Action = Mark
	switch {
	case d.Status != "" && d.Status != "READY":
		dec.Reason = fmt.Sprintf("status is %s, not READY", d.Status)
	case now.Sub(d.Created) < pol.MinAge:
		dec.Reason = fmt.Sprintf("younger than min age %s (created %s)", pol.MinAge, fmtTime(d.Created))
	case !d.LastDetach.IsZero() && now.Sub(d.LastDetach) < pol.MinDetached:
		dec.Reason = fmt.Sprintf("detached %s ago, less than %s (last detach %s)", now.Sub(d.LastDetach).Round(time.Minute), pol.MinDetached, fmtTime(d.LastDetach))
	case now.Before(since.Add(pol.Grace)):
		dec.Reason = fmt.Sprintf("orphan since %s, deletable after %s (grace %s)", fmtTime(since), fmtTime(after), pol.Grace)
	default:
		dec.Action = Delete
		dec.Snapshot = pol.SnapshotBeforeDelete
		dec.Reason = fmt.Sprintf("no users, no PV in any of %d clusters, orphan since %s (grace %s elapsed)", len(clusters), fmtTime(since), pol.Grace)
	}
	return dec
}

func owned(d inventory.Disk, pol Policy) bool {
	for _, k := range pol.OwnerLabelKeys {
		if _, ok := d.Labels[k]; ok {
			return true
		}
	}
	for _, s := range pol.OwnerDescriptionContains {
		if s != "" && strings.Contains(d.Description, s) {
			return true
		}
	}
	return false
}

// createdFor reads the PD CSI driver's description
// {"kubernetes.io/created-for/pvc/namespace":"ns","kubernetes.io/created-for/pvc/name":"claim",...}
// and names the claim an orphan was made for.
func createdFor(desc string) string {
	ns := jsonStringField(desc, "kubernetes.io/created-for/pvc/namespace")
	name := jsonStringField(desc, "kubernetes.io/created-for/pvc/name")
	if name == "" {
		return ""
	}
	return "created for PVC " + ns + "/" + name
}

func shortUsers(users []string) []string {
	out := make([]string, len(users))
	for i, u := range users {
		out[i] = inventory.LastSegment(u)
	}
	return out
}

// forgetGone drops first-seen times of disks that are certainly gone: not seen in
// a listing that would have shown them. A disk in an unknown scope keeps its clock.
func forgetGone(st *State, listings []inventory.DiskListing, seen map[string]bool) {
	byProject := map[string]inventory.DiskListing{}
	for _, l := range listings {
		byProject[l.Project] = l
	}
	for id := range st.Resources {
		k, err := inventory.ParseDiskKey(id)
		if err != nil || seen[id] {
			continue
		}
		if l, ok := byProject[k.Project]; ok && l.ScopeKnown(k) {
			delete(st.Resources, id)
		}
	}
}

// resolvePending settles deletions an interrupted run started: a resource that a
// complete listing no longer shows was deleted (recorded once, now); one that is
// still there was not, and is planned again like any other.
func (p *Plan) resolvePending(st *State, snap inventory.Snapshot, seen, deleting map[string]bool) {
	byProject := map[string]inventory.DiskListing{}
	for _, l := range snap.Disks {
		byProject[l.Project] = l
	}
	pvcs := map[string]bool{}
	complete := map[string]bool{}
	for _, c := range snap.Clusters {
		complete[c.Name] = c.Complete
		for _, pvc := range c.PVCs {
			// A Terminating PVC was deleted; Kubernetes finishes the job.
			pvcs[pvcID(c.Name, pvc.Namespace, pvc.Name)] = !pvc.Terminating
		}
	}
	for _, id := range sortedKeys(st.Pending) {
		pend := st.Pending[id]
		gone, known := false, false
		switch pend.Kind {
		case KindDisk:
			k, err := inventory.ParseDiskKey(id)
			if err != nil {
				delete(st.Pending, id)
				continue
			}
			l, ok := byProject[k.Project]
			known = ok && l.ScopeKnown(k)
			gone = !seen[id]
		case KindImage:
			gone, known = imageGone(snap, id)
		case KindPVC:
			parts := strings.Split(id, "/")
			known = len(parts) > 1 && complete[parts[1]]
			gone = !pvcs[id]
		}
		if !known || deleting[id] {
			continue
		}
		delete(st.Pending, id)
		if gone {
			st.forget(id)
			p.Confirmed = append(p.Confirmed, id)
			p.confirmed = append(p.confirmed, confirmation{id, pend})
		}
	}
}

// capDeletes applies the breaker and the per-run caps to one kind. Oldest
// orphans go first.
func capDeletes(p *Plan, due []int, inventorySize int, kind string, pol Policy) {
	if len(due) == 0 {
		return
	}
	if tripBreaker(p, due, pol.BreakerCandidates, fmt.Sprintf("breaker: %d %s are due for deletion, more than breakerCandidates %d; none is deleted this run — check the clusters' view before raising the limit",
		len(due), kind, pol.BreakerCandidates)) {
		return
	}
	sort.SliceStable(due, func(a, b int) bool {
		da, db := p.Decisions[due[a]], p.Decisions[due[b]]
		if !da.OrphanSince.Equal(*db.OrphanSince) {
			return da.OrphanSince.Before(*db.OrphanSince)
		}
		return da.ID < db.ID
	})
	maxCount := perRunMax(pol.MaxDeletes, pol.MaxDeletePercent, inventorySize)
	n, gb := 0, 0.0
	for _, i := range due {
		d := &p.Decisions[i]
		switch {
		case n >= maxCount:
			hold(d, fmt.Sprintf("per-run cap of %d %s reached (maxDeletesPerRun %d, maxDeletePercent %.0f%% of %d); next run",
				maxCount, kind, pol.MaxDeletes, pol.MaxDeletePercent*100, inventorySize))
		case pol.MaxDeleteGB > 0 && gb+float64(d.SizeGB) > pol.MaxDeleteGB:
			hold(d, fmt.Sprintf("per-run size cap of %.0f GB reached; next run", pol.MaxDeleteGB))
		default:
			n++
			gb += float64(d.SizeGB)
		}
	}
}

// tripBreaker holds every due deletion when more than limit are due (limit
// 0: no breaker), and says why in the plan.
func tripBreaker(p *Plan, due []int, limit int, why string) bool {
	if limit <= 0 || len(due) <= limit {
		return false
	}
	p.BreakerTripped = true
	p.Blocked = append(p.Blocked, why)
	for _, i := range due {
		hold(&p.Decisions[i], fmt.Sprintf("breaker tripped (%d due > %d)", len(due), limit))
	}
	return true
}

// perRunMax is the per-run cap: maxDeletes, and a share of the inventory —
// at least one, since a cap that can never delete anything would hide the
// leak forever.
func perRunMax(maxDeletes int, share float64, inventory int) int {
	if share <= 0 {
		return maxDeletes
	}
	return min(maxDeletes, max(int(math.Floor(share*float64(inventory))), 1))
}

func hold(d *Decision, why string) {
	d.Action, d.Held, d.Snapshot = Mark, true, false
	d.Reason = "due for deletion but held: " + why
}

// diskInScope: the disk's region is allowed, and so is its zone — for a
// regional disk, every replica zone (unknown replicas are out of scope).
func diskInScope(pol Policy, d inventory.Disk) bool {
	if !regionInScope(pol, d.Region()) {
		return false
	}
	if len(pol.Zones) == 0 {
		return true
	}
	if d.Key.Zone != "" {
		return contains(pol.Zones, d.Key.Zone)
	}
	if len(d.ReplicaZones) == 0 {
		return false
	}
	for _, z := range d.ReplicaZones {
		if !contains(pol.Zones, inventory.LastSegment(z)) {
			return false
		}
	}
	return true
}

func regionInScope(pol Policy, region string) bool {
	return len(pol.Regions) == 0 || contains(pol.Regions, region)
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
