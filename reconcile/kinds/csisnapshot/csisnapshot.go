// Package csisnapshot is what the snapshot kinds stand on for the
// snapshots the clusters' CSI drivers make: a tap of every cluster's
// VolumeSnapshotContents (snapshot.storage.k8s.io/v1), which an agent's
// record carries as a class of evidence, and Lookup, which says whether a
// cloud snapshot is in use by a content, held by a cluster that could own
// it and was not read, or named by no content at all. It names no cloud:
// a snapshot kind says which of its snapshots a CSI driver made and which
// clusters could own each.
package csisnapshot

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/inventory/published"
)

// Tap names the read of each cluster's VolumeSnapshotContents
// (inventory.TapKey(Tap, cluster)); Class is the class of evidence an
// agent's record lists them under.
const (
	Tap   = "volumesnapshotcontents"
	Class = "tap " + Tap
)

// Resource is what the tap lists. A cluster without the CRD serves none:
// it has no content, and its pass is complete and empty (kube.Tap.Optional).
var Resource = schema.GroupVersionResource{Group: "snapshot.storage.k8s.io", Version: "v1", Resource: "volumesnapshotcontents"}

// Content is one VolumeSnapshotContent as the snapshot kinds need it.
type Content struct {
	Name   string `json:"name"`
	Driver string `json:"driver,omitempty"`
	// Handle is the cloud snapshot it names: status.snapshotHandle, or
	// spec.source.snapshotHandle for a pre-provisioned one (a restore from
	// a snapshot made elsewhere). Empty while the driver is still making it.
	Handle         string `json:"handle,omitempty"`
	DeletionPolicy string `json:"deletionPolicy,omitempty"`
	// SnapshotUID is its VolumeSnapshot's uid (spec.volumeSnapshotRef.uid):
	// the name the sidecar asks the driver to make the snapshot under ends
	// with it ("snapshot-UID"), so a content whose handle is not written
	// yet still names what it is making.
	SnapshotUID string `json:"snapshotUID,omitempty"`
	// VolumeSnapshot is the namespace/name it is bound to.
	VolumeSnapshot string `json:"volumeSnapshot,omitempty"`
}

// Contents are one cluster's contents (the tap's result).
type Contents []Content

// Taps are the tap, for a kind's Module (it needs nothing of the config).
// Two kinds that register it share one tap: the wiring keeps one of a name.
func Taps(*config.Config) []kube.Tap { return []kube.Tap{tap} }

var tap = kube.Tap{Name: Tap, Resource: Resource, Optional: true,
	New: func(string) kube.TapSink { return &sink{out: Contents{}} }, Decode: published.DecodeAs[Contents]}

type sink struct{ out Contents }

func (s *sink) Add(u *unstructured.Unstructured) error {
	c := Content{Name: u.GetName()}
	c.Driver, _, _ = unstructured.NestedString(u.Object, "spec", "driver")
	c.DeletionPolicy, _, _ = unstructured.NestedString(u.Object, "spec", "deletionPolicy")
	c.Handle, _, _ = unstructured.NestedString(u.Object, "status", "snapshotHandle")
	if c.Handle == "" {
		c.Handle, _, _ = unstructured.NestedString(u.Object, "spec", "source", "snapshotHandle")
	}
	c.SnapshotUID, _, _ = unstructured.NestedString(u.Object, "spec", "volumeSnapshotRef", "uid")
	ns, _, _ := unstructured.NestedString(u.Object, "spec", "volumeSnapshotRef", "namespace")
	name, _, _ := unstructured.NestedString(u.Object, "spec", "volumeSnapshotRef", "name")
	if name != "" {
		c.VolumeSnapshot = ns + "/" + name
	}
	s.out = append(s.out, c)
	return nil
}

func (s *sink) Result() any { return s.out }
