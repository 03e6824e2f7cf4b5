package report_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/inventory"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/state"
)

// poolsKind measures a fleet's pools as the kinds' views do: two GCE
// quotas, three subnets, a gp3 quota, and three ECR repositories of which
// one is deleted and another made every week.
type poolsKind struct{ warnKind }

func (k *poolsKind) View(p *engine.Plan, _ *inventory.View) layout.View {
	now := p.GeneratedAt
	hour := int(now.Sub(yearStart) / time.Hour)
	pools := []string{"proj/us-central1/SSD_TOTAL_GB", "proj/us-central1/DISKS_TOTAL_GB",
		"subnet/123456789012/us-east-1/subnet-0001", "subnet/123456789012/us-east-1/subnet-0002", "subnet/123456789012/us-east-1/subnet-0003",
		"ebs/123456789012/us-east-1/gp3"}
	week := hour / (7 * 24)
	for r := week; r < week+3; r++ {
		pools = append(pools, fmt.Sprintf("ecr/123456789012.dkr.ecr.us-east-1.amazonaws.com/team/app-%04d", r))
	}
	for i, key := range pools {
		// Four digits, whatever the hour: the size measures the
		// history's length, not its numbers' widths.
		used := float64(1000 + (hour*7+i*131)%9000)
		layout.Measure(layout.Pool{Used: used, Limit: 10000, WarnAt: 0.8, Trend: key}, &p.State.Usage, now)
	}
	return layout.View{}
}

var yearStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// A year of hourly runs leaves the state the size it had after two
// months: the usage history is thinned as it ages and forgets the pools
// no longer measured, so the state does not grow with time.
func TestUsageHistoryKeepsTheStateBoundedOverAYear(t *testing.T) {
	if testing.Short() {
		t.Skip("plans 8760 runs")
	}
	k := &poolsKind{warnKind{name: "pools"}}
	kinds := []engine.Kind{k}
	store := &state.FileStore{Path: filepath.Join(t.TempDir(), "state.json")}
	st := engine.NewState()
	size := func() int64 {
		if err := store.Save(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(store.Path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	sizes := map[int]int64{}
	for h := 0; h <= 365*24; h++ {
		// A run starts some seconds past the hour.
		now := yearStart.Add(time.Duration(h)*time.Hour + time.Duration(h%50)*time.Second + 123*time.Millisecond)
		snap := &inventory.View{TakenAt: now}
		p := engine.Build(snap, kinds, st, now)
		report.Show(p, kinds, snap)
		st = p.State
		if day := h / 24; h%24 == 12 && day%7 == 0 {
			sizes[day] = size()
		}
	}
	year := sizes[364]
	lo, hi := year, year
	for day, n := range sizes {
		if day >= 63 {
			lo, hi = min(lo, n), max(hi, n)
		}
	}
	t.Logf("state after a simulated year of hourly runs (9 pools; a repository replaced every week): %d bytes (%d to %d from week 9 on; %d after 4 weeks)",
		year, lo, hi, sizes[28])
	if n := len(st.Usage); n > 9+5 {
		t.Errorf("%d pools in the history: the deleted repositories are not forgotten", n)
	}
	// From the second month on, only a sample more or less at a tier's
	// edge (a run a few seconds later or earlier in its hour) moves it.
	for day, n := range sizes {
		if day >= 63 && (n < year-year/100 || n > year+year/100) {
			t.Errorf("the state is %d bytes on day %d and %d on day 364: it still changes with time", n, day, year)
		}
	}
	if year > 150<<10 {
		t.Errorf("the state is %d bytes: more than its history's bound", year)
	}
}

// A state saved before the history was thinned (a week of samples ten
// minutes apart, to the nanosecond), or with no history at all, loads, and
// the next run thins what it kept.
func TestOldStateHistoryLoadsAndIsThinned(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var old string
	for i := 7*24*6 - 1; i >= 1; i-- {
		if old != "" {
			old += ","
		}
		old += fmt.Sprintf(`{"t":%q,"u":%d}`, now.Add(-time.Duration(i)*10*time.Minute+123456789).Format(time.RFC3339Nano), 1000+i)
	}
	for name, body := range map[string]string{
		"none":    `{"version":2,"resources":{}}`,
		"tenmins": `{"version":2,"resources":{},"usage":{"proj/us-central1/SSD_TOTAL_GB":[` + old + `]}}`,
	} {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := (&state.FileStore{Path: path}).Load(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		before := len(st.Usage["proj/us-central1/SSD_TOTAL_GB"])
		k := &poolsKind{warnKind{name: "pools"}}
		snap := &inventory.View{TakenAt: now}
		p := engine.Build(snap, []engine.Kind{k}, st, now)
		report.Show(p, []engine.Kind{k}, snap)
		after := len(p.State.Usage["proj/us-central1/SSD_TOTAL_GB"])
		if name == "tenmins" && (before != 7*24*6-1 || after > 24*6+6*24+1) {
			t.Errorf("%s: %d samples loaded, %d kept", name, before, after)
		}
		if after == 0 {
			t.Errorf("%s: nothing recorded", name)
		}
	}
}
