package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"reclaim.dev/reclaim/inventory/published"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
	"reclaim.dev/reclaim/reconcile/kinds/gcedisk"
	"reclaim.dev/reclaim/reconcile/state"
)

// The churn model (issue 40): each agent reads its cluster every minute
// and publishes when what it read changed, or when its last publication
// is churnHeartbeat old (so that a quiet cluster's record never nears
// fleet.records.maxAge, 2h here); each minute churnShare of the
// clusters change (a pod replaced). The deleter is a daemon passing every
// churnEvery minutes.
const (
	churnHeartbeat = 60 * time.Minute
	churnShare     = 0.01 // of the clusters, each minute: 10 of 1,000
	churnEvery     = 10   // minutes between the deleter's passes
	churnMinutes   = 60
	// The targets: requests to the store at most 1.2× the floor (the
	// listing's pages plus the records that changed since the last
	// pass), and the deleter's peak heap within 256 MiB.
	churnRequestsTarget = 1.2
	churnHeapTarget     = 256 << 20
)

// BenchmarkRecordChurn is an hour of a fleet's churn as a long-running
// deleter (reclaim daemon: one Runner, one pass every churnEvery
// minutes) reads it: the 1,000 clusters of BenchmarkRecordFleet, their
// records in the same in-memory bucket (20 ms a request), published on
// change as the churn model above says, and a simulated clock, so the
// hour takes well under a minute. The first pass reads every record (a
// daemon's start); each pass after lists the prefix and reads only the
// records whose version changed.
//
// Per pass, and for the hour (the six passes after the first): requests
// to the store by kind (LIST pages, GETs; the agents' PUTs), the bytes
// the GETs read, wall time, and the deleter's peak heap in use (the
// whole process's: the bucket's bytes and the fakes included, so an
// upper bound of the deleter's), with GOMEMLIMIT 280MiB and GOGC 40 as
// deploy/ sets them. The daemon as a pod is not run (an hour of a real
// clock); BenchmarkRecordFleet's pod run is its first pass. Checked (b.Fatalf): every pass's plan is
// the fleet's (every cluster complete, every disk a PV names kept, every
// orphan marked), requests ≤ 1.2× the floor each pass, the peak heap
// ≤ 256 MiB, and a pass after the first faster on average than the first
// (the wall's floor here is the disks' listing and the plan, not the
// records: it is reported, not held to a ratio).
//
// Run it with: go test -tags demo ./internal/app -run '^$' -bench RecordChurn -benchtime 1x
// (make bench runs it too).
func BenchmarkRecordChurn(b *testing.B) {
	t0 := time.Now().Truncate(time.Minute)
	for range b.N {
		b.StopTimer()
		w := newRecBench(b, t0)
		store := w.store
		rng := rand.New(rand.NewPCG(40, 6))
		// Each cluster's generation (how many times it changed) and last
		// publication. The records newRecBench published are staggered
		// over the last heartbeat, as a fleet's agents started apart are.
		gen := make([]int, recClusters)
		last := make([]time.Time, recClusters)
		var buf bytes.Buffer
		publish := func(c int, at time.Time) {
			cl := w.fleet[c]
			rec := cl.record(at.Add(5 * time.Minute)) // record() says it was taken 5 minutes before its now
			if g := gen[c]; g > 0 {
				p := &rec.Refs.Pods[g%len(rec.Refs.Pods)]
				p.Name, p.UID, p.Version = fmt.Sprintf("%s-g%d", p.Name, g), fmt.Sprintf("%s-g%d", p.UID, g), fmt.Sprint(9900000+g)
			}
			buf.Reset()
			if err := published.Encode(&buf, rec); err != nil {
				b.Fatal(err)
			}
			store.put(published.Key(recPrefix, cl.place, cl.name), bytes.Clone(buf.Bytes()))
			last[c] = at
		}
		for c := range recClusters {
			publish(c, t0.Add(-time.Duration(c%int(churnHeartbeat/time.Minute))*time.Minute))
		}

		now := t0
		r, err := New(context.Background(), w.cfg, Deps{Records: store, Store: state.NewMemoryStore(engine.NewState()),
			Audit: audit.New(io.Discard), Now: func() time.Time { return now }})
		if err != nil {
			b.Fatal(err)
		}
		// The deploy's GOMEMLIMIT and GOGC, unless the environment says.
		if os.Getenv("GOMEMLIMIT") == "" {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(280 << 20))
		}
		if os.Getenv("GOGC") == "" {
			defer debug.SetGCPercent(debug.SetGCPercent(40))
		}
		debug.FreeOSMemory()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		stop := sampleMemory(base.HeapInuse, liveHeap(), nil)

		type passStat struct {
			minute                   int
			floor, lists, gets, puts int64
			bytes                    int64
			wall, cpu                time.Duration
		}
		var passes []passStat
		changed := map[int]bool{} // since the deleter's last pass
		for c := range recClusters {
			changed[c] = true // a daemon's first pass reads every record
		}
		store.puts.Store(0)
		var putsBefore int64 // the agents' PUTs before the last pass
		b.StartTimer()
		for m := 0; m <= churnMinutes; m++ {
			now = t0.Add(time.Duration(m) * time.Minute)
			if m > 0 {
				b.StopTimer()
				for c := range recClusters {
					change := rng.Float64() < churnShare
					if change {
						gen[c]++
					}
					if change || now.Sub(last[c]) >= churnHeartbeat {
						publish(c, now)
						changed[c] = true
					}
				}
				b.StartTimer()
			}
			if m%churnEvery != 0 {
				continue
			}
			lists, gets, bytesRead, puts := store.lists.Load(), store.gets.Load(), store.bytes.Load(), store.puts.Load()
			puts, putsBefore = puts-putsBefore, puts
			start, cpu := time.Now(), cpuTime()
			rep, err := r.Once(context.Background(), Options{})
			wall, cpu := time.Since(start), cpuTime()-cpu
			if err != nil {
				b.Fatal(err)
			}
			p := rep.Plan
			for _, s := range p.Sources {
				if !s.Complete {
					b.Fatalf("minute %d: %s %s incomplete: %v", m, s.Kind, s.Name, s.Problems)
				}
			}
			if keeps, marks := p.Count(gcedisk.Name, engine.Keep), p.Count(gcedisk.Name, engine.Mark); keeps != w.kept || marks != recOrphans || p.Incomplete {
				b.Fatalf("minute %d: disks %d kept, %d marked, incomplete %v; want %d, %d", m, keeps, marks, p.Incomplete, w.kept, recOrphans)
			}
			ps := passStat{minute: m, floor: int64(ceilDiv(recClusters, recPage) + len(changed)),
				lists: store.lists.Load() - lists, gets: store.gets.Load() - gets, bytes: store.bytes.Load() - bytesRead,
				puts: puts, wall: wall, cpu: cpu}
			passes = append(passes, ps)
			if got := float64(ps.lists+ps.gets) / float64(ps.floor); got > churnRequestsTarget {
				b.Fatalf("minute %d: %d requests (%d LIST, %d GET) = %.2f× the floor %d (%d pages, %d changed records), more than the %.1f× target",
					m, ps.lists+ps.gets, ps.lists, ps.gets, got, ps.floor, ceilDiv(recClusters, recPage), len(changed), churnRequestsTarget)
			}
			clear(changed)
		}
		b.StopTimer()
		pk := stop()
		r.Close()

		var hour passStat
		for _, ps := range passes[1:] {
			hour.floor += ps.floor
			hour.lists += ps.lists
			hour.gets += ps.gets
			hour.bytes += ps.bytes
			hour.puts += ps.puts
			hour.wall += ps.wall
			hour.cpu += ps.cpu
		}
		cold := passes[0]
		steady := len(passes) - 1
		for _, ps := range passes {
			b.Logf("pass at minute %2d: %4d LIST + %4d GET = %.2f× the floor %4d; %6.2f MiB read; %4d PUTs by the agents since the last pass; wall %s",
				ps.minute, ps.lists, ps.gets, float64(ps.lists+ps.gets)/float64(ps.floor), ps.floor, float64(ps.bytes)/(1<<20), ps.puts, ps.wall.Round(time.Millisecond))
		}
		b.Logf("the hour (%d passes after the first): %d LIST, %d GET (%.2f× the floor %d), %d PUT; %.1f MiB read (the first pass alone %.1f MiB); wall %s a pass on average (the first %s)",
			steady, hour.lists, hour.gets, float64(hour.lists+hour.gets)/float64(hour.floor), hour.floor, hour.puts,
			float64(hour.bytes)/(1<<20), float64(cold.bytes)/(1<<20), (hour.wall / time.Duration(steady)).Round(time.Millisecond), cold.wall.Round(time.Millisecond))
		b.Logf("peak heap in use %d MiB, live at most %d MiB (the whole process: the bucket's records and the fakes included), against the %d MiB target",
			pk.inuse>>20, pk.live>>20, churnHeapTarget>>20)
		b.ReportMetric(float64(hour.lists), "LIST/h")
		b.ReportMetric(float64(hour.gets), "GET/h")
		b.ReportMetric(float64(hour.puts), "PUT/h")
		b.ReportMetric(float64(hour.lists+hour.gets)/float64(hour.floor), "requests/floor")
		b.ReportMetric(float64(hour.bytes)/(1<<20), "MiB-read/h")
		b.ReportMetric(float64(cold.bytes)/(1<<20), "first-pass-MiB")
		b.ReportMetric((hour.wall / time.Duration(steady)).Seconds(), "pass-wall-s")
		b.ReportMetric(cold.wall.Seconds(), "first-pass-wall-s")
		b.ReportMetric(hour.cpu.Seconds()/hour.wall.Seconds(), "cpu/wall")
		b.ReportMetric(float64(pk.inuse)/(1<<20), "peak-heap-MiB")
		if avg := hour.wall / time.Duration(steady); avg >= cold.wall {
			b.Fatalf("a pass after the first takes %s on average, no less than the first (%s) that read every record", avg, cold.wall)
		}
		if pk.inuse > churnHeapTarget {
			b.Fatalf("peak heap in use %d MiB, more than the %d MiB target", pk.inuse>>20, churnHeapTarget>>20)
		}
	}
}
