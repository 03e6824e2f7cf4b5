package main

import (
	"context"
	"encoding/base64"
	"io"
	"sync"

	"github.com/spf13/cobra"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/daemon"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/chart"
	"reclaim.dev/reclaim/notify/email"
	"reclaim.dev/reclaim/notify/metrics"
	"reclaim.dev/reclaim/notify/report"
)

func daemonCmd(_, stderr io.Writer) *cobra.Command {
	var (
		cfgPath string
		apply   bool
		logJSON bool
		listen  string
		agent   bool
	)
	c := &cobra.Command{
		Use:   "daemon",
		Short: "Run passes on the daemon.schedule, behind a Lease, serving /metrics, /healthz, /readyz and /report",
		Long: `Run reclaim as a long-lived process: clients are built once, then a pass
runs on the cron schedule of the daemon section (and once at start), never two
at a time. With daemon.leaderElection.enabled only the replica holding the
Lease runs passes; the others stand by, ready to take over.

With --agent (and fleet.records) it is a watching agent: instead of the
schedule, it watches what its pass reads (pods, PVs, PVCs, nodes,
namespaces, workloads, ReplicaSets, ControllerRevisions, Jobs, CronJobs)
and runs a pass, publishing the cluster's record, 15s after a change (a
burst makes one) and every fleet.records.heartbeat when nothing changes.
Deleters delete only on records newer than fleet.records.deleteMaxAge.

Without --apply every pass is a dry-run. On SIGTERM no new delete batch
starts, the batch in flight finishes, state is saved, the Lease is released
and the process exits 0, all within daemon.shutdownTimeout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(cfgPath)
			if err != nil {
				return err
			}
			dc := config.DefaultDaemon()
			if cfg.Daemon != nil {
				dc = *cfg.Daemon
			}
			if cmd.Flags().Changed("listen") {
				dc.Listen = listen
			}
			log := (&outputFlags{logJSON: logJSON}).logger(stderr)
			defer log.Sync()
			r, err := app.New(cmd.Context(), cfg, app.Deps{Log: log, Agent: agent})
			if err != nil {
				return err
			}
			defer r.Close()
			notifyTo := func(ctx context.Context, rep *report.Report, m *metrics.Metrics) {
				rs := deliver(ctx, cfg, rep, log)
				announce(ctx, r, rep, rs, log)
				observeDeliveries(m, rs)
			}
			o := daemon.Options{Apply: apply, Kinds: app.KindNames(), Gauges: app.Gauges(), Log: log, Deliver: notifyTo, HTML: reportPage(cfg)}
			if agent && cfg.Fleet.Records != nil {
				// Watch mode: publish within a minute of a change, and
				// every heartbeat, so deleters may delete on the record.
				o.Watch, o.Heartbeat, o.Debounce = r.Watch, cfg.Fleet.Records.Heartbeat.Std(), daemon.DefaultDebounce
			}
			d, err := daemon.New(r, dc, o)
			if err != nil {
				return err
			}
			return d.Run(cmd.Context())
		},
	}
	c.Flags().StringVarP(&cfgPath, "config", "c", "reclaim.yaml", "configuration file")
	c.Flags().BoolVar(&agent, "agent", false, "each pass is reclaim agent's: read this cluster, publish its record to fleet.records, run its in-cluster kinds; passes run on change and every fleet.records.heartbeat, not on the schedule")
	c.Flags().BoolVar(&apply, "apply", false, "the leader's passes delete what their plans mark DELETE (default: dry-run)")
	c.Flags().BoolVar(&logJSON, "log-json", false, "write logs to stderr as JSON (for log collectors)")
	c.Flags().StringVar(&listen, "listen", "", "address of the HTTP endpoints (overrides daemon.listen)")
	return c
}

// reportPage renders a report as the daemon's page and /report?format=html
// serve it: the report email's HTML body, as a first report to a target.
// The last report's page is kept: its charts are drawn once, not at every
// request.
func reportPage(cfg *config.Config) func(*report.Report) (string, error) {
	nouns, optOut := kindWords(cfg)
	var mu sync.Mutex
	var last *report.Report
	var page string
	return func(rep *report.Report) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if rep == last && last != nil {
			return page, nil
		}
		opt := emailOptions(cfg, 50, nouns, optOut)
		if next := nextRun(cfg); next != nil && rep.Plan != nil {
			opt.NextRun = next(rep.Plan.GeneratedAt)
		}
		// A page has no inline parts: its charts are data: URLs.
		opt.ChartSrc = func(_ int, c chart.Chart) string {
			return "data:image/png;base64," + base64.StdEncoding.EncodeToString(c.PNG)
		}
		c, err := email.Render(rep, notify.Previous{}, opt)
		if err != nil {
			return "", err
		}
		last, page = rep, c.HTML
		return page, nil
	}
}
