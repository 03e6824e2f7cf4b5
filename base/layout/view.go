package layout

import (
	"sort"
	"time"
)

// View is what a kind shows of a final plan: its report sections, a
// phrase for the report's summary line, its metric samples and warnings.
type View struct {
	Sections []Section
	Summary  string
	Gauges   []Gauge
	// Warnings are the kind's (SortWarnings orders them across kinds).
	Warnings []Warning
	// Kept is what the kind keeps on purpose and pays for (reclaim's
	// backups that stay): the report adds up every kind's of one Group in
	// one phrase of its summary line, across clouds.
	Kept []Kept
}

// Backups is the group of reclaim's own backups that stay (the snapshot
// kinds' on each cloud), added up in one line across them.
const Backups = "reclaim's backups"

// Kept is what a kind keeps of one group and what it costs a month.
type Kept struct {
	// Group names what is added up across kinds: Backups.
	Group string
	// Noun says the kind's part of it: "EBS snapshots".
	Noun  string
	Count int
	Bytes int64
	Cost  float64
}

// Warning is something a person must act on: a quota, a subnet or a
// repository near its limit. RunsOutAt, when known, is when it is
// exhausted at the current rate, and orders the warnings.
type Warning struct {
	Kind      string     `json:"kind"`
	Text      string     `json:"text"`
	RunsOutAt *time.Time `json:"runsOutAt,omitempty"`
	// Pool is the pool warned of, when the warning names one: what a chart
	// of its usage history draws (notify/chart). Not in the JSON report.
	Pool *Pool `json:"-"`
}

// SortWarnings orders warnings by RunsOutAt, soonest first, those without
// one after, keeping the kinds' order among equals.
func SortWarnings(ws []Warning) {
	sort.SliceStable(ws, func(i, j int) bool {
		a, b := ws[i].RunsOutAt, ws[j].RunsOutAt
		switch {
		case a == nil:
			return false
		case b == nil:
			return true
		}
		return a.Before(*b)
	})
}
