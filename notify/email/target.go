package email

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/mail"
	"path/filepath"
	"time"

	gomail "github.com/wneessen/go-mail"

	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/report"
)

// Server is an SMTP submission server and the message's envelope.
type Server struct {
	Host string
	Port int
	// TLS is "starttls" (mandatory), "implicit" or "none" (tests only).
	TLS      string
	Username string
	// Password is the secret; it is never part of an error.
	Password string
	// Auth is plain, login, cram-md5, xoauth2 or none.
	Auth string
	From string
	To   []string
	// RootCAs verify the server; nil: the system's (SSL_CERT_FILE and
	// SSL_CERT_DIR are honoured).
	RootCAs *x509.CertPool
	// Timeout bounds a connection; default 30s.
	Timeout time.Duration
}

// Target is an SMTP server and its recipients as a notify target.
type Target struct {
	TargetName string
	Policy     notify.When
	Server     Server
	Options    Options
	// Spool is the directory failed messages are kept in until sent; each
	// target uses its own subdirectory. "" keeps nothing.
	Spool string
	Now   func() time.Time
	// NextRun gives, from a report's time, when the next run is due (for
	// "deleted at the next run"); nil: unknown.
	NextRun func(after time.Time) time.Time
}

var _ notify.SinceTarget = (*Target)(nil)

// Name is the configured name.
func (t *Target) Name() string { return t.TargetName }

// Type is "email".
func (t *Target) Type() string { return "email" }

// When is the target's policy.
func (t *Target) When() notify.When { return t.Policy }

// Deliver sends the report as if nothing had been delivered before.
func (t *Target) Deliver(ctx context.Context, rep *report.Report) error {
	return t.DeliverSince(ctx, rep, notify.Previous{})
}

// DeliverSince sends what the spool holds, oldest first, then the report.
// Whatever cannot be sent stays in (or goes to) the spool for the next run;
// the error then says so.
func (t *Target) DeliverSince(ctx context.Context, rep *report.Report, prev notify.Previous) error {
	opt := t.Options
	if t.NextRun != nil && rep.Plan != nil {
		opt.NextRun = t.NextRun(rep.Plan.GeneratedAt)
	}
	c, err := Render(rep, prev, opt)
	if err != nil {
		return fmt.Errorf("render the report email: %w", err)
	}
	raw, err := t.Message(c)
	if err != nil {
		return fmt.Errorf("build the report email: %w", err)
	}
	n, err := t.FlushSpool(ctx)
	if err == nil {
		err = t.Server.Send(ctx, raw)
	} else {
		err = fmt.Errorf("%d spooled messages still unsent: %w", n, err)
	}
	if err == nil {
		return nil
	}
	path, serr := t.spool(raw)
	if serr != nil {
		return fmt.Errorf("%w; and the report could not be spooled: %v", err, serr)
	}
	return fmt.Errorf("%w; the report was spooled to %s and is sent by the next run", err, path)
}

// Test sends a short test message (never spooled).
func (t *Target) Test(ctx context.Context) error {
	title := "reclaim test message"
	if t.Options.Fleet != "" {
		title += " · " + t.Options.Fleet
	}
	line := fmt.Sprintf("This is a test from reclaim to the notify target %s. Reports of runs will arrive here.", t.TargetName)
	m, err := t.newMsg("[reclaim] " + title)
	if err != nil {
		return err
	}
	m.SetBodyString(gomail.TypeTextPlain, line+"\n")
	var b bytes.Buffer
	if _, err := m.WriteTo(&b); err != nil {
		return err
	}
	return t.Server.Send(ctx, b.Bytes())
}

// Message renders the report email as RFC 5322 bytes: multipart/mixed with
// a multipart/alternative (text, then HTML; with charts, inside a
// multipart/related that holds them as PNG parts by content-id) and
// report.json attached.
func (t *Target) Message(c *Content) ([]byte, error) {
	m, err := t.newMsg(c.Subject)
	if err != nil {
		return nil, err
	}
	m.SetBodyString(gomail.TypeTextPlain, c.Text)
	m.AddAlternativeString(gomail.TypeTextHTML, c.HTML)
	for i, ch := range c.Charts {
		if err := m.EmbedReader(fmt.Sprintf("chart-%d.png", i+1), bytes.NewReader(ch.PNG),
			gomail.WithFileContentID("<"+ChartCID(i+1)+">"), gomail.WithFileContentType(gomail.ContentType("image/png")),
			gomail.WithFileDescription(ch.Alt)); err != nil {
			return nil, err
		}
	}
	if err := m.AttachReader("report.json", bytes.NewReader(c.JSON), gomail.WithFileContentType(gomail.ContentType("application/json"))); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := m.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (t *Target) newMsg(subject string) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	if err := m.From(t.Server.From); err != nil {
		return nil, fmt.Errorf("from %q: %w", t.Server.From, err)
	}
	if err := m.To(t.Server.To...); err != nil {
		return nil, fmt.Errorf("to: %w", err)
	}
	m.Subject(subject)
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	m.SetDateWithValue(now())
	m.SetMessageID()
	m.SetGenHeader(gomail.HeaderXMailer, "reclaim")
	return m, nil
}

// Send delivers raw (a whole message) to the server's recipients: dial,
// TLS and authentication by go-mail, then MAIL, RCPT and DATA.
func (s *Server) Send(ctx context.Context, raw []byte) error {
	c, err := s.client()
	if err != nil {
		return err
	}
	sc, err := c.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return fmt.Errorf("smtp %s: %w", s.addr(), err)
	}
	defer c.CloseWithSMTPClient(sc)
	from, err := mail.ParseAddress(s.From)
	if err != nil {
		return fmt.Errorf("from %q: %w", s.From, err)
	}
	if err := sc.Mail(from.Address); err != nil {
		return fmt.Errorf("smtp %s: MAIL FROM: %w", s.addr(), err)
	}
	for _, to := range s.To {
		a, err := mail.ParseAddress(to)
		if err != nil {
			return fmt.Errorf("to %q: %w", to, err)
		}
		if err := sc.Rcpt(a.Address); err != nil {
			return fmt.Errorf("smtp %s: RCPT TO %s: %w", s.addr(), a.Address, err)
		}
	}
	w, err := sc.Data()
	if err != nil {
		return fmt.Errorf("smtp %s: DATA: %w", s.addr(), err)
	}
	if _, err := w.Write(raw); err != nil {
		w.Close()
		return fmt.Errorf("smtp %s: DATA: %w", s.addr(), err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp %s: the server refused the message: %w", s.addr(), err)
	}
	return nil
}

func (s *Server) addr() string { return fmt.Sprintf("%s:%d", s.Host, s.Port) }

// client configures go-mail: TLS mandatory unless "none", the port, the
// authentication.
func (s *Server) client() (*gomail.Client, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	opts := []gomail.Option{gomail.WithPort(s.Port), gomail.WithTimeout(timeout),
		gomail.WithTLSConfig(&tls.Config{ServerName: s.Host, RootCAs: s.RootCAs, MinVersion: tls.VersionTLS12})}
	clear := false
	switch s.TLS {
	case "implicit":
		opts = append(opts, gomail.WithSSL())
	case "none":
		clear = true
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	var auth gomail.SMTPAuthType
	switch s.Auth {
	case "plain":
		auth = gomail.SMTPAuthPlain
		if clear {
			auth = gomail.SMTPAuthPlainNoEnc
		}
	case "login":
		auth = gomail.SMTPAuthLogin
		if clear {
			auth = gomail.SMTPAuthLoginNoEnc
		}
	case "cram-md5":
		auth = gomail.SMTPAuthCramMD5
	case "xoauth2":
		auth = gomail.SMTPAuthXOAUTH2
	}
	if auth != "" {
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(s.Username), gomail.WithPassword(s.Password))
	}
	c, err := gomail.NewClient(s.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("smtp %s: %w", s.addr(), err)
	}
	return c, nil
}

// spooler is the target's own directory of the spool.
func (t *Target) spooler() notify.Spool {
	sp := notify.Spool{Ext: ".eml", Now: t.Now}
	if t.Spool != "" {
		sp.Dir = filepath.Join(t.Spool, t.TargetName)
	}
	return sp
}

// Spooled lists the target's spooled messages, oldest first.
func (t *Target) Spooled() ([]string, error) { return t.spooler().Files() }

// FlushSpool sends the spooled messages, oldest first, removing each once
// sent; it stops at the first that fails and returns how many are left.
func (t *Target) FlushSpool(ctx context.Context) (left int, err error) {
	return t.spooler().Flush(func(raw []byte) error { return t.Server.Send(ctx, raw) })
}

// spool keeps raw for the next run and returns its path.
func (t *Target) spool(raw []byte) (string, error) { return t.spooler().Put(raw) }
