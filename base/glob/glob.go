// Package glob compiles the globs of reclaim's configuration (repository
// names, tags, manifest paths) into regular expressions, so that the config
// check and every user of a glob agree on what it matches.
package glob

import (
	"fmt"
	"regexp"
	"strings"
)

// Compile turns a glob into an anchored regular expression: * matches within
// a path segment, ? one character of a segment, ** any number of segments
// ("a/**" matches a and everything under it, "**/b" matches b at any depth);
// everything else is literal.
func Compile(g string) (*regexp.Regexp, error) {
	if g == "" {
		return nil, fmt.Errorf("empty glob")
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch ch := g[i]; ch {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				i++
				switch {
				case i+1 < len(g) && g[i+1] == '/': // "**/": zero or more directories
					b.WriteString("(.*/)?")
					i++
				case i == 1 && len(g) == 2: // "**" alone
					b.WriteString(".*")
				case strings.HasSuffix(b.String(), "/") && i+1 == len(g): // "/**" at the end: the directory too
					s := strings.TrimSuffix(b.String(), "/")
					b.Reset()
					b.WriteString(s + "(/.*)?")
				default:
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[', ']', '{', '}':
			return nil, fmt.Errorf("%q: character classes and braces are not supported — use a regex where one is allowed", g)
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
