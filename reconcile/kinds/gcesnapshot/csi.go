package gcesnapshot

import (
	"encoding/json"
	"regexp"

	"reclaim.dev/reclaim/providers/gce"
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
