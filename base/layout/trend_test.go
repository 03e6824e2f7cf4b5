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
	for i := 0; i < 24*40; i++ { // forty days of hourly runs, plus a burst of runs a minute apart
		st, _, _ = layout.Trend(st, 1, 10, t0.Add(time.Duration(i)*time.Hour))
	}
	now := t0.Add(960 * time.Hour)
	for i := 0; i < 30; i++ {
		st, _, _ = layout.Trend(st, 1, 10, now.Add(time.Duration(i)*time.Minute))
	}
	now = now.Add(29 * time.Minute)
	// A day of hourly points, six days more, then 23 days at one in six
	// hours; the burst adds what is ten minutes apart.
	if n := len(st); n < 24+6*24+23*4 || n > 24+6*24+23*4+6 {
		t.Fatalf("%d samples: history is not bounded as its tiers say", n)
	}
	if age := now.Sub(st[0].T); age > layout.KeptFor {
		t.Fatalf("the oldest sample is %s old", age)
	}
	for i := 1; i < len(st); i++ {
		if !st[i].T.After(st[i-1].T) {
			t.Fatalf("samples out of order at %d: %v, %v", i, st[i-1].T, st[i].T)
		}
	}
}

// A run keeps what the run before it kept, but for what aged out: thinning
// twice is thinning once.
func TestThinIsStable(t *testing.T) {
	var st []layout.Sample
	for i := 0; i < 24*35; i++ {
		st = append(st, layout.Sample{T: t0.Add(time.Duration(i) * time.Hour), Usage: float64(i)})
	}
	now := st[len(st)-1].T
	once := layout.Thin(st, now)
	twice := layout.Thin(once, now)
	if len(once) != len(twice) {
		t.Fatalf("thinned %d, then %d", len(once), len(twice))
	}
	if st[len(st)-1] != once[len(once)-1] {
		t.Fatal("the newest sample was thinned out")
	}
	later := layout.Thin(once, now.Add(5*time.Hour))
	for _, s := range later[:len(later)-30] {
		found := false
		for _, o := range once {
			found = found || o == s
		}
		if !found {
			t.Fatalf("a later run kept %v, which the earlier one had not", s)
		}
	}
}

func TestForgetDropsPoolsNotMeasuredForAMonth(t *testing.T) {
	h := map[string][]layout.Sample{
		"gone":  {{T: t0, Usage: 1}},
		"stale": {{T: t0, Usage: 1}, {T: t0.Add(29 * 24 * time.Hour), Usage: 2}},
		"fresh": {{T: t0.Add(40 * 24 * time.Hour), Usage: 3}},
	}
	layout.Forget(h, t0.Add(40*24*time.Hour))
	if _, ok := h["gone"]; ok || len(h["stale"]) != 1 || len(h["fresh"]) != 1 {
		t.Fatalf("after Forget: %v", h)
	}
}

func TestTrendRecordsWholeSeconds(t *testing.T) {
	st, _, _ := layout.Trend(nil, 1, 10, t0.Add(1500*time.Millisecond))
	if got := st[0].T; !got.Equal(t0.Add(time.Second)) {
		t.Fatalf("recorded %v", got)
	}
}
