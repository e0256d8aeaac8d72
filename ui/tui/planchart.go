package tui

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/ui/chart"
	"github.com/dbduel/dbduel/ui/text"
)

const (
	// planChartMin is the fewest lines the finished screen's plan chart is
	// drawn in; with less room left the one-line sparklines stand instead.
	planChartMin = 10
	// tableBesideMin is the width from which the run table stands beside
	// the plan chart, the chart keeping at least chartBesideMin columns.
	tableBesideMin = 180
	chartBesideMin = 60
)

// planSeries is each target's chart metric k in every measured interval
// of every run, runs in plan order: the whole plan on one scale.
func (m *summary) planSeries(r *result.Result, names []string, k int) [][]float64 {
	series := make([][]float64, len(names))
	for i, n := range names {
		for _, run := range r.Measured(n, result.AnyPoint) {
			for _, iv := range run.Intervals {
				if !iv.Warmup {
					series[i] = append(series[i], m.chartValues(iv)[k])
				}
			}
		}
	}
	return series
}

// planChart is the finished screen's whole-plan chart in exactly rows
// lines (tab picks the metric, z the Y origin, as while running); at
// tableBesideMin columns and more the run table stands beside it.
func (m *summary) planChart(r *result.Result, names []string, rows int) []string {
	title := fmt.Sprintf("%s per interval over the whole plan (runs in plan order, one scale; tab: metric)", m.metricName(m.metric))
	if m.fromZero {
		title += " · Y from 0"
	}
	var table []string
	chartW := m.width
	if m.width >= tableBesideMin {
		table = runTableRows(r)
		tableW := 0
		for _, l := range table {
			tableW = max(tableW, lipgloss.Width(l))
		}
		if m.width-tableW-3 >= chartBesideMin {
			chartW = m.width - tableW - 3
		} else {
			table = nil
		}
	}
	out := []string{lipgloss.NewStyle().Bold(true).Render(chart.Fit(title, chartW))}
	out = append(out, plotLines(m.planSeries(r, names, m.metric), names, chartW, rows-1, m.color, m.fromZero)...)
	for len(out) < rows {
		out = append(out, "")
	}
	out = out[:rows]
	if table == nil {
		return out
	}
	if len(table) > rows {
		table = append(table[:rows-1], "… t: the whole run table")
	}
	for i, l := range table {
		out[i] += strings.Repeat(" ", max(chartW-lipgloss.Width(out[i]), 0)) + "   " + l
	}
	return out
}

// prose is a run table's line of words ("gmean: …", "verdict: …",
// "cause: …"): the finished screen says them already, in full.
var prose = regexp.MustCompile(`^[a-z][a-z ]*: `)

// runTableRows are the run table's rows without its prose: what stands
// beside the plan chart.
func runTableRows(r *result.Result) []string {
	var rows []string
	for _, l := range strings.Split(strings.TrimRight(text.RunTable(r), "\n"), "\n") {
		if !prose.MatchString(l) && l != text.StopLine(r) {
			rows = append(rows, l)
		}
	}
	return rows
}
