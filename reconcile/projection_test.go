package reconcile

import (
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory"
)

func TestProjectionFromHourlyRuns(t *testing.T) {
	st := emptyState()
	s := snap(nil, complete("a"))
	var p *Plan
	// 40 GB a day, hourly runs for 12 hours, from 1200 of 1500 GB.
	for h := 0; h <= 12; h++ {
		now := t0.Add(time.Duration(h) * time.Hour)
		s.Quotas = []inventory.Quota{{Project: "p1", Region: "asia-northeast1", Metric: "SSD_TOTAL_GB", Limit: 1500, Usage: 1200 + 40*float64(h)/24, Known: true}}
		p = Build(s, testPolicy(), st, now)
		st = p.State
		if h < 3 && p.Headroom[0].RunsOutAt != nil {
			t.Fatalf("projected from %d hours of history", h)
		}
	}
	h := p.Headroom[0]
	if h.GrowthPerDay < 39.9 || h.GrowthPerDay > 40.1 || h.RunsOutAt == nil {
		t.Fatalf("%+v", h)
	}
	// 1220 GB at +40/day: 7 days to 1500.
	want := t0.Add(12 * time.Hour).Add(7 * 24 * time.Hour)
	if d := h.RunsOutAt.Sub(want); d < -time.Hour || d > time.Hour {
		t.Fatalf("runs out at %s, want about %s", h.RunsOutAt, want)
	}
	if n := len(st.Usage["p1/asia-northeast1/SSD_TOTAL_GB"]); n != 13 {
		t.Fatalf("%d samples kept", n)
	}
}

func TestProjectionFlatOrShrinkingNeverRunsOut(t *testing.T) {
	st := emptyState()
	s := snap(nil, complete("a"))
	var p *Plan
	for h := 0; h <= 6; h++ {
		s.Quotas = []inventory.Quota{{Project: "p1", Region: "r", Metric: "SSD_TOTAL_GB", Limit: 1500, Usage: 1400 - float64(h), Known: true}}
		p = Build(s, testPolicy(), st, t0.Add(time.Duration(h)*time.Hour))
		st = p.State
	}
	if p.Headroom[0].RunsOutAt != nil || p.Headroom[0].GrowthPerDay >= 0 {
		t.Fatalf("%+v", p.Headroom[0])
	}
}

func TestProjectionHistoryIsBounded(t *testing.T) {
	st := emptyState()
	s := snap(nil, complete("a"))
	s.Quotas = []inventory.Quota{{Project: "p1", Region: "r", Metric: "M", Limit: 10, Usage: 1, Known: true}}
	for i := 0; i < 24*10; i++ { // ten days of hourly runs, plus a burst of runs a minute apart
		st = Build(s, testPolicy(), st, t0.Add(time.Duration(i)*time.Hour)).State
	}
	for i := 0; i < 30; i++ {
		st = Build(s, testPolicy(), st, t0.Add(240*time.Hour+time.Duration(i)*time.Minute)).State
	}
	n := len(st.Usage["p1/r/M"])
	if n > 7*24+4 {
		t.Fatalf("%d samples: history is not bounded", n)
	}
}
