package report

import (
	"testing"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
)

// What kinds keep of one group is one phrase across kinds and clouds, with
// each kind's part; another group is a phrase of its own.
func TestKeptLinesAddUpAcrossKinds(t *testing.T) {
	got := keptLines([]layout.Kept{
		{Group: "reclaim's backups", Noun: "EBS snapshots", Count: 2, Bytes: 600 * amount.GiB, Cost: 30},
		{Group: "other", Noun: "things", Count: 1, Bytes: amount.GiB / 2, Cost: 0.5},
		{Group: "reclaim's backups", Noun: "GCE snapshots", Count: 1, Bytes: 500 * amount.GiB, Cost: 12.5},
	}, "USD")
	want := []string{
		"reclaim's backups that stay: 3, 1.1 TiB, about 42.50 USD a month (EBS snapshots 2, 600 GiB, 30.00; GCE snapshots 1, 500 GiB, 12.50)",
		"other that stay: 1, 0.5 GiB, about 0.50 USD a month",
	}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}
