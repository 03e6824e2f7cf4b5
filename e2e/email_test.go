package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"reclaim.dev/reclaim/internal/testenv"
)

const smtpUser, smtpPassword = "reclaim@example.com", "Sm7pS3cretPassw0rd"

// aiosmtpdPython finds a python3 that has aiosmtpd: RECLAIM_PYTHON, then
// Debian's /usr/bin/python3, then python3 on PATH. It fails the test (never
// skips it) when there is none.
func aiosmtpdPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, p := range []string{os.Getenv("RECLAIM_PYTHON"), "/usr/bin/python3", "python3"} {
		if p == "" {
			continue
		}
		tried = append(tried, p)
		if exec.Command(p, "-c", "import aiosmtpd.controller").Run() == nil {
			return p
		}
	}
	t.Fatalf("no python3 with aiosmtpd (tried %s): this test needs a real SMTP server — install it with `apt-get update && apt-get install -y python3-aiosmtpd` (or `make testdeps`), or point RECLAIM_PYTHON at a python3 that has aiosmtpd", strings.Join(tried, ", "))
	return ""
}

// smtpServer is aiosmtpd run as a subprocess by testdata/smtpd.py.
type smtpServer struct {
	t                  *testing.T
	python, dir, inbox string
	port               int
	cmd                *exec.Cmd
	stdin              io.WriteCloser
}

// newSMTPServer starts aiosmtpd on a free port of 127.0.0.1, with a
// self-signed certificate and an inbox in a directory of the test's own
// (srv.dir, where the certificate is too: SSL_CERT_FILE=dir/cert.pem).
func newSMTPServer(t *testing.T) *smtpServer {
	t.Helper()
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	if err := os.Mkdir(inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	selfSigned(t, dir)
	srv := &smtpServer{t: t, python: aiosmtpdPython(t), dir: dir, inbox: inbox}
	srv.start()
	return srv
}

// start starts the server on s.port (0: a free one) with the certificate
// in s.dir.
func (s *smtpServer) start() {
	t := s.t
	t.Helper()
	if s.port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s.port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	script, err := filepath.Abs("testdata/smtpd.py")
	if err != nil {
		t.Fatal(err)
	}
	var ready bool
	for attempt := 0; attempt < 20 && !ready; attempt++ {
		cmd := exec.Command(s.python, script, "127.0.0.1", strconv.Itoa(s.port), filepath.Join(s.dir, "cert.pem"), filepath.Join(s.dir, "key.pem"), s.inbox, smtpUser, smtpPassword)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("start aiosmtpd: %v", err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		if strings.TrimSpace(line) == "READY" {
			s.cmd, s.stdin, ready = cmd, stdin, true
			break
		}
		cmd.Process.Kill()
		cmd.Wait()
		// The port of a just-stopped server may still be busy for a moment.
		t.Logf("aiosmtpd did not start (attempt %d): %s", attempt+1, stderr.String())
		time.Sleep(250 * time.Millisecond)
	}
	if !ready {
		t.Fatal("aiosmtpd did not start")
	}
	t.Cleanup(s.stop)
}

func (s *smtpServer) stop() {
	if s.cmd == nil {
		return
	}
	s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// received lists the messages in the inbox, in arrival order.
func (s *smtpServer) received() []string {
	s.t.Helper()
	m, err := filepath.Glob(filepath.Join(s.inbox, "*.eml"))
	if err != nil {
		s.t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// selfSigned writes a certificate for 127.0.0.1 and localhost, its own CA,
// and its key to dir: cert.pem and key.pem.
func selfSigned(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "reclaim e2e smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)
}

// runReclaim runs the built binary's `run` and returns its exit status
// and output.
func runReclaim(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := reclaimCmd(context.Background(), t, testenv.CronJob, env, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("run reclaim: %v", err)
	return 0, "", ""
}

// TestReportEmailReachesRealSMTPServer: the report email goes to a real SMTP
// server (aiosmtpd, not written by this project) over STARTTLS with AUTH;
// parsed back it is multipart/mixed holding a multipart/alternative with a
// text and an HTML part and the JSON report attached; the HTML is valid and
// leads with the summary. With the server down the run exits 5 and spools
// the message; the next run, with the server up, sends the spooled message
// first and then its own, and empties the spool. `reclaim notify test`
// reaches the server too.
func TestReportEmailReachesRealSMTPServer(t *testing.T) {
	srv := newSMTPServer(t)
	dir := srv.dir

	spool := filepath.Join(dir, "spool")
	cfg := filepath.Join(dir, "reclaim.yaml")
	os.WriteFile(cfg, []byte(`clusters:
  - name: prod-a
    kubeconfig: `+prodA.Kubeconfig+`
state:
  file: `+filepath.Join(dir, "state.json")+`
audit:
  file: `+filepath.Join(dir, "audit.jsonl")+`
notify:
  fleet: e2e-fleet
  spool: `+spool+`
  email:
    - name: ops-mail
      host: 127.0.0.1
      port: `+strconv.Itoa(srv.port)+`
      tls: starttls
      username: `+smtpUser+`
      password: {env: RECLAIM_E2E_SMTP_PASSWORD}
      auth: plain
      from: reclaim <reclaim@example.com>
      to: ["Platform <platform@example.com>", oncall@example.com]
      when: always
`), 0o644)
	// The generated certificate is the only CA the binary trusts.
	env := []string{"RECLAIM_E2E_SMTP_PASSWORD=" + smtpPassword, "SSL_CERT_FILE=" + filepath.Join(dir, "cert.pem"), "SSL_CERT_DIR=" + dir}

	code, out, logs := runReclaim(t, env, "run", "--config", cfg)
	if code != 0 {
		t.Fatalf("first run: exit %d, want 0\n%s\n%s", code, out, logs)
	}
	got := srv.received()
	if len(got) != 1 {
		t.Fatalf("%d messages received, want 1\n%s", len(got), logs)
	}
	envl, _ := os.ReadFile(got[0] + ".envelope")
	for _, want := range []string{"tls=True", "auth=True", "from=reclaim@example.com", "to=platform@example.com,oncall@example.com"} {
		if !strings.Contains(string(envl), want) {
			t.Errorf("envelope lacks %s:\n%s", want, envl)
		}
	}
	checkReportEmail(t, got[0])
	if strings.Contains(out+logs, smtpPassword) {
		t.Fatalf("the SMTP password was printed:\n%s\n%s", out, logs)
	}

	// Server down: the collection still happens, the report is spooled, exit 5.
	srv.stop()
	code, out, logs = runReclaim(t, env, "run", "--config", cfg)
	if code != 5 {
		t.Fatalf("server down: exit %d, want 5\n%s\n%s", code, out, logs)
	}
	if !strings.Contains(out, "cluster prod-a") || !strings.Contains(logs, "ops-mail") || !strings.Contains(logs, "spooled") {
		t.Errorf("report or log incomplete:\n%s\n%s", out, logs)
	}
	spooled, _ := filepath.Glob(filepath.Join(spool, "ops-mail", "*.eml"))
	if len(spooled) != 1 {
		t.Fatalf("%d spooled messages, want 1", len(spooled))
	}
	spooledID := header(t, spooled[0], "Message-Id")

	// Server back: the spooled report goes first, then this run's; the spool empties.
	srv.start()
	code, out, logs = runReclaim(t, env, "run", "--config", cfg)
	if code != 0 {
		t.Fatalf("server back: exit %d, want 0\n%s\n%s", code, out, logs)
	}
	got = srv.received()
	if len(got) != 3 {
		t.Fatalf("%d messages received in all, want 3\n%s", len(got), logs)
	}
	if id := header(t, got[1], "Message-Id"); id != spooledID || id == "" {
		t.Errorf("second message received is %q, want the spooled %q", id, spooledID)
	}
	if header(t, got[2], "Message-Id") == spooledID {
		t.Errorf("the third message is the spooled one again")
	}
	checkReportEmail(t, got[1])
	checkReportEmail(t, got[2])
	if left, _ := filepath.Glob(filepath.Join(spool, "ops-mail", "*")); len(left) != 0 {
		t.Errorf("spool not emptied: %v", left)
	}

	// `reclaim notify test` reaches the same server.
	code, out, logs = runReclaim(t, env, "notify", "test", "--config", cfg)
	if code != 0 || out != "email ops-mail: ok\n" {
		t.Fatalf("notify test: exit %d %q\n%s", code, out, logs)
	}
	got = srv.received()
	if len(got) != 4 {
		t.Fatalf("%d messages, want 4", len(got))
	}
	if subj, _ := new(mime.WordDecoder).DecodeHeader(header(t, got[3], "Subject")); subj != "[reclaim] reclaim test message · e2e-fleet" {
		t.Fatalf("test message subject %q", subj)
	}
}

func header(t *testing.T, path, key string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := mail.ReadMessage(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m.Header.Get(key)
}

// checkReportEmail parses a received report email back.
// readReportEmail reads a report email's subject, text and HTML parts and
// attached JSON report; each must be there.
func readReportEmail(t *testing.T, path string) (subject, text, htmlBody string, report map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a message: %v", err)
	}
	subject, err = new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Errorf("subject %q: %v", m.Header.Get("Subject"), err)
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("Content-Type %q, want multipart/mixed", m.Header.Get("Content-Type"))
	}
	// The bodies, inside a multipart/related when the HTML has charts.
	var walk func(r io.Reader, boundary string)
	walk = func(r io.Reader, boundary string) {
		mr := multipart.NewReader(r, boundary)
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			pt, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			switch {
			case pt == "multipart/related":
				walk(p, pp["boundary"])
			case pt == "multipart/alternative":
				ar := multipart.NewReader(p, pp["boundary"])
				var order []string
				for {
					ap, err := ar.NextPart()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					at, _, _ := mime.ParseMediaType(ap.Header.Get("Content-Type"))
					order = append(order, at)
					b := decodePart(t, ap)
					switch at {
					case "text/plain":
						text = string(b)
					case "text/html":
						htmlBody = string(b)
					}
				}
				// The last alternative is the preferred one: HTML after text.
				if strings.Join(order, ",") != "text/plain,text/html" {
					t.Errorf("alternatives %v, want text/plain then text/html", order)
				}
			case p.FileName() == "report.json":
				if err := json.Unmarshal(decodePart(t, p), &report); err != nil {
					t.Fatalf("report.json: %v", err)
				}
			}
		}
	}
	walk(m.Body, params["boundary"])
	if text == "" || htmlBody == "" || report == nil {
		t.Fatalf("text %d bytes, html %d bytes, report %v: want all three", len(text), len(htmlBody), report != nil)
	}
	return subject, text, htmlBody, report
}

func checkReportEmail(t *testing.T, path string) {
	t.Helper()
	subject, text, htmlBody, report := readReportEmail(t, path)
	if !strings.HasPrefix(subject, "[reclaim dry-run] e2e-fleet: nothing would be deleted") {
		t.Errorf("subject %q", subject)
	}
	if report["version"] != "reclaim.dev/v1" || report["mode"] != "dry-run" {
		t.Errorf("report.json: version %v mode %v", report["version"], report["mode"])
	}
	for _, want := range []string{"reclaim dry-run · e2e-fleet", "nothing would be deleted", "== SUMMARY ==", "== DELETED AT THE NEXT RUN UNLESS PROTECTED =="} {
		if !strings.Contains(text, want) {
			t.Errorf("text part lacks %q:\n%s", want, text)
		}
	}
	doc, err := html.Parse(strings.NewReader(htmlBody))
	if err != nil {
		t.Fatalf("HTML does not parse: %v", err)
	}
	var words []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "img", "link", "style", "iframe":
				t.Errorf("HTML has a <%s> element", n.Data)
			}
		}
		if n.Type == html.TextNode {
			if s := strings.TrimSpace(n.Data); s != "" {
				words = append(words, s)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	all := strings.Join(words, "\n")
	// The summary leads: the headline, then the Summary heading, before the
	// new, next-run and details sections.
	order := []string{"nothing would be deleted", "Summary", "New since the previous report", "Deleted at the next run unless protected", "Details"}
	at := 0
	for _, w := range order {
		i := strings.Index(all[at:], w)
		if i < 0 {
			t.Fatalf("HTML text lacks %q after the previous section:\n%s", w, all)
		}
		at += i
	}
}

// decodePart reads a MIME part, undoing base64 (multipart undoes
// quoted-printable itself).
func decodePart(t *testing.T, p *multipart.Part) []byte {
	t.Helper()
	var r io.Reader = p
	if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
		r = base64.NewDecoder(base64.StdEncoding, p)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
