package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/ui/chart"
	"github.com/dbduel/dbduel/ui/theme"
)

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
	line1 := chart.Fit(m.info.notePrefix()+fmt.Sprintf("dbduel · %s · %s · %s%s · %s%s", m.info.Workload, data, threads, rate, m.phase, paused), m.width)
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
		read := deltaCI
		if m.latest.Live != nil {
			read = anytimeDelta // watched until it looks good: a confidence sequence
		}
		for _, k := range m.comparedMetrics() {
			if cmp := m.latest.Comparison(c.name, k, m.point); cmp != nil {
				parts = append(parts, metricLabel[k]+" "+read(cmp))
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

var metricLabel = map[string]string{"nopm": "NOPM", "tps": "TPS", "qps": "QPS", "p95": "p95", "p99": "p99"}

// comparedMetrics are the comparison line's metrics, the one that can
// differ first: in open loop both sides run at the rate, so TPS is the rate
// on both and latency (p95, p99) leads.
func (m *running) comparedMetrics() []string {
	if m.rate > 0 {
		return []string{"p95", "p99", "tps", "qps"}
	}
	return []string{"nopm", "tps", "qps", "p95"}
}

// anytimeDelta is "−53.6% anytime [−70.1, −25.2]": live's running Δ% with
// its confidence sequence, valid however often the screen is read; the
// fixed-n CI until the sequence is bounded.
func anytimeDelta(c *result.Comparison) string {
	if a := c.Anytime; a != nil {
		return fmt.Sprintf("%+.1f%% anytime [%+.1f, %+.1f]", c.DeltaPct, a.LowPct, a.HighPct)
	}
	if c.HasCI {
		return fmt.Sprintf("%+.1f%% (%d rounds: no anytime interval yet)", c.DeltaPct, c.N)
	}
	return deltaCI(c)
}

// deltaCI is "−53.6% [−61.5, −44.0]", or "−53.6% (1 block, no CI)".
func deltaCI(c *result.Comparison) string {
	if !c.HasCI {
		return fmt.Sprintf("%+.1f%% (%d block, no CI)", c.DeltaPct, c.N)
	}
	return fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", c.DeltaPct, c.CILowPct, c.CIHighPct)
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
