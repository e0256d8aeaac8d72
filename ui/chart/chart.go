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
// scale starting at 0; legends name each series with its glyph.
func Plot(series [][]float64, names []string, width, height int, color bool) string {
	var data [][]float64
	var legends []string
	var colors []asciigraph.AnsiColor
	maxV := 0.0
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
			maxV = math.Max(maxV, v)
		}
	}
	if len(data) == 0 {
		return "(no data yet)"
	}
	if maxV == 0 {
		maxV = 1
	}
	plotW := width - LabelWidth - 3
	if plotW < 10 {
		plotW = 10
	}
	opts := []asciigraph.Option{
		asciigraph.Height(max(height-2, 2)), asciigraph.Width(plotW),
		asciigraph.LowerBound(0), asciigraph.UpperBound(maxV * 1.05),
		asciigraph.YAxisValueFormatter(func(v float64) string { return fmt.Sprintf("%*s", LabelWidth, Human(v)) }),
		asciigraph.SeriesLegends(legends...),
	}
	if color {
		opts = append(opts, asciigraph.SeriesColors(colors...))
	}
	return asciigraph.PlotMany(data, opts...)
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
