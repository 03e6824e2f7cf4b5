package daemon

import (
	"context"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/demo"
	"reclaim.dev/reclaim/internal/testenv"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/kinds/ec2interface"
	"reclaim.dev/reclaim/reconcile/kinds/ecrimage"
)

// daemonPasses is how many passes BenchmarkDaemonMemory runs, and
// settled the pass after which the heap is the baseline.
const (
	daemonPasses = 100
	settled      = 10
)

// BenchmarkDaemonMemory runs the daemon over the demo's simulated fleet
// (every kind, the fleet's clock an hour later each pass) for 100 passes
// back to back, and compares the live heap after pass 10 (clients, caches
// and the state's bounded histories filled) with the live heap after pass
// 100: a daemon that keeps anything per pass grows, one that does not stays
// flat. It reports live-growth-MiB and the ratio live@100 / live@10
// (target: at most 1.05).
//
// Run it with: go test ./internal/daemon -run '^$' -bench DaemonMemory -benchtime 1x
func BenchmarkDaemonMemory(b *testing.B) {
	for range b.N {
		b.StopTimer()
		base := time.Now().Truncate(time.Hour)
		var passes atomic.Int64
		ctx := context.Background()
		// The cloud clients unthrottled: a pass then takes about a second,
		// not the 2.5 the demo's rates make it.
		cfg, deps, done, err := demo.Start(ctx, io.Discard, zap.NewNop(), base, func(c *config.Config) {
			r := ecrimage.SectionOf(c)
			r.RequestsPerSecond, r.Burst = 1000, 1000
			e := ec2interface.SectionOf(c)
			e.RequestsPerSecond, e.Burst = 1000, 1000
		})
		if err != nil {
			b.Fatal(err)
		}
		deps.Now = func() time.Time { return base.Add(time.Duration(passes.Load()) * time.Hour) }
		r, err := app.New(ctx, cfg, deps)
		if err != nil {
			b.Fatal(err)
		}
		var live [daemonPasses + 1]uint64
		finished := make(chan struct{})
		p := passFunc(func(ctx context.Context, opt app.Options) (*report.Report, error) {
			// The heap between passes, with the last report held as the
			// daemon holds it for /report.
			n := passes.Load()
			switch n {
			case 1, settled, daemonPasses / 2, daemonPasses:
				live[n] = liveHeap()
			}
			if n == daemonPasses {
				close(finished)
				<-ctx.Done()
				return nil, ctx.Err()
			}
			defer passes.Add(1)
			return r.Once(ctx, opt)
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		dc := config.DefaultDaemon()
		if cfg.Daemon != nil {
			dc = *cfg.Daemon
		}
		dc.Jitter = config.Duration(0)
		d, err := New(p, dc, Options{Listener: ln, Schedule: every(time.Millisecond), Kinds: app.KindNames(), Gauges: app.Gauges(), Log: zap.NewNop()})
		if err != nil {
			b.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		b.StartTimer()
		start, cpu := time.Now(), testenv.CPUTime()
		go func() { errc <- d.Run(runCtx) }()
		select {
		case <-finished:
		case err := <-errc:
			b.Fatalf("daemon stopped after %d passes: %v", passes.Load(), err)
		}
		took, cpu := time.Since(start), testenv.CPUTime()-cpu
		b.StopTimer()
		cancel()
		<-errc
		r.Close()
		done()

		growth := int64(live[daemonPasses]) - int64(live[settled])
		ratio := float64(live[daemonPasses]) / float64(live[settled])
		b.ReportMetric(float64(growth)/(1<<20), "live-growth-MiB")
		b.ReportMetric(ratio, "live@100/live@10")
		b.ReportMetric(took.Seconds()/daemonPasses, "s/pass")
		b.ReportMetric(cpu.Seconds()/took.Seconds(), "cpu/wall")
		b.Logf("%d passes in %s; live heap after pass 1 %.1f MiB, 10 %.1f MiB, 50 %.1f MiB, 100 %.1f MiB: %+.2f MiB over the last 90 passes (%.3f×; target ≤ 1.05×)",
			daemonPasses, took.Round(time.Millisecond), mib(live[1]), mib(live[settled]), mib(live[50]), mib(live[daemonPasses]), float64(growth)/(1<<20), ratio)
		if ratio > 1.05 {
			b.Errorf("the daemon's live heap grew %.3f× from pass %d to pass %d: something is kept per pass", ratio, settled, daemonPasses)
		}
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
