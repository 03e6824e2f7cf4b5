package inventory_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
)

// The clouds are listed first and the use of what they hold second: a read
// of use (WithClusters) starts only once every cloud listing is done, with
// the clusters, which see the listings by name.
func TestCollectReadsUseAfterTheClouds(t *testing.T) {
	var listed atomic.Bool
	var sawListing, lateAfter bool
	snap := inventory.Collect(context.Background(), inventory.CollectOptions{
		Clouds: []inventory.CloudRead{
			{Name: "users", WithClusters: true, List: func(context.Context) any {
				lateAfter = listed.Load()
				return "used"
			}},
			{Name: "cloud", List: func(context.Context) any {
				defer listed.Store(true)
				return []int{1, 2}
			}},
		},
		FleetClusters: func(_ context.Context, _ []inventory.FleetListing, clouds map[string]any) (*inventory.Fleet, []inventory.ClusterRefs) {
			_, sawListing = clouds["cloud"].([]int)
			return nil, []inventory.ClusterRefs{{Name: "a", Complete: true}}
		},
	})
	if !lateAfter || !sawListing {
		t.Fatalf("the read of use ran after the listing: %v; the clusters saw the listing: %v", lateAfter, sawListing)
	}
	if got := inventory.CloudOf[[]int](&snap, "cloud"); len(got) != 2 {
		t.Fatalf("cloud read %v", got)
	}
	if got := inventory.CloudOf[string](&snap, "users"); got != "used" {
		t.Fatalf("read of use %q", got)
	}
	if got := inventory.CloudOf[[]int](&snap, "absent"); got != nil {
		t.Fatalf("a read the run did not make: %v, want the zero value", got)
	}
	if got := inventory.CloudOf[[]string](&snap, "cloud"); got != nil {
		t.Fatalf("a read of another type: %v, want the zero value", got)
	}
}

// A cluster read directly was read when its read began, after the clouds;
// one whose view says when it was taken (a record) keeps that time.
func TestCollectSaysWhenEachClusterWasRead(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clock := t0
	taken := t0.Add(-time.Hour)
	snap := inventory.Collect(context.Background(), inventory.CollectOptions{
		Now: func() time.Time { clock = clock.Add(time.Second); return clock },
		Clusters: func(context.Context) []inventory.ClusterRefs {
			return []inventory.ClusterRefs{{Name: "direct", Complete: true}, {Name: "record", Complete: true, ReadAt: taken}}
		},
	})
	if !snap.Clusters[0].ReadAt.After(snap.TakenAt) {
		t.Errorf("direct read at %s, want after the pass began (%s)", snap.Clusters[0].ReadAt, snap.TakenAt)
	}
	if !snap.Clusters[1].ReadAt.Equal(taken) {
		t.Errorf("record read at %s, want its own %s", snap.Clusters[1].ReadAt, taken)
	}
}
