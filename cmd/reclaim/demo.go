//go:build demo

package main

// The demo links the cloud fakes and client-go's fake clientsets; it is built
// only with -tags demo (make demo), so the production binary and image carry
// none of them.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/demo"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/chart"
	"reclaim.dev/reclaim/notify/email"
	"reclaim.dev/reclaim/notify/report"
)

func demoCmd(stdout, stderr io.Writer) *cobra.Command {
	var out outputFlags
	var emailFiles, textfile string
	c := &cobra.Command{
		Use:   "demo",
		Short: "Dry-run against an embedded simulated fleet: a GCE fake and two clusters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			start := time.Now()
			rep, err := demo.Run(cmd.Context(), stderr, out.logger(io.Discard))
			if err != nil {
				return err
			}
			if textfile != "" {
				// As reclaim run writes them: what a dashboard and the
				// alert rules read, seen before anything is deployed.
				if err := exportMetrics(cmd.Context(), rep, time.Since(start), textfile, "", "", nil); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "demo: the run's Prometheus metrics are in %s (promtool check metrics < %[1]s).\n\n", textfile)
			}
			if emailFiles != "" {
				if err := writeDemoEmail(emailFiles, rep); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "demo: the report email's bodies are in %[1]s.html (open it in a browser) and %[1]s.txt, its charts in %[1]s-chart-*.png.\n\n", emailFiles)
			}
			return out.write(stdout, rep)
		},
	}
	out.add(c)
	c.Flags().StringVar(&emailFiles, "email-files", "", "also write the report email's bodies to PREFIX.html and PREFIX.txt, and its charts to PREFIX-chart-N.png")
	c.Flags().StringVar(&textfile, "metrics-textfile", "", "also write the demo run's Prometheus metrics to this file, as reclaim run does")
	return c
}

// writeDemoEmail writes the HTML and text bodies of the demo report's email
// to prefix.html and prefix.txt, as a first report to a target, and its
// charts to prefix-chart-N.png, which the HTML names by file name (a
// message carries them as its inline parts).
func writeDemoEmail(prefix string, rep *report.Report) error {
	cfg, err := config.Parse(config.Demo, "configs/demo.yaml")
	if err != nil {
		return err
	}
	nouns, optOut := kindWords(cfg)
	opt := emailOptions(cfg, 20, nouns, optOut)
	opt.Fleet = "demo"
	if next := nextRun(cfg); next != nil && rep.Plan != nil {
		opt.NextRun = next(rep.Plan.GeneratedAt)
	}
	chartFile := func(n int) string { return fmt.Sprintf("%s-chart-%d.png", prefix, n) }
	opt.ChartSrc = func(n int, _ chart.Chart) string { return filepath.Base(chartFile(n)) }
	c, err := email.Render(rep, notify.Previous{}, opt)
	if err != nil {
		return err
	}
	for i, ch := range c.Charts {
		if err := os.WriteFile(chartFile(i+1), ch.PNG, 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(prefix+".html", []byte(c.HTML), 0o644); err != nil {
		return err
	}
	return os.WriteFile(prefix+".txt", []byte(c.Text), 0o644)
}
