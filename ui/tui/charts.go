package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/dbduel/dbduel/ui/chart"
	"github.com/dbduel/dbduel/ui/text"
	"github.com/dbduel/dbduel/ui/theme"
)

// metricName is chart metric k's name: TPC-C's first two are tpmC and TPM.
func (m *running) metricName(k int) string {
	if m.info.Figures == NewOrders && k < 2 {
		return []string{"tpmC", "TPM"}[k]
	}
	if text.IsSystemWorkload(m.info.Workload) && k < 2 {
		return []string{"events/s", "MiB/s"}[k] // cpu, memory, fileio: no transactions, no queries
	}
	return metricNames[k]
}

// chartLines is the large chart of the chosen metric in height lines,
// its title first.
func (m *running) chartLines(cards []*card, height int) []string {
	var names []string
	var series [][]float64
	for _, c := range cards {
		names = append(names, c.name)
		h := c.history[m.metric]
		if len(h) > m.window {
			h = h[len(h)-m.window:]
		}
		series = append(series, h)
	}
	title := fmt.Sprintf("%s per interval (last %d)", m.metricName(m.metric), m.window)
	if m.fromZero {
		title += " · Y from 0"
	}
	noisy := 0
	for _, c := range cards {
		noisy += c.noisy
	}
	if noisy > 0 {
		title += fmt.Sprintf(" · ! %d noisy interval(s) in this run: steal or other processes' CPU", noisy)
	}
	if !m.synced {
		title += " · Y scale per target"
	}
	out := []string{lipgloss.NewStyle().Bold(true).Render(chart.Fit(title, m.width))}
	rows := height - 1
	if m.synced && len(m.marks) > 0 {
		out = append(out, m.ruledPlot(series, names, rows)...)
	} else if m.synced {
		out = append(out, plotLines(series, names, m.width, rows, m.color, m.fromZero)...)
	} else {
		// A scale per target: every target's plot, each with its legend,
		// in the rows there are (the later ones were cut off the screen).
		// Five rows hold a plot of three and its legend.
		each := max(rows/max(len(series), 1), 5)
		shown := min(len(series), max(rows/each, 1))
		if shown < len(series) {
			shown = min(shown, max((rows-1)/5, 1))
			each = max((rows-1)/shown, 5)
		}
		for i := range series[:shown] {
			one := make([][]float64, len(series))
			one[i] = series[i]
			lines := plotLines(one, names, m.width, each, m.color, m.fromZero)
			out = append(out, lines[:min(len(lines), each)]...)
		}
		if shown < len(series) {
			out = append(out, chart.Fit(fmt.Sprintf("(%d more targets: y again for one shared scale)", len(series)-shown), m.width))
		}
	}
	for len(out) < height {
		out = append(out, "")
	}
	return out[:height]
}

// plotLines is a plot in at most rows lines (its legend included).
func plotLines(series [][]float64, names []string, width, rows int, color, fromZero bool) []string {
	h := rows
	for {
		lines := strings.Split(chart.Plot(series, names, width, h, color, fromZero), "\n")
		if len(lines) <= rows || h <= 3 {
			return lines
		}
		h -= len(lines) - rows
	}
}

// sparkLines are the metrics the large chart does not show, one line each.
func (m *running) sparkLines(cards []*card) []string {
	var out []string
	n := max(len(cards), 1)
	w := max((m.width-8)/n-3, 5)
	for k := range metricNames {
		if k == m.metric {
			continue
		}
		maxV := 0.0
		for _, c := range cards {
			for _, v := range c.history[k] {
				maxV = math.Max(maxV, v)
			}
		}
		var row []string
		for i, c := range cards {
			row = append(row, m.style(i).Render(theme.For(i).Glyph+" "+chart.Sparkline(c.history[k], w, maxV)))
		}
		out = append(out, fmt.Sprintf("%-7s %s", m.metricName(k), strings.Join(row, "  ")))
	}
	return out
}
