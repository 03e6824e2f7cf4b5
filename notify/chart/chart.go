// Package chart draws the report's most urgent pools (a quota, a subnet, a
// repository) as PNG charts for the report email: the recent usage history
// the state keeps, the limit, what this plan frees and the projection to
// exhaustion, in the report's own words. It draws with gonum's plot; it
// computes nothing the views did not: the numbers are the warnings'.
package chart

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	stddraw "image/draw"
	"image/png"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"reclaim.dev/reclaim/base/layout"
	"reclaim.dev/reclaim/notify"
	"reclaim.dev/reclaim/notify/report"
)

// Chart is one pool's chart.
type Chart struct {
	// Alt is the warning as the report says it, for the image's alt text.
	Alt string
	PNG []byte
}

// Width and Height are a chart's size as shown (CSS pixels); the PNG has
// twice as many, for screens that have them.
const (
	Width  = 560
	Height = 280
	scale  = 2
)

// Urgent draws the pools the report's most urgent warnings name, in their
// order: the first of each kind, at most max. Pools of one kind warned of
// together usually fill for one cause (the subnets of one VPC, from the
// same Jobs), so a chart of each kind shows more in the same room.
func Urgent(rep *report.Report, max int) ([]Chart, error) {
	p := rep.Plan
	if p == nil {
		return nil, nil
	}
	var out []Chart
	seen := map[string]bool{}
	for _, w := range p.Warnings {
		if len(out) == max {
			break
		}
		if w.Pool == nil || w.Pool.Limit <= 0 || seen[w.Kind] {
			continue
		}
		seen[w.Kind] = true
		png, err := Draw(w, p.State.Usage[w.Pool.Trend], p.GeneratedAt)
		if err != nil {
			return nil, fmt.Errorf("chart of %s: %w", w.Pool.Name, err)
		}
		out = append(out, Chart{Alt: report.UrgentText(w, p.GeneratedAt), PNG: png})
	}
	return out, nil
}

var (
	blue   = color.RGBA{0x00, 0x52, 0xcc, 0xff}
	red    = color.RGBA{0xde, 0x35, 0x0b, 0xff}
	green  = color.RGBA{0x00, 0x87, 0x5a, 0xff}
	orange = color.RGBA{0xff, 0x8b, 0x00, 0xff}
	grey   = color.RGBA{0xdf, 0xe1, 0xe6, 0xff}
	ink    = color.RGBA{0x17, 0x2b, 0x4d, 0xff}
)

// shown is how far back a chart looks: the week the projection is fitted
// to, and at least a day.
const (
	shown    = 7 * 24 * time.Hour
	minShown = 24 * time.Hour
)

// Draw charts a warning's pool from its usage history at now, as a PNG.
func Draw(w layout.Warning, history []layout.Sample, now time.Time) ([]byte, error) {
	pts := points(w, history, now)
	start, end := span(w, pts, now)
	p := frame(w, pts, start, end, now)
	series(p, w, pts, start, end, now)
	return encode(p)
}

// points are the pool's usage over the days shown, ending now.
func points(w layout.Warning, history []layout.Sample, now time.Time) plotter.XYs {
	pts := plotter.XYs{}
	for _, s := range history {
		if now.Sub(s.T) <= shown && !s.T.After(now) {
			pts = append(pts, plotter.XY{X: unix(s.T), Y: s.Usage})
		}
	}
	if n := len(pts); n == 0 || pts[n-1].X < unix(now.Add(-time.Minute)) {
		pts = append(pts, plotter.XY{X: unix(now), Y: w.Pool.Used})
	}
	return pts
}

// span is the time the chart shows: the points (a day at least), and a
// sixth more ahead, or as far as the projection reaches (within as much
// again as the past shown).
func span(w layout.Warning, pts plotter.XYs, now time.Time) (start, end float64) {
	start = math.Min(pts[0].X, unix(now.Add(-minShown)))
	past := unix(now) - start
	end = unix(now) + past/6
	if w.RunsOutAt != nil {
		end = math.Max(end, math.Min(unix(*w.RunsOutAt)+(unix(*w.RunsOutAt)-unix(now))/10, unix(now)+past))
	}
	return start, end
}

// frame is the plot's title, axes, grid and legend, with nothing drawn.
func frame(w layout.Warning, pts plotter.XYs, start, end float64, now time.Time) *plot.Plot {
	pl := w.Pool
	p := plot.New()
	p.Title.Text = wrap(notify.Short(w, now), 60)
	p.Title.TextStyle.Font = sans(10.5)
	p.Title.TextStyle.Color = ink
	p.Title.Padding = vg.Points(4)
	p.X.Min, p.X.Max = start, end
	p.X.Tick.Marker = timeTicks{}
	p.Y.Min, p.Y.Max = yRange(pts, pl)
	p.Y.Label.Text = pl.Unit
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Tick.Label.Font = sans(8.5)
		a.Label.TextStyle.Font = sans(9)
		a.Color, a.Tick.Color, a.Tick.Label.Color, a.Label.TextStyle.Color = ink, ink, ink, ink
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = nil, grey
	p.Add(grid)
	p.Legend.TextStyle.Font = sans(9)
	p.Legend.TextStyle.Color = ink
	p.Legend.Left, p.Legend.Top = true, pl.Used < pl.Limit/2
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), vg.Points(6)
	if p.Legend.Top {
		p.Legend.YOffs = -p.Legend.YOffs
	}
	p.Legend.ThumbnailWidth = vg.Points(16)
	return p
}

// series draws the limit, the usage, the projection to exhaustion and
// what this plan frees, each with its legend line.
func series(p *plot.Plot, w layout.Warning, pts plotter.XYs, start, end float64, now time.Time) {
	pl := w.Pool
	limit := line(plotter.XYs{{X: start, Y: pl.Limit}, {X: end, Y: pl.Limit}}, red, 1.2, true)
	p.Add(limit)
	p.Legend.Add(fmt.Sprintf("limit %s %s", num(pl.Limit), pl.Unit), limit)

	used := line(pts, blue, 1.6, false)
	now_, _ := plotter.NewScatter(plotter.XYs{pts[len(pts)-1]})
	now_.GlyphStyle = draw.GlyphStyle{Color: blue, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	p.Add(used, now_)
	label := fmt.Sprintf("used: %s now", num(pl.Used))
	if len(pts) == 1 {
		label += " (no history kept yet)"
	}
	p.Legend.Add(label, used, now_)

	if w.RunsOutAt != nil {
		to := plotter.XY{X: unix(*w.RunsOutAt), Y: pl.Limit}
		if to.X > end { // the line as far as the chart goes
			to = plotter.XY{X: end, Y: pl.Used + (pl.Limit-pl.Used)*(end-unix(now))/(to.X-unix(now))}
		}
		proj := line(plotter.XYs{{X: unix(now), Y: pl.Used}, to}, orange, 1.6, true)
		p.Add(proj)
		p.Legend.Add(report.TimeLeft(w, now)+" ("+w.RunsOutAt.UTC().Format("2006-01-02 15:04 MST")+")", proj)
	}

	if pl.Frees > 0 {
		after := pl.Used - pl.Frees
		drop := line(plotter.XYs{{X: unix(now), Y: pl.Used}, {X: unix(now), Y: after}}, green, 1.2, true)
		mark, _ := plotter.NewScatter(plotter.XYs{{X: unix(now), Y: after}})
		mark.GlyphStyle = draw.GlyphStyle{Color: green, Radius: vg.Points(3), Shape: draw.PyramidGlyph{}}
		p.Add(drop, mark)
		p.Legend.Add(fmt.Sprintf("this plan frees %s: %s after", num(pl.Frees), num(after)), drop, mark)
	}
}

// encode draws p at the email's size as a paletted PNG: the few colours
// drawn and their blends with the white page make it a third of the
// size, and look the same.
func encode(p *plot.Plot) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(Width)/96*vg.Inch, vg.Length(Height)/96*vg.Inch), vgimg.UseDPI(96*scale))
	p.Draw(draw.New(c))
	img := image.NewPaletted(c.Image().Bounds(), palette)
	stddraw.Draw(img, img.Bounds(), c.Image(), image.Point{}, stddraw.Src)
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func unix(t time.Time) float64 { return float64(t.Unix()) }

func line(xys plotter.XYs, c color.Color, width float64, dashed bool) *plotter.Line {
	l, _ := plotter.NewLine(xys)
	l.LineStyle.Color = c
	l.LineStyle.Width = vg.Points(width)
	if dashed {
		l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return l
}

// num says a pool's figure as the report does: whole, or one decimal.
func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// wrap breaks s between words into lines of at most n characters.
func wrap(s string, n int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > n {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// palette is each colour drawn blended with white in steps, for the
// anti-aliased edges.
var palette = func() color.Palette {
	var pal color.Palette
	for _, c := range []color.RGBA{ink, blue, red, green, orange, grey} {
		for i := 0; i <= 9; i++ {
			mix := func(v uint8) uint8 { return uint8(int(v) + (255-int(v))*i/10) }
			pal = append(pal, color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff})
		}
	}
	return append(pal, color.White)
}()

func sans(points float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(points)}
}

// timeTicks marks whole hours or days (UTC), four to eight of them.
type timeTicks struct{}

func (timeTicks) Ticks(min, max float64) []plot.Tick {
	span := time.Duration(max-min) * time.Second
	step := 24 * time.Hour
	for _, s := range []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour} {
		if span/s <= 8 {
			step = s
			break
		}
	}
	var ticks []plot.Tick
	t := time.Unix(int64(min), 0).UTC().Truncate(step)
	for ; !t.After(time.Unix(int64(max), 0)); t = t.Add(step) {
		if unix(t) < min {
			continue
		}
		label := t.Format("15:04")
		if t.Hour() == 0 || step >= 24*time.Hour {
			label = t.Format("Jan 2")
		}
		ticks = append(ticks, plot.Tick{Value: unix(t), Label: label})
	}
	return ticks
}

// yRange is the chart's height: from 0, unless everything drawn is in the
// top half of the limit, when a baseline of 0 would flatten the history
// into the limit's line (a repository a few images short of it); then from
// a little below the lowest point, as a dashboard scales.
func yRange(pts plotter.XYs, pl *layout.Pool) (lo, hi float64) {
	low := pl.Used - pl.Frees
	for _, p := range pts {
		low = math.Min(low, p.Y)
	}
	top := math.Max(pl.Limit, pl.Used)
	if low > pl.Limit/2 {
		lo = math.Max(0, low-(top-low)*0.7) // room for the legend below
	}
	return lo, top + (top-lo)*0.1
}
