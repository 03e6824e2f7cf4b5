package email

import (
	"bytes"
	"embed"
	htmltemplate "html/template"
	"strings"
	"text/tabwriter"
	texttemplate "text/template"

	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/chart"
	"reclaim.dev/reclaim/notify/report"
)

//go:embed templates/report.txt.tmpl templates/report.html.tmpl
var templates embed.FS

var funcs = map[string]any{
	"totalsHeader": func() []string { return []string{"KIND", "TO DELETE", "MARKED", "DELETING FREES", "SAVES A MONTH"} },
	"totalsRows": func(ts []total) [][]string {
		out := make([][]string, len(ts))
		for i, t := range ts {
			out[i] = []string{t.Noun, t.Delete, t.Mark, t.Frees, t.Saves}
		}
		return out
	},
	"tabular": tabular,
	"keep":    keep,
}

// keep escapes s for HTML and keeps each of its tokens that a browser
// would break at a hyphen or a slash ("us-east-1a", "2026-11-23",
// "123456789012/us-east-1") on one line, so a narrow mail client wraps
// between tokens, not inside one. A token too long for any line (an id)
// is left to overflow-wrap.
func keep(s string) htmltemplate.HTML {
	var b strings.Builder
	for i, tok := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		esc := htmltemplate.HTMLEscapeString(tok)
		if len(tok) <= maxKept && strings.ContainsAny(tok, "-/") {
			b.WriteString(`<span style="white-space:nowrap">` + esc + `</span>`)
			continue
		}
		b.WriteString(esc)
	}
	return htmltemplate.HTML(b.String())
}

// maxKept is the longest token keep holds on one line: 40 characters of a
// 12 px table font fit a phone's 600 px.
const maxKept = 40

var (
	textTmpl = texttemplate.Must(texttemplate.New("report.txt.tmpl").Funcs(funcs).ParseFS(templates, "templates/report.txt.tmpl"))
	htmlTmpl = htmltemplate.Must(htmltemplate.New("report.html.tmpl").Funcs(funcs).ParseFS(templates, "templates/report.html.tmpl"))
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
	var txt, html, js bytes.Buffer
	if err := textTmpl.Execute(&txt, v); err != nil {
		return nil, err
	}
	if err := htmlTmpl.Execute(&html, v); err != nil {
		return nil, err
	}
	if err := rep.JSON(&js); err != nil {
		return nil, err
	}
	return &Content{Subject: v.Subject, Text: txt.String(), HTML: html.String(), JSON: js.Bytes(), Charts: charts}, nil
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
