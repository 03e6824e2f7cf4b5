package layout

import (
	"time"
)

const (
	// fitWindow is how much of the history a projection is fitted to.
	fitWindow = 7 * 24 * time.Hour
	// KeptFor is how long usage history is kept (for charts): a pool not
	// measured for this long is forgotten (Forget).
	KeptFor = 30 * 24 * time.Hour
	// minSampleGap keeps a tight run loop from flooding the history.
	minSampleGap = 10 * time.Minute
	// minSpan is the least history a projection is made from.
	minSpan = 3 * time.Hour
)

// tiers thin the history as it ages, so a pool's history has a fixed
// number of points however long reclaim runs: every sample of the last
// day, one an hour for the rest of the fitted week, one every six hours
// up to KeptFor (about 260 points with hourly runs, 380 at most).
var tiers = []struct{ age, every time.Duration }{
	{24 * time.Hour, 0},
	{fitWindow, time.Hour},
	{KeptFor, 6 * time.Hour},
}

// Sample is one observation of a pool's usage.
type Sample struct {
	T     time.Time `json:"t"`
	Usage float64   `json:"u"`
}

// Trend adds usage at now to a pool's usage history and, from the history
// of the last week, fits a straight line to say how fast usage grows (a
// day) and when it reaches limit, if it grows. It returns the history to
// keep (a month, thinned: see Thin): pure, no I/O.
func Trend(samples []Sample, usage, limit float64, now time.Time) (kept []Sample, perDay float64, runsOut *time.Time) {
	if n := len(samples); n == 0 || now.Sub(samples[n-1].T) >= minSampleGap {
		// Whole seconds: a state's history is read by people and charts,
		// and a nanosecond costs ten bytes a sample.
		samples = append(samples, Sample{T: now.Truncate(time.Second), Usage: usage})
	}
	samples = Thin(samples, now)
	fit := Recent(samples, now, fitWindow)
	if !Fits(fit) {
		return samples, 0, nil
	}
	perHour := slope(fit)
	if perHour > 0 && limit > usage {
		hours := (limit - usage) / perHour
		if hours < float64(10*365*24) {
			t := now.Add(time.Duration(hours * float64(time.Hour))).Truncate(time.Minute)
			runsOut = &t
		}
	}
	return samples, perHour * 24, runsOut
}

// Thin drops the samples older than KeptFor and, of older ones, keeps the
// first of each tier's interval (intervals fixed in time, so what one run
// keeps the next keeps too); the newest sample always stays. samples are
// oldest first, and left as they are: a plan's state may share them.
func Thin(samples []Sample, now time.Time) []Sample {
	out := make([]Sample, 0, len(samples))
	var last int64 = -1 // the interval of the sample kept last, in its tier
	var lastEvery time.Duration
	for i, s := range samples {
		age := now.Sub(s.T)
		if age > KeptFor {
			continue
		}
		every := time.Duration(0)
		for _, t := range tiers {
			if age <= t.age {
				every = t.every
				break
			}
		}
		if every > 0 && i < len(samples)-1 {
			n := s.T.UnixNano() / int64(every)
			if n == last && every == lastEvery {
				continue
			}
			last, lastEvery = n, every
		}
		out = append(out, s)
	}
	return out
}

// Recent is the tail of samples (oldest first) taken within window of now.
func Recent(samples []Sample, now time.Time, window time.Duration) []Sample {
	i := 0
	for i < len(samples) && now.Sub(samples[i].T) > window {
		i++
	}
	return samples[i:]
}

// Forget drops from a usage history (by pool) the pools not measured for
// KeptFor, and thins the rest: with Trend, what bounds the state's history
// to the pools that still exist, a fixed number of points each.
func Forget(history map[string][]Sample, now time.Time) {
	for k, s := range history {
		if s = Thin(s, now); len(s) == 0 {
			delete(history, k)
		} else {
			history[k] = s
		}
	}
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
