package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHome makes ~ expand to a fixed directory, so expected values do not
// depend on the machine.
func fakeHome(t *testing.T) string {
	t.Helper()
	t.Setenv("HOME", "/home/reclaim")
	return "/home/reclaim"
}

func load(t *testing.T, path string) *Config {
	t.Helper()
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s):\n%v", path, err)
	}
	return c
}

// TestBadFiles checks each testdata/bad/X.yaml fails with exactly the text in
// X.err. Run `go test ./config -run TestBadFiles -update` to rewrite them, then
// read the diff.
func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml")
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("got %T %v, want *Error", err, err)
	}
	want := "testdata/does-not-exist.yaml: cannot read the configuration file: no such file or directory"
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err.Error(), want)
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{Source: "reclaim.yaml", Problems: []Problem{
		{Path: "clusters[1].timeout", Message: `"2x" is not a duration — write 90s, 15m, 6h or 7d`},
		{Message: "YAML: line 3: did not find expected ',' or ']'"},
	}}
	want := "reclaim.yaml: clusters[1].timeout: \"2x\" is not a duration — write 90s, 15m, 6h or 7d\n" +
		"reclaim.yaml: YAML: line 3: did not find expected ',' or ']'"
	if e.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", e.Error(), want)
	}
}

func TestClosest(t *testing.T) {
	known := []string{"projects", "regions", "endpoint", "pageSize", "concurrency"}
	for word, want := range map[string]string{
		"projcts":     "projects",
		"project":     "projects",
		"page_size":   "pageSize",
		"PageSize":    "pageSize",
		"concurency":  "concurrency",
		"credentials": "",
		"zones":       "",
	} {
		if got := closest(word, known); got != want {
			t.Errorf("closest(%q) = %q, want %q", word, got, want)
		}
	}
}

// A file far larger than any configuration is refused before it is parsed.
func TestLoadRefusesAHugeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.yaml")
	big := strings.Repeat("# padding\n", MaxFileSize/10+1)
	if err := os.WriteFile(p, []byte("clusters: []\n"+big), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Fatalf("got %v, want a refusal naming the limit", err)
	}
	// A file at the limit is read (and judged on its content).
	if err := os.WriteFile(p, []byte("clusters: []\n"+big[:MaxFileSize-20]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err != nil && strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a file under the limit was refused: %v", err)
	}
}

// A region's price wins over its type's, the file's over the built-in ones,
// and a type nobody prices has no price.
func TestDiskPrices(t *testing.T) {
	c, err := Parse([]byte("clusters: [{name: a}]\nprices:\n  disks:\n    - {type: pd-ssd, perGBMonth: 0.2}\n    - {type: pd-ssd, region: asia-northeast1, perGBMonth: 0.25}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		typ, region string
		want        float64
		ok          bool
	}{
		{"pd-ssd", "asia-northeast1", 0.25, true},
		{"pd-ssd", "us-central1", 0.2, true},
		{"pd-balanced", "asia-northeast1", 0.10, true},
		{"local-ssd", "us-central1", 0, false},
	} {
		if got, ok := c.Prices.DiskGBMonth(x.typ, x.region); got != x.want || ok != x.ok {
			t.Errorf("%s in %s: %v %v, want %v %v", x.typ, x.region, got, ok, x.want, x.ok)
		}
	}
	if _, err := Parse([]byte("clusters: [{name: a}]\nprices: {currency: usd, disks: [{perGBMonth: -1}]}\n"), "t.yaml"); err == nil ||
		!strings.Contains(err.Error(), "prices.currency") || !strings.Contains(err.Error(), "prices.disks[0].type") || !strings.Contains(err.Error(), "prices.disks[0].perGBMonth") {
		t.Errorf("bad prices: %v", err)
	}
}
