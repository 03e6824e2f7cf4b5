// Package layout is what a report shows, as kinds and the engine hand it
// over: sections of tables, metric samples, and the JSON plan's writer. It
// knows no rule and no kind; notify/report renders it.
package layout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// Section is one thing a kind shows a person (a table of quotas, the
// decisions of the kind) and, with a Key, a value in the JSON plan.
type Section struct {
	Key   string // JSON key in the plan; "" for text only
	Data  any    // the JSON value
	Title string // heading in the report
	// Place: Overview sections come before the sources, Details after them.
	Place  Place
	Blocks []Block
}

// Place is where a section goes in a report.
type Place int

const (
	Overview Place = iota
	Details
)

// Block is a table with an optional heading line and lines after it. The
// report renders it as aligned text or as HTML.
type Block struct {
	Heading string
	Indent  int
	Header  []string
	Rows    [][]string
	// Classes, parallel to Rows, mark kept rows by the class of their reason:
	// a report lists a few of each class and counts the rest.
	Classes []string
	// Counted is the word before a count of rows not listed ("HELD 40
	// more: running-pods"); "KEEP" when empty.
	Counted string
	Lines   []string
}

// Gauge is one sample of a kind's metric (see GaugeDef).
type Gauge struct {
	Name   string
	Labels []string
	Value  float64
}

// GaugeDef declares a kind's metric: every declared gauge is exported on every
// pass, with no series when the plan has no sample for it.
type GaugeDef struct {
	Name   string
	Help   string
	Labels []string
}

// Table is s with one table, b, that fill completes. With no rows (n == 0)
// s keeps its Key and Data (the JSON plan lists it, empty) but has no title
// and no table.
func Table(s Section, n int, b Block, fill func(b *Block)) Section {
	if n == 0 {
		s.Title = ""
		return s
	}
	fill(&b)
	s.Blocks = []Block{b}
	return s
}

// Marked is what a table row is made from: its action word and, for a kept
// one, the class of its reason (engine.Decision is one).
type Marked interface {
	RowMark() (action, class string)
}

// Add lists a decision in the table: its action, then cols. A kept one is
// marked with its class (Classes), so the report lists a few of each class
// and counts the rest.
func (b *Block) Add(d Marked, cols ...string) {
	action, class := d.RowMark()
	b.Rows = append(b.Rows, append([]string{action}, cols...))
	b.Classes = append(b.Classes, class)
}

// JSONObject writes one JSON object field by field, indented as
// json.Encoder with SetIndent(prefix, indent) would indent it at that
// depth. The first error stops it; Close returns it.
type JSONObject struct {
	w              *bufio.Writer
	prefix, indent string
	n              int
	err            error
}

// NewJSONObject starts an object on w.
func NewJSONObject(w io.Writer, prefix, indent string) *JSONObject {
	o := &JSONObject{w: bufio.NewWriterSize(w, 64<<10), prefix: prefix, indent: indent}
	_, o.err = o.w.WriteString("{")
	return o
}

// Field writes a field whose value is v as json.Marshal encodes it.
func (o *JSONObject) Field(key string, v any) {
	o.Stream(key, func(inner string, write func([]byte) error) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, inner, o.indent); err != nil {
			return err
		}
		return write(buf.Bytes())
	})
}

// Stream writes a field whose value value writes in pieces; inner is the
// prefix of the value's own lines.
func (o *JSONObject) Stream(key string, value func(inner string, write func([]byte) error) error) {
	if o.err != nil {
		return
	}
	sep := ""
	if o.n > 0 {
		sep = ","
	}
	o.n++
	k, _ := json.Marshal(key)
	inner := o.prefix + o.indent
	if _, o.err = o.w.WriteString(sep + "\n" + inner + string(k) + ": "); o.err != nil {
		return
	}
	o.err = value(inner, func(b []byte) error { _, err := o.w.Write(b); return err })
}

// Close ends the object and flushes it.
func (o *JSONObject) Close() error {
	if o.err != nil {
		return o.err
	}
	end := "}"
	if o.n > 0 {
		end = "\n" + o.prefix + "}"
	}
	if _, err := o.w.WriteString(end); err != nil {
		return err
	}
	return o.w.Flush()
}

// Data returns the data of the section with key, or nil: what a kind's
// accessor (gcedisk.HeadroomOf) reads back from a plan's sections.
func Data(sections []Section, key string) any {
	for _, s := range sections {
		if s.Key == key {
			return s.Data
		}
	}
	return nil
}

// DataOf is Data as T (its zero value when the section is missing or holds
// another type): a kind's accessor of its section in one line.
func DataOf[T any](sections []Section, key string) T {
	v, _ := Data(sections, key).(T)
	return v
}
