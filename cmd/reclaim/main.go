// Command reclaim garbage-collects the cloud resources Kubernetes fleets leak.
// This file is wiring only: the work is in internal/app and the packages it calls.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/inventory/kube"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/metrics"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
)

// exitError carries an exit status through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// exitUsage is the exit status of a command line reclaim cannot parse (an
// unknown flag or command, a missing argument): a script can tell it from
// a bad config (1) and fix the call, not the file.
const exitUsage = 2

// exitCode is the exit status for what a command returned; it prints the
// error when the command did not.
func exitCode(err error, stderr io.Writer) int {
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command"):
		fmt.Fprintln(stderr, "reclaim:", err)
		fmt.Fprintln(stderr, "Run 'reclaim --help' for usage.")
		return exitUsage
	default:
		fmt.Fprintln(stderr, "reclaim:", err)
		return report.ExitError
	}
}

// usageError is a command line reclaim cannot parse.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// asUsage marks cobra's own parse errors (flags, arguments, commands) as
// usage errors, on c and every command under it.
func asUsage(c *cobra.Command) {
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		asUsage(sub)
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot(os.Stdout, os.Stderr).ExecuteContext(ctx)
	stop()
	if code := exitCode(err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "reclaim",
		Short:         "Garbage-collect the cloud resources Kubernetes fleets leak",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	versionFlag(root, stdout)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(runCmd(stdout, stderr), agentCmd(stdout, stderr), demoCmd(stdout, stderr), configCmd(stdout), versionCmd(stdout))
	root.AddCommand(notifyCmd(stdout, stderr))
	root.AddCommand(daemonCmd(stdout, stderr))
	asUsage(root)
	return root
}

type outputFlags struct {
	format  string
	verbose bool
	logJSON bool
}

func (o *outputFlags) add(c *cobra.Command) {
	c.Flags().StringVarP(&o.format, "output", "o", "text", "report format: text or json")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "list every kept resource in the text report")
	c.Flags().BoolVar(&o.logJSON, "log-json", false, "write logs to stderr as JSON (for log collectors)")
}

func (o *outputFlags) check() error {
	if o.format != "text" && o.format != "json" {
		return fmt.Errorf("--output %q: use text or json", o.format)
	}
	return nil
}

func (o *outputFlags) logger(stderr io.Writer) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	var encoder zapcore.Encoder = zapcore.NewConsoleEncoder(enc)
	if o.logJSON {
		encoder = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.AddSync(stderr), zap.InfoLevel))
}

func (o *outputFlags) write(w io.Writer, r *report.Report) error {
	if o.format == "json" {
		return r.JSON(w)
	}
	max := 3
	if o.verbose {
		max = -1
	}
	return r.Text(w, report.TextOptions{MaxKept: max})
}

func runCmd(stdout, stderr io.Writer) *cobra.Command {
	return passCmd(stdout, stderr, false)
}

// agentCmd is run's twin in each cluster: the same pass over its own
// cluster, publishing the cluster's record for the deleters.
func agentCmd(stdout, stderr io.Writer) *cobra.Command {
	c := passCmd(stdout, stderr, true)
	c.Use = "agent"
	c.Short = "Read this cluster, publish what it uses to fleet.records, and run its in-cluster kinds"
	c.Long = `Run one agent pass, in the cluster the config's one clusters[] entry names
(inCluster: true in a pod): read what the cluster uses with the same
collector, reads and taps as reclaim run, publish it as the cluster's record
to fleet.records (one object in S3 or GCS, replaced whole), then plan and (with
--apply) delete the kinds that need no other cluster's view: finished Jobs
and Pods, workflow PVCs. A deleter with the same fleet.records reads the
record instead of the cluster's API server.

The agent needs read-only RBAC in its cluster (plus delete on Jobs, Pods and
PVCs for --apply) and the right to write its own record's key (S3:
s3:PutObject; GCS: storage.objects.create, and delete to replace it);
nothing else.

Exit status: as reclaim run's; 1 also when the record could not be published.`
	return c
}

func passCmd(stdout, stderr io.Writer, agent bool) *cobra.Command {
	var (
		cfgPath  string
		apply    bool
		out      outputFlags
		textfile string
		pushURL  string
		pushJob  string
		only     engine.Filter
		outside  bool
	)
	c := &cobra.Command{
		Use:   "run",
		Short: "Run one pass: collect, plan, and (with --apply) delete; dry-run by default",
		Long: `Run one pass over every configured cluster and cloud project.

Without --apply nothing is deleted and nothing in any cloud or cluster is
changed: reclaim prints what it would do and records orphan first-seen times
in its own state store, so that grace periods run while you watch.

--kind and --cluster narrow what --apply deletes, to apply one kind or one
cluster first: everything is still planned and reported, and the due
deletions they leave out are held (and stay due). A cloud resource (a disk,
an image, an interface) belongs to no one cluster and is held under --cluster.

Exit status: 0 all sources complete and every planned delete done;
1 the run could not happen; 2 the command line could not be parsed;
3 deletions were held back (a source was incomplete, or the breaker
tripped); 4 some deletes failed; 5 the report could not be delivered to
some notify target (4 outranks 5, 5 outranks 3).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			cfg, err := config.Load(cfgPath)
			if err != nil {
				return err
			}
			log := out.logger(stderr)
			defer log.Sync()
			start := time.Now()
			var rep *report.Report
			r, runErr := app.New(cmd.Context(), cfg, app.Deps{Log: log, Agent: agent, OutsideCluster: outside})
			if runErr == nil {
				defer r.Close()
				rep, runErr = r.Once(cmd.Context(), app.Options{Apply: apply, Only: only})
			}
			// Delivery failures never fail the run: they set exit status 5.
			notified := deliver(cmd.Context(), cfg, rep, log)
			announce(cmd.Context(), r, rep, notified, log)
			// Metrics go out even when the run failed: that is when they matter.
			if textfile != "" || pushURL != "" {
				mrep := rep
				if mrep == nil {
					mrep = &report.Report{Mode: modeOf(apply), ExitCode: report.ExitError}
				}
				if err := exportMetrics(cmd.Context(), mrep, time.Since(start), textfile, pushURL, pushJob, notified); err != nil {
					log.Warn("metrics not exported", zap.Error(err))
				}
			}
			if runErr != nil {
				return runErr
			}
			if err := out.write(stdout, rep); err != nil {
				return err
			}
			if rep.ExitCode != 0 {
				return exitError{rep.ExitCode}
			}
			return nil
		},
	}
	c.Flags().StringVarP(&cfgPath, "config", "c", "reclaim.yaml", "configuration file")
	c.Flags().BoolVar(&apply, "apply", false, "delete what the plan marks DELETE (default: dry-run)")
	c.Flags().StringSliceVar(&only.Kinds, "kind", nil, "delete only resources of these kinds (e.g. k8s-job,k8s-pod); the rest is reported and held")
	c.Flags().StringSliceVar(&only.Clusters, "cluster", nil, "delete only objects in these clusters; the rest, cloud resources included, is reported and held")
	c.Flags().StringVar(&textfile, "metrics-textfile", "", "write Prometheus metrics to this file (node-exporter textfile collector; name it *.prom)")
	c.Flags().StringVar(&pushURL, "pushgateway", "", "push Prometheus metrics to this Pushgateway URL after the run")
	c.Flags().StringVar(&pushJob, "pushgateway-job", "reclaim", "job label for --pushgateway")
	if agent {
		c.Flags().BoolVar(&outside, "outside-cluster", false, "read the cluster through the config's kubeconfig rather than from inside it (inCluster: true), on purpose: a config alone never allows it")
	}
	out.add(c)
	return c
}

func modeOf(apply bool) string {
	if apply {
		return "apply"
	}
	return "dry-run"
}

func exportMetrics(ctx context.Context, rep *report.Report, d time.Duration, textfile, pushURL, job string, notified []notify.Result) error {
	reg := prometheus.NewRegistry()
	m := metrics.NewMetrics(reg, app.KindNames(), app.Gauges())
	rev, _ := app.Revision()
	reg.MustRegister(metrics.BuildInfo(app.Version, rev))
	m.Observe(rep, d, time.Now())
	observeDeliveries(m, notified)
	var errs []error
	if textfile != "" {
		errs = append(errs, metrics.WriteTextfile(textfile, reg))
	}
	if pushURL != "" {
		errs = append(errs, metrics.Push(ctx, pushURL, job, reg))
	}
	return errors.Join(errs...)
}

func configCmd(stdout io.Writer) *cobra.Command {
	c := &cobra.Command{Use: "config", Short: "Work with configuration files"}
	var (
		print, offline, agent, outside bool
		cfgPath                        string
	)
	check := &cobra.Command{
		Use:   "check [--config FILE | FILE]",
		Short: "Check a configuration file and report every problem with its field path",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := cfgPath
			switch {
			case len(args) == 1 && cmd.Flags().Changed("config") && args[0] != cfgPath:
				return usageError{fmt.Errorf("two files to check: --config %s and %s; give one", cfgPath, args[0])}
			case len(args) == 1:
				path = args[0]
			}
			cfg, err := config.Load(path)
			if err != nil {
				return err
			}
			if _, err := app.Routes(cfg); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if err := app.CheckRole(cfg, agent, outside); err != nil {
				if !agent {
					err = fmt.Errorf("%w; an agent's config? check it with --agent", err)
				}
				return fmt.Errorf("%s: %w", path, err)
			}
			// Every kubeconfig and context the clusters name must load now:
			// found missing at the first hourly run, each run would exit 3.
			var unreachable []string
			for _, t := range app.Targets(cfg) {
				if t.InCluster || offline {
					continue
				}
				if _, err := kube.RESTConfig(t); err != nil {
					unreachable = append(unreachable, "  "+err.Error())
				}
			}
			if len(unreachable) > 0 {
				return fmt.Errorf("%s: the configuration is valid, but %d of its clusters cannot be reached as configured:\n%s",
					path, len(unreachable), strings.Join(unreachable, "\n"))
			}
			for _, w := range cfg.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: warning: %s\n", path, w)
			}
			if print {
				b, err := cfg.Redacted()
				if err != nil {
					return err
				}
				_, err = stdout.Write(b)
				return err
			}
			fleet := fmt.Sprintf("%d clusters", len(cfg.Clusters))
			if f := cfg.Fleet; f.Discovers() {
				fleet += fmt.Sprintf(", more discovered in %d GKE project(s) and %d EKS account/region(s)", len(f.GKE.Projects), len(f.EKS))
			}
			fmt.Fprintf(stdout, "%s: ok (%s; kinds: %s)\n", path, fleet, strings.Join(app.Enabled(cfg), ", "))
			return nil
		},
	}
	check.Flags().StringVarP(&cfgPath, "config", "c", "reclaim.yaml", "configuration file (as for run); a FILE argument does the same")
	check.Flags().BoolVar(&offline, "offline", false, "check the file alone, not that every kubeconfig and context it names loads (a CI pipeline without the credentials)")
	check.Flags().BoolVar(&agent, "agent", false, "check the file as reclaim agent reads it (with fleet.records: exactly its own cluster), not as reclaim run does (with fleet.records: no cluster dialled)")
	check.Flags().BoolVar(&outside, "outside-cluster", false, "with --agent: the agent runs with --outside-cluster (reads its cluster through the kubeconfig, not from inside it)")
	check.Flags().BoolVar(&print, "print", false, "print the effective configuration with defaults applied (secrets redacted)")
	c.AddCommand(check)
	return c
}

func versionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { fmt.Fprintln(stdout, "reclaim", version()) },
	}
}

// versionFlag answers --version (-v) with "reclaim VERSION", as the version
// command does. Not cobra's Version field: its output other than "reclaim
// version VERSION" needs SetVersionTemplate, and a text/template executed
// by reflection turns off the linker's dead-method elimination for the
// whole binary. Cobra calls the help function when the root, which cannot
// run, is called; the flag is answered there.
func versionFlag(root *cobra.Command, stdout io.Writer) {
	v := root.Flags().BoolP("version", "v", false, "version for reclaim")
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if asked, _ := c.Flags().GetBool("help"); c == root && *v && !asked {
			fmt.Fprintln(stdout, "reclaim", version())
			return
		}
		help(c, args)
	})
}

// version is the release (set at build time) and, when the binary was built
// from a git checkout, its commit.
func version() string {
	rev, dirty := app.Revision()
	if rev == "" {
		return app.Version
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return app.Version + " (" + rev + ")"
}
