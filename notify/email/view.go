// Package email delivers run reports by SMTP (wneessen/go-mail): a
// multipart/alternative message with a plain-text and an HTML part (written
// in plain Go: render.go says why), and the full JSON report attached. A
// message that cannot be sent is spooled as a .eml file and sent by a later
// run, before that run's own report. Like the rest of notify it reads the report generically:
// every kind-specific word comes from the plan (summaries, sections) or the
// kinds' limits (nouns, how to opt out).
package email

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/chart"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Options shape a report's email.
type Options struct {
	// Fleet names the fleet in the subject and the title; empty leaves it out.
	Fleet string
	// ReportURL, when set, is linked as the full report.
	ReportURL string
	// MaxRows is how many rows each Table shows before "+N more" (default 20).
	MaxRows int
	// Nouns name kinds' resources ("gce-disk": "disks"); see notify.Noun.
	Nouns map[string]string
	// OptOut says per kind how to keep a resource (a kind's OptOut: report.OptOuter).
	OptOut map[string]string
	// NextRun is when the next run is due; marks deletable before it are
	// "deleted at the next run unless protected". Zero: unknown, then only
	// what is deletable now is listed.
	NextRun time.Time
	// ChartSrc is where the HTML finds the nth chart (from 1): nil, the
	// message's inline part (cid:); a page or files say their own.
	ChartSrc func(n int, c chart.Chart) string
}

// MaxCharts is how many pools the email charts at most.
const MaxCharts = 3

// ChartCID is the content-id of the nth chart (from 1) in the message, as
// a cid: URL names it (RFC 2392; the header has it in angle brackets).
func ChartCID(n int) string { return fmt.Sprintf("chart-%d@reclaim", n) }

// chartImg is a chart as the HTML shows it.
type chartImg struct {
	// Src is trusted: it is ours (cid:, data: or a file name), so any
	// scheme is kept.
	Src           string
	Alt           string
	Width, Height int
}

// view is what the bodies show.
type view struct {
	Title     string
	Subject   string
	Mode      string
	DryRun    bool
	Headline  string
	Summaries []string
	Generated string
	ExitCode  int
	ExitNote  string
	Sources   string
	ReportURL string

	Totals []total
	// Waste prices the candidates and what the plan saves ("" unpriced).
	Waste    string
	Warnings []notify.WarningGroup
	// Charts are of the most urgent pools, shown under their warnings.
	Charts   []chartImg
	Overview []Table

	New  newView
	Next nextView
	// Kinds are the details: per kind, what is deleted or marked.
	Kinds []Table
}

type total struct {
	Noun, Delete, Mark, Frees, Saves string
}

// Table is a titled table cut at MaxRows; More counts the rows left out.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	More   int
	Lines  []string
}

type newView struct {
	Known bool
	Since string
	Table
	// Gone counts what the previous report listed and this one does not.
	Gone int
}

type nextView struct {
	When string
	// Counts says how many of each kind, before the rows: "8436 Jobs, 490
	// images, 8 disks, 1 interface".
	Counts string
	Table
	OptOut []optOut
}

type optOut struct{ Noun, How string }

// build makes the view of a report and its charts.
func build(rep *report.Report, prev notify.Previous, opt Options, charts []chart.Chart) *view {
	if opt.MaxRows < 1 {
		opt.MaxRows = 20
	}
	p := rep.Plan
	if p == nil {
		p = &engine.Plan{}
	}
	v := &view{Mode: rep.Mode, DryRun: rep.Mode != "apply", Headline: notify.Headline(rep, opt.Nouns),
		Summaries: p.Summaries, Generated: stamp(p.GeneratedAt), ExitCode: rep.ExitCode, ReportURL: opt.ReportURL}
	v.Title = "reclaim " + rep.Mode
	if opt.Fleet != "" {
		v.Title += " · " + opt.Fleet
	}
	v.Subject = subject(rep, opt)
	v.ExitNote = exitNote(rep.ExitCode)
	complete := 0
	for _, s := range p.Sources {
		if s.Complete {
			complete++
		}
	}
	v.Sources = fmt.Sprintf("%d of %d complete", complete, len(p.Sources))

	ts := report.Totals(p)
	v.Waste = report.WasteLine(ts, p.Currency, func(k string) string { return notify.Noun(k, opt.Nouns) })
	for _, t := range ts {
		if !t.Acted() {
			continue
		}
		saves := ""
		if t.Saves() > 0 {
			saves = report.Money(t.Saves(), p.Currency)
		}
		v.Totals = append(v.Totals, total{Noun: notify.Noun(t.Kind, opt.Nouns), Delete: fmt.Sprint(t.Delete), Mark: fmt.Sprint(t.Mark), Frees: t.FreesText(), Saves: saves})
	}
	v.Warnings = notify.WarningGroups(rep)
	for i, c := range charts {
		src := "cid:" + ChartCID(i+1)
		if opt.ChartSrc != nil {
			src = opt.ChartSrc(i+1, c)
		}
		v.Charts = append(v.Charts, chartImg{Src: src, Alt: c.Alt, Width: chart.Width, Height: chart.Height})
	}
	if owners := report.OwnerTotals(p); len(owners) > 0 {
		t := Table{Title: "By owner (notify.routes)", Header: []string{"OWNER", "TO DELETE", "MARKED", "WASTE A MONTH"}}
		for _, o := range owners {
			name := o.Owner
			if name == "" {
				name = "no route: the fleet's"
			}
			t.Rows = append(t.Rows, []string{name, fmt.Sprint(o.Delete), fmt.Sprint(o.Mark), report.Money(o.Waste, p.Currency)})
		}
		t.Rows, t.More = cut(t.Rows, opt.MaxRows)
		v.Overview = append(v.Overview, t)
	}
	for _, s := range p.Sections {
		if s.Place != layout.Overview {
			continue
		}
		for i, b := range s.Blocks {
			t := Table{Title: b.Heading, Header: b.Header, Lines: nonWarnings(b.Lines)}
			if i == 0 && s.Title != "" {
				t.Title = strings.TrimSpace(s.Title + " " + b.Heading)
			}
			t.Rows, t.More = cut(b.Rows, opt.MaxRows)
			if len(t.Rows) > 0 || len(t.Lines) > 0 {
				v.Overview = append(v.Overview, t)
			}
		}
	}

	v.New = newSince(p, prev, opt)
	v.Next = nextRun(rep, p, opt)
	v.Kinds = details(rep, p, opt)
	return v
}

// subject: "[reclaim dry-run] prod: <most urgent>; <headline> (+N more
// warnings)": what runs out first leads, then what the run deletes.
func subject(rep *report.Report, opt Options) string {
	s := "[reclaim " + rep.Mode + "] "
	if opt.Fleet != "" {
		s += opt.Fleet + ": "
	}
	w := notify.Warnings(rep)
	if len(w) > 0 {
		s += notify.Truncate(notify.Urgent(rep), 110) + "; "
	}
	s += notify.Headline(rep, opt.Nouns)
	if len(w) > 1 {
		s += fmt.Sprintf(" (+%d more warning%s)", len(w)-1, notify.Plural(len(w)-1))
	}
	return notify.Truncate(s, 250)
}

func exitNote(code int) string {
	switch code {
	case report.ExitOK:
		return "every source complete"
	case report.ExitIncomplete:
		return "deletions were held back"
	case report.ExitFailed:
		return "some deletes failed"
	case report.ExitNotifyFailed:
		return "a notify target was delivered nothing"
	}
	return ""
}

// newSince lists the delete and mark decisions the previous report delivered
// to this target did not have.
func newSince(p *engine.Plan, prev notify.Previous, opt Options) newView {
	nv := newView{Known: prev.Known}
	if prev.Known {
		nv.Since = stamp(prev.At)
	}
	nv.Header = []string{"KIND", "ACTION", "ID", "FREES", "REASON"}
	var rows [][]string
	now := map[string]bool{}
	for d := range p.All() {
		if d.Action != engine.Delete && d.Action != engine.Mark {
			continue
		}
		now[notify.DecisionKey(d)] = true
		if prev.IsNew(d) {
			rows = append(rows, []string{notify.Noun(d.Kind, opt.Nouns), strings.ToUpper(string(d.Action)), d.ID, d.Frees.String(), d.Why()})
		}
	}
	for k := range prev.Keys {
		if !now[k] {
			nv.Gone++
		}
	}
	nv.Rows, nv.More = cut(rows, opt.MaxRows)
	return nv
}

// nextRun lists what the next run deletes unless someone protects it: in a
// dry-run every delete decision, and every mark whose grace ends before
// the next run; each with its exact time.
func nextRun(rep *report.Report, p *engine.Plan, opt Options) nextView {
	nv := nextView{}
	nv.Header = []string{"KIND", "ID", "FREES", "DELETABLE AFTER", "WHY"}
	limit := p.GeneratedAt
	if !opt.NextRun.IsZero() {
		limit = opt.NextRun
		nv.When = stamp(opt.NextRun)
	}
	type due struct {
		at  time.Time
		row []string
	}
	var ds []due
	kinds := map[string]bool{}
	for d := range p.All() {
		at := p.GeneratedAt
		switch {
		case d.Action == engine.Delete && rep.Mode != "apply":
			if d.DeletableAfter != nil {
				at = *d.DeletableAfter
			}
		case d.Action == engine.Mark && d.DeletableAfter != nil && !d.DeletableAfter.After(limit):
			at = *d.DeletableAfter
		default:
			continue
		}
		kinds[d.Kind] = true
		ds = append(ds, due{at, []string{notify.Noun(d.Kind, opt.Nouns), d.ID, d.Frees.String(), stamp(at), d.Why()}})
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].at.Before(ds[j].at) })
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	// Each kind gets its share of the rows, so 8,000 Jobs do not hide the
	// one disk: the kinds take turns, each its earliest first.
	byKind := map[string][][]string{}
	for i := range ds {
		k := ds[i].row[0]
		byKind[k] = append(byKind[k], ds[i].row)
	}
	var nouns []string
	for _, k := range ks {
		nouns = append(nouns, notify.Noun(k, opt.Nouns))
	}
	sort.SliceStable(nouns, func(i, j int) bool { return len(byKind[nouns[i]]) > len(byKind[nouns[j]]) })
	var counts []string
	for _, n := range nouns {
		if c := len(byKind[n]); c == 1 {
			counts = append(counts, "1 "+strings.TrimSuffix(n, "s"))
		} else {
			counts = append(counts, fmt.Sprintf("%d %s", c, n))
		}
	}
	nv.Counts = strings.Join(counts, ", ")
	nv.Rows, nv.More = fairCut(byKind, nouns, opt.MaxRows)
	for _, k := range ks {
		if how := opt.OptOut[k]; how != "" {
			nv.OptOut = append(nv.OptOut, optOut{Noun: notify.Noun(k, opt.Nouns), How: how})
		}
	}
	return nv
}

// details: per kind, the delete and mark decisions (deletions first), with
// apply's result when there is one.
func details(rep *report.Report, p *engine.Plan, opt Options) []Table {
	results := map[string]engine.Result{}
	if o := rep.Outcome; o != nil {
		for _, r := range o.Results {
			results[r.Kind+"\x00"+r.ID] = r
		}
	}
	var out []Table
	for _, t := range report.Totals(p) {
		if !t.Acted() {
			continue
		}
		noun := notify.Noun(t.Kind, opt.Nouns)
		var rows [][]string
		for _, a := range []engine.Action{engine.Delete, engine.Mark} {
			for d := range p.All() {
				if d.Kind != t.Kind || d.Action != a {
					continue
				}
				act := strings.ToUpper(string(d.Action))
				if r, ok := results[d.Kind+"\x00"+d.ID]; ok {
					act += " → " + strings.ToUpper(r.Result)
					if r.Error != "" {
						act += ": " + r.Error
					}
				}
				after := ""
				if d.DeletableAfter != nil {
					after = stamp(*d.DeletableAfter)
				}
				rows = append(rows, []string{act, d.ID, d.Name, d.Frees.String(), after, d.Why()})
			}
		}
		tb := Table{Title: fmt.Sprintf("%s: %d to delete, %d marked", noun, t.Delete, t.Mark),
			Header: []string{"ACTION", "ID", "NAME", "FREES", "DELETABLE AFTER", "REASON"}}
		if f := t.FreesText(); f != "" {
			tb.Title += " (deleting frees " + f + ")"
		}
		tb.Rows, tb.More = cut(rows, opt.MaxRows)
		out = append(out, tb)
	}
	return out
}

func nonWarnings(lines []string) []string {
	var out []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "!") {
			out = append(out, t)
		}
	}
	return out
}

// fairCut takes at most max rows from the groups, in turns (order gives
// the groups' order), and says how many it left out.
func fairCut(groups map[string][][]string, order []string, max int) ([][]string, int) {
	var out [][]string
	total := 0
	for _, g := range order {
		total += len(groups[g])
	}
	for i := 0; len(out) < max && len(out) < total; i++ {
		for _, g := range order {
			if i < len(groups[g]) && len(out) < max {
				out = append(out, groups[g][i])
			}
		}
	}
	return out, total - len(out)
}

func cut(rows [][]string, max int) ([][]string, int) {
	if len(rows) <= max {
		return rows, 0
	}
	return rows[:max], len(rows) - max
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}
