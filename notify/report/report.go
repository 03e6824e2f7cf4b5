// Package report renders what a run decided and did: text for a terminal and
// JSON with a stable, versioned schema. It knows nothing of any kind: kinds
// show themselves through the plan's sections and summaries.
package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"reclaim.dev/reclaim/base/amount"
	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/reconcile/audit"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Report is one run: its plan and, after apply, what happened.
type Report struct {
	Version string `json:"version"`
	// Mode is "dry-run" or "apply".
	Mode    string          `json:"mode"`
	Plan    *engine.Plan    `json:"plan"`
	Outcome *engine.Outcome `json:"outcome,omitempty"`
	// ExitCode is what the process exits with; see ExitCode.
	ExitCode int `json:"exitCode"`
	// LastSuccess is when a run last exited 0 (this one, if it did).
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
}

// Exit statuses a CronJob can tell apart.
const (
	ExitOK         = 0 // every source complete, every planned delete done
	ExitError      = 1 // the run could not happen (bad config, no state store, ...)
	ExitIncomplete = 3 // the run finished, but deletions were held back: a source was incomplete, or the breaker tripped
	ExitFailed     = 4 // some deletes failed, or were not audited
	// ExitNotifyFailed: the run finished, but a notify target was delivered
	// nothing (see NotifyFailed). It outranks 3 and is outranked by 4 (and 1).
	ExitNotifyFailed = 5
)

// NotifyFailed gives the exit status of a run whose delivery to some notify
// target failed: failed deletes (4) outrank a failed delivery (5), which
// outranks held-back deletions (3), since a report nobody received hides
// those too. A delivery failure never undoes the run: it only changes the
// status.
func NotifyFailed(code int) int {
	switch code {
	case ExitError, ExitFailed:
		return code
	}
	return ExitNotifyFailed
}

// ExitCode gives the exit status: failed deletes outrank incomplete sources.
func ExitCode(p *engine.Plan, o *engine.Outcome) int {
	switch {
	case o != nil && (o.Failed > 0 || o.Stopped != "" || o.Unaudited > 0):
		return ExitFailed
	case p.Incomplete || p.BreakerTripped || notAttempted(o):
		return ExitIncomplete
	}
	return ExitOK
}

// notAttempted says whether a planned delete was not started (the run was
// stopped or cancelled, or what it waits for did not go) or was deferred
// for its snapshot: held back.
func notAttempted(o *engine.Outcome) bool {
	if o == nil {
		return false
	}
	if o.Deferred > 0 {
		return true
	}
	for _, r := range o.Results {
		if r.Result == audit.NotAttempted || r.Result == audit.Deferred {
			return true
		}
	}
	return false
}

// New makes the report of a run.
func New(p *engine.Plan, o *engine.Outcome, apply bool) *Report {
	mode := "dry-run"
	if apply {
		mode = "apply"
	}
	return &Report{Version: engine.SchemaVersion, Mode: mode, Plan: p, Outcome: o, ExitCode: ExitCode(p, o)}
}

// JSON writes the report as indented JSON (as json.Encoder with
// SetIndent("", "  ") would), the plan's decisions one at a time: a
// fleet's report is never held encoded whole.
func (r *Report) JSON(w io.Writer) error {
	o := layout.NewJSONObject(w, "", "  ")
	o.Field("version", r.Version)
	o.Field("mode", r.Mode)
	o.Stream("plan", func(inner string, write func([]byte) error) error {
		if r.Plan == nil {
			return write([]byte("null"))
		}
		return r.Plan.WriteJSON(writeFunc(write), inner, "  ")
	})
	if r.Outcome != nil {
		o.Field("outcome", r.Outcome)
	}
	o.Field("exitCode", r.ExitCode)
	if !r.LastSuccess.IsZero() {
		o.Field("lastSuccess", r.LastSuccess)
	}
	if err := o.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

type writeFunc func([]byte) error

func (f writeFunc) Write(b []byte) (int, error) {
	if err := f(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// TextOptions tune the text report.
type TextOptions struct {
	// MaxKept limits the kept resources listed one per line for each kind of
	// reason (a block row's class); the rest are counted. 0 lists none, -1
	// lists all.
	MaxKept int
}

// Text writes the report for a person at a terminal: the overview sections,
// the sources, what was held back, the detail sections, what apply did and a
// summary.
func (r *Report) Text(w io.Writer, opt TextOptions) error {
	p := r.Plan
	// Written as it is made: a trim's report lists 10,000 results, and
	// building it whole first was the run's last peak of memory.
	b := bufio.NewWriter(w)
	if r.Mode == "dry-run" {
		fmt.Fprintf(b, "reclaim dry-run at %s — nothing was deleted; run with --apply to delete what is marked DELETE\n\n", p.GeneratedAt.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintf(b, "reclaim apply at %s\n\n", p.GeneratedAt.UTC().Format(time.RFC3339))
	}
	writeUrgent(b, p)
	writeDue(b, r)
	if held := HeldBack(r); len(held) > 0 {
		fmt.Fprintln(b, "HELD BACK THIS RUN")
		for _, s := range held {
			fmt.Fprintf(b, "  ! %s\n", s)
		}
		fmt.Fprintln(b)
	}
	writeSections(b, p, layout.Overview, opt)
	writeSources(b, p)
	writeSections(b, p, layout.Details, opt)
	if o := r.Outcome; o != nil {
		writeOutcome(b, o)
	}
	for _, id := range p.Confirmed {
		fmt.Fprintf(b, "confirmed: %s was deleted by an earlier, interrupted run\n", id)
	}
	fmt.Fprintln(b, summary(r))
	return b.Flush()
}

// writeUrgent opens the report with every warning, the soonest exhaustion
// first, each with how long is left.
func writeUrgent(b *bufio.Writer, p *engine.Plan) {
	if len(p.Warnings) == 0 {
		return
	}
	fmt.Fprintln(b, "MOST URGENT")
	for _, w := range p.Warnings {
		fmt.Fprintf(b, "  ! %s\n", UrgentText(w, p.GeneratedAt))
	}
	fmt.Fprintln(b)
}

// UrgentText is a warning led by the time left, when projected: "[runs
// out in 1h34m] subnet-…".
func UrgentText(w layout.Warning, now time.Time) string {
	if left := TimeLeft(w, now); left != "" {
		return "[" + left + "] " + w.Text
	}
	return w.Text
}

// TimeLeft says how long until a warning's resource runs out: "runs out in
// 1h34m", "out now", or "" when not projected.
func TimeLeft(w layout.Warning, now time.Time) string {
	if w.RunsOutAt == nil {
		return ""
	}
	if left := w.RunsOutAt.Sub(now); left > 0 {
		return "runs out in " + layout.HumanDuration(left)
	}
	return "out now"
}

// writeDue says what the run deletes (or would), per kind, before any
// detail.
func writeDue(b *bufio.Writer, r *Report) {
	title := "WOULD BE DELETED THIS RUN (dry-run)"
	if r.Mode == "apply" {
		title = "DUE FOR DELETION THIS RUN"
	}
	var rows [][]string
	ts := Totals(r.Plan)
	for _, t := range ts {
		if t.Delete > 0 {
			saves := "-"
			if t.Saves() > 0 {
				saves = Money(t.Saves(), r.Plan.Currency)
			}
			rows = append(rows, []string{t.Kind, fmt.Sprint(t.Delete), t.FreesText(), saves})
		}
	}
	fmt.Fprintln(b, title)
	if len(rows) == 0 {
		fmt.Fprintln(b, "  nothing")
	} else {
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  KIND\tDELETE\tFREES\tSAVES A MONTH")
		for _, row := range rows {
			fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
		}
		tw.Flush()
	}
	if w := WasteLine(ts, r.Plan.Currency, func(k string) string { return k }); w != "" {
		fmt.Fprintln(b, "  "+w)
	}
	if owners := OwnerTotals(r.Plan); len(owners) > 0 {
		fmt.Fprintln(b, "  by owner (notify.routes):")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    OWNER\tDELETE\tMARKED\tWASTE A MONTH")
		for _, o := range owners {
			name := o.Owner
			if name == "" {
				name = "(no route: the fleet's)"
			}
			fmt.Fprintf(tw, "    %s\t%d\t%d\t%s\n", name, o.Delete, o.Mark, Money(o.Waste, r.Plan.Currency))
		}
		tw.Flush()
	}
	fmt.Fprintln(b)
}

// OwnerTotal is what a plan deletes and marks of one owner's, and what all
// its candidates cost a month.
type OwnerTotal struct {
	Owner string
	Tally
}

// OwnerTotals sums the candidates per owner (Decision.Owner), the costliest
// first and those of no owner last; nil when all are one owner's (a report
// cut to it) or none's (no routes).
func OwnerTotals(p *engine.Plan) []OwnerTotal {
	out := sums(p, func(d *engine.Decision) string { return d.Owner },
		func(owner string) OwnerTotal { return OwnerTotal{Owner: owner} },
		func(t *OwnerTotal) *Tally { return &t.Tally }, func(*OwnerTotal, *engine.Decision) {})
	if len(out) < 2 { // one owner's report, or no routes: nothing to compare
		return nil
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Owner == "") != (b.Owner == "") {
			return b.Owner == ""
		}
		if a.Waste != b.Waste {
			return a.Waste > b.Waste
		}
		return a.Owner < b.Owner
	})
	return out
}

// HeldBack lists why deletions are held this run: the breaker, every
// source not read completely (each by name), what went wrong in apply,
// then the plan's own notes.
func HeldBack(r *Report) []string {
	p := r.Plan
	var held []string
	if p.BreakerTripped && !anyHasPrefix(p.Blocked, "breaker") {
		held = append(held, "breaker tripped: too many resources were due at once, nothing of that kind is deleted this run")
	}
	var incomplete []string
	for _, s := range p.Sources {
		if !s.Complete {
			incomplete = append(incomplete, s.Kind+" "+s.Name)
		}
	}
	if len(incomplete) > 0 {
		held = append(held, "incomplete sources: "+strings.Join(incomplete, ", "))
	}
	if o := r.Outcome; o != nil {
		if o.Stopped != "" {
			held = append(held, "apply stopped: "+o.Stopped)
		}
		if o.Failed > 0 {
			held = append(held, fmt.Sprintf("%d deletes failed", o.Failed))
		}
	}
	return append(held, p.Blocked...)
}

func anyHasPrefix(ss []string, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

func summary(r *Report) string {
	parts := append([]string(nil), r.Plan.Summaries...)
	if o := r.Outcome; o != nil {
		s := fmt.Sprintf("applied: deleted %d", o.Deleted)
		if f := o.Freed.String(); f != "" {
			s += " (" + f + ")"
		}
		s += fmt.Sprintf(", skipped %d, failed %d", o.Skipped, o.Failed)
		if o.Deferred > 0 {
			s += fmt.Sprintf(", deferred %d (held for a later run: see APPLIED)", o.Deferred)
		}
		parts = append(parts, s)
	}
	s := "summary: " + strings.Join(parts, "; ")
	switch r.ExitCode {
	case ExitIncomplete:
		s += "\nexit 3: deletions were held back (an incomplete source, or the breaker): see HELD BACK THIS RUN"
	case ExitFailed:
		s += "\nexit 4: some deletes failed"
	case ExitNotifyFailed:
		s += "\nexit 5: the report could not be delivered to some notify target (see the log)"
	}
	return s
}

// writeSections writes the plan's sections of one place, in plan order.
func writeSections(b *bufio.Writer, p *engine.Plan, place layout.Place, opt TextOptions) {
	for _, s := range p.Sections {
		if s.Place == place {
			writeSection(b, s, opt)
		}
	}
}

// writeSection writes a section's title, then each block: its heading, its
// header and rows aligned in columns (kept rows, those with a class, at most
// opt.MaxKept of each class, the rest counted), its lines; then a blank line.
func writeSection(b *bufio.Writer, s layout.Section, opt TextOptions) {
	if s.Title == "" && len(s.Blocks) == 0 {
		return
	}
	if s.Title != "" {
		fmt.Fprintln(b, s.Title)
	}
	for _, bl := range s.Blocks {
		if bl.Heading != "" {
			fmt.Fprintln(b, bl.Heading)
		}
		indent := strings.Repeat(" ", bl.Indent)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		if len(bl.Header) > 0 {
			fmt.Fprint(tw, indent+strings.Join(bl.Header, "\t")+"\n")
		}
		shown, more := map[string]int{}, map[string]int{}
		for i, row := range bl.Rows {
			if i < len(bl.Classes) && bl.Classes[i] != "" {
				c := bl.Classes[i]
				if opt.MaxKept >= 0 && shown[c] >= opt.MaxKept {
					more[c]++
					continue
				}
				shown[c]++
			}
			fmt.Fprint(tw, indent+strings.Join(row, "\t")+"\n")
		}
		tw.Flush()
		for _, c := range sortedByCount(more) {
			fmt.Fprintf(b, "%s%s  %d more: %s\n", indent, cmp.Or(bl.Counted, "KEEP"), more[c], c)
		}
		for _, l := range bl.Lines {
			fmt.Fprintln(b, l)
		}
	}
	fmt.Fprintln(b)
}

func writeSources(b *bufio.Writer, p *engine.Plan) {
	fmt.Fprintln(b, "SOURCES")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, s := range p.Sources {
		unit := s.Unit
		if unit == "" {
			unit = "items"
		}
		state := "complete"
		if !s.Complete {
			state = "INCOMPLETE"
		}
		dur := ""
		if s.Duration > 0 {
			dur = s.Duration.Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "  %s %s\t%s\t%d %s\t%s\n", s.Kind, s.Name, state, s.Items, unit, dur)
		for _, pr := range s.Problems {
			fmt.Fprintf(tw, "    - %s\n", pr)
		}
	}
	tw.Flush()
	fmt.Fprintln(b)
}

func writeOutcome(b *bufio.Writer, o *engine.Outcome) {
	fmt.Fprintln(b, "APPLIED")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, r := range o.Results {
		msg := r.Reason
		if r.Error != "" {
			msg = r.Error
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", strings.ToUpper(r.Result), r.ID, msg)
	}
	tw.Flush()
	// One line a kind and result, whoever owns them.
	type unlisted struct{ kind, result string }
	var order []unlisted
	more := map[unlisted]int{}
	for _, u := range o.Unlisted {
		k := unlisted{u.Kind, u.Result}
		if _, ok := more[k]; !ok {
			order = append(order, k)
		}
		more[k] += u.Count
	}
	for _, k := range order {
		fmt.Fprintf(b, "  %s: %d more %s, listed in the audit log\n", strings.ToUpper(k.result), more[k], k.kind)
	}
	if o.Stopped != "" {
		fmt.Fprintf(b, "  ! %s\n", o.Stopped)
	}
	fmt.Fprintln(b)
}

func sortedByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// KindTotal is what a plan deletes of one kind.
type KindTotal struct {
	Kind string
	Tally
	// Freed sums what the due deletions free, and what they cost a month
	// (Saves).
	Freed amount.Total
}

// Saves is what the due deletions cost a month (Waste: every candidate), in
// the plan's currency.
func (t KindTotal) Saves() float64 { return t.Freed.Cost }

// Acted says whether the plan deletes or marks any of the kind: a kind
// whose candidates are only reported counts in the waste alone.
func (t KindTotal) Acted() bool { return t.Delete > 0 || t.Mark > 0 }

// Money writes an amount a month: "406.20 USD".
func Money(x float64, currency string) string {
	return fmt.Sprintf("%.2f %s", x, currency)
}

// WasteLine says what the candidates of the totals cost a month and what
// this plan saves: "waste: 406.20 USD a month (disks 380.00, images
// 26.20); this plan saves 300.00 USD a month". "" when nothing is priced.
func WasteLine(ts []KindTotal, currency string, nouns func(kind string) string) string {
	var waste, saves float64
	var parts []string
	for _, t := range ts {
		if t.Waste <= 0 {
			continue
		}
		waste += t.Waste
		saves += t.Saves()
		parts = append(parts, fmt.Sprintf("%s %.2f", nouns(t.Kind), t.Waste))
	}
	if waste <= 0 {
		return ""
	}
	return fmt.Sprintf("waste: %s a month (%s); this plan saves %s a month", Money(waste, currency), strings.Join(parts, ", "), Money(saves, currency))
}

// FreesText says what deleting a kind's due resources frees: "300 GB",
// "99.5 GB" of images, "8436 subnet addresses", or "".
func (t KindTotal) FreesText() string { return t.Freed.String() }

// Totals sums the deletions and marks of the plan per kind, in the order
// kinds first appear among the decisions.
func Totals(p *engine.Plan) []KindTotal {
	return sums(p, func(d *engine.Decision) string { return d.Kind },
		func(kind string) KindTotal { return KindTotal{Kind: kind} },
		func(t *KindTotal) *Tally { return &t.Tally },
		func(t *KindTotal, d *engine.Decision) {
			if d.Action == engine.Delete {
				t.Freed.Add(d.Frees)
			}
		})
}

// Tally counts a group of candidates: how many are deleted and marked,
// and what all of them (only-reported ones too) cost a month.
type Tally struct {
	Delete, Mark int
	Waste        float64
}

// sums groups the candidates of p (deleted, marked, or reported and
// priced) by key, in the order the keys first appear: each group is made
// by fresh, its Tally counted, and more added by more. It reads what
// Plan.Brief gives: Kind, Owner, Action and Frees.
func sums[T any](p *engine.Plan, key func(*engine.Decision) string, fresh func(string) T, tally func(*T) *Tally, more func(*T, *engine.Decision)) []T {
	if p == nil {
		return nil
	}
	at := map[string]int{}
	var out []T
	for d := range p.Brief() {
		if d.Action != engine.Delete && d.Action != engine.Mark && (d.Action != engine.Report || d.Frees.Cost == 0) {
			continue
		}
		k := key(d)
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, fresh(k))
		}
		t := tally(&out[j])
		t.Waste += d.Frees.Cost
		switch d.Action {
		case engine.Delete:
			t.Delete++
		case engine.Mark:
			t.Mark++
		}
		more(&out[j], d)
	}
	return out
}

// ForOwners cuts a report to the candidates of owners (Decision.Owner,
// named by notify.routes), for a team's notify targets: their decisions
// and what apply did to them, the sources and held-back notes (which hold
// theirs too), but not the fleet's warnings, sections and summaries, which
// go to the fleet's targets. The exit status stays the run's.
func ForOwners(r *Report, owners []string) *Report {
	if r == nil || r.Plan == nil {
		return r
	}
	out := *r
	ids := map[string]bool{}
	p := r.Plan.Cut(func(d *engine.Decision) bool {
		if d.Owner != "" && slices.Contains(owners, d.Owner) {
			ids[d.Kind+"\x00"+d.ID] = true
			return true
		}
		return false
	})
	p.Sections, p.Summaries, p.Warnings, p.Gauges = nil, nil, nil, nil
	out.Plan = p
	if o := r.Outcome; o != nil {
		cut := &engine.Outcome{Stopped: o.Stopped}
		for _, res := range o.Results {
			if ids[res.Kind+"\x00"+res.ID] {
				cut.Add(res)
			}
		}
		for _, u := range o.Unlisted {
			if u.Owner != "" && slices.Contains(owners, u.Owner) {
				cut.AddUnlisted(u)
			}
		}
		out.Outcome = cut
	}
	return &out
}
