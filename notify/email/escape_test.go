package email

import (
	htmltemplate "html/template"
	"strings"
	"testing"
)

// The bodies escape each value as html/template, which wrote them before,
// does in the same context (a test may use it: only the binary must not).
func TestEscapesAsHTMLTemplate(t *testing.T) {
	page := htmltemplate.Must(htmltemplate.New("").Parse(
		`<p>{{.S}}</p><img alt="{{.S}}" src="{{.Trusted}}"><a href="{{.S}}">`))
	want := func(s string) (text, attr, trusted, link string) {
		var b strings.Builder
		if err := page.Execute(&b, struct {
			S       string
			Trusted htmltemplate.URL
		}{s, htmltemplate.URL(s)}); err != nil {
			t.Fatal(err)
		}
		var rest string
		text, rest, _ = strings.Cut(strings.TrimPrefix(b.String(), "<p>"), `</p><img alt="`)
		attr, rest, _ = strings.Cut(rest, `" src="`)
		trusted, rest, _ = strings.Cut(rest, `"><a href="`)
		return text, attr, trusted, strings.TrimSuffix(rest, `">`)
	}
	for _, s := range []string{
		"", "plain", `<b class="x">'&'</b>`, "a+b", "nul\x00", "é · \xc3\"", "100%", "%2F%zz",
		"http://h/p?q=1&r=(2)", "HTTPS://h/ a", "mailto:ops@example.com", "javascript:alert(1)",
		"cid:chart-1@reclaim", "data:image/png;base64,AB+/=", "demo-report-chart-1.png", "rel/path:x", "a\tb\nc",
	} {
		text, attr, trusted, link := want(s)
		if got := esc(s); got != text || got != attr {
			t.Errorf("esc(%q) = %q, want %q (text) and %q (attribute)", s, got, text, attr)
		}
		if got := attrURL(s, true); got != trusted {
			t.Errorf("attrURL(%q, trusted) = %q, want %q", s, got, trusted)
		}
		if got := attrURL(s, false); got != link {
			t.Errorf("attrURL(%q) = %q, want %q", s, got, link)
		}
		// keep's escaping, HTMLEscapeString's, leaves + alone.
		if got, want := keep(s), htmltemplate.HTMLEscapeString(s); !strings.Contains(s, " ") && !strings.ContainsAny(s, "-/") && got != want {
			t.Errorf("keep(%q) = %q, want %q", s, got, want)
		}
	}
}
