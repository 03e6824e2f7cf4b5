package fleetsim

import (
	"os"
	"strconv"
	"testing"
	"time"

	"reclaim.dev/reclaim/internal/testenv"
)

// Rerun one fleet with RECLAIM_FLEET_SEED=<seed>; run more with
// RECLAIM_FLEETS=<n> (and RECLAIM_FLEET_BASE=<first seed>).
const (
	defaultFleets = 300
	benchFleets   = 10000
	defaultBase   = 20250301
)

func envUint(t testing.TB, name string, def uint64) uint64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// fleets runs n fleets from base and reports every failing seed.
func fleets(t testing.TB, base, n uint64) *Stats {
	stats := NewStats()
	failed := 0
	for i := range n {
		seed := base + i
		if err := RunFleet(seed, stats); err != nil {
			failed++
			t.Errorf("%v\n  rerun just this fleet: RECLAIM_FLEET_SEED=%d go test -race -run TestRandomFleets ./internal/fleetsim/", err, seed)
			if failed >= 5 {
				t.Fatalf("stopping after %d failed fleets", failed)
			}
		}
	}
	return stats
}

// TestRandomFleets simulates randomized fleets over several runs each, with
// faults, and checks reclaim's safety invariants against the truth.
func TestRandomFleets(t *testing.T) {
	if s := os.Getenv("RECLAIM_FLEET_SEED"); s != "" {
		seed := envUint(t, "RECLAIM_FLEET_SEED", 0)
		stats := NewStats()
		if err := RunFleet(seed, stats); err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d\n%s", seed, stats)
		return
	}
	n := envUint(t, "RECLAIM_FLEETS", defaultFleets)
	if testing.Short() && os.Getenv("RECLAIM_FLEETS") == "" {
		n = 50
	}
	stats := fleets(t, envUint(t, "RECLAIM_FLEET_BASE", defaultBase), n)
	t.Logf("%s", stats)
}

// BenchmarkRandomFleets runs 10,000 fleets (RECLAIM_FLEETS to change) per
// iteration: make bench runs it once.
func BenchmarkRandomFleets(b *testing.B) {
	n := envUint(b, "RECLAIM_FLEETS", benchFleets)
	base := envUint(b, "RECLAIM_FLEET_BASE", defaultBase)
	var stats *Stats
	start, cpu := time.Now(), testenv.CPUTime()
	for i := 0; b.Loop(); i++ {
		stats = fleets(b, base+uint64(i)*n, n)
	}
	wall, cpu := time.Since(start), testenv.CPUTime()-cpu
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu/wall")
	b.ReportMetric(float64(stats.Fleets), "fleets")
	total := 0
	for _, v := range stats.Faults {
		total += v
	}
	b.ReportMetric(float64(total), "faults")
	deleted := 0
	for _, v := range stats.Deleted {
		deleted += v
	}
	b.ReportMetric(float64(deleted), "deletions-checked")
	b.Logf("%s", stats)
}
