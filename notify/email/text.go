package email

import "strconv"

// renderText writes the plain-text body: the same sections as the HTML,
// tables aligned in columns.
func renderText(v *view) string {
	var w writer
	w.put(v.Title, "\n", v.Headline, "\n")
	if v.DryRun {
		w.put("Dry-run: nothing was deleted.\n")
	}
	for _, g := range v.Warnings {
		w.put("\n! ", g.Title, " (", strconv.Itoa(len(g.Lines)), ")\n")
		for _, l := range g.Lines {
			w.put("  ! ", l, "\n")
		}
	}
	w.put("\n")
	for _, s := range v.Summaries {
		w.put("- ", s, "\n")
	}
	w.put("\nGenerated ", v.Generated, " · sources ", v.Sources, " · exit ", strconv.Itoa(v.ExitCode))
	if v.ExitNote != "" {
		w.put(" (", v.ExitNote, ")")
	}
	w.put("\n")
	if v.ReportURL != "" {
		w.put("Full report: ", v.ReportURL, "\n")
	}
	textSummary(&w, v)
	textNew(&w, v.New)
	textNext(&w, v.Next)
	w.put("\n== DETAILS ==\n")
	for _, t := range v.Kinds {
		w.put("\n")
		textTable(&w, t)
	}
	if len(v.Kinds) == 0 {
		w.put("Nothing would be deleted or marked.\n")
	}
	w.put("\nThe full report is attached as report.json.\n\n")
	return w.String()
}

func textSummary(w *writer, v *view) {
	w.put("\n== SUMMARY ==\n")
	if len(v.Totals) > 0 {
		w.put(tabular(totalsHeader, totalsRows(v.Totals), 0))
	} else {
		w.put("Nothing would be deleted or marked.\n")
	}
	if v.Waste != "" {
		w.put(v.Waste, "\n")
	}
	for _, t := range v.Overview {
		w.put("\n")
		textTable(w, t)
	}
}

func textNew(w *writer, n newView) {
	w.put("\n== NEW SINCE THE PREVIOUS REPORT")
	if n.Known {
		w.put(" (", n.Since, ")")
	}
	w.put(" ==\n")
	if !n.Known {
		w.put("This is the first report to this address: everything below is new.\n")
	}
	if len(n.Rows) > 0 {
		textTable(w, n.Table)
	} else {
		w.put("Nothing new to delete or mark.\n")
	}
	if n.Gone != 0 {
		w.put(strconv.Itoa(n.Gone), " listed in the previous report no longer are (deleted, protected or in use again).\n")
	}
}

func textNext(w *writer, n nextView) {
	w.put("\n== DELETED AT THE NEXT RUN UNLESS PROTECTED ==\n")
	if n.When != "" {
		w.put("Next run: ", n.When, "\n")
	}
	if n.Counts != "" {
		w.put(n.Counts, "\n")
	}
	if len(n.Rows) == 0 {
		w.put("Nothing is due at the next run.\n")
		return
	}
	textTable(w, n.Table)
	w.put("\nTo keep one:\n")
	for _, o := range n.OptOut {
		w.put("  ", o.Noun, ": ", o.How, "\n")
	}
}

func textTable(w *writer, t Table) {
	if t.Title != "" {
		w.put(t.Title, "\n")
	}
	if len(t.Rows) > 0 {
		w.put(tabular(t.Header, t.Rows, 2))
	}
	if t.More != 0 {
		w.put("  +", strconv.Itoa(t.More), " more (see report.json)\n")
	}
	for _, l := range t.Lines {
		w.put("  ", l, "\n")
	}
}
