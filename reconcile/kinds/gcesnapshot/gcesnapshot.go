// Package gcesnapshot is the gce-snapshot kind: it deletes the snapshots
// reclaim made of GCE disks before deleting them (disks.snapshotBeforeDelete)
// once they are older than their retention, so reclaim's own backups do not
// leak. A snapshot is reclaim's only when its labels (disks.snapshotLabel
// and reclaim-location), its name (gcepd.SnapshotName) and its sourceDisk
// all name the same disk. A snapshot reclaim did not make is never touched;
// what was made from one (a disk, an image) keeps it; a snapshot schedule's
// is left to its schedule; an archive snapshot is reported, not deleted.
// The GCE PD CSI driver's snapshots (CSIMade) are kept while any read
// cluster's VolumeSnapshotContent names them or a cluster that could own
// them was not read; the others are orphans, reported (deleted with
// gceSnapshots.csi.delete).
//
// The package is the whole kind: its section, its cloud read (the GCE
// provider's client over the gce section's projects), its proposals, view,
// re-read and delete. The engine enforces every safety rule on what it
// proposes.
package gcesnapshot

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
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// Name is the kind; SourceKind names its projects' snapshot listings among
// the plan's sources, UsersKind the reads of what was made from them
// (disks, images).
const (
	Name       = "gce-snapshot"
	SourceKind = "gce-snapshots"
	UsersKind  = "gce-snapshot-users"
)

// GiB is the kind's unit: what a snapshot stores (storageBytes, rounded
// up), about what deleting it frees (a later snapshot of the same disk may
// take over some of its data).
var GiB = &amount.Unit{Name: "GiB of snapshots", Key: amount.KeySizeGB, Say: func(n int64) string { return fmt.Sprintf("%d GiB of snapshots", n) }, Bytes: amount.GiB}

// API is what the kind re-reads and deletes through; the GCE provider's
// Client is one. DeleteSnapshot's error says its outcome (outcome.Of).
type API interface {
	GetSnapshot(ctx context.Context, project, name string) (gce.Snapshot, error)
	SnapshotUsers(ctx context.Context, project string) (map[string][]string, error)
	DeleteSnapshot(ctx context.Context, project, name string) error
}

// Lister lists a project's snapshots and what was made from them; the GCE
// provider's Client is one.
type Lister interface {
	ListSnapshots(ctx context.Context, project string) gce.SnapshotListing
	SnapshotUsers(ctx context.Context, project string) (map[string][]string, error)
}

var (
	_ API    = (*gce.Client)(nil)
	_ Lister = (*gce.Client)(nil)
)

// Project is one project's snapshots, and what in the project was made
// from a snapshot (by its path, gce.SnapshotPath); UsersProblem says why
// that is unknown.
type Project struct {
	Listing      gce.SnapshotListing
	Users        map[string][]string
	UsersRead    bool
	UsersProblem string
}

// Read is the kind's read of its cloud (View.Clouds[Name]).
type Read struct{ Projects []Project }

// Open makes the GCE client the gce section describes; nil when either
// section is absent.
func Open(ctx context.Context, cfg *config.Config, _ *zap.Logger, userAgent string) (any, func(), error) {
	g := gcepd.GCEOf(cfg)
	if SectionOf(cfg) == nil || g == nil {
		return nil, nil, nil
	}
	return gcepd.Open(ctx, g, userAgent)
}

// Reader lists every project's snapshots, then, when any is reclaim's or
// the CSI driver's, what every project made from snapshots (a disk may be made from another
// project's snapshot). The others are never candidates and need no read.
func Reader(cfg *config.Config, client any) func(context.Context) any {
	l := client.(Lister)
	g, label := gcepd.GCEOf(cfg), labelOf(cfg)
	return func(ctx context.Context) any {
		var out Read
		ours := false
		for _, p := range g.Projects {
			sl := l.ListSnapshots(ctx, p)
			sl.Project = p
			for i := range sl.Snapshots {
				_, csi := CSIMade(&sl.Snapshots[i])
				ours = ours || csi || madeByReclaim(label, p, &sl.Snapshots[i]) == ""
			}
			out.Projects = append(out.Projects, Project{Listing: sl})
		}
		if !ours {
			return out
		}
		for i := range out.Projects {
			p := &out.Projects[i]
			users, err := l.SnapshotUsers(ctx, p.Listing.Project)
			p.Users, p.UsersRead = users, true
			if err != nil {
				p.UsersProblem = err.Error()
			}
		}
		return out
	}
}

func labelOf(cfg *config.Config) string {
	if d := gcepd.DisksOf(cfg); d != nil {
		return d.SnapshotLabel
	}
	return ""
}

// Kind plans and deletes reclaim's expired snapshots.
type Kind struct {
	s     Section
	label string
	// projects are the gce section's: what each made from a snapshot is
	// re-read before its delete.
	projects []string
	api      API
}

// FromConfig makes the kind with the client Open returned; nil when the
// section (or the gce section it needs) is absent.
func FromConfig(cfg *config.Config, client any) *Kind {
	s, g := SectionOf(cfg), gcepd.GCEOf(cfg)
	if s == nil || g == nil {
		return nil
	}
	api, _ := client.(API)
	return &Kind{s: *s, label: labelOf(cfg), projects: g.Projects, api: api}
}

// New makes the kind from a section, disks.snapshotLabel and the gce
// section's projects (tests).
func New(s Section, label string, projects []string, api API) *Kind {
	return &Kind{s: s, label: label, projects: projects, api: api}
}

// Detail is what a snapshot decision says beyond the envelope.
type Detail struct {
	Project string `json:"project"`
	// Disk is the disk it was made from (projects/P/zones/Z/disks/D).
	Disk        string    `json:"disk"`
	DiskSizeGB  int64     `json:"diskSizeGb"`
	StoredBytes int64     `json:"storedBytes"`
	Created     time.Time `json:"created"`
	// SnapshotID is GCE's numeric id: a snapshot made again under the
	// name has another.
	SnapshotID string `json:"snapshotId"`
	Type       string `json:"type,omitempty"`
	// Users are what was made from it (disks, images).
	Users []string `json:"users,omitempty"`
	// CSI: the GCE PD CSI driver made it.
	CSI    *CSI `json:"csi,omitempty"`
	labels map[string]string
}

var _ engine.Located = (*Detail)(nil)

// Where is the snapshot's project and its labels.
func (d *Detail) Where() engine.Where { return engine.Where{Scope: d.Project, Labels: d.labels} }

func (k *Kind) Name() string { return Name }

const idPrefix = Name + ":"

// ID is a snapshot's decision id: gce-snapshot:PROJECT/NAME.
func ID(project, name string) string { return idPrefix + project + "/" + name }

func parseID(id string) (project, name string, ok bool) {
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok {
		return "", "", false
	}
	project, name, ok = strings.Cut(rest, "/")
	return project, name, ok && project != "" && name != "" && !strings.Contains(name, "/")
}

func (k *Kind) Owns(id string) bool { _, _, ok := parseID(id); return ok }

func (k *Kind) Limits() engine.Limits {
	l := kind.Limits(k.s.Safety, GiB)
	l.BatchSize = 1
	l.Wording = engine.Wording{Section: Key, Noun: "GCE snapshots", Guarded: "snapshot it could restore from"}
	return l
}

// OptOut says how a person keeps a snapshot (report.OptOuter).
func (k *Kind) OptOut() string {
	return optout.Rule("label", k.s.ProtectTag, "snapshot") + ", or set gceSnapshots.delete: false"
}

// MonthlyCost prices what a snapshot stores (engine.Pricer).
func (k *Kind) MonthlyCost(d *engine.Decision) float64 {
	return float64(detailOf(d).StoredBytes) / float64(amount.GiB) * k.s.PricePerGBMonth
}

// madeByReclaim says why s, listed in project, is not a snapshot reclaim
// made, "" when it is: it was made from a disk of project (sourceDisk), its
// label names that disk and its location label the disk's zone or region,
// and its name is gce-disk's for that disk. All of them, so a snapshot
// someone labelled or named alike is never taken for a backup of ours.
func madeByReclaim(label, project string, s *gce.Snapshot) string {
	v, labelled := s.Labels[label]
	key, err := inventory.ParseDiskKey(s.SourceDisk)
	switch {
	case label == "":
		return "no disks.snapshotLabel is set"
	case !labelled && strings.HasPrefix(s.Name, "reclaim-"):
		return fmt.Sprintf("its name looks like reclaim's, but it has no %s label", label)
	case !labelled:
		return fmt.Sprintf("it has no %s label", label)
	case s.SourceDisk == "" || err != nil:
		return fmt.Sprintf("the disk it was made from is unknown (sourceDisk %q)", s.SourceDisk)
	case key.Project != project:
		return fmt.Sprintf("it was made from %s, a disk of another project", key)
	case v != gcepd.LabelValue(key.Name):
		return fmt.Sprintf("its %s label names %q, not the disk it was made from (%s)", label, v, key)
	case s.Labels[gcepd.LocationLabel] != gcepd.LabelValue(key.Location()):
		return fmt.Sprintf("its %s label %q is not where the disk it was made from is (%s)", gcepd.LocationLabel, s.Labels[gcepd.LocationLabel], key)
	}
	if _, ok := gcepd.IsSnapshotName(s.Name, key.Name); !ok {
		return fmt.Sprintf("it carries the %s label, but its name is not reclaim's for %s", label, key.Name)
	}
	return ""
}

// lookAlike: a snapshot that looks like reclaim's by its label or its
// name, or one the CSI driver made; the report shows why each is not
// reclaim's (other snapshots are none of this kind's business).
func (k *Kind) lookAlike(s *gce.Snapshot) bool {
	_, labelled := s.Labels[k.label]
	_, csi := CSIMade(s)
	return (labelled && k.label != "") || strings.HasPrefix(s.Name, "reclaim-") || csi
}

// Propose proposes reclaim's snapshots, their look-alikes and the CSI
// driver's: kept when not reclaim's, protected, a schedule's, not ready,
// used, or within retention; else a candidate relying on its project's
// listing and every project's read of what was made from snapshots.
func (k *Kind) Propose(snap *inventory.View, now time.Time) engine.Proposals {
	out := engine.Proposals{}
	read := inventory.CloudOf[Read](snap, Name)
	complete, listed := map[string]bool{}, map[string]bool{}
	var keys []string
	users := map[string][]string{}
	csi := csiOf(snap)
	for _, p := range read.Projects {
		if !p.UsersRead {
			continue
		}
		src := engine.Source{Kind: UsersKind, Name: p.Listing.Project, Complete: p.UsersProblem == "", Items: len(p.Users), Unit: "snapshots made into disks or images"}
		if p.UsersProblem != "" {
			src.Problems = []string{p.UsersProblem}
		}
		out.Sources = append(out.Sources, src)
		keys = append(keys, src.Key())
		for path, u := range p.Users {
			users[path] = append(users[path], u...)
		}
	}
	for _, p := range read.Projects {
		l := &p.Listing
		src := engine.Source{Kind: SourceKind, Name: l.Project, Complete: l.Complete, Items: len(l.Snapshots), Unit: "snapshots"}
		if !l.Complete {
			src.Problems = []string{l.Problem}
		}
		out.Sources = append(out.Sources, src)
		complete[l.Project] = l.Complete
		relies := append([]string{src.Key()}, keys...)
		for i := range l.Snapshots {
			s := &l.Snapshots[i]
			listed[ID(l.Project, s.Name)] = true
			if !k.lookAlike(s) {
				continue
			}
			out.InScope++
			out.Items = append(out.Items, k.propose(csi, l.Project, s, users[Handle(l.Project, s.Name)], relies, now))
		}
	}
	out.Presence = engine.ListedBy(func(id string) bool {
		p, _, ok := parseID(id)
		return ok && complete[p]
	}, func(id string) bool { return listed[id] })
	return out
}

// Keep classes and the candidates'.
const (
	ClassExpired     = "expired"
	ClassProtected   = "protected"
	ClassNotReclaims = "not-reclaims"
	ClassCSI         = "csi"
	ClassScheduled   = "scheduled"
	ClassNotReady    = "not-ready"
	ClassInUse       = "in-use"
	ClassRetained    = "retained"
	ClassArchived    = "archived"
)

func (k *Kind) propose(csi *csiRead, project string, s *gce.Snapshot, users, keys []string, now time.Time) engine.Proposal {
	det := &Detail{Project: project, Disk: diskOf(s), DiskSizeGB: s.DiskSizeGB, StoredBytes: s.StorageBytes, Created: s.Created,
		SnapshotID: s.ID, Type: s.Type, Users: users, labels: s.Labels}
	p := engine.Proposal{ID: ID(project, s.Name), Name: s.Name, Identity: s.ID, Detail: det,
		Frees: amount.Free(storedGiB(s.StorageBytes), GiB), Created: s.Created}
	keep := func(class, reason string) engine.Proposal {
		p.Class, p.Reason = class, reason
		return p
	}
	if val, ok := optout.Protects(k.s.ProtectTag, s.Labels); ok {
		p.Class, p.Protected = ClassProtected, optout.Reason("label", k.s.ProtectTag, val)
		return p
	}
	if s.SchedulePolicy != "" {
		return keep(ClassScheduled, "made by snapshot schedule "+inventory.LastSegment(s.SchedulePolicy)+": left to it")
	}
	if c, ok := CSIMade(s); ok {
		det.CSI = &c
		return k.proposeCSI(csi, p, project, s, c, users, keys, now)
	}
	if why := madeByReclaim(k.label, project, s); why != "" {
		return keep(ClassNotReclaims, "not a snapshot reclaim made: "+why+"; never touched")
	}
	if s.Status != "READY" {
		return keep(ClassNotReady, "reclaim's backup of "+det.Disk+", "+s.Status)
	}
	if len(users) > 0 {
		return keep(ClassInUse, "made into "+strings.Join(users, ", "))
	}
	if s.Created.IsZero() {
		return keep(ClassNotReady, "reclaim's backup of "+det.Disk+", of unknown age")
	}
	expired, why := k.s.Judge(det.Disk, s.Created, now)
	if !expired {
		return keep(ClassRetained, why)
	}
	p.Candidate, p.Class, p.Sources, p.Reason = true, ClassExpired, keys, why
	switch {
	case s.Type == "ARCHIVE":
		p.ReportOnly, p.Class = true, ClassArchived
		p.Reason += "; an archive snapshot: reported, not deleted (archive snapshots are billed for 90 days at least; delete it by hand)"
	case !k.s.Delete:
		p.ReportOnly = true
		p.Reason += "; gceSnapshots.delete is off"
	}
	return p
}

// diskOf is the disk a snapshot was made from, as a path, or its URL as is.
func diskOf(s *gce.Snapshot) string {
	if key, err := inventory.ParseDiskKey(s.SourceDisk); err == nil {
		return key.String()
	}
	return s.SourceDisk
}

func storedGiB(b int64) int64 { return (b + amount.GiB - 1) / amount.GiB }

func detailOf(d *engine.Decision) *Detail {
	if det, ok := d.Detail.(*Detail); ok {
		return det
	}
	return &Detail{}
}

// reread is a snapshot and what was made from it, right before its delete.
type reread struct {
	snap  gce.Snapshot
	users []string
}

// Recheck re-reads each snapshot (snapshots.get) and what every project
// made from it right before its delete: gone is gone; made again, no
// longer reclaim's (or, for a CSI orphan, the driver's as it was), not ready, archived, taken in by a schedule or made
// into a disk or image is a skip. The engine checks the opt-out label in
// what it saw.
func (k *Kind) Recheck(ctx context.Context, batch []*engine.Decision) ([]engine.Verdict, error) {
	if k.api == nil {
		return nil, fmt.Errorf("no GCE client")
	}
	return engine.RecheckEach(batch, func(_ int, d *engine.Decision) (reread, error) {
		det := detailOf(d)
		s, err := k.api.GetSnapshot(ctx, det.Project, d.Name)
		if err != nil {
			return reread{}, fmt.Errorf("re-read %s in %s: %w", d.Name, det.Project, err)
		}
		var users []string
		path := "projects/" + det.Project + "/global/snapshots/" + d.Name
		for _, p := range k.projects {
			u, err := k.api.SnapshotUsers(ctx, p)
			if err != nil {
				return reread{}, fmt.Errorf("re-read what %s made from %s: %w", p, d.Name, err)
			}
			users = append(users, u[path]...)
		}
		return reread{s, users}, nil
	}, func(d *engine.Decision, r reread) engine.Verdict {
		det := detailOf(d)
		c, csi := CSIMade(&r.snap)
		same := madeByReclaim(k.label, det.Project, &r.snap) == "" && !csi
		if det.CSI != nil { // still the driver's, as it was
			same = csi && c == *det.CSI
		}
		switch {
		case r.snap.ID != det.SnapshotID:
			return engine.Changed("made again under its name")
		case !same || diskOf(&r.snap) != det.Disk:
			return engine.Changed("its labels, name, description or source disk")
		case r.snap.SchedulePolicy != "":
			return engine.Changed("taken in by snapshot schedule " + inventory.LastSegment(r.snap.SchedulePolicy))
		case r.snap.Status != "READY":
			return engine.Changed(r.snap.Status)
		case r.snap.Type == "ARCHIVE":
			return engine.Changed("now an archive snapshot")
		case len(r.users) > 0:
			return engine.Changed("made into " + strings.Join(r.users, ", "))
		}
		return engine.Pass(r.snap.Labels) // the engine checks the opt-out label
	})
}

// Delete deletes each snapshot; the provider's errors say each outcome,
// and the first unknown one fails the call.
func (k *Kind) Delete(ctx context.Context, batch []*engine.Decision) ([]engine.Deleted, error) {
	if k.api == nil {
		return nil, fmt.Errorf("no GCE client")
	}
	return engine.DeleteEach(batch, func(_ int, d *engine.Decision) engine.Deleted {
		return engine.Deleted{Err: k.api.DeleteSnapshot(ctx, detailOf(d).Project, d.Name)}
	})
}
