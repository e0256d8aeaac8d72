package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// fourTargets are what a user compares: native, then a bridge container
// behind docker-proxy, a host-network one and one with a memory limit.
var fourTargets = []result.Target{
	{Name: "native", Kind: "local", ServerVersion: "10.11.19-MariaDB"},
	{Name: "bridge", Kind: "container", ServerVersion: "10.11.19-MariaDB",
		Described: result.Described{Image: "dbduel-test/mariadb:10.11.19", NetworkMode: "bridge", NetworkPath: "docker-proxy"}},
	{Name: "host", Kind: "container", ServerVersion: "10.11.19-MariaDB",
		Described: result.Described{Image: "dbduel-test/mariadb:10.11.19", NetworkMode: "host", NetworkPath: "direct"}},
	{Name: "mem512m", Kind: "container", ServerVersion: "10.11.19-MariaDB",
		Described: result.Described{Image: "dbduel-test/mariadb:10.11.19", NetworkMode: "host", NetworkPath: "direct", MemoryLimitBytes: 512 << 20}},
}

// throughput per target and block: bridge is ~40% slower, host within
// noise, mem512m ~15% slower.
var tpsByTarget = map[string][3]float64{
	"native": {1000, 1020, 980}, "bridge": {600, 618, 590}, "host": {1004, 1013, 985}, "mem512m": {850, 870, 840},
}

func modelOf(n int) *Model {
	info := Info{Workload: "oltp_read_only", Tables: 4, TableSize: 250000, Threads: 4, Runs: 3, RunTime: 10 * time.Second,
		Targets: fourTargets[:n], TotalRuns: 3 * n, OutPath: "r.json"}
	m := New(info, nil, nil, nil, false)
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m.SetClock(t0, t0.Add(37*time.Second))
	return m
}

// threeBlocks is the result of three interleaved blocks of the first n
// targets, analysed and with its causes, as the engine hands it over.
func threeBlocks(n int) *result.Result {
	r := &result.Result{Complete: true, Targets: fourTargets[:n], Plan: result.Plan{Runs: 3}}
	for b := 1; b <= 3; b++ {
		for _, t := range fourTargets[:n] {
			tps := tpsByTarget[t.Name][b-1]
			tel := map[string]float64{"server_cpu_cores": 0.55}
			if t.Name == "bridge" {
				tel["proxy_cpu_cores"] = 0.62
			}
			run := result.Run{Target: t.Name, Block: b, Index: b, Complete: true,
				Summary:   result.Summary{Figures: result.Figures{Events: uint64(tps * 10), QPS: tps * 16, TPS: tps, P95US: 6e6 / tps}, Queries: uint64(tps * 160), AvgUS: 4e6 / tps},
				Histogram: latencies(4e6/tps, b)}
			for s := 1; s <= 10; s++ { // a slow start, then steady
				v := tps * (1 - 0.3/float64(s*s))
				run.Intervals = append(run.Intervals, result.Interval{Figures: result.Figures{TPS: v}, TS: float64(s), SpanS: 1, Telemetry: result.TelemetryOf(tel)})
			}
			r.Runs = append(r.Runs, run)
		}
	}
	stats.Analyze(r)
	cause.Annotate(r)
	return r
}

// latencies is a run's histogram: latencies around avg µs with a tail,
// the same shape in every block (seeded by the block).
func latencies(avg float64, block int) string {
	h := stats.NewHistogram()
	for i := range 1000 {
		v := avg * (0.5 + float64((i*7+block)%100)/100)
		if i%50 == 0 {
			v *= 4 // the tail
		}
		h.RecordValue(int64(v))
	}
	enc, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(enc)
}

// feedAll is the screen in the middle of block 2: every target has a run
// done, the last is running.
func feedAll(m *Model, n int) {
	snap := threeBlocks(n)
	for i, t := range fourTargets[:n] {
		m.run.apply(engine.Event{Kind: engine.EventPhase, Target: t.Name, Block: 2, Index: 2, Phase: "run 2 of 3", Done: 3 + i, Total: 3 * n, ETA: 50 * time.Second})
		for s := 1; s <= 8; s++ {
			tps := tpsByTarget[t.Name][0] + float64(s%3)*7
			m.run.apply(engine.Event{Kind: engine.EventInterval, Target: t.Name, Interval: result.Interval{Figures: result.Figures{Events: uint64(tps), Reads: uint64(tps * 14), Other: uint64(tps * 2), TPS: tps, QPS: tps * 16, P95US: 6e6 / tps, P99US: 8e6 / tps}, TS: float64(s), SpanS: 1}})
		}
		if i < n-1 {
			run := snap.Runs[i]
			m.run.apply(engine.Event{Kind: engine.EventRunDone, Target: t.Name, Block: 2, Index: 2, Run: &run, Snapshot: snap})
		}
	}
}

func finish(m *Model, n int) {
	feedAll(m, n)
	m.Update(EventMsg(engine.Event{Kind: engine.EventFinished, Result: threeBlocks(n)}))
}

// screen is the view as a person reads it (ANSI stripped).
func screen(m *Model) string { return ansi.ReplaceAllString(m.View(), "") }

// typeKey presses a key that types a character.
func typeKey(m *Model, k string) { m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}) }

// Goldens at 80×24 and 200×50 with one to four targets, running and
// finished (go test ./ui/tui -update rewrites them).
func TestLayoutGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {140, 45}, {200, 50}} {
		for n := 1; n <= 4; n++ {
			for _, state := range []string{"running", "finished"} {
				m := modelOf(n)
				m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
				if state == "running" {
					feedAll(m, n)
				} else {
					finish(m, n)
				}
				t.Run(fmt.Sprintf("%s-%dtargets-%dx%d", state, n, size[0], size[1]), func(t *testing.T) {
					golden(t, m.View())
				})
			}
		}
	}
}

// Nothing is clipped at any size from the minimum up: every line fits the
// width, the screen fits the height, each target is on screen, the chart
// keeps a readable height and the finished screen holds whole verdicts.
func TestNothingClippedAtAnySize(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {140, 45}, {160, 45}, {200, 50}, {81, 60}} {
		for n := 1; n <= 4; n++ {
			running := modelOf(n)
			running.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			feedAll(running, n)
			done := modelOf(n)
			done.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			finish(done, n)
			for state, m := range map[string]*Model{"running": running, "finished": done} {
				v := screen(m)
				lines := strings.Split(v, "\n")
				where := fmt.Sprintf("%s %d targets %dx%d", state, n, size[0], size[1])
				if len(lines) > size[1] {
					t.Errorf("%s: %d lines", where, len(lines))
				}
				for _, l := range lines {
					if w := lipgloss.Width(l); w > size[0] {
						t.Errorf("%s: line of %d cells: %q", where, w, l)
					}
				}
				for _, tg := range fourTargets[:n] {
					if !strings.Contains(v, tg.Name) {
						t.Errorf("%s: %s is not on screen:\n%s", where, tg.Name, v)
					}
				}
				if state == "running" {
					if rows := strings.Count(v, "┤") + strings.Count(v, "┼"); rows < minChartRows {
						t.Errorf("%s: chart of %d rows:\n%s", where, rows, v)
					}
					continue
				}
				if n < 2 {
					continue
				}
				// Every word of every verdict is on screen whole.
				flat := strings.Join(strings.Fields(v), " ")
				if strings.Contains(v, "↑/↓ to scroll") {
					continue // scrolled: checked below
				}
				for _, c := range threeBlocks(n).Comparisons {
					if c.Metric == "tps" && !strings.Contains(flat, strings.Join(strings.Fields(c.Verdict), " ")) {
						t.Errorf("%s: verdict not whole: %q\n%s", where, c.Verdict, v)
					}
				}
			}
		}
	}
}

// At 80×24 four targets do not fit side by side: one line each, and c
// pages through their full cards in place of the chart.
func TestNarrowCardsPage(t *testing.T) {
	m := modelOf(4)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	feedAll(m, 4)
	if m.run.fullCards(4, 3) {
		t.Fatal("four cards side by side at 80 columns")
	}
	typeKey(m, "c")
	typeKey(m, "c")
	v := screen(m)
	if !strings.Contains(v, "card 2 of 4") || !strings.Contains(v, "image dbduel-test/mariadb:10.11.19") {
		t.Fatalf("page 2:\n%s", v)
	}
	for range 3 {
		typeKey(m, "c")
	}
	if v := screen(m); strings.Contains(v, "card ") || !strings.Contains(v, "TPS per interval") {
		t.Fatalf("after the last card the chart is back:\n%s", v)
	}
}

// The finished screen's chart: one row per target with the verdict's Δ%
// and CI, the cause line, and t switches to the table and back.
func TestSummaryChartVerdictAndCause(t *testing.T) {
	m := modelOf(3)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	finish(m, 3)
	v := screen(m)
	flat := strings.Join(strings.Fields(v), " ")
	r := threeBlocks(3)
	for _, name := range []string{"bridge", "host"} {
		c := cause.Primary(r, name, 0)
		want := fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", c.DeltaPct, c.CILowPct, c.CIHighPct)
		if !strings.Contains(v, want) || !strings.Contains(flat, c.Verdict) {
			t.Errorf("%s: %q or its verdict missing:\n%s", name, want, v)
		}
	}
	if !strings.Contains(flat, "cause: bridge: measured alongside: docker-proxy used 0.62 cores — 53% of the container side's CPU per transaction") || !strings.Contains(flat, "host: within noise (equivalent within ±5%") {
		t.Errorf("no cause line:\n%s", v)
	}
	// Two comparisons: the verdict words were decided together, and the
	// finished screen says so under the verdicts.
	if !strings.Contains(flat, "host: within noise (equivalent within ±5%: 90% CI [-1.0%, +1.2%]) 2 comparisons, Holm-adjusted at α 0.05") {
		t.Errorf("no family line under the cause line:\n%s", v)
	}
	typeKey(m, "t")
	if v := screen(m); !strings.Contains(v, "queries") || strings.Contains(v, "├") {
		t.Errorf("t shows the table:\n%s", v)
	}
	typeKey(m, "t")
	if v := screen(m); !strings.Contains(v, "├") {
		t.Errorf("t again shows the chart:\n%s", v)
	}
}

// A summary taller than the terminal scrolls, and the last line is
// reachable.
func TestSummaryScrolls(t *testing.T) {
	m := modelOf(4)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	finish(m, 4)
	typeKey(m, "t") // the table is long
	body := m.sum.summaryBody(0)
	if len(body) <= m.sum.summaryRoom() {
		t.Fatalf("four targets' table fits in %d lines: the test needs one to scroll", len(body))
	}
	for range len(body) + 5 {
		m.Update(tea.KeyMsg{Type: tea.KeyDown})
	}
	v := screen(m)
	if last := body[len(body)-1]; !strings.Contains(v, last) {
		t.Fatalf("last line %q not reachable:\n%s", last, v)
	}
	for range len(body) + 5 {
		m.Update(tea.KeyMsg{Type: tea.KeyUp})
	}
	if v := screen(m); !strings.Contains(v, body[0]) {
		t.Fatalf("first line not back:\n%s", v)
	}
	// End and G go to the last page at once, Home and g back; pgdn pages.
	for _, k := range []tea.KeyMsg{{Type: tea.KeyEnd}, {Type: tea.KeyRunes, Runes: []rune("G")}} {
		m.Update(k)
		if v := screen(m); !strings.Contains(v, body[len(body)-1]) {
			t.Fatalf("%s: last line not shown:\n%s", k, v)
		}
		m.Update(tea.KeyMsg{Type: tea.KeyHome})
		if v := screen(m); !strings.Contains(v, body[0]) {
			t.Fatalf("home: first line not back:\n%s", v)
		}
	}
	m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
	if m.sum.scroll != m.sum.summaryRoom()-2 {
		t.Fatalf("pgdn scrolled to line %d, want %d", m.sum.scroll, m.sum.summaryRoom()-2)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyPgUp})
	if m.sum.scroll != 0 {
		t.Fatalf("pgup: line %d", m.sum.scroll)
	}
}

// ETA is known from the first second (planned, then measured, counting
// down between events); e before any run has ended says what it will do.
func TestETAFromTheFirstSecondAndEarlyExport(t *testing.T) {
	m := modelOf(2)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.export = func(*result.Result) (string, error) { t.Fatal("exported nothing"); return "", nil }
	m.now = m.started.Add(time.Second)
	// 6 runs of 10 s planned, 1 s gone.
	if v := screen(m); !strings.Contains(v, "ETA ~59s (planned)") {
		t.Fatalf("no planned ETA:\n%s", v)
	}
	m.run.apply(engine.Event{Kind: engine.EventPhase, Target: "native", Block: 1, Index: 2, Phase: "run 2 of 3", Done: 2, Total: 6, ETA: 40 * time.Second})
	m.now = m.now.Add(5 * time.Second)
	if v := screen(m); !strings.Contains(v, "ETA 35s") {
		t.Fatalf("measured ETA does not count down:\n%s", v)
	}
	typeKey(m, "e")
	if v := screen(m); !strings.Contains(v, "nothing to export yet: once the first run ends, e writes the result so far as JSON to r.json") {
		t.Fatalf("early e:\n%s", v)
	}
}

// The Y axis fits the data; z starts it at zero.
func TestYAxisFitsTheDataAndZ(t *testing.T) {
	m := modelOf(1)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	feedAll(m, 1) // 1000..1014 TPS
	v := screen(m)
	if strings.Contains(v, " 0.0 ┤") || strings.Contains(v, " 0 ┤") {
		t.Fatalf("the axis starts at zero without z:\n%s", v)
	}
	typeKey(m, "z")
	v = screen(m)
	if !strings.Contains(v, "Y from 0") || !strings.Contains(v, " 0 ┤") {
		t.Fatalf("z does not start the axis at zero:\n%s", v)
	}
}

// explain's ladder fills a waterfall rung by rung in the running screen.
func TestExplainWaterfallLive(t *testing.T) {
	var rungs []result.Target
	for _, n := range []string{"native", "host-bind", "host-volume", "host-overlay", "bridge-proxy", "bridge-direct", "seccomp-unconfined", "memory-limit", "cpuset", "cpu-quota"} {
		rungs = append(rungs, result.Target{Name: n})
	}
	m := New(Info{Workload: "oltp_point_select", Tables: 1, TableSize: 1000, Threads: 4, Runs: 2, RunTime: 2 * time.Second, Targets: rungs, Schedule: LadderView{}},
		nil, nil, nil, false)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	snap := &result.Result{Explain: &result.Explain{Metric: "tps", Rungs: []result.Rung{
		{Name: "native"},
		{Name: "host-bind", ComparedTo: "native", DeltaPct: -2.1, CILowPct: -4.0, CIHighPct: -0.2, HasCI: true, N: 2, Valid: true},
	}}}
	m.run.apply(engine.Event{Kind: engine.EventRunDone, Target: "host-bind", Run: &result.Run{Target: "host-bind", Index: 1}, Snapshot: snap})
	v := screen(m)
	for _, want := range []string{"explain: each rung's Δ TPS", "host-bind", "-2.1% [-4.0, -0.2]", "not paired yet: host-volume, host-overlay, bridge-proxy",
		"TPS per interval", "q stop / quit"} {
		if !strings.Contains(v, want) {
			t.Errorf("waterfall lacks %q:\n%s", want, v)
		}
	}
	// Ten rungs at 80×24: the whole ladder, a chart and the keys still fit.
	m.run.apply(engine.Event{Kind: engine.EventPhase, Target: "cpuset", Block: 1, Index: 1, Phase: "run 1 of 2"})
	for _, rg := range rungs[2:] {
		snap.Explain.Rungs = append(snap.Explain.Rungs, result.Rung{Name: rg.Name, ComparedTo: "native", DeltaPct: -10, CILowPct: -20, CIHighPct: 1, HasCI: true, N: 2, Valid: true})
	}
	v = screen(m)
	if lines := strings.Split(v, "\n"); len(lines) > 24 || !strings.Contains(v, "q stop / quit") || !strings.Contains(v, "cpu-quota") || !strings.Contains(v, "┤") {
		t.Errorf("ten rungs at 80×24:\n%s", v)
	}
}

// A replay says it is one at every size: the note leads the header,
// running and finished, from 80 columns up.
func TestReplaySaysSoAtEverySize(t *testing.T) {
	for _, w := range []int{80, 100, 200} {
		m := modelOf(2)
		m.info.Note = "replay of a run measured 2026-12-04 19:21"
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		feedAll(m, 2)
		first := func() string { return strings.SplitN(screen(m), "\n", 2)[0] }
		if !strings.HasPrefix(first(), "replay of a run measured 2026-12-04 19:21 · dbduel") {
			t.Fatalf("%d columns, running: %q", w, first())
		}
		finish(m, 2)
		if !strings.HasPrefix(first(), "replay of a run measured 2026-12-04 19:21 · dbduel") {
			t.Fatalf("%d columns, finished: %q", w, first())
		}
	}
	// Below the smallest layout, the note still comes first, whole.
	m := modelOf(2)
	m.info.Note = "replay of a run measured 2026-12-04 19:21"
	m.Update(tea.WindowSizeMsg{Width: 30, Height: 15})
	if v := screen(m); !strings.HasPrefix(strings.Join(strings.Fields(v), ""), "replayofarunmeasured2026-12-0419:21terminaltoosmallneed80×24,have30×15") {
		t.Fatalf("30×15: %q", v)
	}
}

// A live session that switched workloads names them all in its title.
func TestFinishedTitleNamesEveryWorkload(t *testing.T) {
	r := &result.Result{Segments: []result.Segment{{Workload: "oltp_read_only"}, {Workload: "oltp_read_write"}, {Workload: "oltp_read_only"}}}
	if got := workloadsOf(r, "oltp_read_only"); got != "oltp_read_only, oltp_read_write" {
		t.Fatalf("workloads %q", got)
	}
	if got := workloadsOf(&result.Result{}, "cpu"); got != "cpu" {
		t.Fatalf("no segments: %q", got)
	}
}

// cpu, memory and fileio: the running screen's chart and metric rows say
// events/s and MiB/s, never TPS or QPS.
func TestSystemWorkloadChartsSpeakEvents(t *testing.T) {
	m := modelOf(2)
	m.info.Workload = "cpu"
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	feedAll(m, 2)
	v := screen(m)
	if !strings.Contains(v, "events/s per interval") || strings.Contains(v, "TPS per interval") || !strings.Contains(v, "MiB/s") {
		t.Fatalf("cpu's running screen:\n%s", v)
	}
}

// The finished screen gives the lines it has to the data: the whole plan's
// chart fills them (tab picks its metric), and from 180 columns the run
// table stands beside it.
func TestFinishedScreenUsesItsLines(t *testing.T) {
	for _, size := range [][2]int{{140, 45}, {200, 50}} {
		m := modelOf(2)
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		finish(m, 2)
		s := screen(m)
		empty := 0
		for _, l := range strings.Split(s, "\n") {
			if strings.TrimSpace(l) == "" {
				empty++
			}
		}
		if empty > 4 || !strings.Contains(s, "TPS per interval over the whole plan") {
			t.Errorf("%dx%d: %d empty lines, or no plan chart:\n%s", size[0], size[1], empty, s)
		}
		beside := false
		for _, l := range strings.Split(s, "\n") {
			beside = beside || strings.Contains(l, "┤") && strings.Contains(l, "native         gmean")
		}
		if beside != (size[0] >= tableBesideMin) {
			t.Errorf("%dx%d: the run table beside the chart: %v", size[0], size[1], beside)
		}
		m.Update(tea.KeyMsg{Type: tea.KeyTab})
		if !strings.Contains(screen(m), "QPS per interval over the whole plan") {
			t.Errorf("%dx%d: tab did not switch the plan chart to QPS:\n%s", size[0], size[1], screen(m))
		}
	}
	// Too short for the chart: the one-line sparklines stand for the plan.
	m := modelOf(2)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 28})
	finish(m, 2)
	if s := screen(m); strings.Contains(s, "over the whole plan (runs") || !strings.Contains(s, "TPS over the whole plan (every interval") {
		t.Errorf("100x28: want the sparklines:\n%s", s)
	}
}
