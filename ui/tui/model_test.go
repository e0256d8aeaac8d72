package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	xgolden "github.com/charmbracelet/x/exp/golden"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/ui/theme"
)

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]`)

func testModel(events <-chan engine.Event, cancel func()) *Model {
	info := Info{Workload: "oltp_read_only", Tables: 2, TableSize: 10000, Threads: 4, Runs: 1, RunTime: 10 * time.Second,
		Targets: []result.Target{
			{Name: "native", Kind: "local", ServerVersion: "10.11.19-MariaDB"},
			{Name: "container", Kind: "container", ServerVersion: "10.11.19-MariaDB",
				Described: result.Described{Image: "dbduel-test/mariadb:10.11.19", NetworkMode: "bridge", MemoryLimitBytes: 2 << 30}},
		}}
	m := New(info, events, cancel, nil, false)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m.SetClock(t0, t0.Add(7*time.Second))
	return m
}

func feedPrepare(m *Model) {
	now := m.now
	m.now = m.started.Add(5 * time.Second) // prepare began 2 s before the rendered instant
	m.run.apply(engine.Event{Kind: engine.EventPhase, Target: "native", Phase: "preparing"})
	m.now = now
	m.run.apply(engine.Event{Kind: engine.EventProgress, Target: "native", Progress: workload.Progress{Rows: 5000, TotalRows: 20000}})
}

func feedRunning(m *Model) {
	m.run.apply(engine.Event{Kind: engine.EventPhase, Target: "native", Block: 1, Index: 1, Phase: "run 1 of 1"})
	for i := 1; i <= 5; i++ {
		m.run.apply(engine.Event{Kind: engine.EventInterval, Target: "native", Interval: result.Interval{Figures: result.Figures{Events: 1000, Reads: 14000, Other: 2000, TPS: 1000 + float64(i*10), QPS: 16000, P95US: 5000, P99US: 6500}, TS: float64(i), SpanS: 1}})
	}
	m.run.apply(engine.Event{Kind: engine.EventRunDone, Target: "native", Block: 1, Index: 1, Run: &result.Run{Target: "native", Index: 1, Summary: result.Summary{Figures: result.Figures{TPS: 1030, QPS: 16480, P95US: 5000}, AvgUS: 3300}}})
	m.run.apply(engine.Event{Kind: engine.EventPhase, Target: "container", Block: 1, Index: 1, Phase: "run 1 of 1"})
	for i := 1; i <= 3; i++ {
		m.run.apply(engine.Event{Kind: engine.EventInterval, Target: "container", Interval: result.Interval{Figures: result.Figures{Events: 400, Reads: 5600, Other: 800, TPS: 400, QPS: 6400, P95US: 12000, P99US: 15000}, TS: float64(i), SpanS: 1}})
	}
}

func finalResult() *result.Result {
	r := &result.Result{Complete: true, Targets: []result.Target{{Name: "native"}, {Name: "container"}}}
	r.Runs = []result.Run{
		{Target: "native", Index: 1, Block: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{QPS: 16480, TPS: 1030, P95US: 5000}, Queries: 164800, AvgUS: 3300}},
		{Target: "container", Index: 1, Block: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{QPS: 6400, TPS: 400, P95US: 12000}, Queries: 64000, AvgUS: 8500}},
	}
	return r
}

// golden compares a view, ANSI stripped, with testdata/<test>/<sub>.golden
// (go test ./ui/tui -update rewrites them).
func golden(t *testing.T, got string) {
	t.Helper()
	xgolden.RequireEqual(t, []byte(ansi.ReplaceAllString(got, "")))
}

func TestViewGolden(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}, {60, 15}} {
		for _, state := range []string{"prepare", "running", "summary"} {
			m := testModel(nil, nil)
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			switch state {
			case "prepare":
				feedPrepare(m)
			case "running":
				feedRunning(m)
			case "summary":
				feedRunning(m)
				m.Update(EventMsg(engine.Event{Kind: engine.EventFinished, Result: finalResult()}))
			}
			name := fmt.Sprintf("%s-%dx%d", state, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				v := m.View()
				golden(t, v)
				if size[0] < MinWidth && !strings.Contains(v, "terminal too small\nneed 80×24, have 60×15") {
					t.Fatalf("too-small screen: %q", v)
				}
			})
		}
	}
}

func TestRunningViewShowsComparison(t *testing.T) {
	m := testModel(nil, nil)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	feedRunning(m)
	v := ansi.ReplaceAllString(m.View(), "")
	snap := finalResult()
	stats.Analyze(snap)
	m.run.apply(engine.Event{Kind: engine.EventRunDone, Target: "container", Block: 1, Index: 1, Run: &snap.Runs[1], Snapshot: snap})
	v = ansi.ReplaceAllString(m.View(), "")
	// The comparison is the verdict's estimator (one block: no CI yet).
	for _, want := range []string{"native", "container", "TPS", "QPS", "p95", "vs native · ▲ container: TPS -61.2% (1 block, no CI)", "mem=2048MiB", "┤"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

func TestHeaderThreadCount(t *testing.T) {
	for n, want := range map[int]string{1: "· 1 thread ·", 4: "· 4 threads ·"} {
		m := testModel(nil, nil)
		m.info.Threads = n
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		if v := ansi.ReplaceAllString(m.View(), ""); !strings.Contains(v, want) {
			t.Errorf("header lacks %q:\n%s", want, strings.SplitN(v, "\n", 2)[0])
		}
	}
}

func TestKeys(t *testing.T) {
	cancelled := 0
	m := testModel(nil, func() { cancelled++ })
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	press := func(k string) tea.Cmd {
		var msg tea.KeyMsg
		switch k {
		case "ctrl+c":
			msg = tea.KeyMsg{Type: tea.KeyCtrlC}
		case "tab":
			msg = tea.KeyMsg{Type: tea.KeyTab}
		case "shift+tab":
			msg = tea.KeyMsg{Type: tea.KeyShiftTab}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		_, cmd := m.Update(msg)
		return cmd
	}
	press("tab")
	if m.run.metric != 1 {
		t.Fatalf("tab: metric %d", m.run.metric)
	}
	press("]")
	press("[")
	if m.run.metric != 1 {
		t.Fatalf("]/[: metric %d", m.run.metric)
	}
	press("shift+tab")
	if m.run.metric != 0 {
		t.Fatalf("shift+tab: metric %d", m.run.metric)
	}
	press("tab")
	press("+")
	if m.run.window != 120 {
		t.Fatalf("+: window %d", m.run.window)
	}
	press("=")
	if m.run.window != 240 {
		t.Fatalf("=: window %d", m.run.window)
	}
	press("-")
	press("-")
	press("-")
	if m.run.window != 30 {
		t.Fatalf("-: window %d", m.run.window)
	}
	press("y")
	if m.run.synced {
		t.Fatal("y did not unsync")
	}
	press("?")
	if !m.fullHelp {
		t.Fatal("? did not show full help")
	}
	feedRunning(m)
	press("p")
	if !m.run.paused {
		t.Fatal("p did not pause")
	}
	before := len(m.run.frozen[0].history[0])
	m.run.apply(engine.Event{Kind: engine.EventInterval, Target: "native", Interval: result.Interval{Figures: result.Figures{TPS: 1}, TS: 9}})
	if len(m.run.frozen[0].history[0]) != before || len(m.run.byName["native"].history[0]) == 0 {
		t.Fatal("pause must freeze the display but keep ingesting")
	}
	press("p")
	if cmd := press("q"); cmd != nil || cancelled != 1 || !m.stopping {
		t.Fatalf("q while running must cancel the engine, not quit (cancelled %d)", cancelled)
	}
	if cmd := press("ctrl+c"); cmd == nil {
		t.Fatal("second ctrl+c must quit at once")
	}
	m2 := testModel(nil, func() {})
	m2.Update(EventMsg(engine.Event{Kind: engine.EventFinished, Result: finalResult()}))
	_, cmd := m2.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	if cmd == nil {
		t.Fatal("q on the summary must quit")
	}
}

func TestTeatestFlow(t *testing.T) {
	events := make(chan engine.Event, 16)
	m := testModel(events, func() {})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	events <- engine.Event{Kind: engine.EventPhase, Target: "native", Block: 1, Index: 1, Phase: "run 1 of 1"}
	events <- engine.Event{Kind: engine.EventInterval, Target: "native", Interval: result.Interval{Figures: result.Figures{Events: 10, TPS: 1234, QPS: 19744, P95US: 5000}, TS: 1}}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "1234") }, teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("p")})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.Send(EventMsg(engine.Event{Kind: engine.EventFinished, Result: finalResult()}))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "q quit") }, teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if !m.Interrupted() {
		t.Fatal("q before done should mark the run interrupted")
	}
}

// BenchmarkView is the cost of one redraw of the running screen at 120×40.
func BenchmarkView(b *testing.B) {
	m := testModel(nil, nil)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	feedRunning(m)
	for i := 0; i < 55; i++ {
		m.run.apply(engine.Event{Kind: engine.EventInterval, Target: "container", Interval: result.Interval{Figures: result.Figures{Events: 400, TPS: 400 + float64(i%7), QPS: 6400, P95US: 12000}, TS: float64(i), SpanS: 1}})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// Every key the model acts on is in the help, and every key in the help
// acts: both come from the one keymap.
func TestHelpListsEveryKey(t *testing.T) {
	m := testModel(nil, func() {})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	m.fullHelp = true
	help := ansi.ReplaceAllString(strings.Join(m.footer(), "\n"), "")
	for _, b := range []key.Binding{keys.Quit, keys.Pause, keys.NextMetric, keys.PrevMetric, keys.Wider, keys.Narrower, keys.Sync, keys.Export, keys.Help, keys.Cards, keys.FromZero} {
		if !strings.Contains(help, b.Help().Key) {
			t.Errorf("help lacks %q:\n%s", b.Help().Key, help)
		}
		for _, k := range b.Keys() {
			if !strings.Contains(b.Help().Key, strings.TrimPrefix(k, "ctrl+")) && k != "ctrl+c" {
				t.Errorf("key %q is not named in its help %q", k, b.Help().Key)
			}
		}
	}
}

// A flagged interval is marked on the running target's card.
func TestNoisyIntervalIsMarked(t *testing.T) {
	m := testModel(nil, nil)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.run.apply(engine.Event{Kind: engine.EventPhase, Target: "native", Block: 1, Index: 1, Phase: "run 1 of 1"})
	m.run.apply(engine.Event{Kind: engine.EventInterval, Target: "native", Interval: result.Interval{Figures: result.Figures{Events: 10, TPS: 10}, TS: 1, SpanS: 1,
		Noise: result.NoiseOf(map[string]float64{"steal_pct": 6.5, "other_cpu_cores": 0.4}, true)}})
	v := ansi.ReplaceAllString(m.View(), "")
	if !strings.Contains(v, "! 1 noisy interval(s) this run") || !strings.Contains(v, "steal 6.5%") ||
		!strings.Contains(v, "! 1 noisy interval(s) in this run: steal or other processes' CPU") {
		t.Fatalf("no noise mark:\n%s", v)
	}
}

// A system test's cards say where each side runs (CPUs, quota, filesystem)
// instead of a server version, and show events/s and MiB/s; the header
// describes the data instead of tables×rows.
func TestSystemTestCards(t *testing.T) {
	sys := map[string]string{"cpus_allowed": "0-1", "cpu_quota": "1.00 cpus", "fs_type": "ext4"}
	info := Info{Workload: "fileio", Data: "rndrw, 16 files, 256M", Figures: Events, Threads: 4, Runs: 1, RunTime: 3 * time.Second,
		Targets: []result.Target{
			{Name: "native", Kind: "native", Described: result.Described{System: map[string]string{"cpus_allowed": "0-1", "cpu_quota": "unlimited", "fs_type": "ext4"}}},
			{Name: "c", Kind: "container", Described: result.Described{Image: "img", NetworkMode: "bridge", System: sys}},
		}}
	m := New(info, nil, nil, nil, false)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m.SetClock(t0, t0.Add(2*time.Second))
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.run.apply(engine.Event{Kind: engine.EventPhase, Target: "c", Block: 1, Index: 1, Phase: "run 1 of 1"})
	m.run.apply(engine.Event{Kind: engine.EventInterval, Target: "c", Interval: result.Interval{Figures: result.Figures{Events: 3000, Reads: 1800, Writes: 1200, TPS: 3000, QPS: 3000}, TS: 1, SpanS: 1,
		ReadMiBPerS: 28.1, WrittenMiBPerS: 18.7}})
	v := ansi.ReplaceAllString(m.View(), "")
	for _, want := range []string{"dbduel · fileio · rndrw, 16 files, 256M · 4 threads", "cpus 0-1 · quota 1.00 cpus · ext4",
		"cpus 0-1 · quota unlimited · ext4", "events/s 3000  MiB/s 46.8"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "version not yet known") || strings.Contains(v, "0×0 rows") {
		t.Errorf("a system test's view speaks of servers or rows:\n%s", v)
	}
}

// TPC-C's cards show the client-counted tpmC and TPM live, the chart draws
// tpmC, and a finished run shows the server-counted NOPM and TPM.
func TestTPCCCards(t *testing.T) {
	info := Info{Workload: "tpcc", Data: "1 warehouse(s)", Figures: NewOrders, Threads: 4, Runs: 1, RunTime: 3 * time.Second,
		Targets: []result.Target{{Name: "native", Kind: "native"}, {Name: "c", Kind: "container", Described: result.Described{Image: "img", NetworkMode: "bridge"}}}}
	m := New(info, nil, nil, nil, false)
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m.SetClock(t0, t0.Add(2*time.Second))
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.run.apply(engine.Event{Kind: engine.EventPhase, Target: "native", Block: 1, Index: 1, Phase: "run 1 of 2"})
	m.run.apply(engine.Event{Kind: engine.EventInterval, Target: "native", Interval: result.Interval{Figures: result.Figures{Events: 700, TPS: 700, QPS: 20000}, TS: 1, SpanS: 1,
		TPMC: 19140, TPM: 42000, Types: map[string]result.TypeInterval{"new_order": {Count: 319}}}})
	run := result.Run{Target: "c", Index: 2, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 430}, NOPM: 11645, TPM: 26286, CountedBy: "sum(district.d_next_o_id)"}}
	m.run.apply(engine.Event{Kind: engine.EventRunDone, Target: "c", Run: &run})
	v := ansi.ReplaceAllString(m.View(), "")
	for _, want := range []string{"dbduel · tpcc · 1 warehouse(s) · 4 threads", "tpmC 19.1k  TPM 42.0k  TPS 700",
		"last run 2: NOPM 11.6k  TPM 26.3k (server)", "tpmC per interval"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

// MongoDB's workloads name their data as collections of documents and keep
// TPS and QPS on the cards.
func TestMongoHeaderSaysDocuments(t *testing.T) {
	info := Info{Workload: "mongo_read_write", Rows: "documents", Tables: 30, TableSize: 1000000, Threads: 32, Runs: 1, RunTime: 3 * time.Second,
		Targets: []result.Target{{Name: "native", Kind: "native", ServerVersion: "7.0.42 (FerretDB v1.24.2)"}}}
	m := New(info, nil, nil, nil, false)
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m.SetClock(t0, t0.Add(2*time.Second))
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.run.apply(engine.Event{Kind: engine.EventPhase, Target: "native", Block: 1, Index: 1, Phase: "run 1 of 1"})
	m.run.apply(engine.Event{Kind: engine.EventInterval, Target: "native", Interval: result.Interval{Figures: result.Figures{Events: 400, TPS: 400, QPS: 7200}, TS: 1, SpanS: 1}})
	v := ansi.ReplaceAllString(m.View(), "")
	for _, want := range []string{"dbduel · mongo_read_write · 30×1000000 documents · 32 threads", "TPS 400  QPS 7200", "FerretDB v1.24.2"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

// e writes nothing inside Update: it returns a command that exports, and
// the command's message is what the screen then says.
func TestExportRunsInACommand(t *testing.T) {
	m := testModel(nil, func() {})
	calls := 0
	m.export = func(*result.Result) (string, error) { calls++; return "out.json", nil }
	e := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("e")}
	if _, cmd := m.Update(e); cmd != nil || !strings.Contains(m.message, "nothing to export yet") {
		t.Fatalf("no result yet: cmd %v, message %q", cmd != nil, m.message)
	}
	m.run.apply(engine.Event{Kind: engine.EventFinished, Result: finalResult()})
	_, cmd := m.Update(e)
	if cmd == nil || calls != 0 {
		t.Fatalf("Update wrote the file itself (calls %d) or returned no command", calls)
	}
	m.Update(cmd())
	if calls != 1 || m.message != "exported to out.json" {
		t.Fatalf("calls %d, message %q", calls, m.message)
	}
	m.export = func(*result.Result) (string, error) { return "", fmt.Errorf("disk full") }
	_, cmd = m.Update(e)
	m.Update(cmd())
	if m.message != "export failed: disk full" {
		t.Fatalf("message %q", m.message)
	}
}

// Keys reach the screen shown: t and scrolling belong to the summary and
// do nothing while the plan runs; the chart's keys work on both.
func TestKeysGoToTheScreenShown(t *testing.T) {
	m := testModel(nil, func() {})
	press := func(k string) { m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}) }
	press("t")
	if m.sum.table {
		t.Fatal("t switched the summary's table while running")
	}
	press("z")
	if !m.run.fromZero {
		t.Fatal("z did nothing while running")
	}
	m.run.apply(engine.Event{Kind: engine.EventFinished, Result: finalResult()})
	press("t")
	press("z")
	if !m.sum.table || m.run.fromZero {
		t.Fatalf("finished: table %v, fromZero %v", m.sum.table, m.run.fromZero)
	}
}

// The finished screen of a plan that stopped early says why on its second
// line, above the fold, not under 30 lines of tables.
func TestStoppedPlanSaysWhyFirst(t *testing.T) {
	m := testModel(nil, func() {})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	r := finalResult()
	r.Complete = false
	r.Plan.Blocks = [][]string{{"native", "container"}, {"container", "native"}}
	r.Error = "target container, run 1 of 2: the container exited with code 137 (killed by SIGKILL)"
	m.run.apply(engine.Event{Kind: engine.EventFinished, Result: r, Err: fmt.Errorf("%s", r.Error)})
	lines := strings.Split(ansi.ReplaceAllString(m.View(), ""), "\n")
	if !strings.Contains(lines[0], "stopped before the plan finished") || !strings.HasPrefix(lines[1], "why: target container, run 1 of 2: the container exited with code 137") {
		t.Fatalf("top of the screen:\n%s", strings.Join(lines[:4], "\n"))
	}
	if !strings.Contains(strings.Join(lines[1:4], " "), "block 2 of 2 never started") {
		t.Fatalf("never started:\n%s", strings.Join(lines[:4], "\n"))
	}
	// Said once: the table below does not repeat it (t shows the table).
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("t")})
	if screen := ansi.ReplaceAllString(m.View(), ""); strings.Count(screen, "exited with code 137") != 1 {
		t.Fatalf("the cause is said more than once:\n%s", screen)
	}
}

// y (a Y scale per target) shows every target's plot with its legend, or
// says how many more there are; at 80×24 with four targets it showed one.
func TestScalePerTargetShowsEveryTarget(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := modelOf(4)
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		feedAll(m, 4)
		typeKey(m, "y")
		v := screen(m)
		shown := 0
		for i, tg := range fourTargets {
			if strings.Contains(v, "■ "+theme.For(i).Glyph+" "+tg.Name) {
				shown++
			}
		}
		if shown < 4 && !strings.Contains(v, fmt.Sprintf("(%d more targets: y again for one shared scale)", 4-shown)) {
			t.Errorf("%dx%d: %d legends and no word of the others:\n%s", size[0], size[1], shown, v)
		}
		if shown < 2 {
			t.Errorf("%dx%d: %d legends:\n%s", size[0], size[1], shown, v)
		}
	}
}
