package gcesnapshot

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/providers/gce"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/csisnapshot"
	"reclaim.dev/reclaim/reconcile/kinds/gcepd"
)

// What the GCE PD CSI driver (pd.csi.storage.gke.io) writes on the
// snapshots it makes for VolumeSnapshots (its CreateSnapshot): without
// the snapshotter's extra metadata, a fixed description; with it, the
// description is a JSON object of tags naming the VolumeSnapshot, its
// namespace and its VolumeSnapshotContent, and the driver.
const (
	csiDescription         = "Snapshot created by GCE-PD CSI Driver"
	csiRegionalDescription = "Regional Snapshot created by GCE-PD CSI Driver"
	csiTagContent          = "kubernetes.io/created-for/volumesnapshotcontent/name"
	csiTagSnapshot         = "kubernetes.io/created-for/volumesnapshot/name"
	csiTagNamespace        = "kubernetes.io/created-for/volumesnapshot/namespace"
	csiTagCreatedBy        = "storage.gke.io/created-by"
	csiDriver              = "pd.csi.storage.gke.io"
)

// csiName is the external-snapshotter's default name for the cloud
// snapshot of a VolumeSnapshot: "snapshot-" and the VolumeSnapshot's UID.
var csiName = regexp.MustCompile(`^snapshot-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// CSI is what marks a snapshot as the PD CSI driver's.
type CSI struct {
	// Content, Snapshot and Namespace are the VolumeSnapshotContent and
	// the VolumeSnapshot it was made for, when the description names them.
	Content   string `json:"content,omitempty"`
	Snapshot  string `json:"snapshot,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// NameOnly: only its name is the snapshotter's ("snapshot-<uid>"),
	// its description is not the driver's.
	NameOnly bool `json:"nameOnly,omitempty"`
}

// CSIMade says whether the GCE PD CSI driver made s, and what it was made
// for: its description is the driver's fixed one, or the driver's JSON
// tags (naming a VolumeSnapshotContent, or the driver); or, weaker, its
// name is the snapshotter's "snapshot-<uid>" (a prefix set with
// --snapshot-name-prefix is not recognised by name). Its snapshotHandle in
// a VolumeSnapshotContent is projects/P/global/snapshots/NAME.
func CSIMade(s *gce.Snapshot) (CSI, bool) {
	switch s.Description {
	case csiDescription, csiRegionalDescription:
		return CSI{}, true
	}
	var tags map[string]string
	if json.Unmarshal([]byte(s.Description), &tags) == nil && (tags[csiTagContent] != "" || tags[csiTagCreatedBy] == csiDriver) {
		return CSI{Content: tags[csiTagContent], Snapshot: tags[csiTagSnapshot], Namespace: tags[csiTagNamespace]}, true
	}
	if csiName.MatchString(s.Name) {
		return CSI{NameOnly: true}, true
	}
	return CSI{}, false
}

// says is a CSI snapshot's reason in words.
func (c CSI) says() string {
	switch {
	case c.NameOnly:
		return "named as the CSI snapshotter names a VolumeSnapshot's snapshot"
	case c.Content != "":
		return "made by the GCE PD CSI driver for VolumeSnapshotContent " + c.Content
	}
	return "made by the GCE PD CSI driver"
}

// Handle is a snapshot's snapshotHandle in a VolumeSnapshotContent, as the
// PD CSI driver writes and parses it (pkg/common SnapshotIDToProjectKey):
// projects/P/global/snapshots/NAME.
func Handle(project, name string) string { return "projects/" + project + "/global/snapshots/" + name }

// Classes of the CSI snapshots.
const (
	ClassCSIInUse  = "csi-in-use"
	ClassCSIOrphan = "csi-orphan"
)

// csiRead is what one plan needs to judge CSI snapshots: the clusters'
// contents, the fleet, and each project's clusters (made once).
type csiRead struct {
	ix       *csisnapshot.Index
	snap     *inventory.View
	projects map[string]engine.Users
}

func csiOf(snap *inventory.View) *csiRead {
	return &csiRead{ix: csisnapshot.IndexOf(snap), snap: snap, projects: map[string]engine.Users{}}
}

// owners are the clusters that could own a CSI snapshot of project: the
// one its goog-k8s-cluster-name label names, when it has one, as the fleet
// knows it (a name no member answers for is a cluster nobody read, which
// holds it); else every GKE cluster of the project, of any region (a
// snapshot is global), and every cluster read that is not EKS (a content
// may name a snapshot of another project).
func (c *csiRead) owners(project string, labels map[string]string) engine.Users {
	u, ok := c.projects[project]
	if !ok {
		u = engine.Users{Reads: []string{csisnapshot.Tap}, Scopes: []string{inventory.GKE + " " + project}}
		f := c.snap.Fleet
		if f != nil {
			for _, m := range f.Members {
				if m.Cloud.Platform == inventory.GKE && m.Cloud.Project == project {
					u.Members = append(u.Members, m)
				}
			}
		}
		for _, cl := range c.snap.Clusters {
			if m, ok := f.Member(cl.Name); ok && (m.Cloud.Platform == inventory.EKS || m.Where.Platform == inventory.EKS) {
				continue // an EKS cluster restores no PD snapshot
			}
			u.Clusters = append(u.Clusters, cl.Name)
		}
		c.projects[project] = u
	}
	name := labels[gcepd.ClusterLabel]
	if name == "" {
		return u
	}
	return engine.Users{Reads: u.Reads, Scopes: u.Scopes, Clusters: c.snap.Fleet.Resolve(inventory.GKE, project, name)}
}

// proposeCSI judges a snapshot the PD CSI driver made, once p is not
// protected or a schedule's: kept when not ready, made into a disk or
// image, or named by any read cluster's VolumeSnapshotContent; else an
// orphan relying on its project's listing and every cluster that could
// own it, reported unless csi.delete. One known by its name alone is only
// ever reported: a snapshot anyone named "snapshot-<uid>" is not evidence
// enough to delete.
func (k *Kind) proposeCSI(c *csiRead, p engine.Proposal, project string, s *gce.Snapshot, csi CSI, users, keys []string, now time.Time) engine.Proposal {
	keep := func(class, reason string) engine.Proposal {
		p.Class, p.Reason = class, reason
		return p
	}
	made := csi.says()
	if s.Status != "READY" {
		return keep(ClassCSI, made+", "+s.Status)
	}
	if len(users) > 0 {
		return keep(ClassInUse, made+", made into "+strings.Join(users, ", "))
	}
	owners := c.owners(project, s.Labels)
	a := c.ix.Lookup(Handle(project, s.Name), s.Name, csisnapshot.Names(owners))
	if len(a.InUse) > 0 {
		return keep(ClassCSIInUse, made+": "+a.Say())
	}
	why := ""
	switch {
	case s.Type == "ARCHIVE":
		why = "an archive snapshot: reported, not deleted (archive snapshots are billed for 90 days at least; delete it by hand)"
	case csi.NameOnly:
		why = "known by its name alone, not the driver's description: reported, not deleted"
	}
	p.Class = ClassCSIOrphan
	k.s.CSI.Orphan(&p, a, owners, c.snap.Fleet, keys, made, Key, s.Created, now, why)
	return p
}
