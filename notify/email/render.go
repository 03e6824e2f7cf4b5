package email

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/chart"
	"reclaim.dev/reclaim/notify/report"
)

// Content is a report's email, ready to be put in a message.
type Content struct {
	Subject string
	Text    string
	HTML    string
	// JSON is the full report, attached as report.json.
	JSON []byte
	// Charts are the most urgent pools' charts, inline parts of the HTML
	// (ChartCID).
	Charts []chart.Chart
}

// Render makes the email of a report; prev is what the target was last
// delivered (for "new since the previous report").
func Render(rep *report.Report, prev notify.Previous, opt Options) (*Content, error) {
	charts, err := chart.Urgent(rep, MaxCharts)
	if err != nil {
		return nil, err
	}
	v := build(rep, prev, opt, charts)
	var js bytes.Buffer
	if err := rep.JSON(&js); err != nil {
		return nil, err
	}
	return &Content{Subject: v.Subject, Text: renderText(v), HTML: renderHTML(v), JSON: js.Bytes(), Charts: charts}, nil
}

// tabular aligns a header and rows in columns, each line indented.
func tabular(header []string, rows [][]string, indent int) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	pad := strings.Repeat(" ", indent)
	if len(header) > 0 {
		tw.Write([]byte(pad + strings.Join(header, "\t") + "\n"))
	}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
		}
		tw.Write([]byte(pad + strings.Join(cells, "\t") + "\n"))
	}
	tw.Flush()
	// tabwriter pads the last column too; mail clients show trailing blanks.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

var totalsHeader = []string{"KIND", "TO DELETE", "MARKED", "DELETING FREES", "SAVES A MONTH"}

func totalsRows(ts []total) [][]string {
	out := make([][]string, len(ts))
	for i, t := range ts {
		out[i] = []string{t.Noun, t.Delete, t.Mark, t.Frees, t.Saves}
	}
	return out
}

// The bodies are written in plain Go, not with text/template or
// html/template: their reflective method calls would turn off the linker's
// dead-method elimination for the whole binary (cmd/reclaim's
// TestLinkerDropsUnusedMethods).

// writer collects a body.
type writer struct{ strings.Builder }

func (w *writer) put(ss ...string) {
	for _, s := range ss {
		w.WriteString(s)
	}
}

// esc escapes s for HTML text and quoted attribute values byte for byte as
// html/template does: also + (against UTF-7 sniffing) and NUL.
func esc(s string) string { return replace(s, "\x00\"&'+<>") }

// keep escapes s for HTML and keeps each of its tokens that a browser
// would break at a hyphen or a slash ("us-east-1a", "2026-11-23",
// "123456789012/us-east-1") on one line, so a narrow mail client wraps
// between tokens, not inside one. A token too long for any line (an id)
// is left to overflow-wrap. Its escaping is html.EscapeString's (and NUL),
// which leaves + alone.
func keep(s string) string {
	var b strings.Builder
	for i, tok := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		e := replace(tok, "\x00\"&'<>")
		if len(tok) <= maxKept && strings.ContainsAny(tok, "-/") {
			b.WriteString(`<span style="white-space:nowrap">` + e + `</span>`)
			continue
		}
		b.WriteString(e)
	}
	return b.String()
}

// maxKept is the longest token keep holds on one line: 40 characters of a
// 12 px table font fit a phone's 600 px.
const maxKept = 40

var entities = map[byte]string{0: "\uFFFD", '"': "&#34;", '&': "&amp;", '\'': "&#39;", '+': "&#43;", '<': "&lt;", '>': "&gt;"}

// replace writes the entity of each byte of s that is in chars. All are
// ASCII, so they never occur inside a multi-byte UTF-8 sequence.
func replace(s, chars string) string {
	if !strings.ContainsAny(s, chars) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(chars, s[i]) >= 0 {
			b.WriteString(entities[s[i]])
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// attrURL is a URL in a quoted attribute, as html/template writes it:
// an untrusted URL of another scheme than http, https or mailto is
// replaced (a trusted one, ours, may be cid: or data:), bytes a URL does
// not hold as they are are percent-encoded, then the value is escaped.
func attrURL(u string, trusted bool) string {
	if !trusted {
		if scheme, _, ok := strings.Cut(u, ":"); ok && !strings.Contains(scheme, "/") &&
			!strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") && !strings.EqualFold(scheme, "mailto") {
			return "#ZgotmplZ"
		}
	}
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		c := u[i]
		if urlKept(c) || c == '%' && i+2 < len(u) && isHex(u[i+1]) && isHex(u[i+2]) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02x", c)
	}
	return esc(b.String())
}

// urlKept says whether a URL holds c as it is: RFC 3986's unreserved and
// reserved characters, but for ' ( ) which html/template encodes.
func urlKept(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!#$&*+,/:;=?@[]", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
