package config_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	config "reclaim.dev/reclaim/configs"
	// Every kind registers its own section: the reference shows those too.
	_ "reclaim.dev/reclaim/internal/app"
)

// readReference is the whole reference: configs/reference.yaml, then the
// reference of each registered section it does not show (a kind's package
// carries its own, SectionSpec.Reference).
func readReference() ([]byte, error) {
	data, err := os.ReadFile("reference.yaml")
	if err != nil {
		return nil, err
	}
	for _, s := range config.Sections() {
		if s.Reference != "" && !strings.Contains(string(data), "\n"+s.Key+":") {
			data = append(append(data, '\n'), s.Reference...)
		}
	}
	return data, nil
}

// docPath is the configuration reference people read, rendered from
// reference.yaml by referenceDoc (refdoc_test.go).
const docPath = "../docs/configuration.md"

// docs/configuration.md is reference.yaml rendered, so the two cannot
// drift: edit reference.yaml (or the hand-written text above the marker in
// the doc) and run the command below.
func TestConfigurationReferenceIsGenerated(t *testing.T) {
	ref, err := readReference()
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(docPath)
	if err != nil && !*update {
		t.Fatal(err)
	}
	doc, err := referenceDoc(string(old), string(ref), config.Sections())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(old, []byte(doc)) {
		t.Errorf("docs/configuration.md is not reference.yaml rendered: run go test ./configs -run TestConfigurationReferenceIsGenerated -update")
	}
}

// The generated reference names every key of the file in full, and every
// key it names is one, so a key added to a section (or a kind's new
// section) without its place in reference.yaml fails here.
func TestConfigurationReferenceNamesEveryKey(t *testing.T) {
	ref, err := readReference()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := referenceKeys(string(ref))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, k := range keys {
		documented[k.path] = true
	}
	// The jobs and pods sections share one struct; validation refuses
	// these in the section they do not belong to.
	refused := map[string]bool{"jobs.ownerKinds[]": true, "pods.keepCronJobHistory": true, "pods.ttlGrace": true}
	paths := config.KeyPaths()
	for _, p := range paths {
		// A list of values is documented as the key.
		if !refused[p] && !documented[strings.TrimSuffix(p, "[]")] {
			t.Errorf("reference.yaml (so docs/configuration.md) does not show %s", p)
		}
	}
	for _, k := range keys {
		if !isKey(paths, k.path) {
			t.Errorf("reference.yaml shows %s (line %d), which is no key of the file", k.path, k.line)
		}
	}
}

// isKey says whether p is a key path, or a section or list holding some.
func isKey(paths []string, p string) bool {
	for _, k := range paths {
		if k == p || k == p+"[]" || strings.HasPrefix(k, p+".") || strings.HasPrefix(k, p+"[]") {
			return true
		}
	}
	return false
}

// configs/reference.yaml shows every key, the kinds' sections included.
func TestReferenceShowsEveryKey(t *testing.T) {
	data, err := readReference()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range config.Sections() {
		if !strings.Contains(string(data), "\n"+s.Key+":") {
			t.Errorf("neither reference.yaml nor the section's own Reference shows %s (a kind's: %s)", s.Key, s.Doc)
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
