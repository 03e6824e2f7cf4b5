package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"reclaim.dev/reclaim/config"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/metrics"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/slack"
	"reclaim.dev/reclaim/report"
)

// slackClient is how targets reach Slack; tests shorten its waits.
var slackClient = func(url string) *slack.Client { return &slack.Client{URL: url} }

// notifyTargets builds the notify section's targets, in file order.
func notifyTargets(cfg *config.Config) []notify.Target {
	n := cfg.Notify
	if n == nil {
		return nil
	}
	nouns := kindNouns(cfg)
	var out []notify.Target
	for _, s := range n.Slack {
		out = append(out, &slack.Target{TargetName: s.Name, Policy: notify.When(s.When), Client: slackClient(s.WebhookURL.Value()),
			Options: slack.Options{Fleet: n.Fleet, ReportURL: n.ReportURL, MaxRows: s.MaxRows, Nouns: nouns}})
	}
	return out
}

// kindNouns names each enabled kind's resources ("disks", "images") from its
// limits; kinds are pure values until they are given clients, so none are.
func kindNouns(cfg *config.Config) map[string]string {
	out := map[string]string{}
	for _, r := range app.Registered {
		if k := r.New(cfg, &app.Clients{}); k != nil && k.Limits().Noun != "" {
			out[k.Name()] = k.Limits().Noun
		}
	}
	return out
}

// deliver sends the report to every notify target and, if some target was
// delivered nothing, sets the report's exit status to 5 (unless 4 or 1
// outranks it). The run itself is never failed by a delivery.
func deliver(ctx context.Context, cfg *config.Config, rep *report.Report, log *zap.Logger) []notify.Result {
	ts := notifyTargets(cfg)
	if len(ts) == 0 || rep == nil {
		return nil
	}
	d := &notify.Deliverer{Targets: ts, StateFile: cfg.Notify.StateFile, Log: log, Now: time.Now}
	rs := d.Deliver(ctx, rep)
	if notify.AnyFailed(rs) {
		rep.ExitCode = report.NotifyFailed(rep.ExitCode)
	}
	return rs
}

// observeDeliveries counts each target's delivery (every result starts at 0).
func observeDeliveries(m *metrics.Metrics, rs []notify.Result) {
	for _, r := range rs {
		m.NotifyTargets([]string{r.Target}, notify.ResultValues)
		m.ObserveDelivery(r.Target, r.Result)
	}
}

func notifyCmd(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{Use: "notify", Short: "Work with the notify targets (Slack)"}
	var cfgPath string
	test := &cobra.Command{
		Use:   "test",
		Short: "Send a short test message to every notify target and say which worked",
		Long: `Send a short test message to every target of the notify section and print,
per target, whether it worked (with Slack's own error word when it did not).
Exit status: 0 every target worked; 5 some target failed; 1 no targets, or
the configuration is unusable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(cfgPath)
			if err != nil {
				return err
			}
			ts := notifyTargets(cfg)
			if len(ts) == 0 {
				return fmt.Errorf("%s has no notify targets — add a notify section with slack: [{name: ..., webhookURL: {env: NAME}}]", cfgPath)
			}
			failed := 0
			for _, t := range ts {
				if err := t.Test(cmd.Context()); err != nil {
					failed++
					fmt.Fprintf(stdout, "%s %s: FAILED: %v\n", t.Type(), t.Name(), err)
					continue
				}
				fmt.Fprintf(stdout, "%s %s: ok\n", t.Type(), t.Name())
			}
			if failed > 0 {
				fmt.Fprintf(stderr, "reclaim: %d of %d notify targets failed\n", failed, len(ts))
				return exitError{report.ExitNotifyFailed}
			}
			return nil
		},
	}
	test.Flags().StringVarP(&cfgPath, "config", "c", "reclaim.yaml", "configuration file")
	c.AddCommand(test)
	return c
}
