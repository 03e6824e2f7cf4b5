package daemon

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"reclaim.dev/reclaim/notify/report"
)

// page serves the latest report as a page a person opens (the report
// email's HTML, under a bar that says which pass it is and links the JSON,
// the text and the metrics). It is read-only and holds nothing the email
// does not: no config, no credential. Links are relative, so the page
// works behind a path prefix (kubectl proxy, an ingress).
func (d *Daemon) page(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	rep, lastErr := d.last, d.lastErr
	d.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	bar := pageBar(rep, lastErr)
	if rep == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>reclaim: no report yet</title></head><body>%s<p>No report yet: no pass has planned on this replica.</p></body></html>\n", bar)
		return
	}
	body := ""
	if d.opt.HTML != nil {
		var err error
		if body, err = d.opt.HTML(rep); err != nil {
			http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
			return
		}
	} else {
		var b strings.Builder
		_ = rep.Text(&b, report.TextOptions{MaxKept: -1})
		body = "<!doctype html><html><head><meta charset=\"utf-8\"><title>reclaim report</title></head><body><pre>" + html.EscapeString(b.String()) + "</pre></body></html>"
	}
	fmt.Fprint(w, withBar(body, bar))
}

// withBar puts bar first in page's body.
func withBar(page, bar string) string {
	i := strings.Index(page, "<body")
	if i < 0 {
		return bar + page
	}
	j := strings.IndexByte(page[i:], '>')
	if j < 0 {
		return bar + page
	}
	at := i + j + 1
	return page[:at] + bar + page[at:]
}

// pageBar says which pass the page shows and links its other forms.
func pageBar(rep *report.Report, lastErr error) string {
	var b strings.Builder
	b.WriteString(`<div id="reclaim-daemon" style="font:13px/1.5 sans-serif;padding:6px 10px;background:#eef1f5;border-bottom:1px solid #cfd6de;overflow-wrap:anywhere">reclaim daemon`)
	if rep != nil && rep.Plan != nil {
		fmt.Fprintf(&b, " · pass planned %s · %s · exit %d", html.EscapeString(rep.Plan.GeneratedAt.UTC().Format(time.RFC3339)), html.EscapeString(rep.Mode), rep.ExitCode)
	}
	if lastErr != nil {
		fmt.Fprintf(&b, ` · <strong>the last pass failed: %s</strong>`, html.EscapeString(lastErr.Error()))
	}
	b.WriteString(` · <a href="report">JSON</a> · <a href="report?format=text">text</a> · <a href="metrics">metrics</a></div>`)
	return b.String()
}
