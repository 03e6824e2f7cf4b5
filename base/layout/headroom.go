package layout

import "time"

// Headroom is how full a pool is (a regional quota, a repository's image
// limit, a subnet's addresses) before and after a plan, and where its use
// is heading: the columns every kind's headroom table shares, measured one
// way by Measure.
type Headroom struct {
	// UsedPct and UsedPctAfter are the used share of the limit now and once
	// the plan's deletes are done (0..1; 0 while the limit is 0).
	UsedPct      float64 `json:"usedPct"`
	UsedPctAfter float64 `json:"usedPctAfter"`
	// Warning: usage now is at or above the warning share. Usage now, not
	// after: a dry-run frees nothing, and a plan may be held.
	Warning bool `json:"warning"`
	// GrowthPerDay is the usage trend over the recorded history (in the
	// pool's unit a day), and RunsOutAt when usage reaches the limit at that
	// rate, if it grows.
	GrowthPerDay float64    `json:"growthPerDay"`
	RunsOutAt    *time.Time `json:"runsOutAt,omitempty"`
}

// Pool is what a kind knows of one pool whose usage it has read.
type Pool struct {
	// Used and Limit are in the pool's unit (GB, images, addresses); Frees
	// is what this plan's deletes free of it.
	Used, Limit, Frees float64
	// WarnAt is the used share (0..1) that warns.
	WarnAt float64
	// Trend is the key of the pool's usage history (see Trend); "" keeps
	// none.
	Trend string
	// Name and Unit say the pool and its unit in a chart's words
	// ("subnet-0a1b (us-east-1a)", "addresses").
	Name, Unit string
}

// Measure measures a pool whose usage is known at now. history is the
// usage history by pool (the state's, engine.State.Usage): the pool's
// usage now is recorded under its Trend key, and its trend fitted. A kind
// fills in the rest of its row (names, what holds the pool) and says the
// row.
func Measure(pl Pool, history *map[string][]Sample, now time.Time) Headroom {
	var h Headroom
	if pl.Limit > 0 {
		h.UsedPct = pl.Used / pl.Limit
		h.UsedPctAfter = (pl.Used - pl.Frees) / pl.Limit
		h.Warning = h.UsedPct >= pl.WarnAt
	}
	if pl.Trend != "" {
		if *history == nil {
			*history = map[string][]Sample{}
		}
		(*history)[pl.Trend], h.GrowthPerDay, h.RunsOutAt = Trend((*history)[pl.Trend], pl.Used, pl.Limit, now)
	}
	return h
}
