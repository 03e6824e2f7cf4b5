// Package ebssnapshot is the ebs-snapshot kind: it deletes the snapshots
// reclaim made of EBS volumes before deleting them (ebs.snapshotBeforeDelete)
// once they are older than their retention, so reclaim's own backups do not
// leak. A snapshot is reclaim's only when all three agree: it carries
// ebs.snapshotTag, the tag names the volume the snapshot was made from, and
// its description is the one ebs-volume writes for that volume. A snapshot
// reclaim did not make is never touched; what depends on one (an AMI, a
// volume being created from it) keeps it; AWS Backup's and Data Lifecycle
// Manager's are left to them; an archived one is reported, not deleted.
//
// It also judges the snapshots the EBS CSI driver made for VolumeSnapshots
// (csi.go): one is in use while any read cluster has a
// VolumeSnapshotContent naming it, held while a cluster that could own it
// is unread, and an orphan otherwise (reported, or deleted with
// ebsSnapshots.csi.delete).
//
// The package is the whole kind: its section, its cloud read (the EBS
// provider's Fleet over the ebs section's regions), its proposals, view,
// re-read and delete. The engine enforces every safety rule on what it
// proposes.
package ebssnapshot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/optout"
	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/ebs"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/ebsbase"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Name is the kind; SourceKind names its regions' snapshot listings among
// the plan's sources, UsersKind the reads of what depends on them (AMIs,
// volumes being created).
const (
	Name       = "ebs-snapshot"
	SourceKind = "ebs-snapshots"
	UsersKind  = "ebs-snapshot-users"
)

// GiB is the kind's unit: a snapshot's volume size, an upper bound of what
// deleting it frees (snapshots are incremental).
var GiB = &amount.Unit{Name: "GiB of snapshots", Key: amount.KeySizeGB, Say: func(n int64) string { return fmt.Sprintf("%d GiB of snapshots", n) }, Bytes: amount.GiB}

// Tags of the services that manage snapshots of their own.
const (
	TagBackup = "aws:backup:source-resource"
	TagDLM    = "aws:dlm:lifecycle-policy-id"
)

// API is what the kind re-reads and deletes through; the EBS provider's
// Fleet is one. DeleteSnapshot's error says its outcome (outcome.Of).
type API interface {
	SnapshotByID(ctx context.Context, account, region, id string) (ebs.Snapshot, error)
	SnapshotUsers(ctx context.Context, account, region string, ids []string) (map[string][]string, error)
	DeleteSnapshot(ctx context.Context, account, region, id string) error
}

// Lister lists every region's own snapshots; the provider's Fleet is one.
type Lister interface {
	ListSnapshots(ctx context.Context) []ebs.SnapshotListing
	SnapshotUsers(ctx context.Context, account, region string, ids []string) (map[string][]string, error)
}

// Region is one account and region's snapshots, and what depends on those
// reclaim made (by snapshot id); UsersProblem says why that is unknown.
type Region struct {
	Listing      ebs.SnapshotListing
	Users        map[string][]string
	UsersProblem string
}

// Read is the kind's read of its cloud (View.Clouds[Name]).
type Read struct{ Regions []Region }

// Open opens the kind's cloud: the EBS provider's Fleet over the ebs
// section's regions. Nil when either section is absent.
func Open(ctx context.Context, cfg *config.Config, log *zap.Logger, userAgent string) (any, func(), error) {
	if SectionOf(cfg) == nil {
		return nil, nil, nil
	}
	return ebsbase.Open(ctx, cfg, log, userAgent)
}

// Reader lists every region's snapshots, then asks what depends on the
// ones reclaim or the EBS CSI driver made (the others are never
// candidates).
func Reader(cfg *config.Config, client any) func(context.Context) any {
	l := client.(Lister)
	tag := tagOf(cfg)
	return func(ctx context.Context) any {
		var out Read
		for _, sl := range l.ListSnapshots(ctx) {
			r := Region{Listing: sl}
			var ids []string
			for i := range sl.Snapshots {
				if madeByReclaim(tag, &sl.Snapshots[i]) == "" || CSIMade(sl.Snapshots[i].Tags) {
					ids = append(ids, sl.Snapshots[i].ID)
				}
			}
			if len(ids) > 0 {
				users, err := l.SnapshotUsers(ctx, sl.Account, sl.Region, ids)
				if err != nil {
					r.UsersProblem = err.Error()
				}
				r.Users = users
			}
			out.Regions = append(out.Regions, r)
		}
		return out
	}
}

func tagOf(cfg *config.Config) string {
	if e := ebsbase.SectionOf(cfg); e != nil {
		return e.SnapshotTag
	}
	return ""
}

// Kind plans and deletes reclaim's expired snapshots.
type Kind struct {
	s   Section
	tag string
	api API
}

// FromConfig makes the kind with the client Open returned; nil when the
// section (or the ebs section it needs) is absent.
func FromConfig(cfg *config.Config, client any) *Kind {
	s, e := SectionOf(cfg), ebsbase.SectionOf(cfg)
	if s == nil || e == nil {
		return nil
	}
	api, _ := client.(API)
	return &Kind{s: *s, tag: e.SnapshotTag, api: api}
}

// New makes the kind from a section and ebs.snapshotTag (tests).
func New(s Section, tag string, api API) *Kind { return &Kind{s: s, tag: tag, api: api} }

// Detail is what a snapshot decision says beyond the envelope.
type Detail struct {
	Account     string    `json:"account"`
	Region      string    `json:"region"`
	VolumeID    string    `json:"volumeId"`
	SizeGiB     int64     `json:"sizeGiB"`
	Started     time.Time `json:"started"`
	StorageTier string    `json:"storageTier,omitempty"`
	// Users are what depends on it (AMIs, volumes being created).
	Users []string `json:"users,omitempty"`
	// CSIName is the name the EBS CSI driver made it under
	// (CSIVolumeSnapshotName), for a CSI snapshot; UsedBy the
	// VolumeSnapshotContent that names it, as cluster/content.
	CSIName string `json:"csiName,omitempty"`
	UsedBy  string `json:"usedBy,omitempty"`
	tags    map[string]string
}

var _ engine.Located = (*Detail)(nil)

// Where is the snapshot's account and region and its tags.
func (d *Detail) Where() engine.Where {
	return engine.Where{Scope: d.Account + "/" + d.Region, Labels: d.tags}
}

func (k *Kind) Name() string { return Name }

// ID is a snapshot's decision id: ebs-snapshot:ACCOUNT/REGION/snap-….
func ID(account, region, snap string) string { return ids.ID(account, region, snap) }

var ids = ebsbase.IDs{Prefix: "ebs-snapshot:", Resource: "snap-"}

func parseID(id string) (account, region, snap string, ok bool) { return ids.Parse(id) }

func (k *Kind) Owns(id string) bool { _, _, _, ok := parseID(id); return ok }

func (k *Kind) Limits() engine.Limits {
	l := kind.Limits(k.s.Safety, GiB)
	l.BatchSize = 1
	l.Wording = engine.Wording{Section: Key, Noun: "EBS snapshots", Guarded: "snapshot it could restore from"}
	return l
}

// OptOut says how a person keeps a snapshot (report.OptOuter).
func (k *Kind) OptOut() string {
	return optout.Rule("tag", k.s.ProtectTag, "snapshot") + ", or set ebsSnapshots.delete: false"
}

// MonthlyCost prices a snapshot at its volume's size (engine.Pricer).
func (k *Kind) MonthlyCost(d *engine.Decision) float64 {
	return float64(detailOf(d).SizeGiB) * k.s.PricePerGBMonth
}

// madeByReclaim says why s is not a snapshot reclaim made, "" when it is:
// it carries tag, the tag names the volume s was made from, and its
// description is ebs-volume's for that volume. All three, so a snapshot
// someone tagged or described alike is never taken for a backup of ours.
func madeByReclaim(tag string, s *ebs.Snapshot) string {
	v, tagged := s.Tags[tag]
	ours := ebsbase.IsSnapshotDescription(s.Description, s.VolumeID)
	switch {
	case tag == "":
		return "no ebs.snapshotTag is set"
	case !tagged && ours:
		return fmt.Sprintf("its description is reclaim's, but it has no %s tag", tag)
	case !tagged:
		return fmt.Sprintf("it has no %s tag", tag)
	case s.VolumeID == "" || v != s.VolumeID:
		return fmt.Sprintf("its %s tag names %q, not the volume it was made from (%q)", tag, v, s.VolumeID)
	case !ours:
		return fmt.Sprintf("it carries the %s tag, but its description %q is not reclaim's", tag, s.Description)
	}
	return ""
}

// lookAlike: a snapshot that looks like reclaim's by its tag or its
// description; the report shows why each is not (other snapshots are none
// of this kind's business and are left out).
func (k *Kind) lookAlike(s *ebs.Snapshot) bool {
	_, tagged := s.Tags[k.tag]
	return (tagged && k.tag != "") || strings.HasPrefix(s.Description, "reclaim: ")
}

// Propose proposes reclaim's snapshots and their look-alikes: kept when
// not reclaim's, protected, managed by AWS Backup or DLM, not completed,
// used, or within retention; else a candidate relying on its region's
// listing and the read of what depends on it.
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	out := engine.Proposals{}
	read := inventory.CloudOf[Read](snap, Name)
	complete, listed := map[string]bool{}, map[string]bool{}
	csi := k.csiOf(snap)
	for _, r := range read.Regions {
		l := &r.Listing
		scope := l.Account + "/" + l.Region
		src := engine.Source{Kind: SourceKind, Name: scope, Complete: l.Complete, Items: len(l.Snapshots), Unit: "snapshots"}
		if !l.Complete {
			src.Problems = []string{l.Problem}
		}
		if l.RecycleProblem != "" { // said, but holds nothing: the bin is never deleted from
			src.Problems = append(src.Problems, "its Recycle Bin is unknown: "+l.RecycleProblem)
		}
		users := engine.Source{Kind: UsersKind, Name: scope, Complete: r.UsersProblem == "", Items: len(r.Users), Unit: "snapshots in use"}
		if r.UsersProblem != "" {
			users.Problems = []string{r.UsersProblem}
		}
		out.Sources = append(out.Sources, src, users)
		complete[scope] = l.Complete
		keys := []string{src.Key(), users.Key()}
		owners := csi.region(l.Account, l.Region)
		for i := range l.Snapshots {
			s := &l.Snapshots[i]
			listed[ID(l.Account, l.Region, s.ID)] = true
			switch {
			case k.lookAlike(s) && (madeByReclaim(k.tag, s) == "" || !CSIMade(s.Tags)):
				out.Items = append(out.Items, k.propose(l, s, r.Users[s.ID], keys, now))
			case CSIMade(s.Tags):
				out.Items = append(out.Items, k.proposeCSI(csi, owners, l, s, r.Users[s.ID], keys, now))
			default:
				continue
			}
			out.InScope++
		}
		for _, rb := range l.Recycled {
			if ebsbase.IsSnapshotDescription(rb.Description, rb.VolumeID) {
				out.Items = append(out.Items, recycled(l, rb))
			}
		}
	}
	out.Presence = engine.ListedBy(func(id string) bool {
		a, r, _, ok := parseID(id)
		return ok && complete[a+"/"+r]
	}, func(id string) bool { return listed[id] })
	return out
}

// Keep classes and the candidates'.
const (
	ClassExpired      = "expired"
	ClassProtected    = "protected"
	ClassNotReclaims  = "not-reclaims"
	ClassManaged      = "managed"
	ClassNotCompleted = "not-completed"
	ClassInUse        = "in-use"
	ClassRetained     = "retained"
	ClassArchived     = "archived"
	ClassRecycleBin   = "recycle-bin"
)

// first starts a snapshot's proposal with what it is, and applies the
// rules every snapshot of the kind's meets first: protected, or left to
// AWS Backup or DLM (kept says so).
func (k *Kind) first(l *ebs.SnapshotListing, s *ebs.Snapshot, users []string) (p engine.Proposal, det *Detail, kept bool) {
	det = &Detail{Account: l.Account, Region: l.Region, VolumeID: s.VolumeID, SizeGiB: s.SizeGiB, Started: s.Started,
		StorageTier: s.StorageTier, Users: users, tags: s.Tags}
	p = engine.Proposal{ID: ID(l.Account, l.Region, s.ID), Name: s.ID, Identity: s.ID, Detail: det,
		Frees: amount.Free(s.SizeGiB, GiB), Created: s.Started}
	if val, ok := optout.Protects(k.s.ProtectTag, s.Tags); ok {
		p.Class, p.Protected = ClassProtected, optout.Reason("tag", k.s.ProtectTag, val)
		return p, det, true
	}
	if m := managedBy(s.Tags); m != "" {
		p.Class, p.Reason = ClassManaged, m+": left to it"
		return p, det, true
	}
	return p, det, false
}

func (k *Kind) propose(l *ebs.SnapshotListing, s *ebs.Snapshot, users, keys []string, now time.Time) engine.Proposal {
	p, _, kept := k.first(l, s, users)
	if kept {
		return p
	}
	keep := func(class, reason string) engine.Proposal {
		p.Class, p.Reason = class, reason
		return p
	}
	if why := madeByReclaim(k.tag, s); why != "" {
		return keep(ClassNotReclaims, "not a snapshot reclaim made: "+why+"; never touched")
	}
	if s.State != "completed" {
		return keep(ClassNotCompleted, "reclaim's backup of "+s.VolumeID+", "+s.State)
	}
	if len(users) > 0 {
		return keep(ClassInUse, "in use: "+strings.Join(users, ", "))
	}
	age, retention := now.Sub(s.Started), k.s.Retention.Std()
	if age < retention {
		return keep(ClassRetained, fmt.Sprintf("reclaim's backup of %s, %s old: kept until %s (retention %s)",
			s.VolumeID, days(age), s.Started.Add(retention).UTC().Format("2006-01-02"), days(retention)))
	}
	p.Candidate, p.Class, p.Sources = true, ClassExpired, keys
	p.Reason = fmt.Sprintf("reclaim's backup of %s, %s old, past its retention of %s", s.VolumeID, days(age), days(retention))
	switch {
	case s.StorageTier == "archive":
		p.ReportOnly, p.Class = true, ClassArchived
		p.Reason += "; in the archive tier: reported, not deleted (archived snapshots are billed for 90 days at least; delete it by hand)"
	case !k.s.Delete:
		p.ReportOnly = true
		p.Reason += "; ebsSnapshots.delete is off"
	}
	return p
}

// recycled reports one of reclaim's snapshots in the Recycle Bin (by its
// description: the bin lists no tags): deleted already, retained by a
// Recycle Bin rule and billed until it leaves; never a candidate.
func recycled(l *ebs.SnapshotListing, r ebs.Recycled) engine.Proposal {
	det := &Detail{Account: l.Account, Region: l.Region, VolumeID: r.VolumeID, StorageTier: "recycle-bin"}
	return engine.Proposal{ID: ID(l.Account, l.Region, r.ID), Name: r.ID, Identity: r.ID, Detail: det, Class: ClassRecycleBin,
		Reason: "in the Recycle Bin until " + r.Exits.UTC().Format("2006-01-02") + ", retained by a Recycle Bin rule and billed until then: reported, never deleted"}
}

// managedBy names the service that manages a snapshot by its tags.
func managedBy(tags map[string]string) string {
	if v, ok := tags[TagBackup]; ok {
		return "an AWS Backup recovery point (of " + v + ")"
	}
	if v, ok := tags[TagDLM]; ok {
		return "made by Data Lifecycle Manager policy " + v
	}
	return ""
}

// days says a duration in whole days, or hours under two days.
func days(d time.Duration) string {
	if d < 48*time.Hour {
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

func detailOf(d *engine.Decision) *Detail {
	if det, ok := d.Detail.(*Detail); ok {
		return det
	}
	return &Detail{}
}

// reread is a snapshot and what depends on it, right before its delete.
type reread struct {
	snap  ebs.Snapshot
	users []string
}

// Recheck re-reads each snapshot and what depends on it right before its
// delete: gone is gone; no longer reclaim's, not completed, archived or in
// use is a skip. The engine checks the opt-out tag in what it saw.
func (k *Kind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	if k.api == nil {
		return nil, fmt.Errorf("no EBS client")
	}
	return engine.RecheckEach(batch, func(_ int, d *engine.Decision) (reread, error) {
		det := detailOf(d)
		s, err := k.api.SnapshotByID(ctx, det.Account, det.Region, d.Name)
		if err != nil {
			return reread{}, fmt.Errorf("re-read %s in %s/%s: %w", d.Name, det.Account, det.Region, err)
		}
		users, err := k.api.SnapshotUsers(ctx, det.Account, det.Region, []string{d.Name})
		if err != nil {
			return reread{}, fmt.Errorf("re-read what uses %s in %s/%s: %w", d.Name, det.Account, det.Region, err)
		}
		return reread{s, users[d.Name]}, nil
	}, func(d *engine.Decision, r reread) engine.Verdict {
		det := detailOf(d)
		switch {
		case det.CSIName != "" && (!CSIMade(r.snap.Tags) || r.snap.Tags[TagCSIName] != det.CSIName):
			return engine.Changed("its CSI driver's tags")
		case det.CSIName == "" && (madeByReclaim(k.tag, &r.snap) != "" || r.snap.VolumeID != det.VolumeID):
			return engine.Changed("its tag or description")
		case managedBy(r.snap.Tags) != "":
			return engine.Changed("taken in by " + managedBy(r.snap.Tags))
		case r.snap.State != "completed":
			return engine.Changed(r.snap.State)
		case r.snap.StorageTier == "archive":
			return engine.Changed("moved to the archive tier")
		case len(r.users) > 0:
			return engine.Changed("in use: " + strings.Join(r.users, ", "))
		}
		return engine.Pass(r.snap.Tags) // the engine checks the opt-out tag
	})
}

// Delete deletes each snapshot. The provider's errors say each outcome:
// InvalidSnapshot.InUse (an AMI registered since) is a skip, kept in use;
// the first unknown one fails the call.
func (k *Kind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	if k.api == nil {
		return nil, fmt.Errorf("no EBS client")
	}
	return engine.DeleteEach(batch, func(_ int, d *engine.Decision) engine.Deleted {
		det := detailOf(d)
		return engine.Deleted{Err: k.api.DeleteSnapshot(ctx, det.Account, det.Region, d.Name)}
	})
}
