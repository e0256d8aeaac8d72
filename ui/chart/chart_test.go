package chart

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
)

func TestPlotHasAxisLegendsAndFixedLabels(t *testing.T) {
	out := Plot([][]float64{{100, 200, 150}, {50, 60, 55}}, []string{"native", "container"}, 60, 8, false, true)
	if !regexp.MustCompile(`[0-9] ┤`).MatchString(out) {
		t.Fatalf("no Y axis label followed by ┤:\n%s", out)
	}
	if !strings.Contains(out, "native") || !strings.Contains(out, "container") {
		t.Fatalf("legends missing:\n%s", out)
	}
	// Every axis line starts with a label of the same width.
	axis := -1
	for _, l := range strings.Split(out, "\n") {
		if i := strings.IndexAny(l, "┤┼"); i >= 0 {
			if axis >= 0 && i != axis {
				t.Fatalf("label width varies (axis at %d, before at %d): %q", i, axis, l)
			}
			axis = i
		}
	}
	if axis < LabelWidth {
		t.Fatalf("axis at %d, labels narrower than %d", axis, LabelWidth)
	}
}

func TestPlotEmpty(t *testing.T) {
	if Plot(nil, nil, 40, 5, false, true) != "(no data yet)" {
		t.Fatal("empty plot should say so")
	}
}

func TestSparklineAndHuman(t *testing.T) {
	if s := Sparkline([]float64{0, 50, 100}, 10, 100); s != "▁▄█" {
		t.Fatalf("sparkline %q", s)
	}
	if Human(12345) != "12.3k" || Human(2500000) != "2.50M" || Human(12.345) != "12.35" {
		t.Fatalf("human: %s %s %s", Human(12345), Human(2500000), Human(12.345))
	}
}

// Every complete block is a mark under its target's estimate (a digit
// where several share a cell), partial ones hollow; the rows stay within
// the width.
func TestDeltaChartBlockMarks(t *testing.T) {
	rows := []DeltaRow{{Label: "▲ c", Delta: -30, Low: -40, High: -20, HasCI: true, Blocks: []float64{-45, -30, -29.9}, Partial: []float64{-60}}}
	lines := DeltaChart(rows, 80)
	if len(lines) != 3 {
		t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
	}
	b := lines[1]
	if strings.Count(b, string(MarkBlock))+strings.Count(b, "2") < 2 || !strings.Contains(b, string(MarkPartial)) || !strings.Contains(b, "3 block(s), 1 cut ○") {
		t.Fatalf("block row %q", b)
	}
	for _, l := range lines {
		if w := lipgloss.Width(l); w > 80 {
			t.Fatalf("%d cells: %q", w, l)
		}
	}
}

// Latency bars share one scale: the slower target's bar is longer, each
// bar changes shade at its percentiles, and the figures sit beside it.
func TestLatencyBarsShareAScale(t *testing.T) {
	lines := LatencyBars([]LatencyRow{
		{Label: "● native", P50: 1000, P95: 2000, P99: 3000, Max: 5000},
		{Label: "▲ bridge", P50: 2000, P95: 4000, P99: 6000, Max: 10000, P95Delta: "+100%"},
	}, 100)
	if len(lines) != 3 {
		t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
	}
	bar := func(l string) int {
		return strings.Count(l, "█") + strings.Count(l, "▓") + strings.Count(l, "▒") + strings.Count(l, "░")
	}
	if b0, b1 := bar(lines[0]), bar(lines[1]); b1 != 2*b0 && b1 != 2*b0+1 && b1 != 2*b0-1 {
		t.Fatalf("bars %d and %d on one linear scale:\n%s", b0, b1, strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[1], "p95 4.00") || !strings.Contains(lines[1], "+100%") || !strings.Contains(lines[2], "linear scale to 10.0 ms") {
		t.Fatalf("figures:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if lipgloss.Width(l) > 100 {
			t.Fatalf("too wide: %q", l)
		}
	}
}

// The whole plan on one line per target: a gap between runs, one scale.
func TestPlanSparklinesGapBetweenRuns(t *testing.T) {
	lines := PlanSparklines([]PlanLine{
		{Label: "a", Runs: [][]float64{{10, 10, 10}, {10, 10, 10}}},
		{Label: "b", Runs: [][]float64{{5, 5, 5}, {5, 5, 5}}},
	}, 40)
	if len(lines) != 2 || !strings.Contains(lines[0], "███ ███") || !strings.Contains(lines[1], "▄▄▄ ▄▄▄") {
		t.Fatalf("lines %q", lines)
	}
}
