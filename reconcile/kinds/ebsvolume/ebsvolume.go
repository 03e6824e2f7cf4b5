// Package ebsvolume is the ebs-volume kind, the AWS twin of the GCE disk
// story: it deletes the EBS volumes the EBS CSI driver or the in-tree
// provisioner made for PersistentVolumes, once they are available
// (attached to nothing) and no PV or pod volume in any cluster that could
// attach them names them; and it watches each volume type's storage quota
// (Service Quotas), as gce-disk watches SSD_TOTAL_GB.
//
// The package is the whole kind: its config section, its cloud (the EBS
// provider's Fleet, opened by Open and read into the snapshot), its reads
// of each cluster (Taps), its proposals, view, re-read and delete. The
// engine enforces every safety rule on what it proposes.
package ebsvolume

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/optout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
	"reclaim.dev/reclaim/reconcile/snapshot"
)

// Name is the kind; SourceKind names its regions' listings among the
// plan's sources.
const (
	Name       = "ebs-volume"
	SourceKind = "ebs-region"
)

// GiB is the kind's unit: what its deletions free (EBS sizes are GiB).
var GiB = &amount.Unit{Name: "GiB", Key: amount.KeySizeGB, Say: func(n int64) string { return fmt.Sprintf("%d GiB", n) }, Bytes: amount.GiB}

// The tags the provisioners put on the volumes they make.
const (
	TagCSICluster    = "ebs.csi.aws.com/cluster"
	TagCreatedForPV  = "kubernetes.io/created-for/pv/name"
	TagCreatedForPVC = "kubernetes.io/created-for/pvc/name"
	TagCreatedForNS  = "kubernetes.io/created-for/pvc/namespace"
	TagCSIName       = "CSIVolumeName"
	TagLegacyCluster = "KubernetesCluster"
)

// API is what the kind re-reads and deletes through; the EBS provider's
// Fleet is one. DeleteVolume's error says its outcome (outcome.Of).
type API interface {
	Volume(ctx context.Context, account, region, id string) (ebs.Volume, error)
	DeleteVolume(ctx context.Context, account, region, id string) error
	CreateSnapshot(ctx context.Context, account, region, volumeID, description string, tags map[string]string) (string, error)
	SnapshotsOf(ctx context.Context, account, region, volumeID, tagKey string) ([]ebs.Snapshot, error)
}

// Read is the kind's read of its cloud (View.Clouds[Name]).
type Read struct {
	Listings []ebs.Listing
	Quotas   []ebs.QuotaListing
}

// Open opens the kind's cloud from its section (ebsbase.Open).
var Open = ebsbase.Open

// Lister reads every region's volumes and storage quotas; the provider's
// Fleet is one.
type Lister interface {
	List(ctx context.Context) []ebs.Listing
	Quotas(ctx context.Context) []ebs.QuotaListing
}

// Reader is the kind's read of its cloud through client (Open's).
func Reader(_ *config.Config, client any) func(context.Context) any {
	l := client.(Lister)
	return func(ctx context.Context) any { return Read{Listings: l.List(ctx), Quotas: l.Quotas(ctx)} }
}

// Kind plans and deletes orphaned EBS volumes.
type Kind struct {
	s   Section
	api API
}

// New makes the kind from its section and the client its cloud was opened
// with (nil before one is): Module.New, through kind.WithSection, and
// tests.
func New(s Section, api API) *Kind { return &Kind{s: s, api: api} }

// Detail is what a volume decision says beyond the envelope.
type Detail struct {
	Account  string `json:"account"`
	Region   string `json:"region"`
	AZ       string `json:"availabilityZone"`
	Type     string `json:"volumeType"`
	SizeGiB  int64  `json:"sizeGiB"`
	Evidence string `json:"evidence,omitempty"`
	// MadeFor is the PV and PVC the provisioner made the volume for, from
	// its tags: the root cause of an orphan.
	MadeFor  string `json:"madeFor,omitempty"`
	Snapshot bool   `json:"snapshotBeforeDelete,omitempty"`
	// Planned is when the plan was made on the listing that showed the
	// volume available. EC2 keeps no time of a volume's last detach, so a
	// use before it cannot be ruled out: only a snapshot started after it
	// is relied on (snapshot.Covers), never one of an earlier run.
	Planned time.Time `json:"-"`
	// namespace is its PVC's, for routing.
	namespace string
	tags      map[string]string
}

var _ engine.Located = (*Detail)(nil)

// Where is the volume's account and region, its PVC's namespace and its tags.
func (d *Detail) Where() engine.Where {
	return engine.Where{Scope: d.Account + "/" + d.Region, Namespace: d.namespace, Labels: d.tags}
}

func (k *Kind) Name() string { return Name }

// ID is a volume's decision id: ebs:ACCOUNT/REGION/vol-….
func ID(account, region, volume string) string { return ids.ID(account, region, volume) }

var ids = ebsbase.IDs{Prefix: "ebs:", Resource: "vol-"}

func parseID(id string) (account, region, volume string, ok bool) { return ids.Parse(id) }

func (k *Kind) Owns(id string) bool { _, _, _, ok := parseID(id); return ok }

func (k *Kind) Limits() engine.Limits {
	l := kind.Limits(k.s.Safety, GiB)
	l.BatchSize, l.SnapshotTimeout = 1, k.s.SnapshotTimeout.Std()
	l.Wording = engine.Wording{Section: Key, Noun: "volumes", Guarded: "EBS volume it could attach"}
	return l
}

// OptOut says how a person keeps one of the kind's resources from being
// deleted (report.OptOuter).
func (k *Kind) OptOut() string {
	return optout.Rule("tag", k.s.ProtectTag, "volume") + ", or set ebs.delete: false"
}

// Pool is the quota pool a volume counts against: its account, region and
// volume type (one Service Quotas storage quota each).
func Pool(account, region, volumeType string) string {
	return account + "/" + region + "/" + volumeType
}

// Evidence says which provisioner's tags a volume carries, "" for none.
func Evidence(tags map[string]string) string {
	switch {
	case tags[TagCSICluster] == "true":
		return EvidenceCSI
	case tags[TagCreatedForPV] != "" && (tags[TagLegacyCluster] != "" || len(inventory.ClustersTagged(tags)) > 0):
		return EvidenceInTree
	}
	return ""
}

// madeFor names the PV and PVC a volume was made for, from its tags.
func madeFor(tags map[string]string) (text, namespace string) {
	pv := orDefault(tags[TagCreatedForPV], tags[TagCSIName])
	ns, claim := tags[TagCreatedForNS], tags[TagCreatedForPVC]
	switch {
	case claim != "" && pv != "":
		return fmt.Sprintf("PVC %s/%s (PV %s)", ns, claim, pv), ns
	case claim != "":
		return fmt.Sprintf("PVC %s/%s", ns, claim), ns
	case pv != "":
		return "PV " + pv, ""
	}
	return "", ""
}

// Propose proposes every available volume: kept when a cluster names it,
// protected, or not Kubernetes' by its tags; else a candidate relying on its
// region's listing and on every cluster that could attach it.
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	out := engine.Proposals{}
	read := inventory.CloudOf[Read](snap, Name)
	named := k.clusterRefs(snap)
	wfs := workflows(snap)
	complete := map[string]bool{}
	listed := map[string]bool{}
	for _, l := range read.Listings {
		scope := l.Account + "/" + l.Region
		src := engine.Source{Kind: SourceKind, Name: scope, Complete: l.Complete, Items: len(l.Volumes), Unit: "volumes"}
		if !l.Complete {
			src.Problems = []string{l.Problem}
		}
		out.Sources = append(out.Sources, src)
		complete[scope] = l.Complete
		r := regionEvidence{src: src.Key(), users: regionUsers(snap, &l)}
		r.keys = r.users.Keys(snap.Fleet)
		for i := range l.Volumes {
			v := &l.Volumes[i]
			listed[ID(l.Account, l.Region, v.ID)] = true
			if v.State != "available" {
				continue // attached, or on its way: not an orphan
			}
			out.InScope++
			out.Items = append(out.Items, k.propose(snap.Fleet, &l, v, &r, named[v.ID], wfs, now))
		}
	}
	out.Presence = engine.ListedBy(func(id string) bool {
		a, r, _, ok := parseID(id)
		return ok && complete[a+"/"+r]
	}, func(id string) bool { return listed[id] })
	return out
}

// clusterRef is one reference to a volume, in a cluster.
type clusterRef struct {
	cluster string
	Ref
}

// clusterRefs are every cluster's references to volumes, from the taps'
// passes that ran (an incomplete one holds through the engine's sources).
func (k *Kind) clusterRefs(snap *inventory.View) map[string][]clusterRef {
	out := map[string][]clusterRef{}
	for _, c := range snap.Clusters {
		for _, tap := range []string{TapPVs, TapPods} {
			rs, _ := c.Taps[tap].Data.(refs)
			for id, list := range rs {
				for _, r := range list {
					out[id] = append(out[id], clusterRef{cluster: c.Name, Ref: r})
				}
			}
		}
	}
	return out
}

// regionEvidence is what every volume of a listing relies on: the listing's
// source, and the clusters that could attach any of them, with their keys.
type regionEvidence struct {
	src   string
	users engine.Users
	keys  []string
}

func (k *Kind) propose(f *inventory.Fleet, l *ebs.Listing, v *ebs.Volume, r *regionEvidence, named []clusterRef, wfs map[string]*inventory.WorkflowRef, now time.Time) engine.Proposal {
	made, ns := madeFor(v.Tags)
	det := &Detail{Account: l.Account, Region: l.Region, AZ: v.AZ, Type: v.Type, SizeGiB: v.SizeGiB, MadeFor: made,
		Snapshot: k.s.SnapshotBeforeDelete, Planned: now, namespace: ns, tags: v.Tags}
	p := engine.Proposal{ID: ID(l.Account, l.Region, v.ID), Name: v.ID, Identity: v.ID, Detail: det,
		Frees: amount.Free(v.SizeGiB, GiB).In(Pool(l.Account, l.Region, v.Type)), Created: v.Created}
	keep := func(class, reason string) engine.Proposal {
		p.Class, p.Reason = class, reason
		return p
	}
	if val, ok := optout.Protects(k.s.ProtectTag, v.Tags); ok {
		p.Class, p.Protected = ClassProtected, optout.Reason("tag", k.s.ProtectTag, val)
		return p
	}
	if len(named) > 0 {
		return keep(classOf(named[0]), usedText(named, wfs))
	}
	if len(v.Attachments) > 0 {
		return keep(ClassAttached, "attached to "+strings.Join(v.Attachments, ", "))
	}
	ev := Evidence(v.Tags)
	if ev == "" || !slices.Contains(k.s.Ownership, ev) {
		return keep(ClassNoEvidence, fmt.Sprintf("available, but no ownership evidence (%s) says Kubernetes made it: look at it", strings.Join(k.s.Ownership, ", ")))
	}
	keys := r.keys
	if tagged := taggedClusters(f, l, v); len(tagged) > 0 {
		u := r.users
		u.Clusters = append(slices.Clip(u.Clusters), tagged...)
		keys = u.Keys(f)
	} else if len(r.users.Clusters) == 0 && len(r.users.Members) == 0 {
		return keep(ClassNoCluster, "no cluster of the fleet could attach it, so no PV evidence covers it")
	}
	det.Evidence = ev
	p.Candidate, p.Class = true, ClassOrphan
	p.Sources = append([]string{r.src}, keys...)
	p.Reason = "available and no PV or pod volume in any cluster names it; made by the " + madeBy[ev]
	if made != "" {
		p.Reason += " for " + made
	}
	if !k.s.Delete {
		p.ReportOnly = true
		p.Reason += "; ebs.delete is off"
	}
	return p
}

var madeBy = map[string]string{EvidenceCSI: "EBS CSI driver", EvidenceInTree: "in-tree EBS provisioner"}

// regionUsers are the clusters that could attach a listing's volumes
// (ebsbase.RegionUsers), by their PVs and pods. Made once per listing:
// they are the same for each volume.
func regionUsers(snap *inventory.View, l *ebs.Listing) engine.Users {
	return ebsbase.RegionUsers(snap, l.Account, l.Region, TapPVs, TapPods)
}

// taggedClusters are the clusters a volume's own tags name, as the fleet
// knows them (a name nobody read holds it).
func taggedClusters(f *inventory.Fleet, l *ebs.Listing, v *ebs.Volume) []string {
	tagged := inventory.ClustersTagged(v.Tags)
	if c := v.Tags[TagLegacyCluster]; c != "" {
		tagged = append(tagged, c)
	}
	var out []string
	for _, c := range tagged {
		out = append(out, f.Resolve(inventory.EKS, l.Account+"/"+l.Region, c)...)
	}
	return out
}

// Keep classes and the candidate's.
const (
	ClassOrphan     = "orphan"
	ClassProtected  = "protected"
	ClassPV         = "referenced-by-pv"
	ClassInline     = "mounted-inline"
	ClassAttached   = "attached"
	ClassNoEvidence = "no-evidence"
	ClassNoCluster  = "no-cluster"
)

func classOf(r clusterRef) string {
	if r.PV != "" {
		return ClassPV
	}
	return ClassInline
}

// usedText says who names a volume: its PV (and PVC, and the PVC's Argo
// Workflow when the cluster read one), or a pod's inline volume.
func usedText(named []clusterRef, wfs map[string]*inventory.WorkflowRef) string {
	r := named[0]
	var s string
	if r.PV != "" {
		s = fmt.Sprintf("PV %s in cluster %s", r.PV, r.cluster)
		if r.Claim != "" {
			s += fmt.Sprintf(" (PVC %s/%s", r.ClaimNamespace, r.Claim)
			if w := wfs[r.cluster+"/"+r.ClaimNamespace+"/"+r.Claim]; w != nil {
				s += fmt.Sprintf(", owned by Workflow %s/%s, %s", w.Namespace, w.Name, orDefault(w.Phase, "phase unknown"))
			}
			s += ")"
		}
		s += " names it"
	} else {
		s = fmt.Sprintf("pod %s in cluster %s mounts it inline", r.Pod, r.cluster)
	}
	if len(named) > 1 {
		s += fmt.Sprintf("; %d more references", len(named)-1)
	}
	return s
}

// workflows are the Argo Workflows owning PVCs, by cluster/namespace/claim,
// as the clusters' reads show them.
func workflows(snap *inventory.View) map[string]*inventory.WorkflowRef {
	out := map[string]*inventory.WorkflowRef{}
	for _, c := range snap.Clusters {
		for _, pvc := range c.PVCs {
			if pvc.Workflow != nil {
				out[c.Name+"/"+pvc.Namespace+"/"+pvc.Name] = pvc.Workflow
			}
		}
	}
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func detailOf(d *engine.Decision) *Detail {
	if det, ok := d.Detail.(*Detail); ok {
		return det
	}
	return &Detail{}
}

// Recheck re-reads each volume right before its delete: gone is gone;
// attached, no longer available, or without its ownership evidence since
// the plan is a skip. The engine checks the opt-out tag in what it saw.
func (k *Kind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	if k.api == nil {
		return nil, fmt.Errorf("no EBS client")
	}
	return engine.RecheckEach(batch, func(_ int, d *engine.Decision) (ebs.Volume, error) {
		det := detailOf(d)
		v, err := k.api.Volume(ctx, det.Account, det.Region, d.Name)
		if err != nil {
			return v, fmt.Errorf("re-read %s in %s/%s: %w", d.Name, det.Account, det.Region, err)
		}
		return v, nil
	}, func(d *engine.Decision, v ebs.Volume) engine.Verdict {
		switch {
		case v.State != "available":
			return engine.Changed(v.State)
		case len(v.Attachments) > 0:
			return engine.Changed("attached to " + strings.Join(v.Attachments, ", "))
		case Evidence(v.Tags) != detailOf(d).Evidence:
			return engine.Changed("its ownership tags changed")
		}
		return engine.Pass(v.Tags) // the engine checks the opt-out tag
	})
}

// Delete deletes each volume. One snapshotted first (ebs.snapshotBeforeDelete)
// reaches it only once the engine's snapshot step (engine.Snapshotter) saw
// its snapshot completed. The provider's errors say each outcome; the first
// unknown one fails the call.
func (k *Kind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	if k.api == nil {
		return nil, fmt.Errorf("no EBS client")
	}
	return engine.DeleteEach(batch, func(_ int, d *engine.Decision) engine.Deleted {
		det := detailOf(d)
		return engine.Deleted{Err: k.api.DeleteVolume(ctx, det.Account, det.Region, d.Name)}
	})
}

var _ engine.Snapshotter = (*Kind)(nil)

// SnapshotFirst: with ebs.snapshotBeforeDelete, as planned.
func (k *Kind) SnapshotFirst(d *engine.Decision) bool { return detailOf(d).Snapshot }

// Snapshots are the account's snapshots of the volume tagged
// ebs.snapshotTag=VOLUME-ID (the ones reclaim made of it) that were started
// after the plan (Detail.Planned). One of an earlier run, even within the
// orphan period, is left out: EC2 says nothing of a volume attached,
// written and detached between two runs, so what it holds may be older
// than what the volume holds. A new one is made, incremental on the ones
// completed before.
func (k *Kind) Snapshots(ctx context.Context, d *engine.Decision) ([]snapshot.Snapshot, error) {
	all, err := k.snapshots(ctx, d)
	if err != nil {
		return nil, err
	}
	planned := detailOf(d).Planned
	if planned.IsZero() {
		return nil, nil // no plan's time: nothing can be shown to cover it
	}
	var out []snapshot.Snapshot
	for _, s := range all {
		if snapshot.Covers(s, planned) {
			out = append(out, s)
		}
	}
	return out, nil
}

// snapshots are every snapshot reclaim made of d's volume, of any age.
func (k *Kind) snapshots(ctx context.Context, d *engine.Decision) ([]snapshot.Snapshot, error) {
	if k.api == nil {
		return nil, fmt.Errorf("no EBS client")
	}
	det := detailOf(d)
	snaps, err := k.api.SnapshotsOf(ctx, det.Account, det.Region, d.Name, k.s.SnapshotTag)
	if err != nil {
		return nil, err
	}
	out := make([]snapshot.Snapshot, len(snaps))
	for i, s := range snaps {
		out[i] = snapshot.Snapshot{ID: s.ID, Started: s.Started, State: stateOf(s.State)}
	}
	return out, nil
}

// StartSnapshot starts a snapshot of the volume (CreateSnapshot), tagged
// with ebs.snapshotTag naming it; EBS snapshots complete asynchronously.
func (k *Kind) StartSnapshot(ctx context.Context, d *engine.Decision) (string, error) {
	if k.api == nil {
		return "", fmt.Errorf("no EBS client")
	}
	det := detailOf(d)
	return k.api.CreateSnapshot(ctx, det.Account, det.Region, d.Name, ebsbase.SnapshotDescription(d.Name, det.MadeFor), map[string]string{k.s.SnapshotTag: d.Name})
}

// SnapshotState re-reads the volume's snapshots for one of them; one not
// listed yet (EC2 is eventually consistent) is pending. The one this run
// started is found whatever its start time says (EC2's clock, not ours).
func (k *Kind) SnapshotState(ctx context.Context, d *engine.Decision, id string) (snapshot.State, error) {
	snaps, err := k.snapshots(ctx, d)
	if err != nil {
		return snapshot.Pending, err
	}
	for _, s := range snaps {
		if s.ID == id {
			return s.State, nil
		}
	}
	return snapshot.Pending, nil
}

// stateOf maps an EBS snapshot state: pending (and "", not listed yet),
// completed, and error, recoverable or recovering, which never complete
// the snapshot reclaim waits on.
func stateOf(state string) snapshot.State {
	switch state {
	case "completed":
		return snapshot.Done
	case "pending", "":
		return snapshot.Pending
	}
	return snapshot.Failed
}
