package config

import (
	"strings"
	"testing"
)

const notifyBase = "clusters:\n  - name: a\nstate:\n  file: /var/lib/reclaim/state.json\n"

func TestNotifyDefaults(t *testing.T) {
	t.Setenv("RECLAIM_TEST_HOOK", "https://hooks.slack.com/services/T/B/x")
	c, err := Parse([]byte(notifyBase+"notify:\n  slack:\n    - name: ops\n      webhookURL: {env: RECLAIM_TEST_HOOK}\n"), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := c.Notify
	if n.StateFile != "/var/lib/reclaim/state.json.notify.json" || n.Slack[0].When != "changes" || n.Slack[0].MaxRows != 20 ||
		n.Slack[0].WebhookURL.Value() != "https://hooks.slack.com/services/T/B/x" {
		t.Fatalf("%+v", n)
	}
	// Local test receivers may use plain http.
	for _, u := range []string{"http://127.0.0.1:8080/hook", "http://localhost/hook", "http://[::1]:9/x"} {
		t.Setenv("RECLAIM_TEST_HOOK", u)
		if _, err := Parse([]byte(notifyBase+"notify:\n  slack:\n    - name: ops\n      webhookURL: {env: RECLAIM_TEST_HOOK}\n"), "n.yaml"); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestNotifyProblems(t *testing.T) {
	t.Setenv("RECLAIM_TEST_HOOK", "https://hooks.slack.com/services/T/B/x")
	t.Setenv("RECLAIM_TEST_HTTP_HOOK", "http://hooks.example.com/services/T/B/topsecret")
	t.Setenv("RECLAIM_TEST_FTP_HOOK", "ftp://hooks.example.com/topsecret")
	yaml := notifyBase + `notify:
  reportURL: reports.example.com/latest
  slack:
    - name: ops
      webhookURL: {env: RECLAIM_TEST_HOOK}
      when: sometimes
      maxRows: 0
    - name: ops
      webhookURL: {env: RECLAIM_TEST_HTTP_HOOK}
    - name: Bad_Name
      webhookURL: {env: RECLAIM_TEST_FTP_HOOK}
    - webhookURL: {env: RECLAIM_TEST_HOOK}
    - name: nourl
`
	_, err := Parse([]byte(yaml), "n.yaml")
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		`n.yaml: notify.reportURL: "reports.example.com/latest" is not an absolute http(s) URL`,
		`n.yaml: notify.slack[0].when: "sometimes" is not one of always, changes, warnings`,
		`n.yaml: notify.slack[0].maxRows: 0 is out of range — use 1 to 500`,
		`n.yaml: notify.slack[1].name: "ops" is already the name of notify.slack[0] — target names are unique`,
		`n.yaml: notify.slack[1].webhookURL: the URL in environment variable RECLAIM_TEST_HTTP_HOOK uses http`,
		`n.yaml: notify.slack[2].name: "Bad_Name" is not a valid target name`,
		`n.yaml: notify.slack[2].webhookURL: the URL in environment variable RECLAIM_TEST_FTP_HOOK is not an https URL`,
		`n.yaml: notify.slack[3].name: is required`,
		`n.yaml: notify.slack[4].webhookURL: is required — write {env: NAME} or {file: /path}`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q", w)
		}
	}
	if strings.Contains(err.Error(), "topsecret") {
		t.Errorf("error quotes a secret:\n%v", err)
	}
	if t.Failed() {
		t.Log(err)
	}
	if _, err := Parse([]byte(notifyBase+"notify:\n  fleet: prod\n"), "n.yaml"); err == nil || !strings.Contains(err.Error(), "notify: no targets") {
		t.Errorf("no targets: %v", err)
	}
}

func TestEmailDefaults(t *testing.T) {
	t.Setenv("RECLAIM_TEST_SMTP", "s3cr3t-smtp-pw")
	c, err := Parse([]byte(notifyBase+`notify:
  email:
    - name: mail
      host: smtp.example.com
      username: reclaim@example.com
      password: {env: RECLAIM_TEST_SMTP}
      from: reclaim <reclaim@example.com>
      to: [ops@example.com]
    - name: smtps
      host: smtp.example.com
      port: 465
      from: reclaim@example.com
      to: ["Ops <ops@example.com>"]
`), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := c.Notify
	e, s := n.Email[0], n.Email[1]
	if e.Port != 587 || e.TLS != "starttls" || e.Auth != "plain" || e.When != "changes" || e.MaxRows != 20 || e.Password.Value() != "s3cr3t-smtp-pw" {
		t.Fatalf("%+v", e)
	}
	if s.TLS != "implicit" || s.Auth != "none" {
		t.Fatalf("port 465: %+v", s)
	}
	if n.Spool != "/var/lib/reclaim/reclaim-spool" {
		t.Fatalf("spool %q, want next to the state file", n.Spool)
	}
	b, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cr3t-smtp-pw") || !strings.Contains(string(b), "password: <secret>") {
		t.Fatalf("redacted:\n%s", b)
	}
}

func TestEmailProblems(t *testing.T) {
	t.Setenv("RECLAIM_TEST_SMTP", "s3cr3t-smtp-pw")
	t.Setenv("RECLAIM_TEST_HOOK", "https://hooks.slack.com/services/T/B/x")
	yaml := notifyBase + `notify:
  slack:
    - name: ops
      webhookURL: {env: RECLAIM_TEST_HOOK}
  email:
    - name: ops
      host: smtp.example.com
      port: 70000
      tls: none
      auth: login
      from: not an address
      to: [ok@example.com, "broken@"]
      when: sometimes
      maxRows: 501
    - name: mail2
      host: smtp.example.com:587
      tls: ssl
      auth: gssapi
      password: {env: RECLAIM_TEST_SMTP}
    - name: mail3
      host: 127.0.0.1
      tls: none
      auth: none
      password: {env: RECLAIM_TEST_SMTP}
      from: a@example.com
      to: [b@example.com]
`
	_, err := Parse([]byte(yaml), "n.yaml")
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		`n.yaml: notify.email[0].name: "ops" is already the name of notify.slack[0] — target names are unique`,
		`n.yaml: notify.email[0].port: 70000 is out of range — use 1 to 65535`,
		`n.yaml: notify.email[0].tls: none is only allowed to localhost or 127.0.0.1`,
		`n.yaml: notify.email[0].username: is required with auth login`,
		`n.yaml: notify.email[0].password: is required with auth login`,
		`n.yaml: notify.email[0].from: "not an address" is not an email address`,
		`n.yaml: notify.email[0].to[1]: "broken@" is not an email address`,
		`n.yaml: notify.email[0].when: "sometimes" is not one of always, changes, warnings`,
		`n.yaml: notify.email[0].maxRows: 501 is out of range — use 1 to 500`,
		`n.yaml: notify.email[1].host: "smtp.example.com:587" is not a host name`,
		`n.yaml: notify.email[1].tls: "ssl" is not one of starttls, implicit, none`,
		`n.yaml: notify.email[1].auth: "gssapi" is not one of plain, login, cram-md5, xoauth2, none`,
		`n.yaml: notify.email[1].from: is required`,
		`n.yaml: notify.email[1].to: is required`,
		`n.yaml: notify.email[2].password: is set but auth is none`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "s3cr3t-smtp-pw") {
		t.Errorf("secret printed:\n%v", err)
	}
}

// Notice before a delete is the default whenever a report can reach
// someone (a notify section always has a target), and an explicit false is
// kept.
func TestRequireNoticeDefault(t *testing.T) {
	t.Setenv("RECLAIM_TEST_HOOK", "https://hooks.slack.com/services/T/B/x")
	target := "  slack:\n    - name: ops\n      webhookURL: {env: RECLAIM_TEST_HOOK}\n"
	for _, c := range []struct {
		notify string
		want   bool
	}{
		{"notify:\n" + target, true},
		{"notify:\n  requireNotice: false\n" + target, false},
		{"notify:\n  email:\n    - {name: mail, host: smtp.example.com, from: r@example.com, to: [p@example.com]}\n", true},
	} {
		cfg, err := Parse([]byte(notifyBase+c.notify), "n.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Notify.RequireNotice; got != c.want {
			t.Errorf("%q: requireNotice %v, want %v", c.notify, got, c.want)
		}
	}
}

const routedTargets = `notify:
  slack:
    - name: ops
      webhookURL: {env: RECLAIM_TEST_HOOK}
    - name: etl-alerts
      webhookURL: {env: RECLAIM_TEST_HOOK}
  email:
    - name: etl-mail
      host: smtp.example.com
      from: reclaim@example.com
      to: [etl@example.com]
`

func TestNotifyRoutes(t *testing.T) {
	t.Setenv("RECLAIM_TEST_HOOK", "https://hooks.slack.com/services/T/B/x")
	c, err := Parse([]byte(notifyBase+routedTargets+`  routes:
    - owner: etl
      targets: [etl-alerts, etl-mail]
      namespaces: [etl, etl-*]
    - owner: etl-disks
      targets: [etl-mail]
      labels: {team: etl}
`), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Notify.OwnerLabel != "" {
		t.Fatalf("owner label %q by default", c.Notify.OwnerLabel)
	}
	got := c.Notify.RoutedOwners()
	if len(got) != 2 || strings.Join(got["etl-mail"], ",") != "etl,etl-disks" || strings.Join(got["etl-alerts"], ",") != "etl" || got["ops"] != nil {
		t.Fatalf("routed owners %v", got)
	}
}

func TestNotifyRouteProblems(t *testing.T) {
	t.Setenv("RECLAIM_TEST_HOOK", "https://hooks.slack.com/services/T/B/x")
	_, err := Parse([]byte(notifyBase+routedTargets+`  routes:
    - owner: Data_Eng
      targets: [etl-mial]
      namespaces: ["etl-[", ""]
    - targets: []
    - owner: web
      targets: [ops, etl-alerts, etl-mail]
      labels: {"": x, team: "[web"}
`), "n.yaml")
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		`n.yaml: notify.routes: every target is named by a route — keep one target out of every route`,
		`n.yaml: notify.routes[0].owner: "Data_Eng" is not a valid owner name`,
		`n.yaml: notify.routes[0].targets[0]: "etl-mial" is not the name of a notify.slack or notify.email target — one of etl-alerts, etl-mail, ops`,
		`n.yaml: notify.routes[0].namespaces[0]: "etl-[" is not a valid pattern`,
		`n.yaml: notify.routes[0].namespaces[1]: "" is empty`,
		`n.yaml: notify.routes[1].owner: is required`,
		`n.yaml: notify.routes[1].targets: is required`,
		`n.yaml: notify.routes[1]: matches nothing — give clusters, namespaces, scopes, repositories, labels or kinds, or set notify.ownerLabel`,
		`n.yaml: notify.routes[2].labels: has an empty key`,
		`n.yaml: notify.routes[2].labels.team: "[web" is not a valid pattern`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
}

// With an owner label a route may name an owner and its targets alone:
// what carries the label is that owner's.
func TestNotifyOwnerLabel(t *testing.T) {
	t.Setenv("RECLAIM_TEST_HOOK", "https://hooks.slack.com/services/T/B/x")
	routes := `  routes:
    - owner: etl
      targets: [etl-mail]
`
	c, err := Parse([]byte(notifyBase+routedTargets+"  ownerLabel: example.com/team\n"+routes), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Notify.OwnerLabel != "example.com/team" {
		t.Fatalf("%+v", c.Notify)
	}
	_, err = Parse([]byte(notifyBase+routedTargets+"  ownerLabel: \"team name\"\n"+routes), "n.yaml")
	if err == nil || !strings.Contains(err.Error(), `notify.ownerLabel: "team name" is not a label or tag key`) {
		t.Fatalf("err %v", err)
	}
}
