package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// decoder fills a typed value from the generic tree of a YAML document,
// reporting every unknown key and every value of the wrong type with its path,
// instead of stopping at the first the way encoding/json does.
type decoder struct {
	problems
	// present holds the paths of the keys the file set to something other than
	// null; applyDefaults leaves those alone, so an explicit 0 stays 0.
	present map[string]bool
	// failed holds the paths whose value could not be decoded. Checks on those
	// paths are skipped so one mistake is reported once.
	failed map[string]bool
	// without are the paths of keys a section leaves out of its Safety,
	// unnested those of mappings whose keys are read as their parent's
	// (SectionSpec.Unnested).
	without, unnested map[string]bool
	// warnings are what the file should change though it works as it is
	// (an old key's name).
	warnings []string
}

func newDecoder() *decoder {
	return &decoder{present: map[string]bool{}, failed: map[string]bool{}, without: withoutPaths(), unnested: unnestedPaths(),
		problems: problems{written: map[string]string{}, renamed: map[string]string{}}}
}

var yamlLine = regexp.MustCompile(`^line (\d+): `)

// parseTree turns YAML into a generic tree of map[string]any, []any, string,
// bool, json.Number and nil. Syntax errors and duplicate keys become problems
// that carry the line number.
func parseTree(data []byte) (any, []Problem) {
	if err := singleDocument(data); err != nil {
		return nil, []Problem{{Message: err.Error()}}
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, yamlProblems(err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, []Problem{{Message: "cannot read YAML: " + err.Error()}}
	}
	return tree, nil
}

// singleDocument rejects a second YAML document: sigs.k8s.io/yaml would
// silently ignore everything after the first "---".
func singleDocument(data []byte) error {
	d := yamlv2.NewDecoder(bytes.NewReader(data))
	var doc any
	if err := d.Decode(&doc); err != nil {
		return nil // empty input, or a syntax error reported by the real parse
	}
	if err := d.Decode(&doc); errors.Is(err, io.EOF) {
		return nil
	}
	// A second document, even a malformed one, would be ignored.
	return errors.New("the file holds more than one YAML document (separated by ---); put the whole configuration in one")
}

// yamlProblems turns a YAML library error into problems, one per line it names.
func yamlProblems(err error) []Problem {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "unmarshal errors:\n"); ok {
		var ps []Problem
		for l := range strings.SplitSeq(rest, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				ps = append(ps, Problem{Message: "YAML: " + l})
			}
		}
		return ps
	}
	return []Problem{{Message: "YAML: " + msg}}
}

// field is a struct field as it appears in YAML: index is its path through
// embedded structs (reflect.Value.FieldByIndex).
type field struct {
	name  string
	index []int
}

// fieldsOf lists t's keys. An embedded struct without a json name is inlined,
// as encoding/json does (config.Safety in the kinds' sections): its fields
// are keys of t, and a field of t's own of the same name wins.
func fieldsOf(t reflect.Type) []field {
	var fs []field
	own := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct && !reflect.PointerTo(f.Type).Implements(unmarshalerType) {
			for _, g := range fieldsOf(f.Type) {
				fs = append(fs, field{name: g.name, index: append([]int{i}, g.index...)})
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		own[name] = true
		fs = append(fs, field{name: name, index: []int{i}})
	}
	return slices.DeleteFunc(fs, func(f field) bool { return len(f.index) > 1 && own[f.name] })
}

func (d *decoder) fail(path, format string, args ...any) {
	d.add(path, format, args...)
	d.failed[path] = true
	d.failed[d.where(path)] = true
	delete(d.present, path)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decode stores node into v, which must be settable.
func (d *decoder) decode(path string, node any, v reflect.Value) {
	if reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
		if node == nil {
			return
		}
		raw, err := json.Marshal(node)
		if err != nil {
			d.fail(path, "%v", err)
			return
		}
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			d.fail(path, "%v", err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		// A section written with nothing under it ("gce:") is present but empty,
		// so its required fields are reported rather than the section ignored.
		if node == nil && reflect.PointerTo(v.Type().Elem()).Implements(unmarshalerType) {
			return
		}
		p := reflect.New(v.Type().Elem())
		d.decode(path, node, p.Elem())
		v.Set(p)
	case reflect.Struct:
		d.decodeStruct(path, node, v)
	case reflect.Slice:
		if node == nil {
			return
		}
		list, ok := node.([]any)
		if !ok {
			d.fail(path, "expected a list, got %s", describe(node))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(list), len(list))
		for i, item := range list {
			d.decode(index(path, i), item, s.Index(i))
		}
		v.Set(s)
	case reflect.String:
		switch n := node.(type) {
		case string:
			v.SetString(n)
		case json.Number, bool:
			d.fail(path, "expected a string, got %s — quote it if you meant \"%v\"", describe(node), n)
		default:
			d.fail(path, "expected a string, got %s", describe(node))
		}
	case reflect.Bool:
		b, ok := node.(bool)
		if !ok {
			d.fail(path, "expected true or false, got %s", describe(node))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := node.(json.Number)
		if !ok {
			d.fail(path, "expected a whole number, got %s", describe(node))
			return
		}
		i, err := n.Int64()
		if err != nil {
			if f, ferr := n.Float64(); ferr == nil && f == math.Trunc(f) {
				d.fail(path, "%s is too large", n)
			} else {
				d.fail(path, "expected a whole number, got %s", n)
			}
			return
		}
		if v.OverflowInt(i) {
			d.fail(path, "%s is too large", n)
			return
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		n, ok := node.(json.Number)
		if !ok {
			d.fail(path, "expected a number, got %s", describe(node))
			return
		}
		f, err := n.Float64()
		if err != nil || v.OverflowFloat(f) {
			d.fail(path, "%s is out of range", n)
			return
		}
		v.SetFloat(f)
	default:
		panic(fmt.Sprintf("config: cannot decode into %s at %s", v.Type(), path))
	}
}

func (d *decoder) decodeStruct(path string, node any, v reflect.Value) {
	m, ok := node.(map[string]any)
	if node == nil {
		m, ok = map[string]any{}, true
	}
	if !ok {
		d.fail(path, "expected a mapping of keys to values, got %s", describe(node))
		return
	}
	fs := slices.DeleteFunc(fieldsOf(v.Type()), func(f field) bool { return d.without[join(path, f.name)] })
	known := make([]string, len(fs))
	for i, f := range fs {
		known[i] = f.name
	}
	if path == "" && v.Type() == reflect.TypeFor[Config]() {
		// The kinds' sections were decoded first (decodeSections); a typo
		// of one is still told what it was meant to be.
		known = append(known, sectionKeys()...)
	}
	m = d.unnest(path, m)
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		p := d.written[join(path, k)]
		if p == "" {
			p = join(path, k)
		}
		if s := closest(k, known); s != "" {
			d.fail(p, "unknown field — did you mean %q?", s)
			// Do not also report the field it was meant to be as missing.
			d.failed[join(path, s)] = true
		} else {
			d.fail(p, "unknown field — the fields here are %s", andList(known))
		}
	}
	for _, f := range fs {
		val, ok := m[f.name]
		if !ok {
			continue
		}
		fv := v.FieldByIndex(f.index)
		if val == nil && fv.Kind() != reflect.Pointer {
			continue // "key:" with no value means the default
		}
		p := join(path, f.name)
		d.present[p] = true
		d.decode(p, val, fv)
	}
}

// unnest returns m with the keys of its unnested mappings (an earlier
// version's place for them) read as m's own, remembering where the file
// wrote each; a key written in both places is a problem.
func (d *decoder) unnest(path string, m map[string]any) map[string]any {
	var out map[string]any
	for k, node := range m {
		old := join(path, k)
		if !d.unnested[old] {
			continue
		}
		if out == nil {
			out = maps.Clone(m)
		}
		delete(out, k)
		if node == nil {
			continue
		}
		inner, ok := node.(map[string]any)
		if !ok {
			d.fail(old, "expected a mapping of keys to values, got %s", describe(node))
			continue
		}
		for _, ik := range slices.Sorted(maps.Keys(inner)) {
			if _, twice := m[ik]; twice {
				d.fail(join(old, ik), "is set twice, here and as %s — set it once, as %s", join(path, ik), join(path, ik))
				continue
			}
			out[ik] = inner[ik]
			d.written[join(path, ik)] = join(old, ik)
		}
	}
	if out == nil {
		return m
	}
	return out
}

// describe names a tree node for an error message.
func describe(node any) string {
	switch n := node.(type) {
	case nil:
		return "nothing (null)"
	case string:
		return fmt.Sprintf("string %q", n)
	case bool:
		return fmt.Sprintf("%t (a boolean)", n)
	case json.Number:
		return "number " + n.String()
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", node)
}
