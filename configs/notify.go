package config

import (
	"net"
	"net/mail"
	"net/url"
	"path/filepath"
	"strings"
)

// Notify says where each run's report is delivered (Slack incoming webhooks,
// email over SMTP) and when. Nil when the file has no
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
	// Spool is a directory where a report that could not be delivered is
	// kept (an email as a .eml file, a Slack report as its messages in
	// JSON), per target, until a later run sends it. Default: the
	// directory of stateFile, subdirectory reclaim-spool.
	Spool string `json:"spool"`
	// RequireNotice: a candidate is deleted only after a report listing it
	// was delivered to at least one target at least its grace period
	// earlier. A failed delivery delays deletion, never the other way round.
	// Default: on, as a notify section has a target: nobody is surprised by
	// a delete they could have been told about. Without a notify section
	// there is nobody to tell, and nothing waits.
	RequireNotice bool `json:"requireNotice"`
	// Slack are incoming-webhook targets.
	Slack []SlackTarget `json:"slack"`
	// Email are SMTP targets.
	Email []EmailTarget `json:"email"`
	// OwnerLabel is the label or tag whose value names a resource's owner
	// (team=data-eng): it wins over the routes' own matching. Read from GCE
	// disks' labels, interfaces' tags, Jobs' and Pods' labels (else their
	// namespace's) and ECR repositories' tags.
	OwnerLabel string `json:"ownerLabel,omitempty"`
	// Routes send each owner's candidates to that owner's targets (see
	// Route); without routes every target gets the whole report.
	Routes []Route `json:"routes,omitempty"`
}

// EmailTarget is one SMTP submission server and the people it mails.
type EmailTarget struct {
	// Name is unique among the notify targets; logs and metrics use it.
	Name string `json:"name"`
	Host string `json:"host"`
	// Port is 587 by default (STARTTLS); 465 means implicit TLS.
	Port int `json:"port"`
	// TLS is starttls (mandatory: the server must offer it), implicit (TLS
	// from the first byte, port 465), or none — only to localhost or
	// 127.0.0.1, for tests. Default: implicit on port 465, else starttls.
	TLS string `json:"tls"`
	// Username and Password authenticate; the password is a secret, written
	// {env: NAME} or {file: /path} (an OAuth2 access token for xoauth2).
	Username string `json:"username,omitempty"`
	Password Secret `json:"password,omitzero"`
	// Auth is plain, login, cram-md5, xoauth2 or none. Default: plain with
	// a username, none without.
	Auth string `json:"auth"`
	// From is the sender address; To are the recipients (net/mail syntax:
	// "Ops <ops@example.com>" or ops@example.com).
	From string   `json:"from"`
	To   []string `json:"to"`
	// When is always, changes (the default) or warnings.
	When string `json:"when"`
	// MaxRows is how many rows each table shows before "+N more".
	MaxRows int `json:"maxRows"`
}

// TLS modes of an email target.
const (
	EmailSTARTTLS = "starttls"
	EmailImplicit = "implicit"
	EmailNoTLS    = "none"
)

// Auth mechanisms of an email target.
var emailAuths = []string{"plain", "login", "cram-md5", "xoauth2", "none"}

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
	defaultNotifySpoolDir    = "reclaim-spool"
	defaultEmailPort         = 587
	implicitTLSPort          = 465
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
	def(c, "notify.spool", &n.Spool, filepath.Join(filepath.Dir(n.StateFile), defaultNotifySpoolDir))
	def(c, "notify.requireNotice", &n.RequireNotice, true) // a notify section has a target (validated)
	for i := range n.Email {
		t, p := &n.Email[i], index("notify.email", i)
		def(c, p+".port", &t.Port, defaultEmailPort)
		tls := EmailSTARTTLS
		if t.Port == implicitTLSPort {
			tls = EmailImplicit
		}
		def(c, p+".tls", &t.TLS, tls)
		auth := "none"
		if t.Username != "" {
			auth = "plain"
		}
		def(c, p+".auth", &t.Auth, auth)
		def(c, p+".when", &t.When, defaultNotifyWhen)
		def(c, p+".maxRows", &t.MaxRows, defaultNotifyMaxRows)
	}
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
	} else {
		n.StateFile = v
	}
	if v, err := expandHome(n.Spool); err != nil {
		ps.add("notify.spool", "%v", err)
	} else {
		n.Spool = v
	}
}

func (n *Notify) validate(ps *problems, path string) {
	if len(n.Slack) == 0 && len(n.Email) == 0 {
		ps.add(path, "no targets — add slack: [{name: ..., webhookURL: {env: NAME}}] or email: [{name: ..., host: ..., from: ..., to: [...]}], or remove the notify section")
	}
	if n.Spool == "" {
		ps.add(path+".spool", "must not be empty — remove the key for the default next to stateFile")
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
	names := map[string]string{} // target name → its path
	for i := range n.Slack {
		t, p := &n.Slack[i], index(path+".slack", i)
		targetName(ps, p, t.Name, "ops-alerts; logs and metrics use it instead of the URL", names)
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
	for i := range n.Email {
		n.Email[i].validate(ps, index(path+".email", i), names)
	}
	targets := map[string]bool{}
	for name := range names {
		targets[name] = true
	}
	n.validateRoutes(ps, path, targets)
}

// targetName checks a target's name: required (hint: an example and what
// uses it), a DNS label, unique among the targets (names: name → path).
func targetName(ps *problems, p, name, hint string, names map[string]string) {
	switch {
	case name == "":
		ps.add(p+".name", "is required — a short name such as %s", hint)
	case !isDNSLabel(name):
		ps.add(p+".name", "%q is not a valid target name — %s", name, clusterHint)
	case names[name] != "":
		ps.add(p+".name", "%q is already the name of %s — target names are unique", name, names[name])
	default:
		names[name] = p
	}
}

func (t *EmailTarget) validate(ps *problems, p string, names map[string]string) {
	targetName(ps, p, t.Name, "ops-mail; logs and metrics use it", names)
	switch {
	case t.Host == "":
		ps.add(p+".host", "is required — the SMTP submission server, such as smtp.example.com")
	case strings.ContainsAny(t.Host, " /:@") && net.ParseIP(t.Host) == nil:
		ps.add(p+".host", "%q is not a host name — write the name alone (smtp.example.com), the port goes in port", t.Host)
	}
	if t.Port < 1 || t.Port > 65535 {
		ps.add(p+".port", "%d is out of range — use 1 to 65535 (587 for STARTTLS, 465 for implicit TLS)", t.Port)
	}
	switch t.TLS {
	case EmailSTARTTLS, EmailImplicit:
	case EmailNoTLS:
		if h := t.Host; h != "localhost" && !net.ParseIP(h).IsLoopback() {
			ps.add(p+".tls", "none is only allowed to localhost or 127.0.0.1 (a test server) — the password and the report would cross the network in clear; use starttls or implicit")
		}
	default:
		ps.add(p+".tls", "%q is not one of starttls, implicit, none", t.TLS)
	}
	authOK := false
	for _, a := range emailAuths {
		authOK = authOK || t.Auth == a
	}
	switch {
	case !authOK:
		ps.add(p+".auth", "%q is not one of %s", t.Auth, strings.Join(emailAuths, ", "))
	case t.Auth == "none":
		if !t.Password.IsZero() {
			ps.add(p+".password", "is set but auth is none — set auth (plain, login, cram-md5, xoauth2) or remove the password")
		}
	default:
		if t.Username == "" {
			ps.add(p+".username", "is required with auth %s", t.Auth)
		}
		if t.Password.IsZero() {
			ps.add(p+".password", "is required with auth %s — %s", t.Auth, secretHint)
		}
	}
	if t.From == "" {
		ps.add(p+".from", "is required — the sender, such as reclaim@example.com")
	} else if _, err := mail.ParseAddress(t.From); err != nil {
		ps.add(p+".from", "%q is not an email address (%v) — write reclaim@example.com or \"reclaim <reclaim@example.com>\"", t.From, err)
	}
	if len(t.To) == 0 {
		ps.add(p+".to", "is required — at least one recipient")
	}
	for j, a := range t.To {
		if _, err := mail.ParseAddress(a); err != nil {
			ps.add(index(p+".to", j), "%q is not an email address (%v) — write ops@example.com or \"Ops <ops@example.com>\"", a, err)
		}
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

// OwnerLabel is the label or tag whose value names a resource's owner
// (notify.ownerLabel), "" for none.
func (c *Config) OwnerLabel() string {
	if c.Notify == nil {
		return ""
	}
	return c.Notify.OwnerLabel
}
