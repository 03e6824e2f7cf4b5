package config_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	config "reclaim.dev/reclaim/configs"
	// Every kind registers its own section: the reference names those too.
	_ "reclaim.dev/reclaim/internal/app"
)

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
	for _, p := range config.KeyPaths() {
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

// configs/reference.yaml shows every key, the kinds' sections included.
func TestReferenceShowsEveryKey(t *testing.T) {
	data, err := os.ReadFile("reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range config.Sections() {
		if !strings.Contains(string(data), "\n"+s.Key+":") {
			t.Errorf("reference.yaml has no %s section (a kind's: %s)", s.Key, s.Doc)
		}
	}
	for _, p := range config.KeyPaths() {
		for _, part := range strings.Split(p, ".") {
			key := strings.TrimSuffix(part, "[]")
			if !strings.Contains(string(data), " "+key+":") && !strings.Contains(string(data), "\n"+key+":") {
				t.Errorf("reference.yaml does not mention %s (of %s)", key, p)
			}
		}
	}
}
