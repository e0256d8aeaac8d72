package report

import (
	"encoding/base64"
	"errors"
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/dbduel/dbduel/engine/result"
)

// seriesColors follow ui/theme's order (blue, orange, green, pink, gold, cyan).
var seriesColors = []color.RGBA{
	{0x1e, 0x90, 0xff, 0xff}, {0xff, 0xa5, 0x00, 0xff}, {0x32, 0xcd, 0x32, 0xff},
	{0xff, 0x69, 0xb4, 0xff}, {0xff, 0xd7, 0x00, 0xff}, {0x00, 0xce, 0xd1, 0xff},
}

// headline is the per-interval figure the chart draws: TPS, or for TPC-C
// the client-counted tpmC.
func headline(r *result.Result) (string, func(result.Interval) float64) {
	for _, run := range r.Runs {
		if len(run.Intervals) > 0 && run.Intervals[0].Types != nil {
			return "tpmC", func(iv result.Interval) float64 { return iv.TPMC }
		}
	}
	return "TPS", func(iv result.Interval) float64 { return iv.TPS }
}

// PNG draws TPS (TPC-C: tpmC) per interval, one line per measured run,
// coloured per target.
func PNG(w io.Writer, r *result.Result) error {
	name, get := headline(r)
	p := plot.New()
	p.Title.Text = "dbduel: " + r.Workload.Name + " — " + name + " per interval"
	p.X.Label.Text = "seconds into the run"
	p.Y.Label.Text = name
	p.Y.Min = 0
	idx := map[string]int{}
	for i, t := range r.Targets {
		idx[t.Name] = i
	}
	lines := 0
	legendDone := map[string]bool{}
	for _, run := range r.Runs {
		if run.Warmup || len(run.Intervals) == 0 {
			continue
		}
		var pts plotter.XYs
		for _, iv := range run.Intervals {
			if !iv.Warmup {
				pts = append(pts, plotter.XY{X: iv.TS, Y: get(iv)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		i, ok := idx[run.Target]
		if !ok {
			i = len(idx)
			idx[run.Target] = i
		}
		l.Color = seriesColors[i%len(seriesColors)]
		l.Width = vg.Points(1.5)
		l.Dashes = [][]vg.Length{nil, {vg.Points(4), vg.Points(2)}, {vg.Points(1), vg.Points(2)}}[i/len(seriesColors)%3]
		p.Add(l)
		if !legendDone[run.Target] {
			p.Legend.Add(run.Target, l)
			legendDone[run.Target] = true
		}
		lines++
	}
	if lines == 0 {
		return errors.New("no intervals to draw (was --report-interval 0?)")
	}
	p.Legend.Top = true
	c := vgimg.PngCanvas{Canvas: vgimg.New(9*vg.Inch, 5*vg.Inch)}
	p.Draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}

func inlineData(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
