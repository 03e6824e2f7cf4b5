package gcepd

import (
	"regexp"
	"strings"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// How gce-disk names and labels the snapshot it makes of a disk before
// deleting it (disks.snapshotBeforeDelete), and how gce-snapshot knows
// one of them again: both kinds stand on these.

// LocationLabel is the label naming the zone or region of the disk a
// snapshot was made from, beside disks.snapshotLabel naming the disk.
const LocationLabel = "reclaim-location"

// snapshotTimeLayout is the time in a snapshot's name: it sorts by time.
const snapshotTimeLayout = "20060102-150405"

var nonLabel = regexp.MustCompile(`[^a-z0-9_-]`)

// LabelValue makes s a valid GCE label value (lowercase letters, digits, _ and -, at most 63).
func LabelValue(s string) string {
	s = nonLabel.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}

// SnapshotName names the snapshot taken before deleting disk: a valid GCE
// resource name (at most 63 characters) that sorts by time.
func SnapshotName(disk string, at time.Time) string {
	return snapshotBase(disk) + "-" + at.UTC().Format(snapshotTimeLayout)
}

func snapshotBase(disk string) string {
	base := "reclaim-" + LabelValue(disk)
	if len(base)+1+len(snapshotTimeLayout) > 63 {
		base = strings.TrimRight(base[:63-1-len(snapshotTimeLayout)], "-_")
	}
	return base
}

// SnapshotLabels are the labels of the snapshot made of the disk at key:
// label (disks.snapshotLabel) names the disk, LocationLabel its zone or
// region.
func SnapshotLabels(label string, key inventory.DiskKey) map[string]string {
	return map[string]string{label: LabelValue(key.Name), LocationLabel: LabelValue(key.Location())}
}

// IsSnapshotName says whether name is one SnapshotName gives for disk,
// and at what time.
func IsSnapshotName(name, disk string) (time.Time, bool) {
	base, stamp, ok := cutLast(name, len(snapshotTimeLayout))
	if !ok || base != snapshotBase(disk) {
		return time.Time{}, false
	}
	at, err := time.Parse(snapshotTimeLayout, stamp)
	return at, err == nil
}

// cutLast splits name before its last n characters and the dash before them.
func cutLast(name string, n int) (string, string, bool) {
	if len(name) < n+1 || name[len(name)-n-1] != '-' {
		return "", "", false
	}
	return name[:len(name)-n-1], name[len(name)-n:], true
}
