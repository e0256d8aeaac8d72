package tui

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/explain"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/ui/chart"
	"github.com/dbduel/dbduel/ui/text"
	"github.com/dbduel/dbduel/ui/theme"
)

// summary is the finished screen: the comparison, the verdicts and the
// cause, or the run table (t); it reads the running screen's cards.
type summary struct {
	*running
	table  bool // the run table instead of the chart
	scroll int  // the first body line shown
}

// key handles the summary's own keys, and the running screen's others.
func (m *summary) key(a action) {
	switch a {
	case actTable:
		m.table, m.scroll = !m.table, 0
	case actUp:
		m.scrollBy(-1)
	case actDown:
		m.scrollBy(1)
	case actPageUp, actPageDown:
		page := max(m.summaryRoom()-2, 1) // a line of the last page stays in view
		if a == actPageUp {
			page = -page
		}
		m.scrollBy(page)
	case actTop:
		m.scroll = 0
	case actBottom:
		m.scrollBy(1 << 20) // clamped to the last page
	default:
		m.running.key(a)
	}
}

// scrollBy moves the summary by n lines, never past either end.
func (m *summary) scrollBy(n int) {
	lines := len(m.summaryBody(0))
	m.scroll = m.clampScroll(lines) + n
	m.scroll = m.clampScroll(lines)
}

// view is the finished run: the comparison as a chart of Δ% with
// CI whiskers, the verdicts and the cause (t switches to the run table),
// scrolled with ↑/↓ when it is taller than the terminal.
func (m *summary) view() []string {
	state := "finished"
	var why []string
	if m.res != nil && !m.res.Complete {
		state = "stopped before the plan finished (partial result)"
		// Why it stopped comes first, above the fold.
		why = m.wrap(m.stopReason())
	}
	if m.res != nil && m.res.Complete {
		state = m.info.Schedule.ended(m.res)
	}
	title := lipgloss.NewStyle().Bold(true).Render(chart.Fit(m.info.notePrefix()+"dbduel · "+workloadsOf(m.res, m.info.Workload)+" · "+state, m.width))
	footer := m.footer()
	room := m.summaryRoom()
	body := m.summaryBody(0)
	if lean := m.summaryBody(-1); room-len(lean) >= planChartMin && len(lean) < len(body) {
		// Room to spare: the whole plan's chart fills it, in place of the
		// sparklines.
		body = m.summaryBody(room - len(lean))
	}
	if len(body) > room {
		from := m.clampScroll(len(body))
		shown := body[from : from+room-1]
		body = append(shown, fmt.Sprintf("… ↑/↓ to scroll (lines %d–%d of %d)", from+1, from+room-1, len(body)))
	}
	out := append(append([]string{title}, why...), "")
	out = append(out, body...)
	for len(out) < m.height-len(footer) {
		out = append(out, "")
	}
	return append(out, footer...)
}

// summaryRoom is the lines the summary's body has: the screen less the
// title, why the plan stopped, a blank line and the footer.
func (m *summary) summaryRoom() int {
	why := 0
	if m.res != nil && !m.res.Complete {
		why = len(m.wrap(m.stopReason()))
	}
	return m.height - 2 - why - len(m.footer())
}

// stopReason is why the plan stopped: the user's q, or the failure as
// text.StopLine words it.
func (m *summary) stopReason() string {
	line := text.StopLine(m.res)
	if m.stopping && m.res.Error == "" || m.stopping && strings.Contains(m.res.Error, "context canceled") {
		r := *m.res
		r.Error = "by the user (q)"
		line = text.StopLine(&r)
	}
	line = strings.TrimPrefix(strings.TrimPrefix(line, "stopped before the plan finished"), ": ")
	return "why: " + strings.TrimPrefix(line, ", ")
}

// clampScroll is the first body line shown for a body of n lines.
func (m *summary) clampScroll(n int) int {
	return max(0, min(m.scroll, n-(m.summaryRoom()-1)))
}

// summaryBody is what the summary shows, before it is scrolled; the plan
// is drawn as a chart of planRows lines, as sparklines (0) or not (-1).
func (m *summary) summaryBody(planRows int) []string {
	var body []string
	if m.table || m.res == nil || len(m.res.TargetNames()) < 2 {
		if m.res != nil {
			// Why the plan stopped is already the screen's second line.
			table := strings.TrimPrefix(text.RunTable(m.res), text.StopLine(m.res)+"\n")
			body = m.wrap(table)
		}
	} else {
		body = m.comparisonSummary(planRows)
	}
	if m.err != nil && (m.res == nil || m.res.Complete) { // a stopped plan's reason is at the top
		body = append(body, m.wrap("error: "+m.err.Error())...)
	}
	if m.info.OutPath != "" {
		body = append(body, m.wrap("result written to "+m.info.OutPath)...)
	}
	if m.message != "" {
		body = append(body, m.wrap(m.message)...)
	}
	return body
}

// comparisonSummary is each point's Δ%-with-CI chart of the primary metric
// against the baseline, the verdicts and the cause, or explain's waterfall.
func (m *summary) comparisonSummary(planRows int) []string {
	r := m.res
	var out []string
	if r.Explain != nil {
		out = append(out, m.waterfallLines(true)...)
		out = append(out, "")
	}
	if len(r.Segments) > 0 {
		out = append(out, m.segmentTable(r)...)
	}
	names := r.TargetNames()
	points := max(len(r.Plan.Points), 1)
	for pt := range points {
		rows, idx, metric := m.deltaRows(r, names, pt)
		if len(rows) == 0 {
			continue
		}
		head := fmt.Sprintf("%s vs %s: Δ%% and 95%% CI (● estimate, ├─┤ CI, │ zero; log-ratio axis)", metric, names[0])
		if pt < len(r.Segments) {
			head = fmt.Sprintf("segment %d · ", pt+1) + head
		} else if points > 1 {
			p := r.Plan.Points[pt]
			head = fmt.Sprintf("threads=%d table_size=%d · ", p.Threads, p.TableSize) + head
		}
		out = append(out, lipgloss.NewStyle().Bold(true).Render(chart.Fit(head, m.width)))
		if mean := baselineMean(r, names[0], metric, pt); mean != "" {
			out = append(out, m.style(0).Render(chart.Fit(fmt.Sprintf("%s %s (baseline): %s", theme.For(0).Glyph, names[0], mean), m.width)))
		}
		lines, li := chart.DeltaChart(rows, m.width), 0
		for ri, row := range rows { // each row's line, and its blocks' under it, in its colour
			n := 1
			if len(row.Blocks)+len(row.Partial) > 0 {
				n = 2
			}
			for ; n > 0 && li < len(lines); n-- {
				out = append(out, m.style(idx[ri]).Render(lines[li]))
				li++
			}
		}
		out = append(out, lines[li:]...)
		for _, name := range names[1:] {
			if c := cause.Primary(r, name, pt); c != nil {
				out = append(out, m.wrap("verdict: "+c.Verdict)...)
			}
		}
		if line := stats.AALine(r, pt); line != "" {
			out = append(out, m.wrap(line)...)
		}
		if line := cause.Line(r, pt); line != "" {
			out = append(out, m.wrap("cause: "+line)...)
		}
		if line := stats.FamilyLine(r); line != "" && pt == points-1 {
			// Once, under the last point's verdicts: the family is the plan's.
			out = append(out, m.wrap(line)...)
		}
		out = append(out, "")
		out = append(out, m.latencyPanel(r, names, pt)...)
	}
	switch {
	case planRows > 0:
		out = append(out, m.planChart(r, names, planRows)...)
	case planRows == 0:
		out = append(out, m.planPanel(r, names)...)
	}
	for _, w := range r.Warnings {
		out = append(out, m.wrap("warning: "+w)...)
	}
	return out
}

// deltaRows are the targets' primary comparisons at a point, in target
// order, with each row's series index.
func (m *summary) deltaRows(r *result.Result, names []string, pt int) ([]chart.DeltaRow, []int, string) {
	var rows []chart.DeltaRow
	var idx []int
	metric := "TPS"
	if text.IsSystemWorkload(m.info.Workload) {
		metric = "events/s"
	}
	for i, name := range names[1:] {
		c := cause.Primary(r, name, pt)
		if c == nil {
			continue
		}
		if c.Metric == "nopm" {
			metric = "NOPM"
		}
		row := chart.DeltaRow{Label: theme.For(i+1).Glyph + " " + name, Delta: c.DeltaPct, Low: c.CILowPct, High: c.CIHighPct, HasCI: c.HasCI}
		row.Blocks, row.Partial = stats.BlockDeltas(r, name, names[0], c.Metric, pt)
		rows = append(rows, row)
		idx = append(idx, i+1)
	}
	return rows, idx, metric
}

// baselineMean is the baseline's geometric mean of the metric over the
// complete blocks (the Δ%s' blocks and estimator).
func baselineMean(r *result.Result, base, metric string, pt int) string {
	g, n := stats.GeoMean(r, base, pt)
	v := g.TPS
	if metric == "NOPM" {
		var logs float64
		for _, run := range r.InCompleteBlocks(base, pt) {
			logs += math.Log(math.Max(run.Summary.NOPM, 1e-9))
		}
		v = math.Exp(logs / float64(max(n, 1)))
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("geometric mean %s %s over %d complete block(s)", metric, chart.Human(v), n)
}

// waterfallLines is explain's ladder: each measured rung's Δ% against the
// rung it changes one thing of, with its CI, on one axis; the rungs still
// to run; and, finished, the attribution of the gap.
func (m *running) waterfallLines(final bool) []string {
	head := "explain: each rung's Δ TPS against the rung it changes one thing of (95% CI)"
	out := []string{lipgloss.NewStyle().Bold(true).Render(chart.Fit(head, m.width))}
	var ex *result.Explain
	if m.latest != nil {
		ex = m.latest.Explain
	}
	var rows []chart.DeltaRow
	var waiting []string
	measured := map[string]bool{}
	if ex != nil {
		for _, rg := range ex.Rungs {
			if rg.ComparedTo == "" || rg.N == 0 {
				continue
			}
			label := rg.Name
			if !rg.Valid {
				label += " (INVALID)"
			}
			rows = append(rows, chart.DeltaRow{Label: label, Delta: rg.DeltaPct, Low: rg.CILowPct, High: rg.CIHighPct, HasCI: rg.HasCI})
			measured[rg.Name] = true
		}
	}
	for _, c := range m.cards[min(1, len(m.cards)):] {
		if !measured[c.name] {
			waiting = append(waiting, c.name)
		}
	}
	out = append(out, chart.DeltaChart(rows, m.width)...)
	if len(waiting) > 0 {
		out = append(out, chart.Fit("not paired yet: "+strings.Join(waiting, ", "), m.width))
	}
	if shares := explain.Shares(ex); final && shares != "" {
		out = append(out, m.wrap(shares)...)
	}
	return out
}

// causeLine is the newest snapshot's cause line for the running point.
func (m *running) causeLine() string {
	if m.latest == nil {
		return ""
	}
	return cause.Line(m.latest, m.point)
}

// wrap breaks text into lines of the terminal's width at word boundaries.
func (m *common) wrap(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if lipgloss.Width(l) <= m.width {
			out = append(out, l)
			continue
		}
		// An indented line keeps its indent on every line it wraps to
		// (a "vs iteration 1" line under its segment started at column 0).
		body := strings.TrimLeft(l, " ")
		indent := l[:len(l)-len(body)]
		if len(indent) >= m.width/2 {
			indent, body = "", l
		}
		for _, w := range chart.Wrap(body, m.width-len(indent)) {
			out = append(out, indent+w)
		}
	}
	return out
}

// latencyPanel is each target's p50/p95/p99/max at a point from its
// merged histograms, as bars on one scale, baseline first, with the Δ% of
// p95 against the baseline (the comparison's estimate) beside it.
func (m *summary) latencyPanel(r *result.Result, names []string, pt int) []string {
	var rows []chart.LatencyRow
	var idx []int
	for i, n := range names {
		l, ok := stats.MergedLatency(r, n, pt)
		if !ok {
			continue
		}
		row := chart.LatencyRow{Label: theme.For(i).Glyph + " " + n, P50: l.P50, P95: l.P95, P99: l.P99, Max: l.Max}
		if c := r.Comparison(n, "p95", pt); c != nil && i > 0 {
			row.P95Delta = fmt.Sprintf("%+.1f%%", c.DeltaPct)
		}
		rows, idx = append(rows, row), append(idx, i)
	}
	lines := chart.LatencyBars(rows, m.width)
	if len(lines) == 0 {
		return nil
	}
	out := []string{lipgloss.NewStyle().Bold(true).Render(chart.Fit("latency over the complete blocks (merged histograms)", m.width))}
	for i, l := range lines {
		if i < len(idx) {
			l = m.style(idx[i]).Render(l)
		}
		out = append(out, l)
	}
	return append(out, "")
}

// planPanel is each target's TPS in every measured interval of every run,
// in plan order on one line, on one scale: drift, a warming cache or a
// noisy block shows.
func (m *summary) planPanel(r *result.Result, names []string) []string {
	var lines []chart.PlanLine
	for i, n := range names {
		l := chart.PlanLine{Label: theme.For(i).Glyph + " " + n}
		for _, run := range r.Measured(n, result.AnyPoint) {
			var tps []float64
			for _, iv := range run.Intervals {
				if !iv.Warmup {
					tps = append(tps, iv.TPS)
				}
			}
			if len(tps) > 0 {
				l.Runs = append(l.Runs, tps)
			}
		}
		lines = append(lines, l)
	}
	drawn := chart.PlanSparklines(lines, m.width)
	if len(drawn) == 0 {
		return nil
	}
	out := []string{lipgloss.NewStyle().Bold(true).Render(chart.Fit("TPS over the whole plan (every interval, runs in plan order, one scale)", m.width))}
	for i, l := range drawn {
		out = append(out, m.style(i).Render(l))
	}
	return append(out, "")
}

// workloadsOf names every workload a result ran, in the order they came
// (a live session's `w` switches among them), or first when none is known.
func workloadsOf(r *result.Result, first string) string {
	if r == nil || len(r.Segments) == 0 {
		return first
	}
	var names []string
	for _, s := range r.Segments {
		if s.Workload != "" && !slices.Contains(names, s.Workload) {
			names = append(names, s.Workload)
		}
	}
	if len(names) == 0 {
		return first
	}
	return strings.Join(names, ", ")
}
