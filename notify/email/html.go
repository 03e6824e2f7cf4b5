package email

import "strconv"

// renderHTML writes the HTML body: nested tables with inline styles, as
// mail clients lay out nothing else reliably. Every value goes through esc
// (or keep, or attrURL), escaped as html/template escapes it in that
// context.
func renderHTML(v *view) string {
	var w writer
	w.put(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`, esc(v.Subject), `</title>
</head>
<body style="margin:0;padding:0;background:#f4f5f7;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background:#f4f5f7;table-layout:fixed;">
<tr><td align="center" style="padding:16px;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:960px;table-layout:fixed;background:#ffffff;border:1px solid #dfe1e6;font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:20px;color:#172b4d;">
`)
	htmlHeader(&w, v)
	w.put(`<tr><td style="padding:16px 20px;">
`)
	htmlWarnings(&w, v)
	htmlSummary(&w, v)
	w.put(`</td></tr>
`)
	htmlNew(&w, v.New)
	htmlNext(&w, v.Next)
	w.put(`<tr><td style="padding:16px 20px;border-top:1px solid #dfe1e6;">
<h2 style="margin:0 0 8px 0;font-size:16px;">Details</h2>
`)
	for _, t := range v.Kinds {
		htmlTable(&w, t)
	}
	if len(v.Kinds) == 0 {
		w.put(`<p style="margin:0;">Nothing would be deleted or marked.</p>`)
	}
	w.put(`
</td></tr>
<tr><td style="padding:12px 20px;border-top:1px solid #dfe1e6;color:#5e6c84;font-size:12px;">The full report is attached as report.json.</td></tr>
</table>
</td></tr>
</table>
</body>
</html>

`)
	return w.String()
}

// htmlHeader is the coloured band: blue for a dry-run, red for apply.
func htmlHeader(w *writer, v *view) {
	background := "#de350b"
	if v.DryRun {
		background = "#0052cc"
	}
	w.put(`<tr><td style="padding:16px 20px;background:`, background, `;color:#ffffff;">
<div style="font-size:12px;text-transform:uppercase;letter-spacing:1px;">`, esc(v.Title), `</div>
<div style="font-size:20px;line-height:26px;font-weight:bold;">`, keep(v.Headline), `</div>
`)
	if v.DryRun {
		w.put(`<div style="font-size:13px;">Dry-run: nothing was deleted.</div>`)
	}
	w.put(`
</td></tr>
`)
}

// htmlWarnings are boxes, the charts under the first (the most urgent).
func htmlWarnings(w *writer, v *view) {
	for i, g := range v.Warnings {
		w.put(`<table cellpadding="8" cellspacing="0" border="0" width="100%" style="margin:8px 0;background:#fffae6;border-left:4px solid #ff8b00;">
<tr><td><strong>&#9888; `, esc(g.Title), `</strong> (`, strconv.Itoa(len(g.Lines)), `)
<ul style="margin:4px 0 0 0;padding-left:20px;">`)
		for _, l := range g.Lines {
			w.put(`<li>`, keep(l), `</li>`)
		}
		w.put(`</ul>`)
		if i == 0 {
			for _, c := range v.Charts {
				width := strconv.Itoa(c.Width)
				w.put(`<img src="`, attrURL(c.Src, true), `" alt="`, esc(c.Alt), `" width="`, width, `" height="`, strconv.Itoa(c.Height),
					`" style="display:block;width:100%;max-width:`, width, `px;height:auto;margin:8px 0 0 0;border:0;background:#ffffff;">`)
			}
		}
		w.put(`</td></tr></table>
`)
	}
}

func htmlSummary(w *writer, v *view) {
	w.put(`<h2 style="margin:0 0 8px 0;font-size:16px;">Summary</h2>
`)
	for _, s := range v.Summaries {
		w.put(`<p style="margin:0 0 4px 0;">`, keep(s), `</p>`)
	}
	w.put(`
<p style="margin:8px 0;color:#5e6c84;font-size:12px;">Generated `, keep(v.Generated), ` · sources `, esc(v.Sources), ` · exit `, strconv.Itoa(v.ExitCode))
	if v.ExitNote != "" {
		w.put(` (`, esc(v.ExitNote), `)`)
	}
	if v.ReportURL != "" {
		w.put(` · <a href="`, attrURL(v.ReportURL, false), `" style="color:#0052cc;">full report</a>`)
	}
	w.put(`</p>
`)
	if len(v.Totals) > 0 {
		w.put(`<div style="overflow-x:auto;max-width:100%;margin:8px 0;"><table cellpadding="6" cellspacing="0" border="0" style="border-collapse:collapse;">
<tr>`)
		for _, h := range totalsHeader {
			w.put(`<th align="left" style="border-bottom:2px solid #dfe1e6;font-size:12px;color:#5e6c84;">`, esc(h), `</th>`)
		}
		w.put(`</tr>
`)
		for _, r := range totalsRows(v.Totals) {
			w.put(`<tr>`)
			for _, c := range r {
				w.put(`<td style="border-bottom:1px solid #ebecf0;">`, keep(c), `</td>`)
			}
			w.put(`</tr>
`)
		}
		w.put(`</table></div>`)
	} else {
		w.put(`<p>Nothing would be deleted or marked.</p>`)
	}
	if v.Waste != "" {
		w.put(`<p style="margin:4px 0;">`, keep(v.Waste), `</p>`)
	}
	w.put(`
`)
	for _, t := range v.Overview {
		htmlTable(w, t)
	}
	w.put(`
`)
}

func htmlNew(w *writer, n newView) {
	w.put(`<tr><td style="padding:16px 20px;border-top:1px solid #dfe1e6;">
<h2 style="margin:0 0 8px 0;font-size:16px;">New since the previous report`)
	if n.Known {
		w.put(` (`, esc(n.Since), `)`)
	}
	w.put(`</h2>
`)
	if !n.Known {
		w.put(`<p style="margin:0 0 8px 0;">This is the first report to this address: everything below is new.</p>`)
	}
	w.put(`
`)
	if len(n.Rows) > 0 {
		htmlTable(w, n.Table)
	} else {
		w.put(`<p style="margin:0;">Nothing new to delete or mark.</p>`)
	}
	w.put(`
`)
	if n.Gone != 0 {
		w.put(`<p style="margin:8px 0 0 0;">`, strconv.Itoa(n.Gone), ` listed in the previous report no longer are (deleted, protected or in use again).</p>`)
	}
	w.put(`
</td></tr>
`)
}

func htmlNext(w *writer, n nextView) {
	w.put(`<tr><td style="padding:16px 20px;border-top:1px solid #dfe1e6;">
<h2 style="margin:0 0 8px 0;font-size:16px;">Deleted at the next run unless protected</h2>
`)
	if n.When != "" {
		w.put(`<p style="margin:0 0 8px 0;">Next run: <strong>`, keep(n.When), `</strong></p>`)
	}
	if n.Counts != "" {
		w.put(`<p style="margin:0 0 8px 0;">`, keep(n.Counts), `</p>`)
	}
	w.put(`
`)
	if len(n.Rows) > 0 {
		htmlTable(w, n.Table)
		w.put(`
<p style="margin:8px 0 4px 0;"><strong>To keep one:</strong></p>
<ul style="margin:0;padding-left:20px;">`)
		for _, o := range n.OptOut {
			w.put(`<li>`, esc(o.Noun), `: `, keep(o.How), `</li>`)
		}
		w.put(`</ul>
`)
	} else {
		w.put(`<p style="margin:0;">Nothing is due at the next run.</p>`)
	}
	w.put(`
</td></tr>
`)
}

// htmlTable is a titled table, "+N more" under it, then its lines.
func htmlTable(w *writer, t Table) {
	if t.Title != "" {
		w.put(`<p style="margin:12px 0 4px 0;font-weight:bold;">`, esc(t.Title), `</p>`)
	}
	w.put(`
`)
	if len(t.Rows) > 0 {
		w.put(`<div style="overflow-x:auto;max-width:100%;"><table cellpadding="4" cellspacing="0" border="0" style="border-collapse:collapse;font-size:12px;line-height:16px;">
`)
		if len(t.Header) > 0 {
			w.put(`<tr>`)
			for _, h := range t.Header {
				w.put(`<th align="left" style="border-bottom:2px solid #dfe1e6;color:#5e6c84;">`, esc(h), `</th>`)
			}
			w.put(`</tr>
`)
		}
		for _, r := range t.Rows {
			w.put(`<tr>`)
			for _, c := range r {
				w.put(`<td valign="top" style="border-bottom:1px solid #ebecf0;overflow-wrap:break-word;word-break:normal;">`, keep(c), `</td>`)
			}
			w.put(`</tr>
`)
		}
		w.put(`</table></div>`)
	}
	w.put(`
`)
	if t.More != 0 {
		w.put(`<p style="margin:4px 0;color:#5e6c84;">+`, strconv.Itoa(t.More), ` more (see report.json)</p>`)
	}
	w.put(`
`)
	for _, l := range t.Lines {
		w.put(`<p style="margin:2px 0;">`, keep(l), `</p>`)
	}
}
