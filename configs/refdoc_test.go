package config_test

// The generator of docs/configuration.md: reference.yaml's keys, with the
// value the file shows and the comment above each, one table per section.
// It reads the file line by line (the file is plain block YAML, two spaces
// an indent) rather than through a YAML library, because the keys shown
// commented out (a secret, an example list) are documented too:
//
//	#   key: value
//
// A comment with three or more spaces after its # is such a line; it stands
// for the line without "#" and two of those spaces: `  #   eks:` is `  eks:`.

import (
	"fmt"
	"regexp"
	"strings"

	config "reclaim.dev/reclaim/configs"
)

// marker separates the hand-written head of docs/configuration.md from
// what is generated below it.
const marker = "<!-- Everything below is generated from configs/reference.yaml: go test ./configs -run TestConfigurationReferenceIsGenerated -update -->"

// refKey is one key of reference.yaml.
type refKey struct {
	path   string // clusters[].name
	value  string // as the file writes it; "" for a section
	doc    string // the comment above it (or beside it), as one paragraph
	beside bool   // doc is the comment beside it
	line   int
}

var (
	commentedOut = regexp.MustCompile(`^( *)#   (.*)$`)
	keyLine      = regexp.MustCompile(`^( *)(- )?([A-Za-z][A-Za-z0-9]*):(?: (.*))?$`)
	itemComment  = regexp.MustCompile(`^( *)- (#.*)$`)
)

// referenceKeys lists reference.yaml's keys in file order; a key shown
// twice (commented out with an example, then with its default) is one.
func referenceKeys(text string) ([]refKey, error) {
	type level struct {
		col  int
		path string
	}
	var (
		keys    []refKey
		index   = map[string]int{}
		stack   []level
		pending []string
	)
	lines := strings.Split(text, "\n")
	// The file's head comment, up to the first blank line, is the doc's
	// hand-written head's business.
	start := 0
	for start < len(lines) && strings.HasPrefix(lines[start], "#") {
		start++
	}
	for n := start; n < len(lines); n++ {
		line := lines[n]
		if m := commentedOut.FindStringSubmatch(line); m != nil {
			line = m[1] + m[2] // "  #   eks:" is "  eks:"
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			pending = nil
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			pending = append(pending, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
			continue
		}
		if m := itemComment.FindStringSubmatch(line); m != nil {
			// "  - # text": a list item whose first key follows.
			col := len(m[1])
			for len(stack) > 0 && stack[len(stack)-1].col >= col {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 {
				return nil, fmt.Errorf("line %d: a list item outside any key", n+1)
			}
			stack = append(stack, level{col, stack[len(stack)-1].path + "[]"})
			pending = append(pending, strings.TrimSpace(strings.TrimPrefix(m[2], "#")))
			continue
		}
		m := keyLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: %q is neither a key nor a comment", n+1, line)
		}
		col := len(m[1])
		if m[2] != "" {
			for len(stack) > 0 && stack[len(stack)-1].col >= col {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 {
				return nil, fmt.Errorf("line %d: a list item outside any key", n+1)
			}
			stack = append(stack, level{col, stack[len(stack)-1].path + "[]"})
			col += 2
		}
		for len(stack) > 0 && stack[len(stack)-1].col >= col {
			stack = stack[:len(stack)-1]
		}
		path := m[3]
		if len(stack) > 0 {
			path = stack[len(stack)-1].path + "." + m[3]
		}
		value, comment := splitComment(m[4])
		stack = append(stack, level{col, path})
		doc := strings.Join(pending, " ")
		pending = nil
		beside := false
		if doc == "" && comment != "" {
			doc, beside = comment, true
		}
		if i, ok := index[path]; ok {
			// Shown again: the example's comment stays, the value is the
			// one the file sets.
			if value != "" {
				keys[i].value = value
			}
			if keys[i].doc == "" {
				keys[i].doc, keys[i].beside = doc, beside
			}
			continue
		}
		index[path] = len(keys)
		keys = append(keys, refKey{path: path, value: value, doc: doc, beside: beside, line: n + 1})
	}
	return keys, nil
}

// splitComment splits "value   # comment" outside quotes.
func splitComment(s string) (value, comment string) {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '#' && (i == 0 || s[i-1] == ' '):
			return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		}
	}
	return strings.TrimSpace(s), ""
}

// referenceDoc renders docs/configuration.md: old's hand-written head (up
// to the marker), then every section of reference.yaml with its keys.
func referenceDoc(old, text string, sections []config.SectionInfo) (string, error) {
	keys, err := referenceKeys(text)
	if err != nil {
		return "", err
	}
	head, _, found := strings.Cut(old, marker)
	if !found {
		head = "# Configuration reference\n\n"
	}
	docs := map[string]string{}
	for _, s := range sections {
		docs[s.Key] = s.Doc
	}
	var b strings.Builder
	b.WriteString(head + marker + "\n")
	var said string // the key whose comment above also covers the next
	documented := map[string]bool{}
	for _, k := range keys {
		switch {
		case k.doc != "" && !k.beside && k.value != "":
			said = k.path
		case k.doc == "" && k.value != "" && said != "" && parentOf(k.path) == parentOf(said):
			// Keys written under one comment: it is the first one's.
			k.doc = "See `" + said + "`."
		default:
			said = ""
			if parent := strings.TrimSuffix(parentOf(k.path), "[]"); k.doc == "" && k.value != "" && documented[parent] {
				// A key the comment on its section covers.
				k.doc = "See `" + parent + "`."
			}
		}
		if k.doc != "" {
			documented[k.path] = true
		}
		if !strings.ContainsAny(k.path, ".[") {
			fmt.Fprintf(&b, "\n## `%s`\n\n", k.path)
			if k.doc != "" {
				b.WriteString(prose(k.doc) + "\n\n")
			}
			if d, ok := docs[k.path]; ok {
				fmt.Fprintf(&b, "A kind's section, registered by the kind's package: %s.\n\n", strings.TrimSuffix(d, "."))
			}
			b.WriteString("| key | reference.yaml shows | what it does |\n|---|---|---|\n")
			continue
		}
		value := ""
		if k.value != "" {
			value = "`" + k.value + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.path, cell(value), cell(prose(k.doc)))
	}
	return b.String(), nil
}

// cell keeps a table cell in its cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func parentOf(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[:i]
	}
	return ""
}

// prose keeps a comment's <placeholder> from reading as HTML.
func prose(s string) string { return strings.ReplaceAll(s, "<", "&lt;") }
