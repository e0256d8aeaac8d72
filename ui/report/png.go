package report

import (
	"encoding/base64"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/explain"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/ui/chart"
	dbtext "github.com/dbduel/dbduel/ui/text"
)

// SeriesColors follow ui/theme's order (blue, orange, green, pink, gold,
// cyan): the baseline is always the first.
var SeriesColors = []color.RGBA{
	{0x1e, 0x90, 0xff, 0xff}, {0xff, 0xa5, 0x00, 0xff}, {0x32, 0xcd, 0x32, 0xff},
	{0xff, 0x69, 0xb4, 0xff}, {0xff, 0xd7, 0x00, 0xff}, {0x00, 0xce, 0xd1, 0xff},
}

// Slide size: 16:9 at 150 dpi is 1920×1080.
const (
	slideW = 12.8 * vg.Inch
	slideH = 7.2 * vg.Inch
	dpi    = 150
)

// headline is the per-interval figure the chart draws: TPS, or for TPC-C
// the client-counted tpmC.
func headline(r *result.Result) (string, func(result.Interval) float64) {
	for _, run := range r.Runs {
		if len(run.Intervals) > 0 && run.Intervals[0].Types != nil {
			return "tpmC", func(iv result.Interval) float64 { return iv.TPMC }
		}
	}
	if dbtext.IsSystemWorkload(r.Workload.Name) {
		return "events/s", func(iv result.Interval) float64 { return iv.TPS }
	}
	return "TPS", func(iv result.Interval) float64 { return iv.TPS }
}

// Title says what ran: workload, threads and data size.
func Title(r *result.Result) string {
	s := "dbduel: " + r.Workload.Name
	if len(r.Plan.Points) == 1 {
		p := r.Plan.Points[0]
		s += " · " + Threads(p.Threads)
		if tables, ok := r.Workload.Options["tables"]; ok && p.TableSize > 0 {
			s += fmt.Sprintf(" · %v×%d rows", tables, p.TableSize)
		}
	} else if r.Live != nil {
		s += fmt.Sprintf(" · live session of %d segments", len(r.Segments))
	} else if len(r.Plan.Points) > 1 {
		s += fmt.Sprintf(" · sweep of %d points", len(r.Plan.Points))
	}
	if r.Explain != nil {
		s += " · explain"
	}
	return s
}

// PNG is a slide: the title; the headline figure per interval (each
// target's mean over its runs, the baseline first and in the first
// colour, the legend outside the plot) beside each target's Δ% against
// the baseline with its 95% CI (explain: each rung's against its
// reference); the verdicts and the cause under them.
func PNG(w io.Writer, r *result.Result) error {
	series, err := timeSeries(r)
	if err != nil {
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(slideW, slideH), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	sty := textStyle(20)
	dc.FillText(sty, vg.Point{X: dc.Min.X + vg.Inch/4, Y: dc.Max.Y - vg.Inch/2}, Title(r))

	notes := slideNotes(r)
	noteH := vg.Length(len(notes))*textStyle(11).Height("X")*1.25 + vg.Inch/8
	body := draw.Crop(dc, vg.Inch/8, -vg.Inch/8, noteH+vg.Inch/8, -vg.Inch*0.75)
	width := body.Max.X - body.Min.X
	if r.Explain != nil {
		// A ladder's story is its waterfall: it gets the whole width.
		if dp := deltaPlot(r); dp != nil {
			dp.Draw(draw.Crop(body, width*0.1, -width*0.1, 0, 0))
		}
	} else {
		left := draw.Crop(body, 0, -width*0.42, 0, 0)
		right := draw.Crop(body, width*0.6, 0, 0, 0)
		tp, legend, err := seriesPlot(r, series)
		if err != nil {
			return err
		}
		// The legend is outside the plot, never over its lines: under it
		// for a few targets, beside it for many.
		entryH := textStyle(11).Height("X")*1.2 + vg.Points(3)
		if len(series) <= 5 {
			legendH := vg.Length(len(series))*entryH + vg.Inch/8
			tp.Draw(draw.Crop(left, 0, 0, legendH, 0))
			legend.Draw(draw.Crop(left, vg.Inch*0.9, 0, 0, -(left.Max.Y - left.Min.Y - legendH)))
		} else {
			legendW := 2.4 * vg.Inch
			tp.Draw(draw.Crop(left, 0, -legendW, 0, 0))
			legend.Draw(draw.Crop(left, left.Max.X-left.Min.X-legendW+vg.Inch/8, 0, 0, -vg.Inch/2))
		}
		dp, lp := deltaPlot(r), latencyPlot(r)
		switch {
		case dp != nil && lp != nil:
			h := right.Max.Y - right.Min.Y
			dp.Draw(draw.Crop(right, 0, 0, h*0.4, 0))
			lp.Draw(draw.Crop(right, 0, 0, 0, -h*0.62))
		case dp != nil:
			dp.Draw(right)
		}
	}
	nsty := textStyle(11)
	y := dc.Min.Y + noteH
	for _, n := range notes {
		dc.FillText(nsty, vg.Point{X: dc.Min.X + vg.Inch/4, Y: y}, n)
		y -= nsty.Height("X") * 1.25
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}

func textStyle(size float64) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, font.Length(size)), Handler: plot.DefaultTextHandler}
}

// targetSeries is one target's mean headline figure per interval second.
type targetSeries struct {
	name string
	runs int
	pts  plotter.XYs
}

// timeSeries is each target's headline figure per interval, averaged over
// its complete measured runs of the first point, in target order.
func timeSeries(r *result.Result) ([]targetSeries, error) {
	_, get := headline(r)
	var out []targetSeries
	for _, name := range r.TargetNames() {
		sums := map[int][2]float64{} // interval index: sum, count
		var xs []float64
		runs := 0
		for _, run := range r.Completed(name, 0) {
			runs++
			k := 0
			for _, iv := range run.Intervals {
				if iv.Warmup {
					continue
				}
				if k >= len(xs) {
					xs = append(xs, iv.TS)
				}
				s := sums[k]
				sums[k] = [2]float64{s[0] + get(iv), s[1] + 1}
				k++
			}
		}
		ts := targetSeries{name: name, runs: runs}
		for k, x := range xs {
			// Only the seconds every run reached: a mean over fewer would
			// step at the shortest run's end.
			if s := sums[k]; int(s[1]) == runs {
				ts.pts = append(ts.pts, plotter.XY{X: x, Y: s[0] / s[1]})
			}
		}
		if len(ts.pts) > 0 {
			out = append(out, ts)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no intervals to draw (was --report-interval 0?)")
	}
	return out, nil
}

func seriesPlot(r *result.Result, series []targetSeries) (*plot.Plot, plot.Legend, error) {
	name, _ := headline(r)
	p := plot.New()
	p.Title.Text = name + " per interval"
	p.X.Label.Text = "seconds into the run"
	p.Y.Label.Text = name
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Left, legend.Top = true, true
	legend.TextStyle = textStyle(11)
	legend.Padding = vg.Points(3)
	idx := targetIndex(r)
	var lines []plot.Plotter
	for _, s := range series {
		l, err := plotter.NewLine(s.pts)
		if err != nil {
			return nil, legend, err
		}
		i := idx[s.name]
		l.Color = SeriesColors[i%len(SeriesColors)]
		l.Width = vg.Points(2)
		l.Dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}}[i/len(SeriesColors)%3]
		lines = append(lines, l)
		label := fmt.Sprintf("%s (mean of %d run(s))", s.name, s.runs)
		if i == 0 {
			label = s.name + " — baseline" + strings.TrimPrefix(label, s.name)
		}
		legend.Add(label, l)
	}
	// The baseline is drawn last, on top: a target level with it must not
	// hide the line everything is measured against.
	for i := len(lines) - 1; i >= 0; i-- {
		p.Add(lines[i])
	}
	return p, legend, nil
}

func targetIndex(r *result.Result) map[string]int {
	idx := map[string]int{}
	for i, n := range r.TargetNames() {
		idx[n] = i
	}
	return idx
}

// deltaRow is one bar of the Δ% chart.
type deltaRow struct {
	label            string
	delta, low, high float64
	hasCI            bool
	color            color.Color
	// blocks and partial are every block's Δ% (cut ones partial): small
	// marks under the estimate, so an outlier block shows.
	blocks, partial []float64
}

// deltaRows are the targets' primary Δ% at the first point, or explain's
// rungs against their references.
func deltaRows(r *result.Result) (rows []deltaRow, title string) {
	if r.Explain != nil {
		for _, rg := range r.Explain.Rungs {
			if rg.ComparedTo == "" || rg.N == 0 {
				continue
			}
			rows = append(rows, deltaRow{label: rg.Name + " vs " + rg.ComparedTo, delta: rg.DeltaPct, low: rg.CILowPct, high: rg.CIHighPct, hasCI: rg.HasCI, color: SeriesColors[0]})
		}
		return rows, "explain: Δ TPS per rung, 95% CI"
	}
	idx := targetIndex(r)
	metric := "TPS"
	for _, name := range r.TargetNames()[1:] {
		c := cause.Primary(r, name, 0)
		if c == nil {
			continue
		}
		if c.Metric == "nopm" {
			metric = "NOPM"
		}
		row := deltaRow{label: name, delta: c.DeltaPct, low: c.CILowPct, high: c.CIHighPct, hasCI: c.HasCI, color: SeriesColors[idx[name]%len(SeriesColors)]}
		row.blocks, row.partial = stats.BlockDeltas(r, name, r.TargetNames()[0], c.Metric, 0)
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, ""
	}
	return rows, fmt.Sprintf("%s vs %s: Δ%%, 95%% CI", metric, r.TargetNames()[0])
}

// deltaPlot draws each row's Δ% as a point with its CI as a bar, zero
// marked, the first row on top, on a log-ratio axis labelled in % (the
// CI is symmetric there; nil with nothing to compare).
func deltaPlot(r *result.Result) *plot.Plot {
	rows, title := deltaRows(r)
	if len(rows) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "Δ% against the reference (log-ratio axis)"
	p.X.Tick.Marker = percentTicks{}
	p.Add(plotter.NewGrid())
	var names []string
	lo, hi := 0.0, 0.0
	for i, row := range rows {
		y := float64(len(rows) - 1 - i)
		names = append([]string{row.label}, names...)
		if row.hasCI {
			bar, _ := plotter.NewLine(plotter.XYs{{X: lr(row.low), Y: y}, {X: lr(row.high), Y: y}})
			bar.Color, bar.Width = row.color, vg.Points(3)
			p.Add(bar)
			for _, x := range []float64{lr(row.low), lr(row.high)} {
				cap, _ := plotter.NewLine(plotter.XYs{{X: x, Y: y - 0.15}, {X: x, Y: y + 0.15}})
				cap.Color, cap.Width = row.color, vg.Points(2)
				p.Add(cap)
			}
			lo, hi = min(lo, lr(row.low)), max(hi, lr(row.high))
		}
		for k, set := range [][]float64{row.blocks, row.partial} {
			if len(set) == 0 {
				continue
			}
			var xys plotter.XYs
			for _, d := range set {
				xys = append(xys, plotter.XY{X: lr(d), Y: y - 0.22})
				lo, hi = min(lo, lr(d)), max(hi, lr(d))
			}
			marks, _ := plotter.NewScatter(xys)
			marks.GlyphStyle = draw.GlyphStyle{Color: row.color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			if k == 1 { // a cut block: hollow
				marks.GlyphStyle.Shape = draw.RingGlyph{}
			}
			p.Add(marks)
		}
		dot, _ := plotter.NewScatter(plotter.XYs{{X: lr(row.delta), Y: y}})
		dot.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
		p.Add(dot)
		lbl, _ := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: lr(row.delta), Y: y + 0.28}}, Labels: []string{deltaText(row)}})
		p.Add(lbl)
		lo, hi = min(lo, lr(row.delta)), max(hi, lr(row.delta))
	}
	pad := (hi - lo) * 0.12
	if pad == 0 {
		pad = 0.01
	}
	zero, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.5}, {X: 0, Y: float64(len(rows)) - 0.5}})
	zero.Color, zero.Width = color.Gray{Y: 0x60}, vg.Points(1)
	zero.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(zero)
	p.X.Min, p.X.Max = lo-pad, hi+2.5*pad // room for the rightmost label
	p.Y.Min, p.Y.Max = -0.5, float64(len(rows))-0.5
	p.NominalY(names...)
	return p
}

// lr is a Δ% as a log-ratio: the delta chart's X.
func lr(pct float64) float64 { return math.Log1p(pct / 100) }

// percentTicks label a log-ratio axis with round percentages.
type percentTicks struct{}

func (percentTicks) Ticks(lo, hi float64) []plot.Tick {
	// Zero always; the others only a tenth of the axis apart from the
	// labels already placed, so they never overlap.
	ticks := []plot.Tick{{Value: 0, Label: "0%"}}
	gap := (hi - lo) / 10
	for _, pct := range []float64{-50, 100, -25, 25, -75, 200, -10, 10, -90, 500, -5, 5, 50, -95, 1000, 2000, 5000} {
		x := lr(pct)
		if x < lo || x > hi {
			continue
		}
		clear := true
		for _, t := range ticks {
			clear = clear && math.Abs(t.Value-x) >= gap
		}
		if clear {
			ticks = append(ticks, plot.Tick{Value: x, Label: fmt.Sprintf("%+.0f%%", pct)})
		}
	}
	return ticks
}

func deltaText(row deltaRow) string {
	if !row.hasCI {
		return fmt.Sprintf("%+.1f%% (no CI)", row.delta)
	}
	return fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%]", row.delta, row.low, row.high)
}

const maxNotes = 14

// slideNotes are the verdicts and the cause, wrapped to the slide; for a
// ladder, the whole gap's (bridge-proxy against native) and its shares.
func slideNotes(r *result.Result) []string {
	var lines []string
	if r.Explain != nil {
		if c := cause.Primary(r, "bridge-proxy", 0); c != nil {
			lines = append(lines, chart.Wrap("verdict: "+c.Verdict, 150)...)
			if c.Cause != "" {
				lines = append(lines, chart.Wrap("cause: bridge-proxy: "+c.Cause, 150)...)
			}
		}
		if shares := explain.Shares(r.Explain); shares != "" {
			lines = append(lines, chart.Wrap(shares, 150)...)
		}
		return lines
	}
	for _, name := range r.TargetNames()[min(1, len(r.TargetNames())):] {
		if c := cause.Primary(r, name, 0); c != nil {
			lines = append(lines, chart.Wrap("verdict: "+c.Verdict, 150)...)
		}
	}
	if line := cause.Line(r, 0); line != "" {
		lines = append(lines, chart.Wrap("cause: "+line, 150)...)
	}
	if !r.Complete {
		lines = append(lines, "partial result: the run was stopped before the plan finished")
	}
	// The plots keep at least half the slide.
	if len(lines) > maxNotes {
		lines = append(lines[:maxNotes-1], fmt.Sprintf("… %d more line(s): the Markdown and HTML reports hold them all", len(lines)-maxNotes+1))
	}
	return lines
}

func inlineData(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// Threads is "1 thread" or "N threads".
func Threads(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", n)
}

// latencyPlot draws each target's p50/p95/p99/max at the first point, from
// its runs' merged histograms, as one bar per target on a shared scale
// (thick to p50, thinner on to p95, p99 and max), baseline on top (nil
// without histograms).
func latencyPlot(r *result.Result) *plot.Plot {
	names := r.TargetNames()
	idx := targetIndex(r)
	type row struct {
		name string
		l    stats.Latency
	}
	var rows []row
	for _, n := range names {
		if l, ok := stats.MergedLatency(r, n, 0); ok {
			rows = append(rows, row{n, l})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = "latency: p50, p95, p99, max (thick to thin; merged over the complete blocks)"
	p.X.Label.Text = "ms"
	p.Add(plotter.NewGrid())
	var labels []string
	maxMS := 0.0
	for i, rw := range rows {
		y := float64(len(rows) - 1 - i)
		labels = append([]string{rw.name}, labels...)
		col := SeriesColors[idx[rw.name]%len(SeriesColors)]
		stops := []float64{0, rw.l.P50 / 1000, rw.l.P95 / 1000, rw.l.P99 / 1000, rw.l.Max / 1000}
		widths := []vg.Length{vg.Points(14), vg.Points(9), vg.Points(5), vg.Points(2)}
		for k := range widths {
			seg, _ := plotter.NewLine(plotter.XYs{{X: stops[k], Y: y}, {X: stops[k+1], Y: y}})
			seg.Color, seg.Width = col, widths[k]
			p.Add(seg)
		}
		lbl, _ := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: stops[4], Y: y + 0.3}},
			Labels: []string{fmt.Sprintf("p95 %.2f · max %.1f ms", stops[2], stops[4])}})
		p.Add(lbl)
		maxMS = max(maxMS, stops[4])
	}
	p.X.Min, p.X.Max = 0, maxMS*1.25
	p.Y.Min, p.Y.Max = -0.5, float64(len(rows))-0.5
	p.NominalY(labels...)
	return p
}
