// Package chart renders per-interval series as multi-series asciigraph
// plots and sparklines. Pure functions: values in, string out.
package chart

import (
	"fmt"
	"math"
	"strings"

	"github.com/guptarohit/asciigraph"

	"github.com/dbduel/dbduel/ui/theme"
)

// LabelWidth is the fixed width of Y labels, so the plot does not jump as values change.
const LabelWidth = 8

// Plot draws series (one per target) in width×height cells with a shared Y
// scale that fits the data (fromZero: starts at 0); legends name each
// series with its glyph.
func Plot(series [][]float64, names []string, width, height int, color, fromZero bool) string {
	var data [][]float64
	var legends []string
	var colors []asciigraph.AnsiColor
	maxV, minV := 0.0, math.Inf(1)
	for i, s := range series {
		if len(s) == 0 {
			continue
		}
		if len(s) == 1 {
			s = []float64{s[0], s[0]} // asciigraph needs two points for a line
		}
		data = append(data, s)
		legends = append(legends, theme.For(i).Glyph+" "+names[i])
		colors = append(colors, theme.For(i).ANSI)
		for _, v := range s {
			maxV, minV = math.Max(maxV, v), math.Min(minV, v)
		}
	}
	if len(data) == 0 {
		return "(no data yet)"
	}
	lo, hi := fitRange(minV, maxV, fromZero)
	plotW := PlotWidth(width)
	rows := max(height-2, 2)
	label := AxisLabels(lo, hi, rows)
	opts := []asciigraph.Option{
		asciigraph.Height(rows), asciigraph.Width(plotW),
		asciigraph.LowerBound(lo), asciigraph.UpperBound(hi),
		asciigraph.YAxisValueFormatter(func(v float64) string { return fmt.Sprintf("%*s", LabelWidth, label(v)) }),
		asciigraph.SeriesLegends(legends...),
	}
	if color {
		opts = append(opts, asciigraph.SeriesColors(colors...))
	}
	return asciigraph.PlotMany(data, opts...)
}

// PlotWidth is the columns Plot draws its series over in width cells
// (every series is stretched to them).
func PlotWidth(width int) int { return max(width-LabelWidth-3, 10) }

// fitRange is the Y range for data in [minV, maxV]: 5% of the span added
// on each side (never below zero for non-negative data), or from zero.
func fitRange(minV, maxV float64, fromZero bool) (lo, hi float64) {
	if fromZero || minV == maxV && minV == 0 {
		return 0, math.Max(maxV*1.05, 1)
	}
	pad := (maxV - minV) * 0.05
	if pad == 0 {
		pad = math.Abs(maxV) * 0.05
	}
	lo = minV - pad
	if minV >= 0 {
		lo = math.Max(lo, 0)
	}
	return lo, maxV + pad
}

// AxisLabels formats the labels of an axis from lo to hi in rows steps all
// alike: one unit (k or M by the largest value) and the decimals that show
// the step between two rows with two significant digits.
func AxisLabels(lo, hi float64, rows int) func(float64) string {
	scale, unit := 1.0, ""
	switch a := math.Max(math.Abs(lo), math.Abs(hi)); {
	case a >= 1e6:
		scale, unit = 1e6, "M"
	case a >= 1e4:
		scale, unit = 1e3, "k"
	}
	step := (hi - lo) / scale / float64(max(rows, 1))
	dec := 0
	if step > 0 && step < 10 {
		dec = min(int(math.Ceil(1-math.Log10(step))), 3)
	}
	return func(v float64) string { return fmt.Sprintf("%.*f%s", dec, v/scale, unit) }
}

// Human prints a value compactly (12.3k, 4.56M).
func Human(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the last width values of s scaled to max.
func Sparkline(s []float64, width int, maxV float64) string {
	if len(s) > width {
		s = s[len(s)-width:]
	}
	if maxV <= 0 {
		for _, v := range s {
			maxV = math.Max(maxV, v)
		}
	}
	var b strings.Builder
	for _, v := range s {
		i := 0
		if maxV > 0 {
			i = int(v / maxV * float64(len(sparks)-1))
		}
		b.WriteRune(sparks[max(0, min(i, len(sparks)-1))])
	}
	return b.String()
}
