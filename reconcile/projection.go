package reconcile

import (
	"time"
)

const (
	// historyWindow is how much usage history is kept and fitted.
	historyWindow = 7 * 24 * time.Hour
	// minSampleGap keeps a tight run loop from flooding the history.
	minSampleGap = 10 * time.Minute
	// minSpan is the least history a projection is made from.
	minSpan = 3 * time.Hour
)

// project records each known quota's usage in the state and, from the history
// of the last week, fits a straight line to say how fast usage grows and when
// it reaches the limit. It is part of the pure planner: state in, state out.
func project(hs []Headroom, st *State, now time.Time) {
	for i := range hs {
		h := &hs[i]
		if !h.Known {
			continue
		}
		key := h.Project + "/" + h.Region + "/" + h.Metric
		samples := st.Usage[key]
		if n := len(samples); n == 0 || now.Sub(samples[n-1].T) >= minSampleGap {
			samples = append(samples, Sample{T: now, Usage: h.Usage})
		}
		for len(samples) > 0 && now.Sub(samples[0].T) > historyWindow {
			samples = samples[1:]
		}
		st.Usage[key] = samples
		if len(samples) < 3 || samples[len(samples)-1].T.Sub(samples[0].T) < minSpan {
			continue
		}
		perHour := slope(samples)
		h.GrowthPerDay = perHour * 24
		if perHour > 0 && h.Limit > h.Usage {
			hours := (h.Limit - h.Usage) / perHour
			if hours < float64(10*365*24) {
				t := now.Add(time.Duration(hours * float64(time.Hour))).Truncate(time.Minute)
				h.RunsOutAt = &t
			}
		}
	}
}

// slope is the least-squares growth of usage per hour.
func slope(s []Sample) float64 {
	t0 := s[0].T
	var n, sx, sy, sxx, sxy float64
	for _, p := range s {
		x := p.T.Sub(t0).Hours()
		n++
		sx += x
		sy += p.Usage
		sxx += x * x
		sxy += x * p.Usage
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}
