//go:build demo

package main

import (
	"context"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	config "reclaim.dev/reclaim/configs"
	"reclaim.dev/reclaim/internal/app"
	"reclaim.dev/reclaim/internal/daemon"
	"reclaim.dev/reclaim/internal/demo"
	"reclaim.dev/reclaim/notify/report"
)

type demoPasser struct{ rep *report.Report }

func (p demoPasser) Once(context.Context, app.Options) (*report.Report, error) { return p.rep, nil }

type notSoon struct{}

func (notSoon) Next(t time.Time) time.Time { return t.AddDate(1, 0, 0) }

// The daemon's page, opened in a real browser (headless Chromium) over
// HTTP as a person would: the demo's report under the bar naming its pass,
// laid out (the browser's DOM holds the report's stories) and drawn (a
// screenshot of the window's size).
func TestDaemonPageInChromium(t *testing.T) {
	browser := chromium(t)
	rep, err := demo.RunAt(context.Background(), io.Discard, zap.NewNop(), time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(config.Demo, "configs/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(demoPasser{rep}, config.DefaultDaemon(), daemon.Options{Kinds: app.KindNames(), Gauges: app.Gauges(),
		Listener: ln, Schedule: notSoon{}, HTML: reportPage(cfg), Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	}()
	url := "http://" + d.Addr().String() + "/"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not come up within a minute: %v", err)
		}
	}

	shot := filepath.Join(t.TempDir(), "page.png")
	bctx, bcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer bcancel()
	run := func(args ...string) []byte {
		t.Helper()
		args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(),
			"--hide-scrollbars", "--window-size=1000,1400", "--virtual-time-budget=5000"}, args...)
		out, err := exec.CommandContext(bctx, browser, args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", browser, args, err, out)
		}
		return out
	}
	dom := string(run("--dump-dom", url))
	for _, want := range []string{`id="reclaim-daemon"`, "pass planned 2026-11-23T09:00:00Z", `href="report"`, "SSD_TOTAL_GB", "subnet"} {
		if !strings.Contains(dom, want) {
			t.Fatalf("the page as Chromium laid it out lacks %q:\n%.3000s", want, dom)
		}
	}
	run("--screenshot="+shot, url)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1000 || b.Dy() != 1400 {
		t.Fatalf("screenshot %v, want 1000x1400", b)
	}
	// Drawn, not blank: the bar's background and the report's text differ
	// from the page's white.
	colours := map[uint32]bool{}
	for y := 0; y < 1400; y += 7 {
		for x := 0; x < 1000; x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|b>>8] = true
		}
	}
	if len(colours) < 10 {
		t.Fatalf("the screenshot has %d colours: the page was not drawn", len(colours))
	}
}
