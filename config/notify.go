package config

import (
	"net"
	"net/url"
	"strings"
)

// Notify says where each run's report is delivered (Slack incoming webhooks;
// email targets are to come beside them) and when. Nil when the file has no
// notify section: nothing is delivered.
type Notify struct {
	// Fleet names the fleet in every message ("prod"); empty leaves it out.
	Fleet string `json:"fleet,omitempty"`
	// ReportURL is a link to the full report (a dashboard, a bucket); messages
	// link to it when it is set.
	ReportURL string `json:"reportURL,omitempty"`
	// StateFile keeps, per target, the fingerprint of the last report
	// delivered there (for when: changes). Default: <state.file>.notify.json,
	// or reclaim-notify.json when the state is a ConfigMap.
	StateFile string `json:"stateFile"`
	// Slack are incoming-webhook targets.
	Slack []SlackTarget `json:"slack"`
}

// SlackTarget is one Slack incoming webhook.
type SlackTarget struct {
	// Name is unique among the notify targets; logs and metrics name the
	// target by it, never by its URL.
	Name string `json:"name"`
	// WebhookURL is the webhook's URL: a secret, written {env: NAME} or {file: /path}.
	WebhookURL Secret `json:"webhookURL"`
	// When is always, changes (the default) or warnings.
	When string `json:"when"`
	// MaxRows is how many rows each list of a message shows (warnings, each
	// kind's deletions) before "+N more".
	MaxRows int `json:"maxRows"`
}

// When a target is sent a report.
const (
	// NotifyAlways: every run.
	NotifyAlways = "always"
	// NotifyChanges: when what would be deleted or marked differs from the
	// last report delivered to the target, or when there is a warning.
	NotifyChanges = "changes"
	// NotifyWarnings: only when there is a warning or a held-back note.
	NotifyWarnings = "warnings"
)

// Defaults of the notify section.
const (
	defaultNotifyWhen        = NotifyChanges
	defaultNotifyMaxRows     = 20
	maxNotifyRows            = 500
	defaultNotifyStateSuffix = ".notify.json"
	defaultNotifyStateFile   = "reclaim-notify.json"
	maxFleetName             = 60
	maxReportURL             = 3000 // Slack's limit on a button's url
)

func (c *Config) notifyDefaults() {
	n := c.Notify
	if n == nil {
		return
	}
	stateFile := defaultNotifyStateFile
	if c.State.File != "" && c.State.ConfigMap == nil {
		stateFile = c.State.File + defaultNotifyStateSuffix
	}
	def(c, "notify.stateFile", &n.StateFile, stateFile)
	for i := range n.Slack {
		t, p := &n.Slack[i], index("notify.slack", i)
		def(c, p+".when", &t.When, defaultNotifyWhen)
		def(c, p+".maxRows", &t.MaxRows, defaultNotifyMaxRows)
	}
}

func (n *Notify) normalize(ps *problems) {
	v, err := expandHome(n.StateFile)
	if err != nil {
		ps.add("notify.stateFile", "%v", err)
		return
	}
	n.StateFile = v
}

func (n *Notify) validate(ps *problems, path string) {
	if len(n.Slack) == 0 {
		ps.add(path, "no targets — add slack: [{name: ..., webhookURL: {env: NAME}}], or remove the notify section")
	}
	if len(n.Fleet) > maxFleetName {
		ps.add(path+".fleet", "is %d characters — at most %d, it goes in every message's header", len(n.Fleet), maxFleetName)
	}
	if n.ReportURL != "" {
		u, err := url.Parse(n.ReportURL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			ps.add(path+".reportURL", "%q is not an absolute http(s) URL — write e.g. https://reports.example.com/reclaim/latest.html", n.ReportURL)
		case len(n.ReportURL) > maxReportURL:
			ps.add(path+".reportURL", "is %d characters — Slack takes links of at most %d", len(n.ReportURL), maxReportURL)
		}
	}
	if n.StateFile == "" {
		ps.add(path+".stateFile", "must not be empty — remove the key for the default next to state.file")
	}
	first := map[string]int{}
	for i := range n.Slack {
		t, p := &n.Slack[i], index(path+".slack", i)
		switch {
		case t.Name == "":
			ps.add(p+".name", "is required — a short name such as ops-alerts; logs and metrics use it instead of the URL")
		case len(t.Name) > 63 || !dnsLabel.MatchString(t.Name):
			ps.add(p+".name", "%q is not a valid target name — %s", t.Name, clusterHint)
		default:
			if j, dup := first[t.Name]; dup {
				ps.add(p+".name", "%q is already the name of %s — target names are unique", t.Name, index(path+".slack", j))
			} else {
				first[t.Name] = i
			}
		}
		if t.WebhookURL.IsZero() {
			ps.add(p+".webhookURL", "is required — "+secretHint)
		} else if msg := webhookURLProblem(t.WebhookURL.Value()); msg != "" {
			// Never the value: it is the secret.
			ps.add(p+".webhookURL", "the URL in %s %s", t.WebhookURL.Source(), msg)
		}
		switch t.When {
		case NotifyAlways, NotifyChanges, NotifyWarnings:
		default:
			ps.add(p+".when", "%q is not one of always, changes, warnings", t.When)
		}
		if t.MaxRows < 1 || t.MaxRows > maxNotifyRows {
			ps.add(p+".maxRows", "%d is out of range — use 1 to %d", t.MaxRows, maxNotifyRows)
		}
	}
}

// webhookURLProblem says what is wrong with a webhook URL, without quoting
// it: https with a host, or plain http only to this machine (a test receiver).
func webhookURLProblem(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "is not an absolute URL — it looks like https://hooks.slack.com/services/T000/B000/XXXX"
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		if h := u.Hostname(); h == "localhost" || net.ParseIP(h).IsLoopback() {
			return ""
		}
		return "uses http — webhook URLs carry their own credential, so only https is allowed (http only to localhost or 127.0.0.1, for tests)"
	}
	return "is not an https URL — it looks like https://hooks.slack.com/services/T000/B000/XXXX"
}
