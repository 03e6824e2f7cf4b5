package retention

import (
	"testing"
	"time"
)

// A backup is kept until exactly its retention, then expired; ages are
// said in hours under two days, in days after.
func TestJudge(t *testing.T) {
	p := Policy{Retention: DefaultRetention}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		age     time.Duration
		expired bool
		why     string
	}{
		{30*24*time.Hour - time.Second, false, "reclaim's backup of d, 29 days old: kept until 2026-11-26 (retention 30 days)"},
		{30 * 24 * time.Hour, true, "reclaim's backup of d, 30 days old, past its retention of 30 days"},
		{5 * time.Hour, false, "reclaim's backup of d, 5h old: kept until 2026-12-26 (retention 30 days)"},
	} {
		expired, why := p.Judge("d", now.Add(-c.age), now)
		if expired != c.expired || why != c.why {
			t.Errorf("%s: %v %q, want %v %q", c.age, expired, why, c.expired, c.why)
		}
	}
}
