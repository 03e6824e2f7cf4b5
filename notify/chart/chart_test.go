package chart_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify/chart"
	"reclaim.dev/reclaim/notify/report"
	"reclaim.dev/reclaim/reconcile/engine"
)

var now = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// ssd is a quota with five days of hourly history growing 40 GB a day.
func ssd() (layout.Warning, []layout.Sample) {
	var h []layout.Sample
	for i := 5 * 24; i >= 0; i-- {
		h = append(h, layout.Sample{T: now.Add(-time.Duration(i) * time.Hour), Usage: 1455 - float64(i)*40/24})
	}
	out := now.Add(27 * time.Hour)
	return layout.Warning{Kind: "gce-disk", RunsOutAt: &out,
		Text: "demo-project asia-northeast1 SSD_TOTAL_GB is 97.0% used (1455 of 1500 GB), 83.7% after this plan.",
		Pool: &layout.Pool{Used: 1455, Limit: 1500, Frees: 200, Trend: "ssd", Name: "demo-project asia-northeast1 SSD_TOTAL_GB", Unit: "GB"}}, h
}

// Each chart is a PNG of the size the email shows (twice the pixels),
// small enough to send inline.
func TestDraw(t *testing.T) {
	if testing.Short() {
		t.Skip("draws and compares every chart: sequential, and slow under the race detector")
	}
	w, h := ssd()
	soon := now.Add(91 * time.Minute)
	subnet := layout.Warning{Kind: "ec2-interface", RunsOutAt: &soon,
		Text: "subnet-0a1b2c3d4e5f60001 (us-east-1a) is 92% used: 326 of 4091 addresses free; finished pods hold 3360, this plan frees 2817.",
		Pool: &layout.Pool{Used: 3765, Limit: 4091, Frees: 2817, Name: "subnet-0a1b2c3d4e5f60001 (us-east-1a)", Unit: "addresses"}}
	far := now.Add(90 * 24 * time.Hour)
	slow := w
	slow.RunsOutAt = &far
	for name, c := range map[string]struct {
		w layout.Warning
		h []layout.Sample
	}{"ssd": {w, h}, "subnet-no-history": {subnet, nil}, "runs-out-beyond-the-chart": {slow, h}} {
		b, err := chart.Draw(c.w, c.h, now)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sz := img.Bounds().Size(); sz.X != 2*chart.Width || sz.Y != 2*chart.Height {
			t.Errorf("%s: %v pixels", name, sz)
		}
		if len(b) > 64<<10 {
			t.Errorf("%s: %d bytes", name, len(b))
		}
		t.Logf("%s: %d bytes", name, len(b))
		if dir := os.Getenv("RECLAIM_CHART_DIR"); dir != "" {
			os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644)
		}
	}
}

// The charts are of the most urgent warnings' pools, the first of each
// kind, at most as many as asked; a warning without a pool has none.
func TestUrgentChartsTheFirstPoolOfEachKind(t *testing.T) {
	w, h := ssd()
	w2 := w
	w2.Pool = &layout.Pool{Used: 10, Limit: 20, Trend: "other", Unit: "GB"}
	repo := layout.Warning{Kind: "ecr-image", Text: "shop/api holds 9990 of 10000 images (99.9%); 9500 after this plan — pushes fail at the limit.",
		Pool: &layout.Pool{Used: 9990, Limit: 10000, Frees: 490, Trend: "ecr", Unit: "images"}}
	stuck := layout.Warning{Kind: "ec2-interface", Text: "1 pod is Running after the main container exited"}
	p := &engine.Plan{GeneratedAt: now, Warnings: []layout.Warning{stuck, w, w2, repo}}
	p.State.Usage = map[string][]layout.Sample{"ssd": h}
	cs, err := chart.Urgent(&report.Report{Plan: p}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Alt != report.UrgentText(w, now) || cs[1].Alt != repo.Text {
		t.Fatalf("%d charts: %+v", len(cs), cs)
	}
	if cs, _ := chart.Urgent(&report.Report{Plan: p}, 1); len(cs) != 1 {
		t.Fatalf("%d charts, want at most 1", len(cs))
	}
}
