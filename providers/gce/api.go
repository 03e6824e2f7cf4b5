// Package gce lists GCE disks and regional quotas, re-reads, snapshots and
// deletes disks, and lists, re-reads and deletes snapshots, through the
// compute v1 REST clients. Everything it returns
// is converted to this package's types at this edge; no SDK type leaves it.
// A disk is named by inventory.DiskKey, the key PVs name it by too.
package gce

import (
	"time"

	"reclaim.dev/reclaim/inventory"
)

// Snapshot is a GCE snapshot as reclaim needs it: its status
// (CREATING, UPLOADING, READY, FAILED, DELETING) and when it was made.
type Snapshot struct {
	Name    string
	ID      string // numeric id, a string on the wire
	Status  string
	Created time.Time
	// SourceDisk is the disk it was made from (its URL); SourceDiskID
	// that disk's numeric id.
	SourceDisk   string
	SourceDiskID string
	Labels       map[string]string
	Description  string
	// DiskSizeGB is the size of the disk it was made from; StorageBytes
	// what it stores (snapshots are incremental).
	DiskSizeGB   int64
	StorageBytes int64
	// Type is STANDARD or ARCHIVE.
	Type string
	// SchedulePolicy is the snapshot schedule (a resource policy's URL)
	// that made it, if one did.
	SchedulePolicy string
}

// SnapshotListing is one project's snapshots. Complete is false when a
// page failed; a snapshot missing from Snapshots is then unknown, never
// gone. Problem says why.
type SnapshotListing struct {
	Project   string
	Snapshots []Snapshot
	Complete  bool
	Problem   string
}

// Disk is a GCE persistent disk as reclaim needs it.
type Disk struct {
	Key    inventory.DiskKey
	ID     string // numeric id, a string on the wire
	SizeGB int64
	Type   string   // last segment of the type URL: pd-balanced, pd-ssd, pd-standard, ...
	Status string   // READY, CREATING, DELETING, ...
	Users  []string // instance URLs; empty means no VM has it attached
	Labels map[string]string
	// LabelFingerprint changes whenever labels change; the applier compares it on re-read.
	LabelFingerprint string
	Description      string
	Created          time.Time
	LastAttach       time.Time // zero if never attached
	LastDetach       time.Time // zero if never detached
	ReplicaZones     []string  // regional disks only
	// SourceSnapshot is the snapshot the disk was made from (its URL), if any.
	SourceSnapshot string
}

// Region is the region whose quota the disk counts against.
func (d Disk) Region() string { return d.Key.QuotaRegion() }

// Listing is one project's disks.
type Listing struct {
	Project string
	Disks   []Disk
	// Complete is false when a page failed or the listing was cut short; then a
	// disk missing from Disks is unknown, never gone.
	Complete bool
	Problem  string
	// UnknownScopes are scopes ("zones/us-east1-b", "regions/us-east1") that answered
	// with a warning other than "no results": their disks are unknown, not absent.
	UnknownScopes map[string]string // scope -> warning code and message
}

// ScopeKnown reports whether a disk at key would have been seen by this listing.
func (l Listing) ScopeKnown(k inventory.DiskKey) bool {
	if !l.Complete {
		return false
	}
	scope := "zones/" + k.Zone
	if k.Region != "" {
		scope = "regions/" + k.Region
	}
	_, unknown := l.UnknownScopes[scope]
	return !unknown
}

// Quota is one regional quota metric. Known is false when regions.get did not
// return the metric: then limit and usage are unknown, not zero.
type Quota struct {
	Project string
	Region  string
	Metric  string
	Limit   float64
	Usage   float64
	Known   bool
	Problem string // why it is unknown, if it is
}
