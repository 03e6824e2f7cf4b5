package fakeapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Listener is a fake's local httptest server, started on demand so that a
// fake can also be served as a plain http.Handler. Safe for concurrent use.
type Listener struct {
	mu sync.Mutex
	ts *httptest.Server
}

// Start serves h on a local httptest server; later calls do nothing.
func (l *Listener) Start(h http.Handler) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ts == nil {
		l.ts = httptest.NewServer(h)
	}
}

// URL is the server's base URL, "" before Start.
func (l *Listener) URL() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ts == nil {
		return ""
	}
	return l.ts.URL
}

// Close stops the server started by Start, if any.
func (l *Listener) Close() {
	l.mu.Lock()
	ts := l.ts
	l.mu.Unlock()
	if ts != nil {
		ts.Close()
	}
}

// Delay waits d, the fake's simulated latency; false if ctx ended first
// (the client gave up: answer nothing).
func Delay(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// SigV4Scheme is the scheme of a SigV4 Authorization header.
const SigV4Scheme = "AWS4-HMAC-SHA256"

// SigV4Scope returns the region and service the credential of a SigV4
// Authorization header ("AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, …")
// is scoped to; ok is false without the AWS4-HMAC-SHA256 scheme or without a
// well-formed Credential. The signature is not checked.
func SigV4Scope(auth string) (region, service string, ok bool) {
	rest, ok := strings.CutPrefix(auth, SigV4Scheme+" ")
	if !ok {
		return "", "", false
	}
	var cred string
	for _, part := range strings.Split(rest, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "Credential="); ok {
			cred = v
		}
	}
	p := strings.Split(cred, "/")
	if len(p) != 5 || p[4] != "aws4_request" {
		return "", "", false
	}
	return p[2], p[3], true
}
