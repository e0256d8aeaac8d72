package tui

import (
	"fmt"

	"math"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/ui/chart"
	"github.com/dbduel/dbduel/ui/text"
	"github.com/dbduel/dbduel/ui/theme"
)

// Minimum terminal size the layout needs.
const (
	MinWidth  = 80
	MinHeight = 24
)

// Layout limits: a side-by-side card needs this many cells to show its
// lines whole; the chart keeps at least this many plot rows.
const (
	fullCardWidth = 34
	cardLines     = 8
	cardRows      = cardLines + 2 // and the border
	minChartRows  = 8
)

// View renders the whole screen from the model (pure: no clock, no I/O).
// Every line fits the terminal's width and the screen its height.
func (m *Model) View() string {
	if m.width < MinWidth || m.height < MinHeight {
		return fmt.Sprintf("terminal too small: need %d×%d, have %d×%d\npress q to stop", MinWidth, MinHeight, m.width, m.height)
	}
	var lines []string
	if m.done {
		lines = m.sum.view()
	} else {
		lines = m.run.view()
	}
	if len(lines) > m.height {
		lines = lines[:m.height]
	}
	for i, l := range lines {
		if lipgloss.Width(l) > m.width {
			lines[i] = xansi.Truncate(l, m.width, "…") // a safety net: the parts fit their own text
		}
	}
	return strings.Join(lines, "\n")
}

// view is the running screen: header, cards, comparison lines, chart.
func (m *running) view() []string {
	cards := m.cards
	if m.paused && m.frozen != nil {
		cards = m.frozen
	}
	bottom := append(m.editorLines(), m.footer()...)
	below := m.info.Schedule.below(m, cards)
	cardPart := m.cardLines(cards, len(below))
	if m.message != "" {
		below = append(below, chart.Fit(m.message, m.width))
	}
	// Explain's many rungs: the waterfall lists them all, so the cards
	// shrink to the running one when both would crowd out the chart.
	if m.height-2-len(cardPart)-len(below)-len(bottom) < minChartRows+1 && len(cards) > 1 {
		cardPart = m.runningCardOnly(cards)
	}
	top := append(append(m.header(), cardPart...), below...)
	if len(top)+len(bottom) > m.height {
		top = top[:max(m.height-len(bottom), 0)]
	}
	avail := m.height - len(top) - len(bottom)
	if m.page > 0 && m.page <= len(cards) {
		return append(append(top, m.pageLines(cards, avail)...), bottom...)
	}
	// Causes so far, where there is room for them beside a full chart.
	if c := m.causeLine(); c != "" && avail >= minChartRows+8 {
		top = append(top, chart.Fit("cause so far: "+c, m.width))
		avail--
	}
	sparks := m.sparkLines(cards)
	if avail-len(sparks) < minChartRows+1 {
		sparks = nil // the large chart first
	}
	out := top
	if h := avail - len(sparks); h >= 4 {
		out = append(out, m.chartLines(cards, h)...)
		out = append(out, sparks...)
	} else {
		for range avail {
			out = append(out, "")
		}
	}
	return append(out, bottom...)
}

// runningCardOnly is the compact line of the running target (or of the
// first when none runs), with how many others c pages through.
func (m *running) runningCardOnly(cards []*card) []string {
	lines := m.compactCards(cards)
	i := 0
	for j, c := range cards {
		if c.running {
			i = j
		}
	}
	return []string{lines[i], chart.Fit(fmt.Sprintf("(%d other targets: c pages through their cards)", len(cards)-1), m.width)}
}

func (m *common) style(i int) lipgloss.Style {
	s := lipgloss.NewStyle()
	if m.color {
		s = s.Foreground(lipgloss.Color(theme.For(i).Color))
	}
	return s
}

// header is two lines: what runs, then where the session is.
func (m *running) header() []string { return m.info.Schedule.header(m) }

// planHeader is two lines: what runs, then where the plan is.
func (m *running) planHeader() []string {
	elapsed := m.now.Sub(m.started).Truncate(time.Second)
	runs := m.plannedRuns()
	frac := 0.0
	if runs > 0 {
		frac = math.Min(1, float64(m.runsDone)/float64(runs))
	}
	rate := ""
	if m.info.Rate > 0 {
		rate = fmt.Sprintf(" · rate %.0f/s", m.info.Rate)
	}
	paused := ""
	if m.paused {
		paused = "  [display paused]"
	}
	n := m.info.Threads
	if m.threads > 0 {
		n = m.threads // the running sweep point's own
	}
	threads := fmt.Sprintf("%d threads", n)
	if n == 1 {
		threads = "1 thread"
	}
	data := fmt.Sprintf("%d×%d %s", m.info.Tables, m.info.TableSize, m.rows())
	if m.info.Data != "" {
		data = m.info.Data
	}
	if m.info.Note != "" {
		paused += " · " + m.info.Note
	}
	line1 := chart.Fit(fmt.Sprintf("dbduel · %s · %s · %s%s · %s%s", m.info.Workload, data, threads, rate, m.phase, paused), m.width)
	line2 := fmt.Sprintf("elapsed %s · runs %d/%d · planned run time %s · %s",
		elapsed, m.runsDone, runs, time.Duration(runs)*m.info.RunTime, m.etaText())
	if barW := min(30, m.width-lipgloss.Width(line2)-3); barW >= 8 {
		filled := int(frac * float64(barW))
		line2 += fmt.Sprintf(" [%s%s]", strings.Repeat("█", filled), strings.Repeat("░", barW-filled))
	}
	return []string{lipgloss.NewStyle().Bold(true).Render(line1), chart.Fit(line2, m.width)}
}

func (m *running) plannedRuns() int {
	switch {
	case m.totalRuns > 0:
		return m.totalRuns
	case m.info.TotalRuns > 0:
		return m.info.TotalRuns
	}
	return m.info.Runs * len(m.cards)
}

// etaText is the time to the end of the plan: measured once a run has
// finished (counting down between events), planned before that ("~").
func (m *running) etaText() string {
	if m.eta > 0 {
		return "ETA " + max(m.eta-m.now.Sub(m.etaAt), 0).Truncate(time.Second).String()
	}
	left := time.Duration(m.plannedRuns()-m.runsDone)*m.info.RunTime - m.now.Sub(m.started)
	if m.info.RunTime <= 0 {
		return "ETA not known yet"
	}
	return "ETA ~" + max(left, 0).Truncate(time.Second).String() + " (planned)"
}

func (m *running) rows() string {
	if m.info.Rows == "" {
		return "rows"
	}
	return m.info.Rows
}

// rates is a card's throughput: TPS and QPS, or for the system tests
// events/s and the MiB/s they moved.
func (m *running) rates(tps, qps, mib float64) string {
	if m.info.Figures != Events {
		return fmt.Sprintf("TPS %s  QPS %s", chart.Human(tps), chart.Human(qps))
	}
	if mib > 0 {
		return fmt.Sprintf("events/s %s  MiB/s %s", chart.Human(tps), chart.Human(mib))
	}
	return "events/s " + chart.Human(tps)
}

// metricName is chart metric k's name: TPC-C's first two are tpmC and TPM.
func (m *running) metricName(k int) string {
	if m.info.Figures == NewOrders && k < 2 {
		return []string{"tpmC", "TPM"}[k]
	}
	return metricNames[k]
}

// fullCards says whether n cards fit side by side with a readable chart
// under them and the below lines between; otherwise each target gets one
// line and c pages full cards.
func (m *running) fullCards(n, below int) bool {
	w := m.width/max(n, 1) - 2
	rest := 2 + max(below, n-1) + minChartRows + 2 + 2 + 1 // header, below, chart, sparklines, footer
	return w >= fullCardWidth && m.height >= cardRows+rest
}

func (m *running) cardLines(cards []*card, below int) []string {
	if !m.fullCards(len(cards), below) {
		return m.compactCards(cards)
	}
	n := max(len(cards), 1)
	w := m.width/n - 2
	var boxes []string
	for i, c := range cards {
		boxes = append(boxes, m.box(i, c, w))
	}
	return strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, boxes...), "\n")
}

// box is card i with its border, w cells inside.
func (m *running) box(i int, c *card, w int) string {
	border := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Width(w).Padding(0, 1)
	if m.color {
		border = border.BorderForeground(lipgloss.Color(theme.For(i).Color))
	}
	var lines []string
	for j, l := range m.cardContent(i, c, w-2) {
		if j > 0 {
			l = chart.Fit(l, w-2)
		}
		lines = append(lines, l)
	}
	return border.Render(strings.Join(lines, "\n"))
}

// cardContent is a card's lines (the first styled).
func (m *running) cardContent(i int, c *card, w int) []string {
	var lines []string
	status := c.phase
	if c.running {
		status = "running"
	}
	if m.info.Schedule.selectable() && m.selected == i {
		status = "▸selected · " + status
	}
	lines = append(lines, m.style(i).Bold(true).Render(theme.For(i).Glyph+" "+chart.Fit(c.name, w-2-len(status)-2))+"  "+status)
	lines = append(lines, c.kind)
	if c.image != "" {
		lines = append(lines, "image "+c.image)
	}
	if c.place != "" {
		lines = append(lines, c.place)
	} else {
		lines = append(lines, "version "+orUnknown(c.version))
	}
	switch {
	case c.preparing():
		pct := float64(c.prepRows) / float64(c.prepTotal)
		bw := max(w-18, 5)
		f := int(pct * float64(bw))
		lines = append(lines, fmt.Sprintf("prepare [%s%s] %3.0f%%", strings.Repeat("█", f), strings.Repeat("░", bw-f), pct*100))
		lines = append(lines, fmt.Sprintf("%d / %d %s", c.prepRows, c.prepTotal, m.rows()))
		if rate := m.prepRate(c); rate != "" {
			lines = append(lines, rate)
		}
	case c.running && c.last.TS > 0:
		iv := c.last
		if m.info.Figures == NewOrders {
			lines = append(lines, fmt.Sprintf("tpmC %s  TPM %s  TPS %s", chart.Human(iv.TPMC), chart.Human(iv.TPM), chart.Human(iv.TPS)))
		} else {
			lines = append(lines, m.rates(iv.TPS, iv.QPS, iv.ReadMiBPerS+iv.WrittenMiBPerS))
		}
		lines = append(lines, fmt.Sprintf("p95 %.2f ms  p99 %.2f ms", iv.P95US/1000, iv.P99US/1000))
		errs, reconn := 0.0, 0.0
		if iv.SpanS > 0 {
			errs, reconn = float64(iv.Errors)/iv.SpanS, float64(iv.Reconnects)/iv.SpanS
		}
		// What matters most first: the card keeps its first eight lines.
		if c.noisy > 0 {
			lines = append(lines, fmt.Sprintf("! %d noisy interval(s) this run%s", c.noisy, text.Noise(iv)))
		}
		if c.cumSeconds > 0 {
			so := m.info.Schedule.stretch()
			lines = append(lines, fmt.Sprintf("%s so far: TPS %s QPS %s", so, chart.Human(float64(c.cumEvents)/c.cumSeconds), chart.Human(float64(c.cumQueries)/c.cumSeconds)))
		}
		lines = append(lines, fmt.Sprintf("err/s %.2f  reconn/s %.2f", errs, reconn))
		if tel := strings.TrimSpace(text.Telemetry(iv)); tel != "" {
			lines = append(lines, tel)
		}
	case c.lastRun != nil:
		lines = append(lines, m.lastRunText(c))
		s := c.lastRun.Summary
		lines = append(lines, fmt.Sprintf("avg %.2f ms  p95 %.2f ms", s.AvgUS/1000, s.P95US/1000))
		lines = append(lines, fmt.Sprintf("errors %d  reconnects %d", s.Errors, s.Reconnects))
	default:
		lines = append(lines, "not measured yet")
	}
	for len(lines) < cardLines {
		lines = append(lines, "")
	}
	return lines[:cardLines]
}

func (c *card) preparing() bool { return c.prepTotal > 0 && c.prepRows < c.prepTotal && !c.running }

// prepRate is prepare's rows/s and ETA ("" before the first rows).
func (m *running) prepRate(c *card) string {
	secs := m.now.Sub(c.prepStarted).Seconds()
	if secs <= 0 || c.prepRows == 0 || c.prepStarted.IsZero() {
		return ""
	}
	rate := float64(c.prepRows) / secs
	eta := time.Duration(float64(c.prepTotal-c.prepRows) / rate * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%s %s/s · ETA %s", chart.Human(rate), m.rows(), eta)
}

func (m *running) lastRunText(c *card) string {
	s := c.lastRun.Summary
	if s.CountedBy != "" {
		return fmt.Sprintf("last run %d: NOPM %s  TPM %s (server)", c.lastRun.Index, chart.Human(s.NOPM), chart.Human(s.TPM))
	}
	return fmt.Sprintf("last run %d: %s", c.lastRun.Index, m.rates(s.TPS, s.QPS, s.ReadMiBPerS+s.WrittenMiBPerS))
}

// compactCards is one line per target, for terminals too narrow or short
// for the cards side by side; c pages through the full cards.
func (m *running) compactCards(cards []*card) []string {
	nameW := 0
	for _, c := range cards {
		nameW = max(nameW, min(lipgloss.Width(c.name), 16))
	}
	var out []string
	for i, c := range cards {
		status := c.phase
		var what string
		switch {
		case c.preparing():
			what = fmt.Sprintf("prepare %.0f%% %d/%d %s", 100*float64(c.prepRows)/float64(c.prepTotal), c.prepRows, c.prepTotal, m.rows())
			if r := m.prepRate(c); r != "" {
				what += " · " + r
			}
		case c.running && c.last.TS > 0:
			status = "running"
			iv := c.last
			if m.info.Figures == NewOrders {
				what = fmt.Sprintf("tpmC %s TPM %s", chart.Human(iv.TPMC), chart.Human(iv.TPM))
			} else {
				what = m.rates(iv.TPS, iv.QPS, iv.ReadMiBPerS+iv.WrittenMiBPerS)
			}
			what += fmt.Sprintf(" · p95 %.2f ms", iv.P95US/1000)
			if iv.SpanS > 0 && iv.Errors > 0 {
				what += fmt.Sprintf(" · err/s %.2f", float64(iv.Errors)/iv.SpanS)
			}
			if c.noisy > 0 {
				what += fmt.Sprintf(" · ! %d noisy", c.noisy)
			}
		case c.running:
			status = "running"
		case c.lastRun != nil:
			what = m.lastRunText(c) + fmt.Sprintf(" · p95 %.2f ms", c.lastRun.Summary.P95US/1000)
		default:
			what = "not measured yet"
		}
		name := chart.Fit(c.name, nameW)
		line := fmt.Sprintf("%s %-*s %-9s %s", theme.For(i).Glyph, nameW, name, chart.Fit(status, 9), what)
		out = append(out, m.style(i).Render(chart.Fit(line, m.width)))
	}
	return out
}

// pageLines is the full card the c key pages to, across the screen, in
// place of the chart.
func (m *running) pageLines(cards []*card, avail int) []string {
	i := m.page - 1
	title := fmt.Sprintf("card %d of %d (c: next card, the last goes back to the chart)", m.page, len(cards))
	lines := []string{chart.Fit(title, m.width)}
	lines = append(lines, strings.Split(m.box(i, cards[i], m.width-2), "\n")...)
	for len(lines) < avail {
		lines = append(lines, "")
	}
	return lines[:min(len(lines), max(avail, 0))]
}

// comparisonLines show each target against the baseline as the verdict
// reads it: the geometric mean of per-block ratios with its CI, from the
// newest snapshot's comparisons (measured runs only, never warm-up). As
// many metrics as the width holds, the primary one first.
func (m *running) comparisonLines(cards []*card) []string {
	if len(cards) < 2 {
		return nil
	}
	var out []string
	for i, c := range cards[1:] {
		head := fmt.Sprintf("interim vs %s · %s %s:", cards[0].name, theme.For(i+1).Glyph, c.name)
		tps := m.latest.Comparison(c.name, "tps", m.point)
		if tps == nil {
			out = append(out, m.style(i+1).Render(chart.Fit(head+" Δ% once a block has measured both", m.width)))
			continue
		}
		var parts []string
		if nopm := m.latest.Comparison(c.name, "nopm", m.point); nopm != nil {
			parts = append(parts, "NOPM "+deltaCI(nopm))
		}
		parts = append(parts, "TPS "+deltaCI(tps))
		for _, k := range []string{"qps", "p95"} {
			if cmp := m.latest.Comparison(c.name, k, m.point); cmp != nil {
				parts = append(parts, map[string]string{"qps": "QPS", "p95": "p95"}[k]+" "+deltaCI(cmp))
			}
		}
		line := head
		for j, p := range parts {
			next := line + " " + p
			if j > 0 {
				next = line + ", " + p
			}
			if lipgloss.Width(next) > m.width {
				if j == 0 {
					line = chart.Fit(next, m.width)
				}
				break
			}
			line = next
		}
		out = append(out, m.style(i+1).Render(line))
	}
	return out
}

// deltaCI is "−53.6% [−61.5, −44.0]", or "−53.6% (1 block, no CI)".
func deltaCI(c *result.Comparison) string {
	if !c.HasCI {
		return fmt.Sprintf("%+.1f%% (%d block, no CI)", c.DeltaPct, c.N)
	}
	return fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", c.DeltaPct, c.CILowPct, c.CIHighPct)
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

func (m *common) footer() []string {
	var s string
	switch {
	case m.done:
		s = m.help.ShortHelpView(keys.SummaryHelp())
	case m.fullHelp:
		s = m.help.FullHelpView(m.info.Schedule.help(true))
	default:
		s = m.help.ShortHelpView(m.info.Schedule.help(false)[0])
	}
	return strings.Split(s, "\n")
}

func orUnknown(s string) string {
	if s == "" {
		return "not yet known"
	}
	return s
}
