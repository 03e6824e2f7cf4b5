package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	// The daemon's time zone must load in a distroless image without
	// /usr/share/zoneinfo: embed the database.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

// Daemon configures `reclaim daemon`: its schedule, its HTTP endpoints and
// its leader election. Nil when the file has no daemon section: `reclaim
// daemon` then uses DefaultDaemon, and `reclaim run` ignores it either way.
type Daemon struct {
	// Schedule is a five-field cron expression (minute hour day-of-month
	// month day-of-week) or a descriptor: @hourly, @daily, @every 30m.
	Schedule string `json:"schedule"`
	// TimeZone is the IANA zone Schedule is read in.
	TimeZone string `json:"timeZone"`
	// Jitter: each scheduled pass waits a random 0..Jitter first, so that
	// many installations do not call the cloud APIs in the same second.
	Jitter Duration `json:"jitter"`
	// RunOnStart runs a pass as soon as the daemon (or, with leader
	// election, a new leader) starts, without waiting for the schedule.
	RunOnStart bool `json:"runOnStart"`
	// Listen is the address of /metrics, /healthz, /readyz and /report.
	Listen string `json:"listen"`
	// ShutdownTimeout bounds a graceful shutdown: finishing the delete batch
	// in flight, saving state, releasing the lease, closing the HTTP server.
	ShutdownTimeout Duration       `json:"shutdownTimeout"`
	LeaderElection  LeaderElection `json:"leaderElection"`
}

// LeaderElection is the Kubernetes Lease that lets one of several replicas
// run passes.
type LeaderElection struct {
	Enabled bool `json:"enabled"`
	// Namespace of the Lease. Empty: the namespace the pod runs in.
	Namespace     string   `json:"namespace"`
	Name          string   `json:"name"`
	LeaseDuration Duration `json:"leaseDuration"`
	RenewDeadline Duration `json:"renewDeadline"`
	RetryPeriod   Duration `json:"retryPeriod"`
	// Kubeconfig reaches the cluster holding the Lease, with ~ expanded.
	// Empty: the pod's own service account (in-cluster).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
}

// Defaults of the daemon section.
const (
	defaultDaemonSchedule        = "@hourly"
	defaultDaemonTimeZone        = "UTC"
	defaultDaemonJitter          = Duration(0)
	defaultDaemonRunOnStart      = true
	defaultDaemonListen          = ":8080"
	defaultDaemonShutdownTimeout = Duration(25 * time.Second)
	defaultLeaseName             = "reclaim"
	defaultLeaseDuration         = Duration(15 * time.Second)
	defaultRenewDeadline         = Duration(10 * time.Second)
	defaultRetryPeriod           = Duration(2 * time.Second)
)

// DefaultDaemon is the daemon section with every default, for a file
// without one.
func DefaultDaemon() Daemon {
	c := &Config{Daemon: &Daemon{}}
	c.daemonDefaults()
	return *c.Daemon
}

func (c *Config) daemonDefaults() {
	d := c.Daemon
	if d == nil {
		return
	}
	def(c, "daemon.schedule", &d.Schedule, defaultDaemonSchedule)
	def(c, "daemon.timeZone", &d.TimeZone, defaultDaemonTimeZone)
	def(c, "daemon.jitter", &d.Jitter, defaultDaemonJitter)
	def(c, "daemon.runOnStart", &d.RunOnStart, defaultDaemonRunOnStart)
	def(c, "daemon.listen", &d.Listen, defaultDaemonListen)
	def(c, "daemon.shutdownTimeout", &d.ShutdownTimeout, defaultDaemonShutdownTimeout)
	le := &d.LeaderElection
	def(c, "daemon.leaderElection.name", &le.Name, defaultLeaseName)
	def(c, "daemon.leaderElection.leaseDuration", &le.LeaseDuration, defaultLeaseDuration)
	def(c, "daemon.leaderElection.renewDeadline", &le.RenewDeadline, defaultRenewDeadline)
	def(c, "daemon.leaderElection.retryPeriod", &le.RetryPeriod, defaultRetryPeriod)
}

func (d *Daemon) normalize(ps *problems) {
	v, err := expandHome(d.LeaderElection.Kubeconfig)
	if err != nil {
		ps.add("daemon.leaderElection.kubeconfig", "%v", err)
		return
	}
	d.LeaderElection.Kubeconfig = v
}

// cronParser reads the standard five fields and the descriptors, the same
// way cron.New's default parser does.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses a daemon schedule. A TZ= or CRON_TZ= prefix is
// refused (the zone is daemon.timeZone); the parser's panics are errors.
func ParseSchedule(spec string) (s cron.Schedule, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("is empty — write a cron expression such as \"0 * * * *\" or a descriptor such as @hourly")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, fmt.Errorf("%q carries its own time zone — remove the %s prefix and set daemon.timeZone instead", spec, spec[:strings.Index(spec, "=")+1])
	}
	defer func() {
		// robfig/cron v3.0.1 panics on some malformed input instead of
		// returning an error.
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("%q is not a cron schedule (%v) — write five fields (minute hour day-of-month month day-of-week) such as \"0 * * * *\", or @hourly, @daily, @every 30m", spec, p)
		}
	}()
	s, err = cronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%q is not a cron schedule (%v) — write five fields (minute hour day-of-month month day-of-week) such as \"0 * * * *\", or @hourly, @daily, @every 30m", spec, err)
	}
	return s, nil
}

// shortestGap is the shortest time between two of the schedule's next 200
// activations after from (0 if it never fires twice).
func shortestGap(s cron.Schedule, from time.Time) time.Duration {
	var gap time.Duration
	t := s.Next(from)
	for range 200 {
		n := s.Next(t)
		if n.IsZero() {
			break
		}
		if g := n.Sub(t); gap == 0 || g < gap {
			gap = g
		}
		t = n
	}
	return gap
}

func (d *Daemon) validate(ps *problems, path string) {
	sched, err := ParseSchedule(d.Schedule)
	if err != nil {
		ps.add(path+".schedule", "%v", err)
	}
	var loc *time.Location
	if d.TimeZone == "" {
		ps.add(path+".timeZone", "must not be empty — write an IANA zone such as UTC, Europe/Berlin or Asia/Tokyo")
	} else if l, err := time.LoadLocation(d.TimeZone); err != nil {
		ps.add(path+".timeZone", "%q is not a time zone — write an IANA zone such as UTC, Europe/Berlin or Asia/Tokyo", d.TimeZone)
	} else {
		loc = l
	}
	if sched != nil && loc != nil && d.Jitter > 0 {
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
		if gap := shortestGap(sched, from); gap > 0 && d.Jitter.Std() >= gap {
			ps.add(path+".jitter", "%s is not shorter than the %s between passes of %q — passes would be skipped; use a jitter well below the interval", d.Jitter, Duration(gap), d.Schedule)
		}
	}
	if host, port, err := net.SplitHostPort(d.Listen); err != nil {
		ps.add(path+".listen", "%q is not an address — write :8080 or 127.0.0.1:8080", d.Listen)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		ps.add(path+".listen", "%q has no valid port — write :8080 or %s:8080", d.Listen, host)
	}
	if d.ShutdownTimeout <= 0 {
		ps.add(path+".shutdownTimeout", "must be more than 0 — keep it below the pod's terminationGracePeriodSeconds (30s by default)")
	}
	d.LeaderElection.validate(ps, path+".leaderElection")
}

func (le *LeaderElection) validate(ps *problems, path string) {
	if le.Namespace != "" {
		if errs := content.IsDNS1123Label(le.Namespace); len(errs) > 0 {
			ps.add(path+".namespace", "%q is not a valid namespace — %s", le.Namespace, strings.Join(errs, "; "))
		}
	} else if le.Enabled && le.Kubeconfig != "" {
		ps.add(path+".namespace", "is required with kubeconfig — only in a pod is the namespace known")
	}
	if le.Name == "" {
		ps.add(path+".name", "must not be empty — the Lease's name, such as reclaim")
	} else if errs := content.IsDNS1123Subdomain(le.Name); len(errs) > 0 {
		ps.add(path+".name", "%q is not a valid Lease name — %s", le.Name, strings.Join(errs, "; "))
	}
	if le.Context != "" && le.Kubeconfig == "" {
		ps.add(path+".context", "only meaningful with kubeconfig — without it the pod's service account is used")
	}
	ok := true
	for _, f := range []struct {
		name string
		d    Duration
	}{{"leaseDuration", le.LeaseDuration}, {"renewDeadline", le.RenewDeadline}, {"retryPeriod", le.RetryPeriod}} {
		if f.d <= 0 {
			ps.add(path+"."+f.name, "must be more than 0")
			ok = false
		}
	}
	if !ok {
		return
	}
	if le.LeaseDuration <= le.RenewDeadline {
		ps.add(path+".renewDeadline", "%s must be less than leaseDuration (%s) — a leader must give up before others may take over", le.RenewDeadline, le.LeaseDuration)
	}
	// client-go refuses renewDeadline <= 1.2 × retryPeriod (its JitterFactor).
	if float64(le.RenewDeadline) <= 1.2*float64(le.RetryPeriod) {
		ps.add(path+".retryPeriod", "%s is too long for renewDeadline %s — renewDeadline must be more than 1.2 × retryPeriod (defaults 10s and 2s)", le.RetryPeriod, le.RenewDeadline)
	}
}
