// Package slack delivers reports to Slack incoming webhooks as Block Kit
// messages, within Slack's documented limits, and retries the way Slack
// asks (429 with Retry-After).
package slack

import (
	"cmp"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
)

// Slack's documented limits for a message's blocks.
const (
	MaxBlocks          = 50   // blocks per message
	MaxSectionText     = 3000 // characters of a section's text
	MaxHeaderText      = 150  // characters of a header's plain_text
	MaxFields          = 10   // fields of a section
	MaxFieldText       = 2000 // characters of one field
	MaxContextElements = 10   // elements of a context block
	// MaxText bounds the top-level text fallback; Slack truncates at 40,000,
	// a notification needs a line.
	MaxText = 3000
	// maxLine bounds one row of a list, so one long id cannot fill a section.
	maxLine = 300
)

// Message is the JSON body posted to an incoming webhook.
type Message struct {
	// Text is the notification fallback; always set.
	Text   string  `json:"text"`
	Blocks []Block `json:"blocks,omitempty"`
}

// Block is a Block Kit layout block: header, section, divider, context or actions.
type Block struct {
	Type     string    `json:"type"`
	Text     *Text     `json:"text,omitempty"`
	Fields   []Text    `json:"fields,omitempty"`
	Elements []Element `json:"elements,omitempty"`
}

// Text is a text object: plain_text or mrkdwn.
type Text struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Emoji bool   `json:"emoji,omitempty"`
}

// Element is a context element (mrkdwn text) or an actions element (a link button).
type Element struct {
	Type string `json:"type"`
	// Text is a string for a mrkdwn context element, a *Text for a button.
	Text any    `json:"text,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Options shape a report's messages.
type Options struct {
	// Fleet names the fleet in the header; empty leaves it out.
	Fleet string
	// ReportURL, when set, is linked as the full report.
	ReportURL string
	// MaxRows is how many rows each list shows before "+N more" (default 20).
	MaxRows int
	// Nouns name kinds' resources ("gce-disk": "disks"); see notify.Noun.
	Nouns map[string]string
}

// Build makes the messages of a report: a header (dry-run or apply, the
// fleet), the headline and the summary, the warnings first, then per kind
// what would be deleted, and a link to the full report. A report that does
// not fit Slack's limits in one message is split into several, each with
// its own text fallback; lists are cut at MaxRows with "+N more".
func Build(rep *report.Report, opt Options) []Message {
	if opt.MaxRows < 1 {
		opt.MaxRows = 20
	}
	p := rep.Plan
	if p == nil {
		p = &engine.Plan{}
	}
	headline := notify.Headline(rep, opt.Nouns)
	title := "reclaim " + rep.Mode
	if opt.Fleet != "" {
		title += " · " + opt.Fleet
	}
	warnings := notify.Warnings(rep)

	// Most urgent first: what runs out soonest, then what the run deletes,
	// then every warning, then the fields and the deletions.
	urgent := notify.Urgent(rep)
	var body []Block
	intro := "*" + escape(headline) + "*"
	if urgent != "" {
		intro = ":rotating_light: *" + escape(urgent) + "*\n" + intro
	}
	if len(p.Summaries) > 0 {
		intro += "\n" + escape(strings.Join(p.Summaries, "; "))
	}
	if rep.Mode == "dry-run" {
		intro += "\n_Dry-run: nothing was deleted._"
	}
	body = append(body, section(intro))
	for _, g := range notify.WarningGroups(rep) {
		title := fmt.Sprintf(":warning: *%s*: %d warning%s", escape(g.Title), len(g.Lines), notify.Plural(len(g.Lines)))
		body = append(body, list(title, g.Lines, opt.MaxRows, "warnings")...)
	}
	body = append(body, fieldsBlock(rep, p, len(warnings)))
	if f := notify.FleetLine(p); f != "" {
		body = append(body, contextBlock(escape(f)))
	}
	body = append(body, Block{Type: "divider"})
	body = append(body, deletions(rep, p, opt)...)
	if opt.ReportURL != "" {
		body = append(body, Block{Type: "actions", Elements: []Element{{Type: "button",
			Text: &Text{Type: "plain_text", Text: "Full report"}, URL: opt.ReportURL}}})
	}
	foot := fmt.Sprintf("reclaim %s at %s · exit %d", rep.Mode, p.GeneratedAt.UTC().Format(time.RFC3339), rep.ExitCode)
	if opt.ReportURL != "" {
		foot += " · <" + opt.ReportURL + "|full report>"
	}
	body = append(body, contextBlock(foot))

	text := title + ": "
	if urgent != "" {
		text += urgent + "; "
	}
	text += headline
	if len(warnings) > 0 {
		text += fmt.Sprintf(" — %d warning%s", len(warnings), notify.Plural(len(warnings)))
	}
	return split(title, text, body)
}

// TestMessage is what `reclaim notify test` sends.
func TestMessage(fleet, target string) Message {
	title := "reclaim test message"
	if fleet != "" {
		title += " · " + fleet
	}
	line := fmt.Sprintf("This is a test from reclaim to the notify target %s. Reports of runs will arrive here.", target)
	return Message{Text: notify.Truncate(title+": "+line, MaxText), Blocks: []Block{header(title), section(escape(line))}}
}

// split puts the header and the body blocks into messages of at most
// MaxBlocks blocks. Messages after the first start with a context block
// saying which part they are.
func split(title, text string, body []Block) []Message {
	first := MaxBlocks - 1 // the header
	if len(body) <= first {
		return []Message{{Text: notify.Truncate(text, MaxText), Blocks: append([]Block{header(title)}, body...)}}
	}
	rest := MaxBlocks - 1 // the "part i of n" context
	n := 1 + (len(body)-first+rest-1)/rest
	out := []Message{{Text: notify.Truncate(fmt.Sprintf("%s (part 1 of %d)", text, n), MaxText),
		Blocks: append([]Block{header(title)}, body[:first]...)}}
	body = body[first:]
	for i := 2; len(body) > 0; i++ {
		k := min(rest, len(body))
		part := fmt.Sprintf("part %d of %d", i, n)
		out = append(out, Message{Text: notify.Truncate(title+" ("+part+")", MaxText),
			Blocks: append([]Block{contextBlock(escape(title) + " · " + part)}, body[:k]...)})
		body = body[k:]
	}
	return out
}

func fieldsBlock(rep *report.Report, p *engine.Plan, warnings int) Block {
	complete := 0
	for _, s := range p.Sources {
		if s.Complete {
			complete++
		}
	}
	f := []Text{
		mrkdwn("*Mode*\n" + rep.Mode),
		mrkdwn(fmt.Sprintf("*Sources*\n%d of %d complete", complete, len(p.Sources))),
		mrkdwn(fmt.Sprintf("*Warnings*\n%d", warnings)),
		mrkdwn(fmt.Sprintf("*Exit status*\n%d", rep.ExitCode)),
	}
	if w := report.WasteLine(report.Totals(p), p.Currency, func(k string) string { return k }); w != "" {
		f = append(f, mrkdwn("*Waste*\n"+strings.TrimPrefix(w, "waste: ")))
	}
	if owners := report.OwnerTotals(p); len(owners) > 0 {
		parts := make([]string, len(owners))
		for i, o := range owners {
			parts[i] = fmt.Sprintf("%s: %d to delete, %d marked, %s a month", escape(cmp.Or(o.Owner, "no route")), o.Delete, o.Mark, report.Money(o.Waste, p.Currency))
		}
		f = append(f, mrkdwn("*By owner*\n"+strings.Join(parts, "\n")))
	}
	for i := range f {
		f[i].Text = notify.Truncate(f[i].Text, MaxFieldText)
	}
	return Block{Type: "section", Fields: f[:min(len(f), MaxFields)]}
}

// deletions lists, per kind, what the plan deletes (with apply's result for
// each when there is one), cut at MaxRows, and how many are marked.
func deletions(rep *report.Report, p *engine.Plan, opt Options) []Block {
	results := map[string]engine.Result{}
	if o := rep.Outcome; o != nil {
		for _, r := range o.Results {
			results[r.Kind+"\x00"+r.ID] = r
		}
	}
	var out []Block
	for _, t := range report.Totals(p) {
		if !t.Acted() {
			continue
		}
		noun := notify.Noun(t.Kind, opt.Nouns)
		var rows []string
		for d := range p.All() {
			if d.Kind != t.Kind || d.Action != engine.Delete {
				continue
			}
			row := "`" + d.ID + "`"
			if f := d.Frees.String(); f != "" {
				row += " " + f
			}
			if r, ok := results[d.Kind+"\x00"+d.ID]; ok {
				row += " — *" + strings.ToUpper(r.Result) + "*"
				if r.Error != "" {
					row += ": " + r.Error
				}
			} else if d.Why() != "" {
				row += " — " + d.Why()
			}
			rows = append(rows, row)
		}
		verb := "would be deleted"
		if rep.Mode == "apply" {
			verb = "due for deletion"
		}
		title := fmt.Sprintf("*%s: %d %s*", noun, t.Delete, verb)
		if f := t.FreesText(); f != "" {
			title += " (" + f + ")"
		}
		if t.Mark > 0 {
			title += fmt.Sprintf("\n%d more marked: waiting for their grace period, or held back", t.Mark)
		}
		out = append(out, list(title, rows, opt.MaxRows, noun)...)
	}
	if len(out) == 0 {
		out = append(out, section("Nothing would be deleted or marked."))
	}
	return out
}

// list writes a title and rows (escaped here) as sections of at most
// MaxSectionText characters each, showing at most max rows and then
// "+N more <what>".
func list(title string, rows []string, max int, what string) []Block {
	lines := make([]string, 0, min(len(rows), max)+1)
	for i, r := range rows {
		if i == max {
			lines = append(lines, fmt.Sprintf("_+%d more %s — see the full report_", len(rows)-max, escape(what)))
			break
		}
		lines = append(lines, "• "+escape(notify.Truncate(r, maxLine)))
	}
	var out []Block
	cur := title
	for _, l := range lines {
		if utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(l) > MaxSectionText {
			out = append(out, section(cur))
			cur = l
			continue
		}
		if cur != "" {
			cur += "\n"
		}
		cur += l
	}
	return append(out, section(cur))
}

func header(s string) Block {
	return Block{Type: "header", Text: &Text{Type: "plain_text", Text: notify.Truncate(s, MaxHeaderText), Emoji: true}}
}

func section(s string) Block {
	t := mrkdwn(notify.Truncate(s, MaxSectionText))
	return Block{Type: "section", Text: &t}
}

func contextBlock(s string) Block {
	return Block{Type: "context", Elements: []Element{{Type: "mrkdwn", Text: notify.Truncate(s, MaxSectionText)}}}
}

func mrkdwn(s string) Text { return Text{Type: "mrkdwn", Text: s} }

// escape makes text safe for mrkdwn: Slack reads &, < and > as markup.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
