package tui

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/ui/chart"
)

// LiveControl is what dbduel live's keys steer: the load of every target
// at once, from the next round (the engine's LiveControl), and the
// session's own steps. Its methods may do I/O: the model calls the last
// two in commands, never in Update.
type LiveControl interface {
	Settings() engine.LiveSettings
	SetThreads(n int)
	SetRate(r float64)
	SetPaused(p bool)
	// NextWorkload runs the next workload of w's cycle from the next
	// round and names it, or says why not.
	NextWorkload() (string, error)
	// Respec asks for a target's new SPEC (the editor's enter): checked
	// now, applied before the next round.
	Respec(target, spec string) error
	// ExportScenario writes the explored segments as a scenario file (x)
	// and says where ("": no file was named).
	ExportScenario(*result.Result) (string, error)
}

// liveKeys are dbduel live's own keys (they replace the scroll keys while
// the session runs).
var liveKeys = struct {
	More, Fewer, OneMore, OneFewer, Pause, OpenLoop, Faster, Slower, Workload, Scenario key.Binding
}{
	More:     key.NewBinding(key.WithKeys("up"), key.WithHelp("↑/↓", "threads ×2/÷2")),
	Fewer:    key.NewBinding(key.WithKeys("down")),
	OneMore:  key.NewBinding(key.WithKeys("shift+up"), key.WithHelp("shift+↑/↓", "threads ±1")),
	OneFewer: key.NewBinding(key.WithKeys("shift+down")),
	Pause:    key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "pause load")),
	OpenLoop: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "open loop at 70% of the slowest/off")),
	Faster:   key.NewBinding(key.WithKeys(">"), key.WithHelp(">/<", "rate ×1.25/÷1.25")),
	Slower:   key.NewBinding(key.WithKeys("<")),
	Workload: key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "next workload")),
	Scenario: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "export scenario")),
}

// liveAction is the action of a live key, or actNone.
func liveAction(msg tea.KeyMsg) action {
	k := liveKeys
	for _, b := range []struct {
		b key.Binding
		a action
	}{{k.More, actMore}, {k.Fewer, actFewer}, {k.OneMore, actOneMore}, {k.OneFewer, actOneFewer}, {k.Pause, actLoadPause},
		{k.OpenLoop, actOpenLoop}, {k.Faster, actFaster}, {k.Slower, actSlower}, {k.Workload, actWorkload}, {k.Scenario, actScenario}} {
		if key.Matches(msg, b.b) {
			return b.a
		}
	}
	return actNone
}

// liveHelp is the running screen's short help in dbduel live: what
// steers the load first, and ? early, so a narrow terminal still shows r,
// w and where the rest is.
func liveHelp() []key.Binding {
	k := liveKeys
	return []key.Binding{keys.Quit, keys.Help, k.More, k.OpenLoop, k.Workload, k.Pause, k.Faster, k.OneMore, editorKeys.Left, editorKeys.Open, k.Scenario, keys.Export}
}

// liveFullHelp is ?'s help in dbduel live: the load's keys, then the
// screen's (each once).
func liveFullHelp() [][]key.Binding {
	return [][]key.Binding{liveHelp()[2:], {keys.Quit, keys.Pause, keys.NextMetric, keys.PrevMetric, keys.Wider, keys.Narrower, keys.Sync, keys.FromZero, keys.Cards, keys.Help}}
}

// liveKey applies a live key to the control; it says whether it used a.
func (m *running) liveKey(a action, ctl LiveControl) bool {
	set := ctl.Settings()
	switch a {
	case actMore, actFewer, actOneMore, actOneFewer, actWorkload:
		// Another load: the last slice r measured no longer bounds it.
		m.rateBase = rateBase{}
	}
	switch a {
	case actMore:
		ctl.SetThreads(set.Threads * 2)
	case actFewer:
		ctl.SetThreads(set.Threads / 2)
	case actOneMore:
		ctl.SetThreads(set.Threads + 1)
	case actOneFewer:
		ctl.SetThreads(set.Threads - 1)
	case actLoadPause:
		ctl.SetPaused(!set.Paused)
	case actOpenLoop:
		if set.Rate > 0 {
			ctl.SetRate(0)
			m.rateBase = rateBase{}
			m.message = "r: open loop off: closed loop again (each thread sends its next event when its last returns)"
		} else if name, tps := m.slowestTPS(); tps > 0 {
			// The slowest target's last slice is its capacity: a rate at it
			// saturates that target and its latency becomes queueing. A
			// share below it measures the latency of a target that keeps up.
			m.rateBase = rateBase{target: name, tps: tps}
			r := max(float64(int(tps*OpenLoopShare+0.5)), 1)
			ctl.SetRate(r)
			m.message = m.rateMessage(r)
		} else {
			m.message = "r: no throughput measured yet to set the rate from"
		}
	case actFaster, actSlower:
		if set.Rate == 0 {
			m.message = fmt.Sprintf("> and <: the open loop is off (r turns it on at %.0f%% of the slowest target's throughput)", OpenLoopShare*100)
			break
		}
		f := 1.25
		if a == actSlower {
			f = 1 / f
		}
		r := max(float64(int(set.Rate*f+0.5)), 1)
		ctl.SetRate(r)
		m.message = m.rateMessage(r)
	case actWorkload:
		if _, err := ctl.NextWorkload(); err != nil {
			m.message = "w: " + err.Error()
		}
	default:
		return false
	}
	return true
}

// OpenLoopShare is the share of the slowest target's last-slice throughput
// that r opens the loop at: below its capacity, so every target keeps up
// and the latencies compared are service, not queueing.
const OpenLoopShare = 0.70

// rateBase is what r set the open loop's rate from: the slowest target and
// its last slice's throughput (zero: the rate came from elsewhere).
type rateBase struct {
	target string
	tps    float64
}

// words is "rate 420/s = 70% of c's last slice", or "rate 420/s".
func (b rateBase) words(rate float64) string {
	s := fmt.Sprintf("rate %.0f/s", rate)
	if b.tps > 0 {
		s += fmt.Sprintf(" = %.0f%% of %s's last slice", 100*rate/b.tps, b.target)
	}
	return s
}

// rateMessage is the line under the header after r, > or <: the rate,
// what it is a share of, and a warning once it passes that slice's
// throughput, where the slowest target can only queue.
func (m *running) rateMessage(rate float64) string {
	b := m.rateBase
	if b.tps <= 0 {
		return m.rateBase.words(rate) + "; > and < move it, r turns the open loop off"
	}
	s := b.words(rate) + fmt.Sprintf(" (%s/s)", chart.Human(b.tps))
	if rate > b.tps {
		return s + fmt.Sprintf(": above %s's last slice, it will fall behind and its latency be queueing", b.target)
	}
	return s + "; > and < move it, r turns the open loop off"
}

// slowestTPS is the target with the lowest TPS of the targets' last
// slices, and that TPS: the capacity of the slowest.
func (m *running) slowestTPS() (string, float64) {
	name, low := "", 0.0
	for _, c := range m.cards {
		if c.lastRun == nil {
			continue
		}
		if t := c.lastRun.Summary.TPS; t > 0 && (low == 0 || t < low) {
			name, low = c.name, t
		}
	}
	return name, low
}

// liveHeader is dbduel live's first header line: the segment, the round,
// the load the next round runs and whether it is paused.
func (m *running) liveHeader(set engine.LiveSettings) []string {
	wl := set.Workload.Name()
	load := threadsWord(set.Threads)
	if set.Rate > 0 {
		load += " · " + m.rateBase.words(set.Rate)
	}
	state := ""
	if set.Paused {
		state = " · PAUSED (space resumes)"
	}
	line1 := fmt.Sprintf("dbduel live · %s · segment %d · round %d · %s%s", wl, m.point+1, max(m.round, 1), load, state)
	what := m.segWhat
	if what == "" {
		what = "segment 1: start"
	}
	elapsed := m.now.Sub(m.started).Truncate(1e9)
	line2 := fmt.Sprintf("elapsed %s · %s · slices of %s, rounds paired within a segment · %s", elapsed, what, m.info.RunTime, m.phase)
	return []string{lipgloss.NewStyle().Bold(true).Render(chart.Fit(line1, m.width)), chart.Fit(line2, m.width)}
}

// segmentTable is the live summary's table of segments: what changed,
// rounds, each target's TPS and p95 over the segment's complete rounds,
// and the Δ% against the baseline with its CI.
func (m *summary) segmentTable(r *result.Result) []string {
	names := r.TargetNames()
	out := []string{lipgloss.NewStyle().Bold(true).Render(chart.Fit("segments, interim (rounds are paired only within a segment; geometric means of the paired rounds; Δ% vs "+names[0]+", 95% CI)", m.width))}
	for k, s := range r.Segments {
		line := fmt.Sprintf("%d. %s · %s · %s", k+1, s.WhatChanged, s.Workload, threadsWord(s.Threads))
		if s.Rate > 0 {
			line += fmt.Sprintf(" · rate %.0f/s", s.Rate)
		}
		line += fmt.Sprintf(" · %d round(s)", s.Rounds)
		if s.SettlingRounds > 0 {
			line += fmt.Sprintf(" after %d settling round(s) not counted", s.SettlingRounds)
		}
		out = append(out, m.wrap(line)...)
		if s.SettleNote != "" {
			out = append(out, m.wrap("   "+s.SettleNote)...)
		}
		out = append(out, m.iterationLines(s)...)
		for i, n := range names {
			// The same blocks and the same mean as the Δ% beside it.
			g, rounds := stats.GeoMean(r, n, s.Point)
			if rounds == 0 {
				continue
			}
			cell := fmt.Sprintf("   %s TPS %s  p95 %.2f ms", n, chart.Human(g.TPS), g.P95US/1000)
			if i > 0 {
				tps, p95 := "", ""
				if c := segmentComparison(s, n, "tps"); c != nil {
					tps = "  Δ TPS " + roundsDelta(c, stats.PrecisionTarget(r))
				}
				if c := segmentComparison(s, n, "p95"); c != nil {
					p95 = "  Δ p95 " + roundsDelta(c, 0)
				}
				if s.Rate > 0 {
					cell += p95 + tps // open loop: TPS is the rate on both sides
				} else {
					cell += tps + p95
				}
			}
			out = append(out, m.style(i).Render(chart.Fit(cell, m.width)))
		}
	}
	return append(out, "")
}

// iterationLines are what a configuration iteration's restarted targets
// read back, and each one's Δ TPS against iteration 1.
func (m *summary) iterationLines(s result.Segment) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.ReadBack)) {
		vars := s.ReadBack[name]
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(vars)) {
			kv = append(kv, k+"="+vars[k])
		}
		if len(kv) == 0 {
			kv = []string{"no setting changed"}
		}
		out = append(out, m.wrap(fmt.Sprintf("   %s restarted, reads back: %s", name, strings.Join(kv, " ")))...)
	}
	for _, c := range s.VsIteration1 {
		out = append(out, m.wrap(fmt.Sprintf("   %s vs iteration 1, interim: Δ TPS %s (each side against the baseline of its rounds)", c.Target, roundsDelta(&c, 0)))...)
	}
	return out
}

// roundsDelta is a live comparison as run's finished screen reads one: no
// interval read under 3 rounds (two give t(1), most of the axis), and,
// for the primary metric (precision > 0), how many rounds its spread needs
// for ±precision%.
func roundsDelta(c *result.Comparison, precision float64) string {
	if c.HasCI && c.N < 3 {
		return fmt.Sprintf("%+.1f%% (%d rounds: too few to judge)", c.DeltaPct, c.N)
	}
	s := deltaCI(c)
	if precision > 0 && c.BlocksForTarget > 0 {
		s += fmt.Sprintf(" ±%.1f%% now, about %d rounds for ±%g%%", c.HalfWidthPct, c.BlocksForTarget, precision)
	}
	return s
}

func segmentComparison(s result.Segment, target, metric string) *result.Comparison {
	for i, c := range s.Comparisons {
		if c.Target == target && c.Metric == metric {
			return &s.Comparisons[i]
		}
	}
	return nil
}

// markRules draws the segment changes on a plot's lines: a dotted rule at
// the column of the first interval of each segment (n intervals stretched
// over plotW columns, as chart.Plot draws them).
func markRules(lines []string, marks []int, n, plotW int) []string {
	for i, l := range lines {
		plain := []rune(stripANSI(l))
		axis := axisColumn(plain)
		if axis < 0 {
			continue
		}
		for _, at := range marks {
			col := axis + ruleColumn(at, n, plotW)
			if col >= len(plain) { // the plot's lines end at their last drawn cell
				pad := strings.Repeat(" ", col-len(plain)+1)
				lines[i] += pad
				plain = append(plain, []rune(pad)...)
			}
			if col <= axis || plain[col] != ' ' {
				continue
			}
			lines[i] = cutCell(lines[i], col, "┆")
			plain[col] = '┆'
		}
	}
	return lines
}

// axisColumn is the column after a plot line's Y axis (-1: none).
func axisColumn(plain []rune) int {
	for i, r := range plain {
		if r == '┤' || r == '┼' {
			return i + 1
		}
	}
	return -1
}

// ruleColumn is the plot column of interval at of n over plotW columns.
func ruleColumn(at, n, plotW int) int {
	return int(float64(at)*float64(plotW-1)/float64(max(n-1, 1)) + 0.5)
}

// ruleLabels is the line under a plot that names its rules: each label
// starts at its rule's column, and one that would overlap the next is cut.
func ruleLabels(axisLine string, marks []int, labels []string, n, plotW, width int) string {
	axis := axisColumn([]rune(stripANSI(axisLine)))
	if axis < 0 {
		return ""
	}
	row := []rune(strings.Repeat(" ", width))
	for k, at := range marks {
		col := axis + ruleColumn(at, n, plotW)
		end := width
		if k+1 < len(marks) {
			end = min(width, axis+ruleColumn(marks[k+1], n, plotW)-1)
		}
		label := []rune("┆" + labels[k])
		for j := 0; j < len(label) && col+j < end; j++ {
			row[col+j] = label[j]
		}
	}
	return strings.TrimRight(string(row), " ")
}

func stripANSI(s string) string { return xansi.Strip(s) }

// cutCell replaces the cell at col of a line that may hold ANSI styles.
func cutCell(l string, col int, with string) string {
	return xansi.Truncate(l, col, "") + with + xansi.TruncateLeft(l, col+1, "")
}

// ruledPlot is the synced plot with dbduel live's segment rules and, under
// its X axis, their labels (rows lines in all).
func (m *running) ruledPlot(series [][]float64, names []string, rows int) []string {
	n, full := 0, 0
	for _, s := range series {
		n = max(n, len(s))
	}
	if len(m.cards) > 0 {
		full = len(m.cards[0].history[m.metric])
	}
	var marks []int
	var labels []string
	for k, at := range m.marks {
		if at -= full - n; at > 0 && at < n { // the window shows the last n intervals
			marks, labels = append(marks, at), append(labels, m.markLabels[k])
		}
	}
	lines := plotLines(series, names, m.width, rows-1, m.color, m.fromZero)
	last := -1
	for i, l := range lines {
		if strings.ContainsAny(stripANSI(l), "┤┼") {
			last = i
		}
	}
	if last < 0 || len(marks) == 0 {
		return lines
	}
	plotW := chart.PlotWidth(m.width)
	lines = markRules(lines, marks, n, plotW)
	label := ruleLabels(lines[last], marks, labels, n, plotW, m.width)
	return append(lines[:last+1:last+1], append([]string{label}, lines[last+1:]...)...)
}

// threadsWord is "1 thread" or "N threads".
func threadsWord(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", n)
}
