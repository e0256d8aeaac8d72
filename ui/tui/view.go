package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

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

// View renders the whole screen from the model (pure: no clock, no I/O).
func (m *Model) View() string {
	if m.width < MinWidth || m.height < MinHeight {
		return fmt.Sprintf("terminal too small: need %d×%d, have %d×%d\npress q to stop", MinWidth, MinHeight, m.width, m.height)
	}
	if m.done {
		return m.summaryView()
	}
	cards := m.cards
	if m.paused && m.frozen != nil {
		cards = m.frozen
	}
	var b strings.Builder
	b.WriteString(m.header() + "\n")
	b.WriteString(m.cardsRow(cards) + "\n")
	b.WriteString(m.comparisonLine(cards) + "\n")
	used := strings.Count(b.String(), "\n") + 6
	chartH := max(m.height-used-4, 4)
	b.WriteString(m.charts(cards, chartH) + "\n")
	if m.message != "" {
		b.WriteString(m.message + "\n")
	}
	b.WriteString(m.footer())
	return b.String()
}

func (m *Model) style(i int) lipgloss.Style {
	s := lipgloss.NewStyle()
	if m.color {
		s = s.Foreground(lipgloss.Color(theme.For(i).Color))
	}
	return s
}

func (m *Model) header() string {
	elapsed := m.now.Sub(m.started).Truncate(time.Second)
	runs := m.totalRuns
	if runs == 0 {
		runs = m.info.TotalRuns
	}
	if runs == 0 {
		runs = m.info.Runs * len(m.cards)
	}
	total := time.Duration(runs) * m.info.RunTime
	frac := 0.0
	if runs > 0 {
		frac = math.Min(1, float64(m.runsDone)/float64(runs))
	}
	eta := "ETA not known yet"
	if m.eta > 0 {
		eta = "ETA " + m.eta.Truncate(time.Second).String()
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
	line1 := fmt.Sprintf("dbduel · %s · %s · %s%s · %s%s",
		m.info.Workload, data, threads, rate, m.phase, paused)
	barW := 30
	filled := int(frac * float64(barW))
	line2 := fmt.Sprintf("elapsed %s · runs %d/%d · planned run time %s · %s [%s%s]",
		elapsed, m.runsDone, runs, total, eta, strings.Repeat("█", filled), strings.Repeat("░", barW-filled))
	return lipgloss.NewStyle().Bold(true).Render(line1) + "\n" + line2
}

func (m *Model) rows() string {
	if m.info.Rows == "" {
		return "rows"
	}
	return m.info.Rows
}

// rates is a card's throughput: TPS and QPS, or for the system tests
// events/s and the MiB/s they moved.
func (m *Model) rates(tps, qps, mib float64) string {
	if m.info.Data == "" || m.info.TPCC {
		return fmt.Sprintf("TPS %s  QPS %s", chart.Human(tps), chart.Human(qps))
	}
	if mib > 0 {
		return fmt.Sprintf("events/s %s  MiB/s %s", chart.Human(tps), chart.Human(mib))
	}
	return "events/s " + chart.Human(tps)
}

// metricName is chart metric k's name: TPC-C's first two are tpmC and TPM.
func (m *Model) metricName(k int) string {
	if m.info.TPCC && k < 2 {
		return []string{"tpmC", "TPM"}[k]
	}
	return metricNames[k]
}

func (m *Model) cardsRow(cards []*card) string {
	n := max(len(cards), 1)
	w := max(m.width/n-2, 30)
	var boxes []string
	for i, c := range cards {
		var lines []string
		status := c.phase
		if c.running {
			status = "running"
		}
		lines = append(lines, m.style(i).Bold(true).Render(theme.For(i).Glyph+" "+c.name)+"  "+status)
		lines = append(lines, truncate(c.kind, w-2))
		if c.place != "" {
			lines = append(lines, truncate(c.place, w-2))
		} else {
			lines = append(lines, "version "+orUnknown(c.version))
		}
		switch {
		case c.prepTotal > 0 && c.prepRows < c.prepTotal && !c.running:
			pct := float64(c.prepRows) / float64(c.prepTotal)
			bw := w - 20
			f := int(pct * float64(bw))
			lines = append(lines, fmt.Sprintf("prepare [%s%s] %3.0f%%", strings.Repeat("█", f), strings.Repeat("░", bw-f), pct*100))
			rows := m.rows()
			line := fmt.Sprintf("%d / %d %s", c.prepRows, c.prepTotal, rows)
			if secs := m.now.Sub(c.prepStarted).Seconds(); secs > 0 && c.prepRows > 0 && !c.prepStarted.IsZero() {
				rate := float64(c.prepRows) / secs
				eta := time.Duration(float64(c.prepTotal-c.prepRows) / rate * float64(time.Second)).Round(time.Second)
				line += fmt.Sprintf(" · %s %s/s · ETA %s", chart.Human(rate), rows, eta)
			}
			lines = append(lines, line)
		case c.running && c.last.TS > 0:
			iv := c.last
			if m.info.TPCC {
				lines = append(lines, fmt.Sprintf("tpmC %s  TPM %s  TPS %s", chart.Human(iv.TPMC), chart.Human(iv.TPM), chart.Human(iv.TPS)))
			} else {
				lines = append(lines, m.rates(iv.TPS, iv.QPS, iv.ReadMiBPerS+iv.WrittenMiBPerS))
			}
			lines = append(lines, fmt.Sprintf("p95 %.2f ms  p99 %.2f ms", iv.P95US/1000, iv.P99US/1000))
			errs, reconn := 0.0, 0.0
			if iv.SpanS > 0 {
				errs, reconn = float64(iv.Errors)/iv.SpanS, float64(iv.Reconnects)/iv.SpanS
			}
			lines = append(lines, fmt.Sprintf("err/s %.2f  reconn/s %.2f", errs, reconn))
			if tel := strings.TrimSpace(text.Telemetry(iv)); tel != "" {
				lines = append(lines, tel)
			}
			if c.noisy > 0 {
				lines = append(lines, fmt.Sprintf("! %d noisy interval(s) this run%s", c.noisy, text.Noise(iv)))
			}
			if c.cumSeconds > 0 {
				lines = append(lines, fmt.Sprintf("run so far: TPS %s QPS %s", chart.Human(float64(c.cumEvents)/c.cumSeconds), chart.Human(float64(c.cumQueries)/c.cumSeconds)))
			}
		case c.lastRun != nil:
			s := c.lastRun.Summary
			if s.CountedBy != "" {
				lines = append(lines, fmt.Sprintf("last run %d: NOPM %s  TPM %s (server)", c.lastRun.Index, chart.Human(s.NOPM), chart.Human(s.TPM)))
			} else {
				lines = append(lines, fmt.Sprintf("last run %d: %s", c.lastRun.Index, m.rates(s.TPS, s.QPS, s.ReadMiBPerS+s.WrittenMiBPerS)))
			}
			lines = append(lines, fmt.Sprintf("avg %.2f ms  p95 %.2f ms", s.AvgUS/1000, s.P95US/1000))
			lines = append(lines, fmt.Sprintf("errors %d  reconnects %d", s.Errors, s.Reconnects))
		default:
			lines = append(lines, "not measured yet")
		}
		for len(lines) < 7 {
			lines = append(lines, "")
		}
		border := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Width(w).Padding(0, 1)
		if m.color {
			border = border.BorderForeground(lipgloss.Color(theme.For(i).Color))
		}
		boxes = append(boxes, border.Render(strings.Join(lines, "\n")))
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, boxes...)
}

// comparisonLine shows each target against the baseline as the verdict
// reads it: the geometric mean of per-block ratios with its CI, from the
// newest snapshot's comparisons (measured runs only, never warm-up).
func (m *Model) comparisonLine(cards []*card) string {
	if len(cards) < 2 {
		return ""
	}
	r := m.latest
	point := m.point
	var parts []string
	for i, c := range cards[1:] {
		tps, qps, p95 := findComparison(r, c.name, "tps", point), findComparison(r, c.name, "qps", point), findComparison(r, c.name, "p95", point)
		if tps == nil {
			parts = append(parts, c.name+": Δ% once a block has measured both")
			continue
		}
		s := fmt.Sprintf("%s: %s TPS", c.name, deltaCI(tps))
		if nopm := findComparison(r, c.name, "nopm", point); nopm != nil {
			s = fmt.Sprintf("%s: %s NOPM, %s TPS", c.name, deltaCI(nopm), deltaCI(tps))
		}
		if qps != nil && p95 != nil {
			s += fmt.Sprintf(", %s QPS, %s p95", deltaCI(qps), deltaCI(p95))
		}
		parts = append(parts, m.style(i+1).Render(s))
	}
	return "vs " + cards[0].name + ": " + strings.Join(parts, " · ")
}

func findComparison(r *result.Result, target, metric string, point int) *result.Comparison {
	if r == nil {
		return nil
	}
	for i, c := range r.Comparisons {
		if c.Target == target && c.Metric == metric && c.Point == point {
			return &r.Comparisons[i]
		}
	}
	return nil
}

// deltaCI is "−53.6% [−61.5, −44.0]", or "−53.6% (1 block)" without a CI.
func deltaCI(c *result.Comparison) string {
	if !c.HasCI {
		return fmt.Sprintf("%+.1f%% (%d block, no CI)", c.DeltaPct, c.N)
	}
	return fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", c.DeltaPct, c.CILowPct, c.CIHighPct)
}

func (m *Model) charts(cards []*card, height int) string {
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
	var b strings.Builder
	b.WriteString(lipgloss.NewStyle().Bold(true).Render(title) + "\n")
	if m.synced {
		b.WriteString(chart.Plot(series, names, m.width, height, m.color))
	} else {
		for i := range series {
			one := make([][]float64, len(series))
			one[i] = series[i]
			b.WriteString(chart.Plot(one, names, m.width, max(height/len(series), 3), m.color) + "\n")
		}
	}
	b.WriteString("\n")
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
			row = append(row, m.style(i).Render(theme.For(i).Glyph+" "+chart.Sparkline(c.history[k], 30, maxV)))
		}
		b.WriteString(fmt.Sprintf("%-7s %s\n", m.metricName(k), strings.Join(row, "  ")))
	}
	return strings.TrimRight(b.String(), "\n")
}

func (m *Model) footer() string {
	if m.fullHelp {
		return m.help.FullHelpView(keys.FullHelp())
	}
	return m.help.ShortHelpView(keys.ShortHelp())
}

func (m *Model) summaryView() string {
	var b strings.Builder
	state := "finished"
	if m.res != nil && !m.res.Complete {
		state = "stopped before the plan finished (partial result)"
	}
	b.WriteString(lipgloss.NewStyle().Bold(true).Render("dbduel · "+m.info.Workload+" · "+state) + "\n\n")
	if m.res != nil {
		b.WriteString(text.RunTable(m.res))
	}
	if m.err != nil {
		b.WriteString("\nerror: " + m.err.Error() + "\n")
	}
	if m.info.OutPath != "" {
		b.WriteString("\nresult written to " + m.info.OutPath + "\n")
	}
	if m.message != "" {
		b.WriteString(m.message + "\n")
	}
	b.WriteString("\npress q to quit · e to export")
	return b.String()
}

func truncate(s string, w int) string {
	if w <= 1 || lipgloss.Width(s) <= w {
		return s
	}
	r := []rune(s)
	if len(r) > w-1 {
		r = r[:w-1]
	}
	return string(r) + "…"
}

func orUnknown(s string) string {
	if s == "" {
		return "not yet known"
	}
	return s
}
