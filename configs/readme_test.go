package config

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// keyPaths lists every key of t as the README writes it: a.b, a[].b.
func keyPaths(prefix string, t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice {
		return keyPaths(prefix+"[]", t.Elem())
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(unmarshalerType) {
		return []string{prefix}
	}
	var out []string
	for _, f := range fieldsOf(t) {
		p := f.name
		if prefix != "" {
			p = prefix + "." + f.name
		}
		out = append(out, keyPaths(p, t.Field(f.index).Type)...)
	}
	return out
}

// The README's configuration reference names every key of the file, so
// the two cannot drift: a key is named in full (`a.b.c`), or its last part
// is named in a row that names its parent (`a.b.c` / `d`).
func TestREADMEReferenceNamesEveryKey(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "## Configuration reference")
	end := strings.Index(text[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("no Configuration reference section in README.md")
	}
	rows := strings.Split(text[start:start+1+end], "\n")
	// The jobs and pods sections share one struct; validation refuses
	// these in the section they do not belong to.
	refused := map[string]bool{"jobs.ownerKinds[]": true, "pods.keepCronJobHistory": true, "pods.ttlGrace": true}
	for _, p := range keyPaths("", reflect.TypeFor[Config]()) {
		if !refused[p] && !named(rows, p) {
			t.Errorf("README.md's configuration reference does not name %s", p)
		}
	}
}

func named(rows []string, path string) bool {
	path = strings.TrimSuffix(path, "[]") // a list of values is named as the key
	parent, leaf := "", path
	if i := strings.LastIndex(path, "."); i >= 0 {
		parent, leaf = path[:i], path[i+1:]
	}
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(leaf) + `\b`)
	for _, r := range rows {
		if !strings.HasPrefix(r, "|") {
			continue
		}
		if strings.Contains(r, "`"+path+"`") || strings.Contains(r, "`"+path+"[]") {
			return true
		}
		// A row about the parent naming the key: `a.b` / `c`, or {c, d}.
		if parent != "" && strings.Contains(r, "`"+parent) && word.MatchString(r) {
			return true
		}
	}
	return false
}
