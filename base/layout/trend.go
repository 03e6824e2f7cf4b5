package layout

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

// Sample is one observation of a pool's usage.
type Sample struct {
	T     time.Time `json:"t"`
	Usage float64   `json:"u"`
}

// Trend adds usage at now to a pool's usage history and, from the history
// of the last week, fits a straight line to say how fast usage grows (a
// day) and when it reaches limit, if it grows. It returns the history to
// keep: pure, no I/O.
func Trend(samples []Sample, usage, limit float64, now time.Time) (kept []Sample, perDay float64, runsOut *time.Time) {
	if n := len(samples); n == 0 || now.Sub(samples[n-1].T) >= minSampleGap {
		samples = append(samples, Sample{T: now, Usage: usage})
	}
	for len(samples) > 0 && now.Sub(samples[0].T) > historyWindow {
		samples = samples[1:]
	}
	if !Fits(samples) {
		return samples, 0, nil
	}
	perHour := slope(samples)
	if perHour > 0 && limit > usage {
		hours := (limit - usage) / perHour
		if hours < float64(10*365*24) {
			t := now.Add(time.Duration(hours * float64(time.Hour))).Truncate(time.Minute)
			runsOut = &t
		}
	}
	return samples, perHour * 24, runsOut
}

// Fits says whether a history is long enough for Trend to fit a line:
// then a flat trend means steady usage, not an unknown one.
func Fits(samples []Sample) bool {
	return len(samples) >= 3 && samples[len(samples)-1].T.Sub(samples[0].T) >= minSpan
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
