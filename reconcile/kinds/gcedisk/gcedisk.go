// Package gcedisk is the gce-disk kind: GCE persistent disks that no instance
// uses and no PV in any cluster references, with the SSD quota headroom they
// hold.
//
// The package is the kind: its cloud (the GCE provider's Client, opened by
// Open and read into the snapshot), its proposals, view, re-read, snapshot
// and delete. Its sections and the gce read's result are gcepd's, which
// k8s-pvc stands on too.
package gcedisk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/optout"
	"reclaim.dev/reclaim/base/outcome"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
	"reclaim.dev/reclaim/reconcile/snapshot"
)

// Name is the kind as reports and the audit log spell it.
const Name = "gce-disk"

// API is what the kind re-reads, snapshots and deletes through, and
// Lister what it reads its cloud with: the seam to its client, which the
// GCE provider's Client is.
type API interface {
	GetDisk(ctx context.Context, key inventory.DiskKey) (gce.Disk, error)
	// StartSnapshot starts a snapshot and does not wait for it; one of that
	// name that exists already is no error.
	StartSnapshot(ctx context.Context, key inventory.DiskKey, name string, labels map[string]string) error
	// GetSnapshot reads one; ErrNotFound when there is none.
	GetSnapshot(ctx context.Context, project, name string) (gce.Snapshot, error)
	DeleteDisk(ctx context.Context, key inventory.DiskKey) error
}

// Kind plans and deletes disks. Its sections are its policy, as the file
// says them: gce where it looks (regions, zones) and when headroom warns,
// disks the rest.
type Kind struct {
	GCE   gcepd.GCE
	Disks gcepd.Disks
	// DiskPrice is the price per GB-month of a disk type in a region
	// (config.Prices.DiskGBMonth); nil prices nothing.
	DiskPrice func(typ, region string) (float64, bool)
	API       API // nil: plan only
	Now       func() time.Time
}

// Detail is what a disk decision says beyond the envelope (schema v1 fields).
type Detail struct {
	Project     string `json:"project,omitempty"`
	Location    string `json:"location,omitempty"` // zone or region
	Type        string `json:"type,omitempty"`
	QuotaMetric string `json:"quotaMetric,omitempty"`
	Region      string `json:"region,omitempty"`
	// Owner explains where an orphan came from (the PVC it was created for).
	Owner string `json:"owner,omitempty"`
	// Snapshot: apply snapshots the disk before deleting it.
	Snapshot bool `json:"snapshot,omitempty"`
	// What the disk looked like when planned; the re-read compares.
	LabelFingerprint string `json:"labelFingerprint,omitempty"`
	// DiskID is the numeric id of the disk planned: one recreated under the
	// same name since is another disk, with a clock of its own.
	DiskID string `json:"-"`
	// LastUse is when the disk was last attached or detached as planned
	// (lastAttachTimestamp, lastDetachTimestamp; zero: never). A snapshot
	// started before it is never relied on, and a re-read that finds it
	// changed finds a disk used since the plan.
	LastUse time.Time `json:"-"`
	// key is the disk as listed: the re-read, the snapshot and the delete
	// name it by this, never by parsing the decision's ID back.
	key inventory.DiskKey
	// namespace (of the PVC it was made for) and labels route it to its
	// owner (Where).
	namespace string
	labels    map[string]string
}

var _ engine.Located = (*Detail)(nil) // routed by notify.routes

// Where is the disk's project, its PVC's namespace and its labels.
func (d *Detail) Where() engine.Where {
	return engine.Where{Scope: d.Project, Namespace: d.namespace, Labels: d.labels}
}

func (k *Kind) Name() string { return Name }

func (k *Kind) Owns(id string) bool { return strings.HasPrefix(id, "projects/") }

func (k *Kind) Limits() engine.Limits {
	l := kind.Limits(k.Disks.Safety, gcepd.GB)
	l.BatchSize, l.OptOutKey, l.SnapshotTimeout = 1, k.Disks.ProtectLabel, k.Disks.SnapshotTimeout.Std()
	l.Wording = engine.Wording{Section: "disks", Noun: "disks", Guarded: "disk it could reference"}
	return l
}

// OptOut says how a person keeps one of the kind's resources from being
// deleted (report.OptOuter).
func (k *Kind) OptOut() string { return optOut(k.Disks.ProtectLabel) }

// optOut says how a disk is protected.
func optOut(label string) string {
	if label == "" {
		return ""
	}
	return optout.Rule("label", label, "disk")
}

// ClusterLabel is the label GKE puts on the disks it makes for a cluster
// (boot disks, and PD CSI volumes on recent versions): cloud evidence of a
// cluster that may use the disk.
const ClusterLabel = "goog-k8s-cluster-name"

// diskGuards are the source keys a disk's deletion relies on: the clusters
// read that could reference its project (but a GKE cluster of another
// region, where the cloud says so), every GKE
// cluster of the project whose region can attach it and its discovery scope
// (read or not: an unread one holds the disk), and the cluster its label
// names. Slices are shared per project and region, so the engine's
// fail-closed verdict is computed once for each.
func diskGuards(f *inventory.Fleet, d gce.Disk, configured []string, cache map[string][]string) []string {
	key := d.Key.Project + "/" + d.Region()
	if g, ok := cache[key]; ok && d.Labels[ClusterLabel] == "" {
		return g
	}
	u := engine.Users{Members: f.GKEAt(d.Key.Project, d.Key.Location()), Scopes: []string{inventory.GKE + " " + d.Key.Project}}
	for _, c := range configured {
		// A GKE cluster whose region the cloud knows attaches only disks
		// of that region.
		if m, ok := f.Member(c); ok && m.Cloud.Platform == inventory.GKE && d.Region() != "" && m.Cloud.Region() != d.Region() {
			continue
		}
		u.Clusters = append(u.Clusters, c)
	}
	if n := d.Labels[ClusterLabel]; n != "" {
		u.Clusters = append(u.Clusters, f.ResolveAt(inventory.GKE, d.Key.Project, d.Key.Location(), n)...)
		return u.Keys(f)
	}
	g := u.Keys(f)
	cache[key] = g
	return g
}

// Propose gives every listed disk a proposal.
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	out := engine.Proposals{}
	refs := indexRefs(snap.Clusters)
	seen := map[string]*gce.Disk{} // id -> the disk listed
	listings := map[string]gce.Listing{}
	names := map[string][]string{}  // project -> the clusters that could reference its disks
	guards := map[string][]string{} // project/region -> the keys of those that could attach them
	read := 0
	for _, c := range snap.Clusters {
		if c.Complete {
			read++
		}
	}
	for _, l := range gcepd.ListingOf(snap).Disks {
		listings[l.Project] = l
		var problems []string
		if !l.Complete {
			problems = append(problems, l.Problem)
		}
		for _, scope := range slices.Sorted(maps.Keys(l.UnknownScopes)) {
			problems = append(problems, fmt.Sprintf("%s: %s (its disks are unknown, not absent)", scope, l.UnknownScopes[scope]))
		}
		out.Sources = append(out.Sources, engine.Source{Kind: "gce-project", Name: l.Project, Complete: len(problems) == 0,
			Problems: problems, Items: len(l.Disks), Unit: "disks"})
		for _, c := range snap.Clusters {
			if c.CouldReference(l.Project) {
				names[l.Project] = append(names[l.Project], c.Name)
			}
		}
		for i, d := range l.Disks {
			seen[d.Key.String()] = &l.Disks[i]
			if k.inScope(d) {
				out.InScope++
			}
			out.Items = append(out.Items, k.propose(d, read, len(snap.Clusters), refs, diskGuards(snap.Fleet, d, names[d.Key.Project], guards), now))
		}
	}
	sort.SliceStable(out.Items, func(i, j int) bool { return out.Items[i].ID < out.Items[j].ID })
	out.Identity = func(id string) string {
		if d := seen[id]; d != nil {
			return d.ID
		}
		return ""
	}
	out.Presence = engine.ListedBy(func(id string) bool {
		if d := seen[id]; d != nil {
			// A disk DELETING is a delete in flight: settle it next run.
			return listings[d.Key.Project].ScopeKnown(d.Key) && d.Status != "DELETING"
		}
		// An id of the state's, of a disk not listed: parsed here, where
		// it comes in as text.
		key, err := inventory.ParseDiskKey(id)
		if err != nil {
			return false
		}
		l, ok := listings[key.Project]
		return ok && l.ScopeKnown(key)
	}, func(id string) bool {
		_, listed := seen[id]
		return listed
	})
	return out
}

func (k *Kind) propose(d gce.Disk, read, clusters int, refs refIndex, guards []string, now time.Time) engine.Proposal {
	pol := k.Disks
	metric := gcepd.QuotaMetricOf(d.Type)
	ns, claim := createdFor(d.Description)
	p := engine.Proposal{ID: d.Key.String(), Name: d.Key.Name,
		Frees: amount.Free(d.SizeGB, gcepd.GB).In(gcepd.Pool(d.Key.Project, d.Region(), metric)),
		Detail: &Detail{Project: d.Key.Project, Location: d.Key.Location(), Type: d.Type, QuotaMetric: metric, Region: d.Region(),
			LabelFingerprint: d.LabelFingerprint, DiskID: d.ID, LastUse: lastUse(d), Owner: claimText(ns, claim), key: d.Key, namespace: ns, labels: d.Labels}}
	keep := func(class, reason string) engine.Proposal {
		p.Class, p.Reason = class, reason
		return p
	}
	if !k.inScope(d) {
		return keep("out-of-scope", fmt.Sprintf("outside the configured scope (regions %v, zones %v)", k.GCE.Regions, k.GCE.Zones))
	}
	if len(d.Users) > 0 {
		return keep("attached", "attached to instance "+strings.Join(shortUsers(d.Users), ", "))
	}
	if d.Status == "DELETING" {
		return keep("deleting", "already being deleted")
	}
	if rs := refs.matching(d.Key); len(rs) > 0 {
		reason := describeRef(rs[0])
		if len(rs) > 1 {
			reason += fmt.Sprintf("; %d more references", len(rs)-1)
		}
		class := "referenced-by-pv"
		if rs[0].PV == "" {
			class = "mounted-inline"
		}
		return keep(class, reason)
	}
	if v, ok := optout.Protects(pol.ProtectLabel, d.Labels); ok {
		p.Class, p.Protected = "protected", optout.Reason("label", pol.ProtectLabel, v)
		return p
	}
	// No cluster we could read references it: a candidate, held by the engine
	// while a cluster that could reference it was not read completely.
	p.Candidate, p.Identity, p.Sources, p.Created, p.Class = true, d.ID, guards, d.Created, "orphan"
	// Say only what was seen: a cluster not read completely is no evidence
	// (the engine holds the disk and names the cluster).
	p.Reason = fmt.Sprintf("no users, no PV in any of %d clusters", clusters)
	if read < clusters {
		p.Reason = fmt.Sprintf("no users, no PV in the %d of %d clusters read completely", read, clusters)
	}
	if !owned(d, pol) {
		p.ReportOnly, p.Class = true, "not-owned"
		p.Reason = fmt.Sprintf("no users and no PV references it, but nothing proves Kubernetes created it (no label %s, no description containing %s): reported, never deleted",
			strings.Join(pol.Ownership.LabelKeys, "/"), strings.Join(pol.Ownership.DescriptionContains, "/"))
		return p
	}
	p.Detail.(*Detail).Snapshot = pol.SnapshotBeforeDelete
	if !d.LastDetach.IsZero() {
		p.NotBefore = d.LastDetach.Add(pol.MinDetached.Std())
	}
	switch {
	case d.Status != "" && d.Status != "READY":
		p.Wait = fmt.Sprintf("status is %s, not READY", d.Status)
	case now.Before(p.NotBefore) && !engine.Young(d.Created, now, pol.MinAge.Std()):
		p.Wait = fmt.Sprintf("detached %s ago, less than %s (last detach %s)", now.Sub(d.LastDetach).Round(time.Minute), pol.MinDetached.Std(), fmtTime(d.LastDetach))
	}
	return p
}

// Recheck re-reads each disk: gone, attached, relabelled or no longer READY
// since the plan means no delete; the engine checks the opt-out label in
// what it saw.
func (k *Kind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	return engine.RecheckEach(batch, func(_ int, d *engine.Decision) (gce.Disk, error) {
		key, err := keyOf(d)
		if err != nil {
			return gce.Disk{}, err
		}
		return k.API.GetDisk(ctx, key)
	}, func(d *engine.Decision, now gce.Disk) engine.Verdict {
		planned := detail(d)
		switch {
		case planned.DiskID != "" && now.ID != planned.DiskID:
			return engine.Verdict{Result: engine.Skip, Reason: fmt.Sprintf("skipped: recreated since it was planned (id %s, planned %s)", now.ID, planned.DiskID)}
		case len(now.Users) > 0:
			return engine.Changed("attached to " + strings.Join(shortUsers(now.Users), ", "))
		case !lastUse(now).Equal(planned.LastUse):
			// Attached and detached again between the plan and now: a
			// snapshot started before may lack what was written, and the
			// disk was in use more recently than disks.minDetached allows.
			return engine.Changed("attached and detached since it was planned (last used " + fmtUse(lastUse(now)) + ", planned " + fmtUse(planned.LastUse) + ")")
		case now.LabelFingerprint != planned.LabelFingerprint:
			return engine.Changed("its labels changed")
		case now.Status != "" && now.Status != "READY":
			return engine.Changed("status is " + now.Status)
		}
		return engine.Pass(now.Labels) // the engine checks the opt-out label
	})
}

// Delete deletes one disk at a time: GCE has no batch delete. A disk
// snapshotted first (disks.snapshotBeforeDelete) reaches it only once the
// engine's snapshot step (engine.Snapshotter) saw its snapshot READY. The
// provider's errors say each outcome; the first unknown one (the operation
// may still run) fails the call, and its pending mark stays.
func (k *Kind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	return engine.DeleteEach(batch, func(_ int, d *engine.Decision) engine.Deleted {
		key, err := keyOf(d)
		if err != nil {
			return engine.Deleted{Err: outcome.MarkRefused(err)} // never sent
		}
		return engine.Deleted{Err: k.API.DeleteDisk(ctx, key)}
	})
}

var _ engine.Snapshotter = (*Kind)(nil)

// SnapshotFirst: with disks.snapshotBeforeDelete, as planned.
func (k *Kind) SnapshotFirst(d *engine.Decision) bool { return detail(d).Snapshot }

// snapshotName is the name of the snapshot of d's disk for its orphan
// period: the period's start, not the run's time, so that every run of
// one period finds the snapshot an earlier one started; or the disk's last
// use, when GCE says it was attached and detached since the period began
// (between two runs, unseen by either): a snapshot of the period's start
// may lack what was written, so a new one is made under a new name.
func (k *Kind) snapshotName(d *engine.Decision, key inventory.DiskKey) string {
	at := k.now()
	if d.OrphanSince != nil {
		at = *d.OrphanSince
	}
	if use := detail(d).LastUse; use.After(at) {
		at = use
	}
	return gcepd.SnapshotName(key.Name, at)
}

// Snapshots is the snapshot of this orphan period, if it exists and is of
// this disk (snapshots.get by its name). One started before the disk's last
// use (a snapshot of that name made by someone else, or a clock gone back)
// is not relied on, and the disk is kept: a snapshot of that name cannot be
// made again.
func (k *Kind) Snapshots(ctx context.Context, d *engine.Decision) ([]snapshot.Snapshot, error) {
	key, err := keyOf(d)
	if err != nil {
		return nil, err
	}
	s, err := k.API.GetSnapshot(ctx, key.Project, k.snapshotName(d, key))
	switch {
	case isNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !snapshotOf(s, key):
		// Another disk's, of the same name: not reused, and StartSnapshot
		// could not make another under that name.
		return nil, fmt.Errorf("snapshot %s is of %s, not of this disk", s.Name, s.SourceDisk)
	}
	found := snapshot.Snapshot{ID: s.Name, Started: s.Created, State: snapshotState(s.Status)}
	if use := detail(d).LastUse; !snapshot.Covers(found, use) {
		return nil, fmt.Errorf("snapshot %s was started at %s, before the disk was last used (%s): it may lack what was written then", s.Name, fmtUse(s.Created), fmtUse(use))
	}
	return []snapshot.Snapshot{found}, nil
}

// StartSnapshot starts the snapshot of this orphan period, labelled with
// the disk's name and location, without waiting for it.
func (k *Kind) StartSnapshot(ctx context.Context, d *engine.Decision) (string, error) {
	key, err := keyOf(d)
	if err != nil {
		return "", err
	}
	name := k.snapshotName(d, key)
	return name, k.API.StartSnapshot(ctx, key, name, gcepd.SnapshotLabels(k.Disks.SnapshotLabel, key))
}

// SnapshotState re-reads the snapshot: READY is done; FAILED, DELETING,
// gone, or of another disk will never be.
func (k *Kind) SnapshotState(ctx context.Context, d *engine.Decision, id string) (snapshot.State, error) {
	key, err := keyOf(d)
	if err != nil {
		return snapshot.Failed, err
	}
	s, err := k.API.GetSnapshot(ctx, key.Project, id)
	switch {
	case isNotFound(err):
		return snapshot.Failed, nil // its operation failed
	case err != nil:
		return snapshot.Pending, err
	case !snapshotOf(s, key):
		return snapshot.Failed, nil
	}
	return snapshotState(s.Status), nil
}

// snapshotOf says whether s was made from the disk (its sourceDisk URL
// ends with the disk's key); unknown counts as not.
func snapshotOf(s gce.Snapshot, key inventory.DiskKey) bool {
	return strings.HasSuffix(s.SourceDisk, "/"+key.String()) || s.SourceDisk == key.String()
}

func snapshotState(status string) snapshot.State {
	switch status {
	case "READY":
		return snapshot.Done
	case "FAILED", "DELETING":
		return snapshot.Failed
	}
	return snapshot.Pending // CREATING, UPLOADING
}

func (k *Kind) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// keyOf is the disk d names, as it was listed when planned.
func keyOf(d *engine.Decision) (inventory.DiskKey, error) {
	if key := detail(d).key; key.Name != "" {
		return key, nil
	}
	return inventory.DiskKey{}, fmt.Errorf("%s: no disk was planned for it", d.ID)
}

func detail(d *engine.Decision) *Detail {
	if det, ok := d.Detail.(*Detail); ok {
		return det
	}
	return &Detail{}
}

func isNotFound(err error) bool { return errors.Is(err, outcome.ErrNotFound) }

func owned(d gce.Disk, pol gcepd.Disks) bool {
	for _, k := range pol.Ownership.LabelKeys {
		if _, ok := d.Labels[k]; ok {
			return true
		}
	}
	for _, s := range pol.Ownership.DescriptionContains {
		if s != "" && strings.Contains(d.Description, s) {
			return true
		}
	}
	return false
}

// createdFor reads the PD CSI driver's description
// {"kubernetes.io/created-for/pvc/namespace":"ns","kubernetes.io/created-for/pvc/name":"claim",...}
// once, for the namespace and name of the claim a disk was made for.
// Anything else yields "".
func createdFor(desc string) (namespace, claim string) {
	if len(desc) == 0 || desc[0] != '{' {
		return "", ""
	}
	var m struct {
		Namespace string `json:"kubernetes.io/created-for/pvc/namespace"`
		Name      string `json:"kubernetes.io/created-for/pvc/name"`
	}
	if json.Unmarshal([]byte(desc), &m) != nil {
		return "", ""
	}
	return m.Namespace, m.Name
}

// claimText names the claim an orphan was made for, "" when none.
func claimText(namespace, claim string) string {
	if claim == "" {
		return ""
	}
	return "created for PVC " + namespace + "/" + claim
}

func shortUsers(users []string) []string {
	out := make([]string, len(users))
	for i, u := range users {
		out[i] = inventory.LastSegment(u)
	}
	return out
}

// inScope: the disk's region is allowed, and so is its zone — for a
// regional disk, every replica zone (unknown replicas are out of scope).
func (k *Kind) inScope(d gce.Disk) bool {
	g := k.GCE
	if !RegionInScope(g.Regions, d.Region()) {
		return false
	}
	if len(g.Zones) == 0 {
		return true
	}
	if d.Key.Zone != "" {
		return contains(g.Zones, d.Key.Zone)
	}
	if len(d.ReplicaZones) == 0 {
		return false
	}
	for _, z := range d.ReplicaZones {
		if !contains(g.Zones, inventory.LastSegment(z)) {
			return false
		}
	}
	return true
}

// RegionInScope: no regions configured means every region.
func RegionInScope(regions []string, region string) bool {
	return len(regions) == 0 || contains(regions, region)
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// fmtUse says a last use to the millisecond, as GCE keeps it: two uses a
// second apart read apart.
func fmtUse(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// lastUse is when d was last attached or detached (zero: never).
func lastUse(d gce.Disk) time.Time {
	if d.LastAttach.After(d.LastDetach) {
		return d.LastAttach
	}
	return d.LastDetach
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// MonthlyCost implements engine.Pricer: a disk's size at its type's price
// (GCE's GB are GiB, as its prices' are).
func (k *Kind) MonthlyCost(d *engine.Decision) float64 {
	det, ok := d.Detail.(*Detail)
	if !ok || k.DiskPrice == nil {
		return 0
	}
	price, _ := k.DiskPrice(det.Type, det.Region)
	return float64(d.Frees.Of(gcepd.GB)) * price
}
