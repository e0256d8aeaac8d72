package chart

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// LatencyRow is one target's latency percentiles (µs) and the Δ% of its
// p95 against the baseline ("" for the baseline).
type LatencyRow struct {
	Label              string
	P50, P95, P99, Max float64
	P95Delta           string
}

// Shades of a latency bar, p50 darkest: a bar is as long as the max, its
// shades change at p50, p95 and p99.
const (
	ShadeP50 = '█'
	ShadeP95 = '▓'
	ShadeP99 = '▒'
	ShadeMax = '░'
)

// LatencyBars draws each row as one bar on a scale shared by all rows (a
// log scale when the maxima span more than 20×), with its p50/p95/p99/max
// in figures beside it; width cells wide, and a key line last.
func LatencyBars(rows []LatencyRow, width int) []string {
	if len(rows) == 0 {
		return nil
	}
	labelW := 0
	for _, r := range rows {
		labelW = min(max(labelW, lipgloss.Width(r.Label)), 18)
	}
	const figuresW = 54 // "p50 1.23 p95 12.3 p99 45.6 max 789 ms, p95 +66.0%"
	barW := width - labelW - figuresW - 2
	if barW < 8 {
		return nil
	}
	top, bottom := 0.0, math.Inf(1)
	for _, r := range rows {
		top, bottom = math.Max(top, r.Max), math.Min(bottom, math.Max(r.P50, 1))
	}
	logScale := top/bottom > 20
	cells := func(v float64) int {
		if top <= 0 {
			return 0
		}
		f := v / top
		if logScale {
			f = math.Log1p(v) / math.Log1p(top)
		}
		return int(math.Round(f * float64(barW)))
	}
	var out []string
	for _, r := range rows {
		bar := []rune(strings.Repeat(" ", barW))
		for i := range min(cells(r.Max), barW) {
			switch {
			case i < cells(r.P50):
				bar[i] = ShadeP50
			case i < cells(r.P95):
				bar[i] = ShadeP95
			case i < cells(r.P99):
				bar[i] = ShadeP99
			default:
				bar[i] = ShadeMax
			}
		}
		figs := fmt.Sprintf("p50 %s p95 %s p99 %s max %s ms", ms(r.P50), ms(r.P95), ms(r.P99), ms(r.Max))
		if r.P95Delta != "" {
			figs += ", p95 " + r.P95Delta
		}
		label := Fit(r.Label, labelW)
		out = append(out, fmt.Sprintf("%s%s %s %s", label, strings.Repeat(" ", labelW-lipgloss.Width(label)), string(bar), Fit(figs, figuresW)))
	}
	scale := "linear"
	if logScale {
		scale = "log"
	}
	key := fmt.Sprintf("%c p50 %c p95 %c p99 %c max, one %s scale to %s ms", ShadeP50, ShadeP95, ShadeP99, ShadeMax, scale, ms(top))
	return append(out, Fit(key, width))
}

func ms(us float64) string {
	v := us / 1000
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// PlanLine is one target's measured intervals of every run, in plan
// order, one slice a run.
type PlanLine struct {
	Label string
	Runs  [][]float64
}

// PlanSparklines draw each target's intervals over the whole plan on one
// line, runs separated by a gap, all on one shared scale (so drift, a
// noisy block or a warming cache shows); runs too long for the width are
// averaged into buckets.
func PlanSparklines(lines []PlanLine, width int) []string {
	labelW := 0
	maxV, longest := 0.0, 0
	for _, l := range lines {
		labelW = min(max(labelW, lipgloss.Width(l.Label)), 18)
		n := 0
		for _, run := range l.Runs {
			n += len(run) + 1
			for _, v := range run {
				maxV = math.Max(maxV, v)
			}
		}
		longest = max(longest, n)
	}
	plotW := width - labelW - 1
	if plotW < 8 || longest == 0 {
		return nil
	}
	var out []string
	for _, l := range lines {
		var b strings.Builder
		for i, run := range l.Runs {
			if i > 0 {
				b.WriteByte(' ')
			}
			w := max(len(run)*plotW/longest, 1)
			b.WriteString(Sparkline(buckets(run, w), w, maxV))
		}
		label := Fit(l.Label, labelW)
		out = append(out, label+strings.Repeat(" ", labelW-lipgloss.Width(label))+" "+Fit(b.String(), plotW))
	}
	return out
}

// buckets averages s into at most n values.
func buckets(s []float64, n int) []float64 {
	if len(s) <= n {
		return s
	}
	out := make([]float64, n)
	for i := range out {
		lo, hi := i*len(s)/n, (i+1)*len(s)/n
		sum := 0.0
		for _, v := range s[lo:hi] {
			sum += v
		}
		out[i] = sum / float64(max(hi-lo, 1))
	}
	return out
}
