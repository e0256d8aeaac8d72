package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/ui/chart"
	"github.com/dbduel/dbduel/ui/text"
	"github.com/dbduel/dbduel/ui/theme"
)

// Layout limits: a side-by-side card needs this many cells to show its
// lines whole; the chart keeps at least this many plot rows.
const (
	fullCardWidth = 34
	cardLines     = 8
	cardRows      = cardLines + 2 // and the border
	minChartRows  = 8
)

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
		status = c.runningStatus(engine.SettlingPhase)
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
		if b := m.behind(iv); b != "" {
			lines = append(lines, b)
		}
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
			if text.IsSystemWorkload(m.info.Workload) {
				lines = append(lines, fmt.Sprintf("%s so far: events/s %s", so, chart.Human(float64(c.cumEvents)/c.cumSeconds)))
			} else {
				lines = append(lines, fmt.Sprintf("%s so far: TPS %s QPS %s", so, chart.Human(float64(c.cumEvents)/c.cumSeconds), chart.Human(float64(c.cumQueries)/c.cumSeconds)))
			}
		}
		lines = append(lines, fmt.Sprintf("err/s %.2f  reconn/s %.2f", errs, reconn))
		telemetry := text.Telemetry
		if text.IsSystemWorkload(m.info.Workload) {
			telemetry = text.SystemTelemetry // no server: the benchmark's own CPU
		}
		if tel := strings.TrimSpace(telemetry(iv)); tel != "" {
			lines = append(lines, tel)
		}
	case c.lastRun != nil:
		lines = append(lines, m.lastRunText(c))
		s := c.lastRun.Summary
		lines = append(lines, fmt.Sprintf("avg %.2f ms  p95 %.2f ms", s.AvgUS/1000, s.P95US/1000))
		if b := m.behind(c.last); b != "" {
			// Its latency was queueing: say so after the run too.
			lines = append(lines, "fell "+b+" at its end")
		}
		lines = append(lines, fmt.Sprintf("errors %d  reconnects %d", s.Errors, s.Reconnects))
	default:
		lines = append(lines, "not measured yet")
	}
	for len(lines) < cardLines {
		lines = append(lines, "")
	}
	return lines[:cardLines]
}

// behindAfter is how far behind its arrivals an open-loop target may fall
// before its card says so: the queue then holds more than this much of the
// rate's arrivals (a Poisson stream queues a few events now and then).
const behindAfter = 100 * time.Millisecond

// behind is "behind: 37 events queued" when the open loop's queue held more
// than behindAfter's arrivals at the interval's end: the target cannot keep
// up with the rate, and its latency is queueing ("" in closed loop).
func (m *running) behind(iv result.Interval) string {
	if m.rate <= 0 || float64(iv.QueueLen) <= m.rate*behindAfter.Seconds() || iv.QueueLen == 0 {
		return ""
	}
	return fmt.Sprintf("behind: %d events queued", iv.QueueLen)
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
			status = c.runningStatus("settling")
			iv := c.last
			if m.info.Figures == NewOrders {
				what = fmt.Sprintf("tpmC %s TPM %s", chart.Human(iv.TPMC), chart.Human(iv.TPM))
			} else {
				what = m.rates(iv.TPS, iv.QPS, iv.ReadMiBPerS+iv.WrittenMiBPerS)
			}
			what += fmt.Sprintf(" · p95 %.2f ms", iv.P95US/1000)
			if b := m.behind(iv); b != "" {
				what += " · " + b
			}
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

// runningStatus is a running card's status: "running", or settling (a
// live target warming up after a restart: its slices are not counted).
func (c *card) runningStatus(settling string) string {
	if strings.Contains(c.phase, engine.SettlingPhase) {
		return settling
	}
	return "running"
}
