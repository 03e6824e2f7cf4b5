package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRoutedEmailsReachEachOwner: with notify.ownerLabel and a route, the
// binary sends each owner's slice to its own address on a real SMTP server
// (aiosmtpd): etl's address gets etl's finished Job alone, headed with its
// owner; the fleet's address gets all three and the sum per owner. Jobs in
// a real kube-apiserver carry the owner label, or their namespace does.
func TestRoutedEmailsReachEachOwner(t *testing.T) {
	srv := newSMTPServer(t)
	dir := srv.dir

	w := newEKSWorld(t)
	w.ec2YAML, w.podsYAML, w.omitProdB = "-", "-", true
	team := func(v string) func(*batchv1.Job) {
		return func(j *batchv1.Job) { j.Labels = map[string]string{"team": v} }
	}
	w.job(prodA, "etl-nightly", "Complete", 48*time.Hour, team("etl"))
	w.job(prodA, "web-build", "Complete", 48*time.Hour, team("web"))
	w.job(prodA, "platform-job", "Complete", 48*time.Hour, nil) // its namespace's
	ns, err := prodA.Client.CoreV1().Namespaces().Get(context.Background(), w.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels = map[string]string{"team": "platform"}
	if _, err := prodA.Client.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	target := func(name, to string) string {
		return `    - name: ` + name + `
      host: 127.0.0.1
      port: ` + strconv.Itoa(srv.port) + `
      tls: starttls
      username: ` + smtpUser + `
      password: {env: RECLAIM_E2E_SMTP_PASSWORD}
      from: reclaim@example.com
      to: [` + to + `]
      when: always
`
	}
	w.extraYAML = `notify:
  fleet: e2e-fleet
  spool: ` + filepath.Join(dir, "spool") + `
  ownerLabel: team
  email:
` + target("ops-mail", "ops@example.com") + target("etl-mail", "etl@example.com") + `  routes:
    - owner: etl
      targets: [etl-mail]
`
	env := []string{"RECLAIM_E2E_SMTP_PASSWORD=" + smtpPassword, "SSL_CERT_FILE=" + filepath.Join(dir, "cert.pem"), "SSL_CERT_DIR=" + dir}
	code, out, logs := runReclaim(t, env, "run", "--config", w.configPath())
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, logs)
	}
	if !strings.Contains(out, "by owner (notify.routes)") {
		t.Errorf("the terminal report sums no owner:\n%s", out)
	}
	got := srv.received()
	if len(got) != 2 {
		t.Fatalf("%d messages, want 2 (one per target)\n%s", len(got), logs)
	}
	texts := map[string]string{}
	subjects := map[string]string{}
	for _, m := range got {
		envl, _ := os.ReadFile(m + ".envelope")
		subject, text, _, report := readReportEmail(t, m)
		if report == nil {
			t.Fatalf("%s: no report attached", m)
		}
		for _, to := range []string{"ops@example.com", "etl@example.com"} {
			if strings.Contains(string(envl), "to="+to) {
				texts[to], subjects[to] = text, subject
			}
		}
	}
	etl, ops := texts["etl@example.com"], texts["ops@example.com"]
	if !strings.Contains(etl, "etl-nightly") || strings.Contains(etl, "web-build") || strings.Contains(etl, "platform-job") {
		t.Errorf("etl's email is not etl's slice:\n%s", etl)
	}
	if !strings.Contains(subjects["etl@example.com"], "e2e-fleet · etl") {
		t.Errorf("etl's subject %q does not name its owner", subjects["etl@example.com"])
	}
	for _, want := range []string{"etl-nightly", "web-build", "platform-job", "By owner (notify.routes)", "\n  platform  "} {
		if !strings.Contains(ops, want) {
			t.Errorf("the fleet's email lacks %q:\n%s", want, ops)
		}
	}
}
