package engine

import (
	"testing"
	"time"
)

// A pool is measured one way for every kind: shares of the limit now and
// after the plan, a warning on usage now, and the trend under its key.
func TestPlanHeadroom(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	p := &Plan{GeneratedAt: t0}
	h := p.Headroom(Pool{Used: 90, Limit: 100, Frees: 30, WarnAt: 0.9, Trend: "q"})
	if h.UsedPct != 0.9 || h.UsedPctAfter != 0.6 || !h.Warning {
		t.Errorf("90 of 100, freeing 30, warning at 90%%: %+v", h)
	}
	if h := p.Headroom(Pool{Used: 89, Limit: 100, WarnAt: 0.9}); h.Warning {
		t.Errorf("89 of 100 warns at 90%%: %+v", h)
	}
	// A limit of 0 (unset, or not read) says no share and warns of nothing.
	if h := p.Headroom(Pool{Used: 5, Limit: 0, WarnAt: 0.5}); h != (Headroom{}) {
		t.Errorf("limit 0: %+v", h)
	}
	// The trend grows from the samples kept under the key; a pool without
	// one keeps none.
	for i := 1; i <= 4; i++ {
		p.GeneratedAt = t0.Add(time.Duration(i) * 2 * time.Hour)
		h = p.Headroom(Pool{Used: 90 + float64(i), Limit: 100, WarnAt: 0.9, Trend: "q"})
		p.Headroom(Pool{Used: 90 + float64(i), Limit: 100, WarnAt: 0.9})
	}
	if h.GrowthPerDay <= 0 || h.RunsOutAt == nil || len(p.State.Usage) != 1 {
		t.Errorf("growing pool: %+v, history %v", h, p.State.Usage)
	}
}
