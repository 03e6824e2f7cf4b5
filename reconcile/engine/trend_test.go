package engine_test

import (
	"testing"
	"time"

	"reclaim.dev/reclaim/reconcile/engine"
)

const pool = "p1/asia-northeast1/SSD_TOTAL_GB"

func TestProjectionFromHourlyRuns(t *testing.T) {
	st := engine.NewState()
	var perDay float64
	var runsOut *time.Time
	// 40 GB a day, hourly runs for 12 hours, from 1200 of 1500 GB.
	for h := 0; h <= 12; h++ {
		now := t0.Add(time.Duration(h) * time.Hour)
		perDay, runsOut = st.Trend(pool, 1200+40*float64(h)/24, 1500, now)
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
	if n := len(st.Usage[pool]); n != 13 {
		t.Fatalf("%d samples kept", n)
	}
}

func TestProjectionFlatOrShrinkingNeverRunsOut(t *testing.T) {
	st := engine.NewState()
	var perDay float64
	var runsOut *time.Time
	for h := 0; h <= 6; h++ {
		perDay, runsOut = st.Trend("p1/r/SSD_TOTAL_GB", 1400-float64(h), 1500, t0.Add(time.Duration(h)*time.Hour))
	}
	if runsOut != nil || perDay >= 0 {
		t.Fatalf("growth %v a day, runs out at %v", perDay, runsOut)
	}
}

func TestProjectionHistoryIsBounded(t *testing.T) {
	st := engine.NewState()
	for i := 0; i < 24*10; i++ { // ten days of hourly runs, plus a burst of runs a minute apart
		st.Trend("p1/r/M", 1, 10, t0.Add(time.Duration(i)*time.Hour))
	}
	for i := 0; i < 30; i++ {
		st.Trend("p1/r/M", 1, 10, t0.Add(240*time.Hour+time.Duration(i)*time.Minute))
	}
	n := len(st.Usage["p1/r/M"])
	if n > 7*24+4 {
		t.Fatalf("%d samples: history is not bounded", n)
	}
}
