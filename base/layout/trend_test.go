package layout_test

import (
	"testing"
	"time"

	"reclaim.dev/reclaim/base/layout"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func TestProjectionFromHourlyRuns(t *testing.T) {
	var st []layout.Sample
	var perDay float64
	var runsOut *time.Time
	// 40 GB a day, hourly runs for 12 hours, from 1200 of 1500 GB.
	for h := 0; h <= 12; h++ {
		now := t0.Add(time.Duration(h) * time.Hour)
		st, perDay, runsOut = layout.Trend(st, 1200+40*float64(h)/24, 1500, now)
		if h < 3 && runsOut != nil {
			t.Fatalf("projected from %d hours of history", h)
		}
	}
	if perDay < 39.9 || perDay > 40.1 || runsOut == nil {
		t.Fatalf("growth %v a day, runs out at %v", perDay, runsOut)
	}
	// 1220 GB at +40/day: 7 days to 1500.
	want := t0.Add(12 * time.Hour).Add(7 * 24 * time.Hour)
	if d := runsOut.Sub(want); d < -time.Hour || d > time.Hour {
		t.Fatalf("runs out at %s, want about %s", runsOut, want)
	}
	if n := len(st); n != 13 {
		t.Fatalf("%d samples kept", n)
	}
}

func TestProjectionFlatOrShrinkingNeverRunsOut(t *testing.T) {
	var st []layout.Sample
	var perDay float64
	var runsOut *time.Time
	for h := 0; h <= 6; h++ {
		st, perDay, runsOut = layout.Trend(st, 1400-float64(h), 1500, t0.Add(time.Duration(h)*time.Hour))
	}
	if runsOut != nil || perDay >= 0 {
		t.Fatalf("growth %v a day, runs out at %v", perDay, runsOut)
	}
}

func TestProjectionHistoryIsBounded(t *testing.T) {
	var st []layout.Sample
	for i := 0; i < 24*10; i++ { // ten days of hourly runs, plus a burst of runs a minute apart
		st, _, _ = layout.Trend(st, 1, 10, t0.Add(time.Duration(i)*time.Hour))
	}
	for i := 0; i < 30; i++ {
		st, _, _ = layout.Trend(st, 1, 10, t0.Add(240*time.Hour+time.Duration(i)*time.Minute))
	}
	n := len(st)
	if n > 7*24+4 {
		t.Fatalf("%d samples: history is not bounded", n)
	}
}
