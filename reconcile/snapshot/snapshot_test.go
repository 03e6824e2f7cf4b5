package snapshot

import (
	"testing"
	"time"
)

// A delete relies only on the newest snapshot not failed that was started
// within the orphan period; none when the period's start is unknown.
func TestReusable(t *testing.T) {
	t0 := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	snaps := []Snapshot{
		{ID: "before", Started: t0.Add(-time.Hour), State: Done},
		{ID: "first", Started: t0.Add(time.Hour), State: Done},
		{ID: "newest-failed", Started: t0.Add(3 * time.Hour), State: Failed},
		{ID: "second", Started: t0.Add(2 * time.Hour), State: Pending},
	}
	if got, ok := Reusable(snaps, &t0); !ok || got.ID != "second" {
		t.Errorf("Reusable = %q, %v; want second", got.ID, ok)
	}
	late := t0.Add(4 * time.Hour)
	if got, ok := Reusable(snaps, &late); ok {
		t.Errorf("Reusable after every start = %q; want none", got.ID)
	}
	if _, ok := Reusable(snaps, nil); ok {
		t.Error("Reusable with no orphan period: want none")
	}
	if Pending.String() != "pending" || Done.String() != "done" || Failed.String() != "failed" {
		t.Error("State.String")
	}
}

// A snapshot covers the last use only when it was started after it; an
// unknown last use (zero) is none.
func TestCovers(t *testing.T) {
	use := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		started time.Time
		use     time.Time
		want    bool
	}{
		{use.Add(time.Millisecond), use, true},
		{use, use, false},
		{use.Add(-time.Hour), use, false},
		{use.Add(-time.Hour), time.Time{}, true},
	} {
		if got := Covers(Snapshot{Started: c.started}, c.use); got != c.want {
			t.Errorf("Covers(started %s, last use %s) = %v, want %v", c.started, c.use, got, c.want)
		}
	}
}
