package layout

import (
	"testing"
	"time"
)

// A pool is measured one way for every kind: shares of the limit now and
// after the plan, a warning on usage now, and the trend under its key.
func TestMeasure(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	var usage map[string][]Sample
	h := Measure(Pool{Used: 90, Limit: 100, Frees: 30, WarnAt: 0.9, Trend: "q"}, &usage, t0)
	if h.UsedPct != 0.9 || h.UsedPctAfter != 0.6 || !h.Warning {
		t.Errorf("90 of 100, freeing 30, warning at 90%%: %+v", h)
	}
	if h := Measure(Pool{Used: 89, Limit: 100, WarnAt: 0.9}, &usage, t0); h.Warning {
		t.Errorf("89 of 100 warns at 90%%: %+v", h)
	}
	// A limit of 0 (unset, or not read) says no share and warns of nothing.
	if h := Measure(Pool{Used: 5, Limit: 0, WarnAt: 0.5}, &usage, t0); h != (Headroom{}) {
		t.Errorf("limit 0: %+v", h)
	}
	// The trend grows from the samples kept under the key; a pool without
	// one keeps none.
	for i := 1; i <= 4; i++ {
		now := t0.Add(time.Duration(i) * 2 * time.Hour)
		h = Measure(Pool{Used: 90 + float64(i), Limit: 100, WarnAt: 0.9, Trend: "q"}, &usage, now)
		Measure(Pool{Used: 90 + float64(i), Limit: 100, WarnAt: 0.9}, &usage, now)
	}
	if h.GrowthPerDay <= 0 || h.RunsOutAt == nil || len(usage) != 1 {
		t.Errorf("growing pool: %+v, history %v", h, usage)
	}
}
