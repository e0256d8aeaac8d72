package tui

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/internal/fakesql"
	"github.com/dbduel/dbduel/ui/chart"
)

// counted is quick with its events and its highest thread counted.
type counted struct {
	quick
	events    atomic.Int64
	maxThread atomic.Int64
}

func (c *counted) NewWorker(_ context.Context, _ driver.Conn, thread, _ int, _ uint64) (workload.Worker, error) {
	for {
		m := c.maxThread.Load()
		if int64(thread) <= m || c.maxThread.CompareAndSwap(m, int64(thread)) {
			break
		}
	}
	return countedWorker{c}, nil
}

type countedWorker struct{ c *counted }

func (w countedWorker) Event(ctx context.Context, n *workload.Counts) error {
	w.c.events.Add(1)
	return quickWorker{}.Event(ctx, n)
}
func (countedWorker) Close(context.Context, *workload.Counts) error { return nil }

// dbduel live's keys drive the real engine through the program: ↑ doubles
// the threads of the next round's slices and starts a segment that lands
// in the result, space stops the load, the first q shows the segments and
// the second quits.
func TestLiveKeysDriveTheEngine(t *testing.T) {
	w := &counted{}
	open := func(context.Context, int) (driver.DB, error) {
		db, _ := fakesql.Open(false)
		return &driver.SQLPool{DB: db, Protocol: "fake"}, nil
	}
	names := []result.Target{{Name: "a"}, {Name: "b"}}
	ctl := engine.NewLiveControl(engine.Point{Workload: w, Threads: 2})
	sess := engine.Session{
		Load:     engine.Load{Time: 200 * time.Millisecond, Warmup: 50 * time.Millisecond, ReportInterval: 50 * time.Millisecond, Percentile: 95},
		Schedule: engine.NewLive(ctl, nil, 1),
		Annotate: func(r *result.Result) { r.Targets = names; stats.Analyze(r) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan engine.Event, 16)
	go engine.Run(ctx, sess, []engine.Target{{Name: "a", Open: open}, {Name: "b", Open: open}}, events)
	m := New(Info{Workload: "quick", Threads: 2, RunTime: 200 * time.Millisecond, Targets: names, Schedule: LiveView{Control: &fakeControl{LiveControl: ctl}}}, events, cancel, nil, false)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitFor := func(s string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), s) }, teatest.WithDuration(10*time.Second))
	}
	waitFor("round 3")
	tm.Send(tea.KeyMsg{Type: tea.KeyUp})
	waitFor("segment 2")
	if got := ctl.Settings().Threads; got != 4 {
		t.Fatalf("↑: %d threads, want 4", got)
	}
	// A round's header is rendered anew each round (an unchanged line is
	// not written again: wait for what must change).
	waitFor("round 9")
	// The running Δ% is watched: it carries its confidence sequence.
	waitFor(" anytime [")
	tm.Send(tea.KeyMsg{Type: tea.KeySpace})
	waitFor("PAUSED")
	// The round under way ends first (two slices of 0.2 s, longer on a
	// loaded machine under -race): wait until the events stop, then none
	// may run for another second.
	before, changed := w.events.Load(), time.Now()
	for deadline := changed.Add(15 * time.Second); time.Since(changed) < 1500*time.Millisecond; {
		time.Sleep(250 * time.Millisecond)
		if now := w.events.Load(); now != before {
			before, changed = now, time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatal("paused, yet events still run after 15 s")
		}
	}
	time.Sleep(time.Second)
	if after := w.events.Load(); after != before {
		t.Errorf("paused, yet %d events ran", after-before)
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return strings.Contains(string(b), "session ended") && strings.Contains(string(b), "segments, interim")
	}, teatest.WithDuration(10*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	r := tm.FinalModel(t).(*Model).Result()
	if r == nil || len(r.Segments) != 2 {
		t.Fatalf("segments: %+v", r)
	}
	s1, s2 := r.Segments[0], r.Segments[1]
	if s1.Threads != 2 || s2.Threads != 4 || s2.WhatChanged != "threads 2→4" || s1.Rounds < 3 || s2.Rounds < 1 {
		t.Errorf("segments %+v, %+v", s1, s2)
	}
	if got := w.maxThread.Load(); got != 3 {
		t.Errorf("the highest thread is %d, want 3 (four threads from the second segment)", got)
	}
	if r.Plan.Points[s2.Point].Threads != 4 || len(r.InCompleteBlocks("b", s2.Point)) != s2.Rounds {
		t.Errorf("segment 2's point %+v, %d blocks for %d rounds", r.Plan.Points[s2.Point], len(r.InCompleteBlocks("b", s2.Point)), s2.Rounds)
	}
}

// A segment's rule lands on the column of its first interval, as the plot
// stretches the intervals over its width, and never on a drawn line.
func TestSegmentRulesLandOnTheirInterval(t *testing.T) {
	series := make([]float64, 21)
	for i := range series {
		series[i] = 100
		if i >= 10 {
			series[i] = 200
		}
	}
	width := 80
	lines := strings.Split(chart.Plot([][]float64{series}, []string{"a"}, width, 10, false, false), "\n")
	plotW := chart.PlotWidth(width)
	marked := markRules(append([]string(nil), lines...), []int{10}, len(series), plotW)
	want := ruleColumn(10, 21, plotW)
	if want != (plotW-1)/2 {
		t.Fatalf("interval 10 of 21 at column %d, want the middle %d", want, (plotW-1)/2)
	}
	rules := 0
	for i, l := range marked {
		plain := []rune(l)
		axis := axisColumn(plain)
		if axis < 0 {
			continue
		}
		for j, r := range plain {
			if r == '┆' {
				rules++
				if j != axis+want {
					t.Errorf("line %d: rule at %d, want %d", i, j, axis+want)
				}
			}
		}
		if stripped := strings.ReplaceAll(l, "┆", " "); stripped != lines[i] && strings.TrimRight(stripped, " ") != strings.TrimRight(lines[i], " ") {
			t.Errorf("line %d: the rule replaced a drawn cell:\n%s\n%s", i, lines[i], l)
		}
	}
	if rules < 5 {
		t.Errorf("%d rule cells:\n%s", rules, strings.Join(marked, "\n"))
	}
	label := ruleLabels(lines[0], []int{10}, []string{"threads 2→4"}, 21, plotW, width)
	axis := axisColumn([]rune(lines[0]))
	if got := strings.Index(string([]rune(label)), "┆threads 2→4"); got < 0 || len([]rune(label[:got])) != axis+want {
		t.Errorf("label %q not at column %d", label, axis+want)
	}
}

// The SPEC editor: → selects the second target, enter opens its SPEC, the
// keys edit it, enter hands it over; a refused SPEC keeps the editor open
// with the reason, esc closes it; q typed in the editor is text, not quit.
func TestSpecEditorHandsTheSpecOver(t *testing.T) {
	var got []string
	refuse := true
	ctl := &fakeControl{LiveControl: engine.NewLiveControl(engine.Point{Workload: quick{}, Threads: 2}), respec: func(name, spec string) error {
		if refuse {
			refuse = false
			return errors.New("only memory=, cpus= and cpuset= change in place")
		}
		got = append(got, name+" "+spec)
		return nil
	}}
	names := []result.Target{{Name: "a", SpecRedacted: "local:mariadbd"}, {Name: "b", SpecRedacted: "docker:img:1"}}
	m := New(Info{Workload: "quick", Threads: 2, Targets: names, Schedule: LiveView{Control: ctl}}, nil, func() {}, nil, false)
	m.width, m.height = 100, 30
	// Each key's command runs after Update returns, as Bubble Tea runs it:
	// Update itself never reaches the control's I/O (checking a SPEC
	// reads the files it names).
	send := func(msgs ...tea.KeyMsg) {
		for _, k := range msgs {
			calls := ctl.calls
			_, cmd := m.Update(k)
			if ctl.calls != calls {
				t.Fatalf("Update of %q called the control's I/O itself", k)
			}
			if cmd != nil {
				m.Update(cmd())
			}
		}
	}
	runes := func(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }
	send(tea.KeyMsg{Type: tea.KeyRight}, tea.KeyMsg{Type: tea.KeyRight}, tea.KeyMsg{Type: tea.KeyEnter})
	if m.run.editor == nil || m.run.editor.Value() != "docker:img:1" || !strings.Contains(m.View(), "SPEC of b: docker:img:1") {
		t.Fatalf("the editor did not open on b's SPEC:\n%s", m.View())
	}
	send(runes(",network=host"), tea.KeyMsg{Type: tea.KeyEnter})
	if m.run.editor == nil || !strings.Contains(m.View(), "only memory=") || len(got) != 0 {
		t.Fatalf("a refused SPEC closed the editor or was taken: %v\n%s", got, m.View())
	}
	send(tea.KeyMsg{Type: tea.KeyCtrlU}, runes("docker:img:1,memory=4g,q"), tea.KeyMsg{Type: tea.KeyBackspace}, tea.KeyMsg{Type: tea.KeyBackspace}, tea.KeyMsg{Type: tea.KeyEnter})
	if len(got) != 1 || got[0] != "b docker:img:1,memory=4g" || m.run.editor != nil || m.stopping {
		t.Fatalf("handed over %v (editor open %v, stopping %v)", got, m.run.editor != nil, m.stopping)
	}
	send(tea.KeyMsg{Type: tea.KeyEnter}) // opens with the SPEC as applied
	if m.run.editor == nil || m.run.editor.Value() != "docker:img:1,memory=4g" {
		t.Fatalf("the editor shows %q", m.run.editor.Value())
	}
	send(tea.KeyMsg{Type: tea.KeyEsc})
	if m.run.editor != nil || len(got) != 1 {
		t.Errorf("esc: editor open %v, %v", m.run.editor != nil, got)
	}
}

// fakeControl is the engine's control with the session's own steps
// faked; calls counts the steps that may do I/O (Respec, ExportScenario).
type fakeControl struct {
	*engine.LiveControl
	respec func(name, spec string) error
	calls  int
}

func (f *fakeControl) NextWorkload() (string, error) {
	return "", errors.New("no other workload to switch to")
}

func (f *fakeControl) Respec(name, spec string) error {
	f.calls++
	if f.respec == nil {
		return errors.New("this session cannot change a SPEC")
	}
	return f.respec(name, spec)
}

func (f *fakeControl) ExportScenario(*result.Result) (string, error) {
	f.calls++
	return "", nil
}

// The live finished screen reads a comparison as run's does: no interval
// read under 3 rounds, and the rounds the primary metric's spread needs.
func TestRoundsDeltaReadsLikeRun(t *testing.T) {
	two := &result.Comparison{HasCI: true, N: 2, DeltaPct: -12, CILowPct: -81, CIHighPct: 139}
	if got := roundsDelta(two, 5); got != "-12.0% (2 rounds: too few to judge)" || strings.Contains(got, "139") {
		t.Fatalf("2 rounds: %q", got)
	}
	five := &result.Comparison{HasCI: true, N: 5, DeltaPct: -3, CILowPct: -9, CIHighPct: 3.2, HalfWidthPct: 6.2, BlocksForTarget: 8}
	if got := roundsDelta(five, 5); got != "-3.0% [-9.0, +3.2] ±6.2% now, about 8 rounds for ±5%" {
		t.Fatalf("5 rounds: %q", got)
	}
	if got := anytimeDelta(&result.Comparison{HasCI: true, N: 4, DeltaPct: -3, Anytime: &result.Anytime{LowPct: -15, HighPct: 10}}); got != "-3.0% anytime [-15.0, +10.0]" {
		t.Fatalf("anytime: %q", got)
	}
}

// A wrapped indented line keeps its indent on every line it wraps to.
func TestWrapKeepsTheIndent(t *testing.T) {
	m := &common{width: 40}
	got := m.wrap("   c vs iteration 1, interim: Δ TPS +20.5% [+8.3, +34.2] (each side against the baseline of its rounds)")
	if len(got) < 3 {
		t.Fatalf("not wrapped: %q", got)
	}
	for _, l := range got {
		if !strings.HasPrefix(l, "   ") || strings.HasPrefix(l, "    ") || len([]rune(l)) > 40 {
			t.Fatalf("line %q of %q", l, got)
		}
	}
}

// r opens the loop at 70% of the slowest target's last slice, not at its
// capacity; > and < move the rate from there with the share on screen; a
// target whose queue holds more than 100 ms of arrivals is "behind"; and in
// open loop the comparison leads with latency, TPS being the rate on both.
func TestOpenLoopAtAShareOfTheSlowest(t *testing.T) {
	ctl := &fakeControl{LiveControl: engine.NewLiveControl(engine.Point{Workload: quick{}, Threads: 8})}
	names := []result.Target{{Name: "n"}, {Name: "c"}}
	m := New(Info{Workload: "quick", Threads: 8, Targets: names, Schedule: LiveView{Control: ctl}}, nil, func() {}, nil, false)
	m.width, m.height = 120, 40
	m.run.byName["n"].lastRun = &result.Run{Summary: result.Summary{Figures: result.Figures{TPS: 1000}}}
	m.run.byName["c"].lastRun = &result.Run{Summary: result.Summary{Figures: result.Figures{TPS: 500}}}
	key := func(s string) { m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}) }
	key("r")
	if got := ctl.Settings().Rate; got != 350 {
		t.Fatalf("r: rate %v, want 350 (70%% of c's 500)", got)
	}
	if v := m.View(); !strings.Contains(v, "rate 350/s = 70% of c's last slice") {
		t.Fatalf("the header does not say what the rate is a share of:\n%s", v)
	}
	key(">")
	if got := ctl.Settings().Rate; got != 438 || !strings.Contains(m.View(), "rate 438/s = 88% of c's last slice") {
		t.Fatalf(">: rate %v\n%s", got, m.View())
	}
	key("<")
	key("<")
	if got := ctl.Settings().Rate; got != 280 {
		t.Fatalf("< twice: rate %v, want 280", got)
	}
	// The line under the header follows the rate (it kept r's 350/s).
	if v := m.View(); !strings.Contains(v, "rate 280/s = 56% of c's last slice (500/s); > and < move it") || strings.Contains(v, "350/s") {
		t.Fatalf("after < the message should follow the rate:\n%s", v)
	}
	for range 3 {
		key(">")
	}
	if v := m.View(); ctl.Settings().Rate != 548 || !strings.Contains(v, "rate 548/s = 110% of c's last slice (500/s): above c's last slice, it will fall behind") {
		t.Fatalf("past the slowest's slice, say what follows (rate %v):\n%s", ctl.Settings().Rate, v)
	}
	for range 3 {
		key("<")
	}

	// The slices run at 350/s: c's queue holds 37 arrivals (more than the
	// 35 of 100 ms), n's 3.
	for _, name := range []string{"n", "c"} {
		m.Update(EventMsg(engine.Event{Kind: engine.EventPhase, Target: name, Block: 1, Index: 1, Phase: "run", Threads: 8, Rate: 350}))
	}
	m.Update(EventMsg(engine.Event{Kind: engine.EventInterval, Target: "n", Index: 1, Interval: result.Interval{TS: 1, SpanS: 1, QueueLen: 3, Figures: result.Figures{TPS: 350, P95US: 2000}}}))
	m.Update(EventMsg(engine.Event{Kind: engine.EventInterval, Target: "c", Index: 1, Interval: result.Interval{TS: 1, SpanS: 1, QueueLen: 37, Figures: result.Figures{TPS: 349, P95US: 9000}}}))
	m.Update(EventMsg(engine.Event{Kind: engine.EventSnapshot, Snapshot: &result.Result{Comparisons: []result.Comparison{
		{Target: "c", Metric: "tps", DeltaPct: -0.3, HasCI: true, N: 3},
		{Target: "c", Metric: "p95", DeltaPct: 350, HasCI: true, N: 3},
		{Target: "c", Metric: "p99", DeltaPct: 410, HasCI: true, N: 3},
	}}}))
	v := m.View()
	if strings.Count(v, "behind:") != 1 || !strings.Contains(v, "behind: 37 events queued") {
		t.Fatalf("want c (only) behind:\n%s", v)
	}
	line := ""
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "interim vs n") {
			line = l
		}
	}
	p95, p99, tps := strings.Index(line, "p95 "), strings.Index(line, "p99 "), strings.Index(line, "TPS ")
	if p95 < 0 || p99 < p95 || tps < p99 {
		t.Fatalf("open loop: the comparison should lead with p95, p99, then TPS: %q", line)
	}
	// c's slice ends behind: its card keeps saying so, since its latency
	// was queueing.
	m.Update(EventMsg(engine.Event{Kind: engine.EventRunDone, Target: "c", Block: 1, Index: 1,
		Run: &result.Run{Target: "c", Index: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 349, P95US: 9000}}}}))
	if v := m.View(); !strings.Contains(v, "fell behind: 37 events queued at its end") {
		t.Fatalf("c's finished slice no longer says it was behind:\n%s", v)
	}

	// ↑ changes the load: the share of a slice measured at another load
	// is no longer said.
	m.Update(tea.KeyMsg{Type: tea.KeyUp})
	if head, _, _ := strings.Cut(m.View(), "\n"); strings.Contains(head, "% of c's last slice") || !strings.Contains(head, "16 threads · rate 280/s") {
		t.Fatalf("after ↑ the header still names the old share: %s", head)
	}
	key("r")
	if v := m.View(); ctl.Settings().Rate != 0 || !strings.Contains(v, "r: open loop off") || strings.Contains(v, "280/s") {
		t.Fatalf("r again closes the loop and says so:\n%s", v)
	}
}

// The segment table leads an open-loop segment with Δ p95 (TPS is the
// rate on both sides) and a closed-loop one with Δ TPS.
func TestSegmentTableLeadsOpenLoopWithLatency(t *testing.T) {
	m := New(Info{Workload: "quick", Threads: 2, Targets: []result.Target{{Name: "n"}, {Name: "c"}}}, nil, func() {}, nil, false)
	m.width, m.height = 160, 40
	cmp := func(metric string, d float64) result.Comparison {
		return result.Comparison{Target: "c", Baseline: "n", Metric: metric, DeltaPct: d, HasCI: true, N: 4, CILowPct: d - 1, CIHighPct: d + 1}
	}
	r := &result.Result{Targets: []result.Target{{Name: "n"}, {Name: "c"}}, Segments: []result.Segment{
		{Point: 0, WhatChanged: "start", Threads: 2, Rounds: 4, Comparisons: []result.Comparison{cmp("tps", -60), cmp("p95", 150)}},
		{Point: 1, WhatChanged: "rate closed loop→700/s", Threads: 2, Rate: 700, Rounds: 4, Comparisons: []result.Comparison{cmp("tps", -0.2), cmp("p95", 444)}},
	}}
	for pt := range 2 {
		for b := 1; b <= 4; b++ {
			for _, n := range []string{"n", "c"} {
				r.Runs = append(r.Runs, result.Run{Target: n, Point: pt, Block: 4*pt + b, Index: b, Complete: true,
					Summary: result.Summary{Figures: result.Figures{TPS: 700, P95US: 2000}}})
			}
		}
	}
	var closed, open string
	for _, l := range m.sum.segmentTable(r) {
		if strings.Contains(l, "Δ TPS -60.0%") {
			closed = l
		}
		if strings.Contains(l, "Δ TPS -0.2%") {
			open = l
		}
	}
	if closed == "" || open == "" {
		t.Fatalf("no rows for c:\n%s", strings.Join(m.sum.segmentTable(r), "\n"))
	}
	if strings.Index(closed, "Δ TPS") > strings.Index(closed, "Δ p95") || strings.Index(open, "Δ p95") > strings.Index(open, "Δ TPS") {
		t.Fatalf("closed loop: %q\nopen loop: %q", closed, open)
	}
}

// At 100 columns the live key line still shows r, w and ?, and ?'s full
// help names every key once (it listed ? twice and left out p and tab).
func TestLiveHelpShowsTheLoadKeys(t *testing.T) {
	ctl := &fakeControl{LiveControl: engine.NewLiveControl(engine.Point{Workload: quick{}, Threads: 8})}
	m := New(Info{Workload: "quick", Threads: 8, Targets: []result.Target{{Name: "n"}, {Name: "c"}}, Schedule: LiveView{Control: ctl}}, nil, func() {}, nil, false)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	lines := strings.Split(ansi.ReplaceAllString(m.View(), ""), "\n")
	last := lines[len(lines)-1]
	for _, want := range []string{"q ", "? ", "r ", "w "} {
		if !strings.Contains(last, want) {
			t.Errorf("key line at 100 columns lacks %q: %q", want, last)
		}
	}
	seen := map[string]int{}
	for _, group := range liveFullHelp() {
		for _, b := range group {
			seen[b.Help().Key]++
		}
	}
	for _, k := range []string{"?", "p", "tab/]", "r", "w", "space"} {
		if seen[k] == 0 {
			t.Errorf("full help lacks %q", k)
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("full help lists %q %d times", k, n)
		}
	}
}

// A rule's label under the chart leads with its segment's number and says
// what the segment changed to, so a label cut short still names it
// ("┆rate closed l" and "┆wor" named nothing).
func TestRuleLabelLeadsWithTheSegment(t *testing.T) {
	for what, want := range map[string]string{
		"rate closed loop→414/s":                           "3 rate→414/s",
		"threads 1→2":                                      "3 threads→2",
		"workload oltp_read_only→oltp_read_write":          "3 workload→oltp_read_write",
		"iteration 2: tuned.cnf changed (tuned restarted)": "3 iteration 2: tuned.cnf changed (tuned restarted)",
	} {
		if got := ruleLabel(2, what); got != want {
			t.Errorf("%q: %q, want %q", what, got, want)
		}
	}
}
