//go:build demo

package main

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"reclaim.dev/reclaim/internal/demo"
	"reclaim.dev/reclaim/notify/email"
	"reclaim.dev/reclaim/notify/report"
)

var update = flag.Bool("update", false, "rewrite testdata/demo-report.* from the current output")

// goldenNow is the clock of the demo run the golden files hold.
var goldenNow = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// goldenDemo is the demo's report at goldenNow, run once for the tests that
// read it: a demo run takes most of a minute under -race.
var goldenDemo = sync.OnceValues(func() (*report.Report, error) {
	return demo.RunAt(context.Background(), io.Discard, zap.NewNop(), goldenNow)
})

// The demo's report email, text and HTML, at a fixed clock: what a newcomer
// opens after make demo (demo-report.html), kept as golden files so a change
// to any kind's view or to the email shows up in review.
// Rewrite them with: go test -tags demo ./cmd/reclaim -run TestDemoEmailGolden -update
func TestDemoEmailGolden(t *testing.T) {
	rep, err := goldenDemo()
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(t.TempDir(), "demo-report")
	if err := writeDemoEmail(prefix, rep); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".txt", ".html"} {
		got, err := os.ReadFile(prefix + ext)
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "demo-report"+ext)
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (rewrite with -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed; if intended, run go test -tags demo ./cmd/reclaim -run TestDemoEmailGolden -update and review the diff", golden)
		}
	}
	// The charts, beside the HTML that names them: PNGs, not compared
	// byte for byte (a plotting library's update may move a pixel), but
	// kept in testdata for the browser test to lay out with the page.
	charts, _ := filepath.Glob(prefix + "-chart-*.png")
	if len(charts) != email.MaxCharts {
		t.Fatalf("%d charts written, want %d", len(charts), email.MaxCharts)
	}
	html, _ := os.ReadFile(prefix + ".html")
	for _, c := range charts {
		name := filepath.Base(c)
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(b) > 48<<10 {
			t.Errorf("%s is %d bytes: too big to send inline", name, len(b))
		}
		if !bytes.Contains(html, []byte(`<img src="`+name+`" alt="`)) {
			t.Errorf("the HTML does not show %s", name)
		}
		if *update {
			if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
