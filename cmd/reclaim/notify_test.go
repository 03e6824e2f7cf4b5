package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const secretToken = "XyZs3cr3tT0ken"

// webhook is a local Slack incoming webhook answering status and body.
func webhook(t *testing.T, status int, body string) (url string, posts func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/services/T000/B000/" + secretToken, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// runConfig is a config whose only cluster is unreachable (exit 3) and
// whose notify section names the given slack targets.
func runConfig(t *testing.T, slack string) (path, dir string) {
	dir = t.TempDir()
	path = filepath.Join(dir, "r.yaml")
	os.WriteFile(path, []byte(`clusters:
  - name: nowhere
    kubeconfig: `+filepath.Join(dir, "missing-kubeconfig")+`
state:
  file: `+filepath.Join(dir, "state.json")+`
audit:
  file: `+filepath.Join(dir, "audit.jsonl")+`
notify:
  fleet: prod
  slack:
`+slack), 0o644)
	return path, dir
}

func TestRunDeliveryFailureExitsFive(t *testing.T) {
	url, posts := webhook(t, http.StatusNotFound, "channel_not_found")
	t.Setenv("RECLAIM_TEST_SLACK", url)
	p, dir := runConfig(t, "    - name: ops\n      webhookURL: {env: RECLAIM_TEST_SLACK}\n")
	prom := filepath.Join(dir, "reclaim.prom")
	out, logs, err := execute("run", "--config", p, "--metrics-textfile", prom)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 5 {
		t.Fatalf("err %v, want exit 5 (a failed delivery outranks 3)\n%s\n%s", err, out, logs)
	}
	if len(posts()) != 1 {
		t.Fatalf("%d posts; a 404 is not retried", len(posts()))
	}
	// The collection still happened and its report was printed.
	if !strings.Contains(out, "cluster nowhere") || !strings.Contains(out, "exit 5:") {
		t.Errorf("report:\n%s", out)
	}
	if !strings.Contains(logs, "ops") || !strings.Contains(logs, "channel_not_found") {
		t.Errorf("log lacks the target's name or Slack's word:\n%s", logs)
	}
	if strings.Contains(logs+out, secretToken) {
		t.Errorf("the webhook secret was printed:\n%s\n%s", logs, out)
	}
	m, _ := os.ReadFile(prom)
	for _, want := range []string{`reclaim_notify_deliveries_total{result="failed",target="ops"} 1`,
		`reclaim_notify_deliveries_total{result="sent",target="ops"} 0`, `reclaim_runs_total{exit_code="5",mode="dry-run"} 1`} {
		if !strings.Contains(string(m), want) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}

func TestRunDeliversAndKeepsItsExitStatus(t *testing.T) {
	url, posts := webhook(t, http.StatusOK, "ok")
	t.Setenv("RECLAIM_TEST_SLACK", url)
	p, _ := runConfig(t, "    - name: ops\n      webhookURL: {env: RECLAIM_TEST_SLACK}\n      when: warnings\n")
	_, logs, err := execute("run", "--config", p)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 3 {
		t.Fatalf("err %v, want exit 3\n%s", err, logs)
	}
	got := posts()
	if len(got) != 1 || !strings.Contains(got[0], `"text":"reclaim dry-run · prod: incomplete sources: cluster nowhere; nothing would be deleted`) || !strings.Contains(got[0], "incomplete sources: cluster nowhere") {
		t.Fatalf("posts: %q", got)
	}
	if strings.Contains(logs, secretToken) {
		t.Errorf("secret in log:\n%s", logs)
	}
}

func TestNotifyTestReportsEachTarget(t *testing.T) {
	okURL, okPosts := webhook(t, http.StatusOK, "ok")
	badURL, _ := webhook(t, http.StatusGone, "channel_is_archived")
	t.Setenv("RECLAIM_TEST_SLACK_OK", okURL)
	t.Setenv("RECLAIM_TEST_SLACK_BAD", badURL)
	p, _ := runConfig(t, "    - name: ops\n      webhookURL: {env: RECLAIM_TEST_SLACK_OK}\n    - name: archived\n      webhookURL: {env: RECLAIM_TEST_SLACK_BAD}\n")
	out, errOut, err := execute("notify", "test", "--config", p)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 5 {
		t.Fatalf("err %v, want exit 5\n%s", err, out)
	}
	if !strings.Contains(out, "slack ops: ok\n") || !strings.Contains(out, "slack archived: FAILED: slack webhook answered 410 channel_is_archived") {
		t.Fatalf("output:\n%s", out)
	}
	if strings.Contains(out+errOut, secretToken) {
		t.Fatalf("secret printed:\n%s", out)
	}
	if ps := okPosts(); len(ps) != 1 || !strings.Contains(ps[0], `"text":"reclaim test message · prod`) {
		t.Fatalf("test message: %q", ps)
	}

	// Every target working: exit 0.
	p, _ = runConfig(t, "    - name: ops\n      webhookURL: {env: RECLAIM_TEST_SLACK_OK}\n")
	if out, _, err := execute("notify", "test", "--config", p); err != nil || out != "slack ops: ok\n" {
		t.Fatalf("%v %q", err, out)
	}
}

func TestConfigCheckNeverPrintsWebhookSecrets(t *testing.T) {
	t.Setenv("RECLAIM_TEST_SLACK", "https://hooks.slack.com/services/T000/B000/"+secretToken)
	p, _ := runConfig(t, "    - name: ops\n      webhookURL: {env: RECLAIM_TEST_SLACK}\n")
	out, _, err := execute("config", "check", "--offline", "--print", p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, secretToken) || !strings.Contains(out, "webhookURL: <secret>") || !strings.Contains(out, "when: changes") {
		t.Fatalf("printed:\n%s", out)
	}
	// A bad URL is reported by field, without quoting the URL.
	t.Setenv("RECLAIM_TEST_SLACK", "http://hooks.example.com/services/T000/B000/"+secretToken)
	_, _, err = execute("config", "check", p)
	if err == nil || !strings.Contains(err.Error(), "notify.slack[0].webhookURL: the URL in environment variable RECLAIM_TEST_SLACK uses http") || strings.Contains(err.Error(), secretToken) {
		t.Fatalf("err %v", err)
	}
}

// A route's kind that is no kind of reclaim's would route nothing, silently:
// config check names it and the kinds there are.
func TestConfigCheckRefusesARouteToNoKind(t *testing.T) {
	t.Setenv("RECLAIM_TEST_SLACK", "https://hooks.slack.com/services/T/B/x")
	p, _ := runConfig(t, `    - name: ops
      webhookURL: {env: RECLAIM_TEST_SLACK}
    - name: etl
      webhookURL: {env: RECLAIM_TEST_SLACK}
  routes:
    - owner: etl
      targets: [etl]
      kinds: [k8s-jobs]
`)
	_, _, err := execute("config", "check", "--offline", p)
	if err == nil || !strings.Contains(err.Error(), `notify.routes[0].kinds[0]: "k8s-jobs" matches no kind — the kinds are gce-disk, `) {
		t.Fatalf("err %v", err)
	}
	out, _, err := execute("run", "--config", p)
	if err == nil || !strings.Contains(err.Error(), `"k8s-jobs" matches no kind`) {
		t.Fatalf("run: err %v\n%s", err, out)
	}
}
