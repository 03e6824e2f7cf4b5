// Package notify delivers run reports to people (Slack now, email next) and
// decides when: every run, when what would be deleted changed, or only when
// there is a warning. It reads the report — the decision envelope, the
// summaries, the held-back notes and the kinds' sections — and never
// recomputes the plan. Delivery failures are results, not errors of the run.
package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
)

// When a target is sent a report (config: notify.slack[].when).
type When string

const (
	// WhenAlways: every run.
	WhenAlways When = "always"
	// WhenChanges: when the set of (kind, id, action) of what would be deleted or
	// marked differs from the last report delivered to the target, or when
	// any warning is present.
	WhenChanges When = "changes"
	// WhenWarnings: only when a warning or held-back note is present.
	WhenWarnings When = "warnings"
)

// Target is one place reports are delivered to.
type Target interface {
	// Name is the configured name: logs and metrics use it, never the
	// target's secret.
	Name() string
	// Type is "slack" (or, later, "email").
	Type() string
	When() When
	// Deliver sends the report. Its error must not contain a secret.
	Deliver(ctx context.Context, rep *report.Report) error
	// Test sends a short test message.
	Test(ctx context.Context) error
}

// SinceTarget is a Target that shows what is new since the report it was
// last delivered (email); the Deliverer calls DeliverSince instead of Deliver.
type SinceTarget interface {
	Target
	DeliverSince(ctx context.Context, rep *report.Report, prev Previous) error
}

// Previous is what a target was last delivered.
type Previous struct {
	// Known is false when nothing was delivered there yet, or the state file
	// predates decision sets: then everything reads as new.
	Known bool
	At    time.Time
	// Keys are DecisionKey of each delete or mark decision of that report.
	Keys map[string]bool
}

// IsNew says whether a decision was not in the previous report (as the same
// action): everything is new when the previous report is unknown.
func (p Previous) IsNew(d *engine.Decision) bool {
	return !p.Known || !p.Keys[DecisionKey(d)]
}

// DecisionKey names a decision in the state file: "kind id action".
func DecisionKey(d *engine.Decision) string {
	return d.Kind + " " + d.ID + " " + string(d.Action)
}

// Results of a delivery: the values of the result label of
// reclaim_notify_deliveries_total.
const (
	Sent    = "sent"
	Skipped = "skipped"
	Failed  = "failed"
)

// ResultValues lists every result, for metrics that start each at zero.
var ResultValues = []string{Sent, Skipped, Failed}

// Result is what happened at one target.
type Result struct {
	Target string
	Type   string
	// Owners are the owners the target's report was cut to (Deliverer.Owners);
	// Report is the report it was sent or would have been.
	Owners []string
	Report *report.Report
	// Result is Sent, Skipped or Failed.
	Result string
	// Why says why a report was sent or skipped.
	Why string
	Err error
}

// AnyFailed reports whether some target was delivered nothing.
func AnyFailed(rs []Result) bool {
	for _, r := range rs {
		if r.Result == Failed {
			return true
		}
	}
	return false
}

// Deliverer delivers one report to every target, each according to its
// When, remembering per target what it delivered last in StateFile.
type Deliverer struct {
	Targets []Target
	// Owners are, per target name, the owners a routed target's report is
	// cut to (report.ForOwners); a target not named gets the whole report.
	Owners    map[string][]string
	StateFile string
	Log       *zap.Logger
	Now       func() time.Time
}

// cut is one version of the report: the whole, or one owner set's.
type cut struct {
	rep      *report.Report
	fp       string
	n        int
	set      []string
	warnings bool
}

func newCut(rep *report.Report) *cut {
	fp, n := Fingerprint(rep)
	return &cut{rep: rep, fp: fp, n: n, set: decisionSet(rep), warnings: len(Warnings(rep)) > 0}
}

// Deliver delivers rep to every target and returns one result each, in
// order. It never fails the run: a target that could not be reached, or a
// state file that cannot be read or written, is logged and reported.
func (d *Deliverer) Deliver(ctx context.Context, rep *report.Report) []Result {
	log, now := d.Log, d.Now
	if log == nil {
		log = zap.NewNop()
	}
	if now == nil {
		now = time.Now
	}
	st, err := loadState(d.StateFile)
	if err != nil {
		// Unknown history reads as "changed": a message too many, never one too few.
		log.Warn("notify state unreadable; every target is treated as changed", zap.String("file", d.StateFile), zap.Error(err))
	}
	cuts := map[string]*cut{"": newCut(rep)}
	dirty := false
	out := make([]Result, 0, len(d.Targets))
	for _, t := range d.Targets {
		owners := d.Owners[t.Name()]
		key := strings.Join(owners, "\x00")
		c := cuts[key]
		if c == nil {
			c = newCut(report.ForOwners(rep, owners))
			cuts[key] = c
		}
		r := Result{Target: t.Name(), Type: t.Type(), Owners: owners, Report: c.rep}
		last, seen := st.Targets[t.Name()]
		send, why := Decide(t.When(), c.fp, last.Fingerprint, seen, c.warnings)
		r.Why = why
		fields := []zap.Field{zap.String("target", t.Name()), zap.String("type", t.Type()), zap.String("when", string(t.When()))}
		if !send {
			r.Result = Skipped
			log.Info("notify: nothing to send", append(fields, zap.String("reason", why))...)
			out = append(out, r)
			continue
		}
		var derr error
		if st, ok := t.(SinceTarget); ok {
			derr = st.DeliverSince(ctx, c.rep, last.previous(seen))
		} else {
			derr = t.Deliver(ctx, c.rep)
		}
		if err := derr; err != nil {
			r.Result, r.Err = Failed, err
			log.Warn("notify: delivery failed", append(fields, zap.String("reason", why), zap.Error(err))...)
			out = append(out, r)
			continue
		}
		r.Result = Sent
		log.Info("notify: delivered", append(fields, zap.String("reason", why))...)
		st.Targets[t.Name()] = targetState{Fingerprint: c.fp, Decisions: c.n, DeliveredAt: now().UTC(), Set: c.set}
		dirty = true
		out = append(out, r)
	}
	if dirty {
		if err := saveState(d.StateFile, st); err != nil {
			log.Warn("notify state not saved; the next run may send the same report again", zap.String("file", d.StateFile), zap.Error(err))
		}
	}
	return out
}

// Decide says whether a target with policy w is sent a report whose
// fingerprint is fp, given the fingerprint last delivered there (if any) and
// whether the report has a warning; and why.
func Decide(w When, fp, last string, seen, warnings bool) (bool, string) {
	switch w {
	case WhenAlways:
		return true, "when: always"
	case WhenWarnings:
		if warnings {
			return true, "a warning is present"
		}
		return false, "no warning"
	}
	switch {
	case warnings:
		return true, "a warning is present"
	case !seen:
		return true, "first report to this target"
	case fp != last:
		return true, "what would be deleted or marked changed"
	}
	return false, "unchanged since the last delivered report"
}

// Fingerprint identifies the set of (kind, id, action) of the decisions that
// delete or mark, whatever their order; n is how many there are.
func Fingerprint(rep *report.Report) (fp string, n int) {
	var keys []string
	if rep.Plan != nil {
		for d := range rep.Plan.All() {
			if d.Action == engine.Delete || d.Action == engine.Mark {
				keys = append(keys, d.Kind+"\x00"+d.ID+"\x00"+string(d.Action))
			}
		}
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), len(keys)
}

// Warnings lists what a person should know first: the lines of every
// WarningGroups group, in order.
func Warnings(rep *report.Report) []string {
	var out []string
	for _, g := range WarningGroups(rep) {
		out = append(out, g.Lines...)
	}
	return out
}

// Urgent names the most urgent thing in a few words, for a subject or a
// Slack preview: the plan's first warning up to its first ": " or ", ",
// and the time left when projected ("subnet-1 (us-east-1a) is 92% used —
// runs out in 1h30m"); else the first held-back line ("incomplete sources:
// cluster b"). "" when there is nothing.
func Urgent(rep *report.Report) string {
	p := rep.Plan
	if p == nil {
		return ""
	}
	if len(p.Warnings) > 0 {
		return Short(p.Warnings[0], p.GeneratedAt)
	}
	if w := Warnings(rep); len(w) > 0 {
		return w[0]
	}
	return ""
}

// Short is a warning in a few words, with the time left when projected:
// what a subject, a Slack preview and a chart's title say of it.
func Short(w layout.Warning, now time.Time) string {
	s := shortClause(w.Text)
	if left := report.TimeLeft(w, now); left != "" {
		s += " — " + left
	}
	return s
}

// shortClause is s up to its first ": " or ", " (a full stop dropped).
func shortClause(s string) string {
	for _, sep := range []string{": ", ", "} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	return strings.TrimSuffix(s, ".")
}

// WarningGroup is a titled list of warnings.
type WarningGroup struct {
	Title string
	Lines []string
}

// WarningGroups are the report's warnings, most urgent first: the plan's
// warnings (quotas, subnets and repositories near their limits, the soonest
// exhaustion first, each led by the time left); then "held back" (the
// breaker, every source not read completely, what went wrong in apply,
// every held-back note of plan.Blocked); then, per overview section, its
// other lines that start with "!", titled with the section's title.
func WarningGroups(rep *report.Report) []WarningGroup {
	p := rep.Plan
	if p == nil {
		return nil
	}
	var out []WarningGroup
	seen := map[string]bool{}
	if len(p.Warnings) > 0 {
		g := WarningGroup{Title: "most urgent"}
		for _, w := range p.Warnings {
			g.Lines = append(g.Lines, report.UrgentText(w, p.GeneratedAt))
			seen[w.Text] = true
		}
		out = append(out, g)
	}
	if held := report.HeldBack(rep); len(held) > 0 {
		out = append(out, WarningGroup{Title: "held back", Lines: held})
	}
	for _, s := range p.Sections {
		if s.Place != layout.Overview {
			continue
		}
		var lines []string
		for _, b := range s.Blocks {
			for _, l := range b.Lines {
				t := strings.TrimSpace(l)
				if !strings.HasPrefix(t, "!") {
					continue
				}
				if t = strings.TrimSpace(strings.TrimPrefix(t, "!")); !seen[t] {
					lines = append(lines, t)
				}
			}
		}
		if len(lines) > 0 {
			title := s.Title
			if title == "" {
				title = s.Key
			}
			out = append(out, WarningGroup{Title: title, Lines: lines})
		}
	}
	return out
}

// Noun names a kind's resources: nouns[kind] when given (a kind's
// Limits().Noun), else the last word of its name in the plural ("gce-disk":
// disks, "k8s-pvc": PVCs).
func Noun(kind string, nouns map[string]string) string {
	if n := nouns[kind]; n != "" {
		return n
	}
	w := kind[strings.LastIndex(kind, "-")+1:]
	if len(w) <= 3 {
		w = strings.ToUpper(w)
	}
	return w + "s"
}

// Headline says in one line what the run deletes (or deleted), e.g.
// "12 disks (300 GB) and 490 images (99.5 GB) would be deleted".
func Headline(rep *report.Report, nouns map[string]string) string {
	var parts []string
	for _, t := range report.Totals(rep.Plan) {
		if t.Delete == 0 {
			continue
		}
		noun := Noun(t.Kind, nouns)
		if t.Delete == 1 {
			noun = strings.TrimSuffix(noun, "s")
		}
		s := fmt.Sprintf("%d %s", t.Delete, noun)
		if f := t.FreesText(); f != "" {
			s += " (" + f + ")"
		}
		parts = append(parts, s)
	}
	verb := "would be deleted"
	if rep.Mode == "apply" {
		verb = "were due for deletion"
	}
	var h string
	switch len(parts) {
	case 0:
		h = "nothing would be deleted"
		if rep.Mode == "apply" {
			h = "nothing was due for deletion"
		}
	case 1:
		h = parts[0] + " " + verb
	default:
		h = strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " " + verb
	}
	if o := rep.Outcome; o != nil {
		h += fmt.Sprintf("; deleted %d, skipped %d, failed %d", o.Deleted, o.Skipped, o.Failed)
		if o.Deferred > 0 {
			h += fmt.Sprintf(", deferred %d", o.Deferred)
		}
	}
	return h
}

// state is what the state file keeps: per target, the last report delivered.
type state struct {
	Version int                    `json:"version"`
	Targets map[string]targetState `json:"targets"`
}

type targetState struct {
	Fingerprint string    `json:"fingerprint"`
	Decisions   int       `json:"decisions"`
	DeliveredAt time.Time `json:"deliveredAt"`
	// Set lists DecisionKey of every delete or mark decision of the report
	// delivered, sorted (for "new since the previous report"); [] when it had
	// none. Absent in files written before it existed: the previous set is
	// then unknown.
	Set []string `json:"set"`
}

// previous is the Previous of a target's state; seen says it has one.
func (ts targetState) previous(seen bool) Previous {
	if !seen || ts.Set == nil {
		return Previous{}
	}
	p := Previous{Known: true, At: ts.DeliveredAt, Keys: make(map[string]bool, len(ts.Set))}
	for _, k := range ts.Set {
		p.Keys[k] = true
	}
	return p
}

// decisionSet is the sorted DecisionKey of every delete or mark decision;
// never nil, so that an empty set is known (and written as []).
func decisionSet(rep *report.Report) []string {
	out := []string{}
	if rep.Plan != nil {
		for d := range rep.Plan.All() {
			if d.Action == engine.Delete || d.Action == engine.Mark {
				out = append(out, DecisionKey(d))
			}
		}
	}
	sort.Strings(out)
	return out
}

func loadState(path string) (state, error) {
	st := state{Version: 1, Targets: map[string]targetState{}}
	if path == "" {
		return st, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	var got state
	if err := json.Unmarshal(b, &got); err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	for k, v := range got.Targets {
		st.Targets[k] = v
	}
	return st, nil
}

// saveState writes the state to a temporary file and renames it over path.
func saveState(path string, st state) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Truncate cuts s to at most n characters, ending with "…" when cut.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// FleetLine sums up the plan's fleet in one line for chat and subjects:
// how many clusters were read, which were not and why, which are declared
// out of scope, and whether discovery ran. "" when the plan has no fleet.
func FleetLine(p *engine.Plan) string {
	rows, ok := layout.Data(p.Sections, "fleet").([]engine.FleetRow)
	if !ok {
		return ""
	}
	read := 0
	var unread, failed, out []string
	for _, r := range rows {
		switch r.State {
		case "read":
			read++
		case engine.StateFailed:
			failed = append(failed, r.Name)
		case "out-of-scope":
			out = append(out, r.Name+" ("+r.Reason+")")
		default:
			unread = append(unread, r.Name)
		}
	}
	parts := []string{fmt.Sprintf("%d cluster%s read", read, Plural(read))}
	if len(failed) > 0 {
		parts = append(parts, "could not be read completely: "+strings.Join(failed, ", "))
	}
	if len(unread) > 0 {
		parts = append(parts, "not read, holding what they may use: "+strings.Join(unread, ", "))
	}
	if len(out) > 0 {
		parts = append(parts, "declared out of scope: "+strings.Join(out, ", "))
	}
	for _, n := range p.Notices {
		if strings.HasPrefix(n, "fleet discovery is off") {
			parts = append(parts, "discovery off")
		}
	}
	return "Fleet: " + strings.Join(parts, " · ")
}
