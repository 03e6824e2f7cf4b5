package config

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a configuration file.
type Problem struct {
	// Path names the offending field the way it is written in YAML, such as
	// clusters[1].timeout or gce.projects. It is empty for problems with the file
	// as a whole (unreadable, not YAML).
	Path string
	// Message says what is wrong and, where it helps, how to fix it.
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Error is returned by Load and Parse when a configuration is unusable. It
// carries every problem found, not just the first.
type Error struct {
	// Source is the file name (or whatever Parse was given) the problems are in.
	Source   string
	Problems []Problem
}

// Error prints one problem per line as "<source>: <path>: <message>".
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.Source != "" {
			b.WriteString(e.Source)
			b.WriteString(": ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// problems collects Problems while a configuration is checked.
type problems struct {
	list []Problem
	// written maps a key's path to where the file wrote it, when that is
	// a place an earlier version used (SectionSpec.Unnested).
	written map[string]string
	// renamed maps a renamed key's path to the old name the file wrote
	// it under (renamedKeys, SectionSpec.Was and Moved).
	renamed map[string]string
}

func (ps *problems) add(path, format string, args ...any) {
	ps.list = append(ps.list, Problem{Path: ps.where(path), Message: fmt.Sprintf(format, args...)})
}

// join appends a key to a field path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends a list index to a field path.
func index(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}

// under reports whether path is prefix itself or a field or element inside it.
func under(path, prefix string) bool {
	if prefix == "" || path == prefix {
		return true
	}
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	c := path[len(prefix)]
	return c == '.' || c == '['
}

// closest returns the candidate that word was most likely meant to be, or ""
// when none is close enough to suggest.
func closest(word string, candidates []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	w := norm(word)
	best, bestDist := "", -1
	for _, c := range candidates {
		d := levenshtein(w, norm(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := 2
	if len(w) <= 4 {
		limit = 1
	}
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// quoteList renders names as "a", "b" and "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return andList(q)
}

// andList renders items as a, b and c.
func andList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
