package imageref

import (
	"regexp"

	"reclaim.dev/reclaim/inventory"
)

// tokenRe matches a run of text around an ECR host: reference characters,
// and Helm ({{ … }}) or shell (${…}) template expressions, which may hold spaces.
var tokenRe = func() *regexp.Regexp {
	tc := `(?:\{\{[^{}]*\}\}|\$\{[^{}]*\}|[^\s"'` + "`" + `,;=<>()\[\]{}|\\])`
	return regexp.MustCompile(`(?i)` + tc + `*\.dkr[.-]ecr` + tc + `*`)
}()

// Find returns the ECR references in free text (a Helm template or any file
// that does not decode): one use per occurrence, a parsed reference or, for
// one that does not parse (a template), a Loose use with Problem set. Where
// and Users are left for the caller.
func Find(text string) []inventory.ImageUse {
	var out []inventory.ImageUse
	for _, tok := range tokenRe.FindAllString(text, -1) {
		if ref, ok, err := Parse(tok); err == nil {
			if ok {
				out = append(out, inventory.ImageUse{Ref: ref})
			}
			continue
		}
		if u, ok := Loose(tok); ok {
			out = append(out, u)
		}
	}
	return out
}
