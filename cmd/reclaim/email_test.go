package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// An email target whose server is down: the run still reports, exits 5,
// counts the failure under the target's name, and spools the message.
func TestRunEmailServerDownSpoolsAndExitsFive(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	t.Setenv("RECLAIM_TEST_SMTP_PW", secretToken)
	p := filepath.Join(dir, "r.yaml")
	os.WriteFile(p, []byte(`clusters:
  - name: nowhere
    kubeconfig: `+filepath.Join(dir, "missing-kubeconfig")+`
state:
  file: `+filepath.Join(dir, "state.json")+`
audit:
  file: `+filepath.Join(dir, "audit.jsonl")+`
notify:
  fleet: prod
  email:
    - name: ops-mail
      host: 127.0.0.1
      port: `+strconv.Itoa(port)+`
      tls: none
      username: reclaim
      password: {env: RECLAIM_TEST_SMTP_PW}
      from: reclaim@example.com
      to: [ops@example.com]
`), 0o644)
	prom := filepath.Join(dir, "reclaim.prom")
	out, logs, err := execute("run", "--config", p, "--metrics-textfile", prom)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 5 {
		t.Fatalf("err %v, want exit 5\n%s\n%s", err, out, logs)
	}
	if !strings.Contains(out, "cluster nowhere") || !strings.Contains(logs, "ops-mail") || !strings.Contains(logs, "spooled to") {
		t.Errorf("report or log:\n%s\n%s", out, logs)
	}
	if strings.Contains(out+logs, secretToken) {
		t.Errorf("the SMTP password was printed")
	}
	// The default spool is next to the state file.
	spooled, _ := filepath.Glob(filepath.Join(dir, "reclaim-spool", "ops-mail", "*.eml"))
	if len(spooled) != 1 {
		t.Fatalf("%d spooled messages, want 1", len(spooled))
	}
	m, _ := os.ReadFile(prom)
	if !strings.Contains(string(m), `reclaim_notify_deliveries_total{result="failed",target="ops-mail"} 1`) {
		t.Errorf("metrics:\n%s", m)
	}
}
