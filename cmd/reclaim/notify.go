package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/email"
	"reclaim.dev/reclaim/notify/metrics"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/notify/slack"
	"reclaim.dev/reclaim/reconcile/kinds/kind"
)

// slackClient is how targets reach Slack; tests shorten its waits.
var slackClient = func(url string) *slack.Client { return &slack.Client{URL: url} }

// notifyTargets builds the notify section's targets, in file order: the
// Slack targets, then the email targets.
func notifyTargets(cfg *config.Config) []notify.Target {
	n := cfg.Notify
	if n == nil {
		return nil
	}
	nouns, optOut := kindWords(cfg)
	owners := n.RoutedOwners()
	var out []notify.Target
	for _, s := range n.Slack {
		out = append(out, &slack.Target{TargetName: s.Name, Policy: notify.When(s.When), Client: slackClient(s.WebhookURL.Value()),
			Options: slack.Options{Fleet: heading(n.Fleet, owners[s.Name]), ReportURL: n.ReportURL, MaxRows: s.MaxRows, Nouns: nouns}, Spool: n.Spool})
	}
	next := nextRun(cfg)
	for _, e := range n.Email {
		o := emailOptions(cfg, e.MaxRows, nouns, optOut)
		o.Fleet = heading(o.Fleet, owners[e.Name])
		out = append(out, &email.Target{TargetName: e.Name, Policy: notify.When(e.When), Spool: n.Spool, NextRun: next,
			Server: email.Server{Host: e.Host, Port: e.Port, TLS: e.TLS, Username: e.Username, Password: e.Password.Value(),
				Auth: e.Auth, From: e.From, To: e.To},
			Options: o})
	}
	return out
}

// heading names the fleet and, for a routed target, the owners its
// reports are cut to: "prod · data-eng".
func heading(fleet string, owners []string) string {
	if len(owners) == 0 {
		return fleet
	}
	return strings.TrimPrefix(fleet+" · "+strings.Join(owners, ", "), " · ")
}

// emailOptions shape the report email of a config.
func emailOptions(cfg *config.Config, maxRows int, nouns, optOut map[string]string) email.Options {
	o := email.Options{MaxRows: maxRows, Nouns: nouns, OptOut: optOut}
	if n := cfg.Notify; n != nil {
		o.Fleet, o.ReportURL = n.Fleet, n.ReportURL
	}
	return o
}

// nextRun gives when the run after a report is due, from daemon.schedule
// (the default, @hourly, without a daemon section); nil if it cannot tell.
func nextRun(cfg *config.Config) func(time.Time) time.Time {
	d := config.DefaultDaemon()
	if cfg.Daemon != nil {
		d = *cfg.Daemon
	}
	s, err := config.ParseSchedule(d.Schedule)
	if err != nil {
		return nil
	}
	loc, err := time.LoadLocation(d.TimeZone)
	if err != nil {
		return nil
	}
	return func(after time.Time) time.Time { return s.Next(after.In(loc)).UTC() }
}

// kindWords gives, per enabled kind, the noun of its resources and how a
// person keeps one (its limits' Noun, and its OptOut: report.OptOuter); kinds are pure values
// until they are given clients, so none are.
func kindWords(cfg *config.Config) (nouns, optOut map[string]string) {
	nouns, optOut = map[string]string{}, map[string]string{}
	for _, m := range app.On(cfg) {
		k := m.New(cfg, &kind.Clients{})
		if k == nil {
			continue
		}
		if l := k.Limits(); l.Noun != "" {
			nouns[k.Name()] = l.Noun
		}
		if o, ok := k.(report.OptOuter); ok && o.OptOut() != "" {
			optOut[k.Name()] = o.OptOut()
		}
	}
	return nouns, optOut
}

// deliver sends the report to every notify target and, if some target was
// delivered nothing, sets the report's exit status to 5 (unless 4 or 1
// outranks it). The run itself is never failed by a delivery.
func deliver(ctx context.Context, cfg *config.Config, rep *report.Report, log *zap.Logger) []notify.Result {
	ts := notifyTargets(cfg)
	if len(ts) == 0 || rep == nil {
		return nil
	}
	d := &notify.Deliverer{Targets: ts, Owners: cfg.Notify.RoutedOwners(), StateFile: cfg.Notify.StateFile, Log: log, Now: time.Now}
	rs := d.Deliver(ctx, rep)
	if notify.AnyFailed(rs) {
		rep.ExitCode = report.NotifyFailed(rep.ExitCode)
	}
	return rs
}

// announce records, for each report that reached a person (a target sent
// it: the whole report, or an owner's cut of it), that its candidates were
// announced: notify.requireNotice counts the notice from now. Without a
// delivery nothing is recorded, so deletion waits.
func announce(ctx context.Context, r *app.Runner, rep *report.Report, rs []notify.Result, log *zap.Logger) {
	if r == nil || rep == nil {
		return
	}
	var as []app.Announced
	seen := map[*report.Report]bool{} // targets sent one cut share it: one record each
	for _, res := range rs {
		if res.Result == notify.Sent {
			sent := res.Report
			if sent == nil {
				sent = rep
			}
			if !seen[sent] {
				seen[sent] = true
				as = append(as, app.Announced{Report: sent, Owners: res.Owners})
			}
		}
	}
	if err := r.Announce(ctx, time.Now(), as...); err != nil {
		log.Warn("could not record that the report was announced; its candidates wait for the next delivered report", zap.Error(err))
	}
}

// observeDeliveries counts each target's delivery (every result starts at 0).
func observeDeliveries(m *metrics.Metrics, rs []notify.Result) {
	for _, r := range rs {
		m.NotifyTargets([]string{r.Target}, notify.ResultValues)
		m.ObserveDelivery(r.Target, r.Result)
	}
}

func notifyCmd(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{Use: "notify", Short: "Work with the notify targets (Slack, email)"}
	var cfgPath string
	test := &cobra.Command{
		Use:   "test",
		Short: "Send a short test message to every notify target and say which worked",
		Long: `Send a short test message to every target of the notify section and print,
per target, whether it worked (with Slack's own error word, or the SMTP
server's answer, when it did not).
Exit status: 0 every target worked; 5 some target failed; 1 no targets, or
the configuration is unusable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(cfgPath)
			if err != nil {
				return err
			}
			for _, w := range cfg.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: warning: %s\n", cfgPath, w)
			}
			ts := notifyTargets(cfg)
			if len(ts) == 0 {
				return fmt.Errorf("%s has no notify targets — add a notify section with slack: [{name: ..., webhookURL: {env: NAME}}] or email: [{name: ..., host: ..., from: ..., to: [...]}]", cfgPath)
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
