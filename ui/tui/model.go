// Package tui is the live terminal UI: a card per target, charts of TPS,
// QPS and p95 per interval, a comparison line against the baseline, and the
// run table at the end. It reads the engine's event stream through a
// listening command; render functions are pure (model in, string out).
package tui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
)

// Info is what the header shows about the run.
type Info struct {
	Workload  string
	Tables    int
	TableSize int
	Threads   int
	Rate      float64
	Runs      int
	RunTime   time.Duration
	Targets   []result.Target // baseline first
	OutPath   string
	TotalRuns int // runs in the whole plan (all points, warm-ups included)
	// Data replaces "T×N rows" in the header for workloads without tables
	// (cpu, memory, fileio), whose cards show events/s and MiB/s.
	Data string
	// Rows is what the workload's tables hold, for the header and the
	// prepare card: "rows" (the default), or MongoDB's "documents".
	Rows string
	// TPCC: cards and charts show the client-counted tpmC and TPM per
	// interval, and each finished run's server-counted NOPM and TPM.
	TPCC bool
	// Explain: the run is dbduel explain's ladder, its targets the rungs;
	// a waterfall fills rung by rung in place of the comparison lines.
	Explain bool
}

// Metrics the large chart can show.
var metricNames = []string{"TPS", "QPS", "p95 ms"}

// card is one target's live state.
type card struct {
	name        string
	kind        string
	image       string
	version     string
	place       string // the system tests' facts, shown instead of a version
	running     bool
	phase       string
	last        result.Interval
	cumEvents   uint64
	cumQueries  uint64
	cumSeconds  float64
	noisy       int // intervals of the current run flagged noisy
	lastRun     *result.Run
	history     [3][]float64 // per metric, one value per interval of the current/last run
	prepRows    uint64
	prepTotal   uint64
	prepStarted time.Time
}

// EventMsg carries one engine event into the model.
type EventMsg engine.Event

// Model is the Bubble Tea model.
type Model struct {
	info      Info
	cards     []*card
	byName    map[string]*card
	phase     string
	started   time.Time
	now       time.Time
	runsDone  int
	totalRuns int
	eta       time.Duration
	etaAt     time.Time // when eta was measured: it counts down from there
	page      int       // the full card shown in place of the chart (0: none)
	fromZero  bool      // the chart's Y axis starts at zero
	table     bool      // the summary shows the run table instead of the chart
	scroll    int       // the summary's first line shown
	metric    int
	point     int // the sweep point running now (its comparisons are shown)
	threads   int // the running point's threads (0: Info's)
	window    int // intervals shown in charts
	synced    bool
	paused    bool
	frozen    []*card // cards as shown when paused
	stopping  bool
	done      bool
	res       *result.Result // the final result, once the plan ended
	latest    *result.Result // the newest snapshot (after each run)
	err       error
	width     int
	height    int
	help      help.Model
	fullHelp  bool
	color     bool
	message   string
	events    <-chan engine.Event
	cancel    func()
	export    func(*result.Result) (string, error)
}

// New builds the model. events is the engine's stream; cancel stops the
// engine; export writes the result so far and says where.
func New(info Info, events <-chan engine.Event, cancel func(), export func(*result.Result) (string, error), color bool) *Model {
	m := &Model{info: info, byName: map[string]*card{}, events: events, cancel: cancel, export: export,
		window: 60, synced: true, color: color, help: help.New(), width: 120, height: 40, phase: "starting"}
	for _, t := range info.Targets {
		kind := t.Kind
		if t.Described.Image != "" {
			kind = "container"
			if t.Described.NetworkMode != "" {
				kind += " · net=" + t.Described.NetworkMode
			}
			if t.Described.MemoryLimitBytes > 0 {
				kind += fmt.Sprintf(" · mem=%dMiB", t.Described.MemoryLimitBytes>>20)
			}
		}
		c := &card{name: t.Name, kind: kind, image: t.Described.Image, version: t.ServerVersion}
		if sys := t.Described.System; sys != nil {
			c.place = fmt.Sprintf("cpus %s · quota %s · %s", sys["cpus_allowed"], sys["cpu_quota"], sys["fs_type"])
		}
		m.cards = append(m.cards, c)
		m.byName[t.Name] = c
	}
	return m
}

// scrollBy moves the summary by n lines, never past either end.
func (m *Model) scrollBy(n int) {
	lines := len(m.summaryBody())
	m.scroll = m.clampScroll(lines) + n
	m.scroll = m.clampScroll(lines)
}

// exportPath is where e writes: -o's file, else a new timestamped one.
func (m *Model) exportPath() string {
	if m.info.OutPath != "" {
		return m.info.OutPath
	}
	return "dbduel-<date>-<time>.json in this directory"
}

// SetClock fixes the clock for tests (render functions never read it).
func (m *Model) SetClock(start, now time.Time) { m.started, m.now = start, now }

// Result is the final result once the engine is done.
func (m *Model) Result() *result.Result { return m.res }

// Interrupted says the user stopped the run before the plan finished.
func (m *Model) Interrupted() bool { return m.stopping }

type tickMsg time.Time

func listen(ch <-chan engine.Event) tea.Cmd {
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return nil
		}
		return EventMsg(e)
	}
}

// tick refreshes the clock once a second: the screen shows whole seconds,
// and every message costs a View (the TUI must not take CPU from the load).
func tick() tea.Cmd {
	return tea.Every(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *Model) Init() tea.Cmd {
	if m.started.IsZero() {
		m.started = time.Now()
		m.now = m.started
	}
	if m.events == nil {
		return tick()
	}
	return tea.Batch(listen(m.events), tick())
}

// Update handles events, keys and resizes.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case EventMsg:
		m.apply(engine.Event(msg))
		return m, listen(m.events)
	case tickMsg:
		m.now = time.Time(msg)
		return m, tick()
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		return m, nil
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *Model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch keyAction(k, m.stopping) {
	case actForceQuit:
		return m, tea.Quit
	case actQuit:
		if m.done {
			return m, tea.Quit
		}
		if !m.stopping {
			m.stopping = true
			m.phase = "stopping"
			if m.cancel != nil {
				m.cancel()
			}
		}
	case actPause:
		m.paused = !m.paused
		if m.paused {
			m.frozen = snapshot(m.cards)
		}
	case actCards:
		m.page = (m.page + 1) % (len(m.cards) + 1)
	case actFromZero:
		m.fromZero = !m.fromZero
	case actTable:
		m.table, m.scroll = !m.table, 0
	case actUp:
		m.scrollBy(-1)
	case actDown:
		m.scrollBy(1)
	case actNextMetric:
		m.metric = (m.metric + 1) % len(metricNames)
	case actPrevMetric:
		m.metric = (m.metric + len(metricNames) - 1) % len(metricNames)
	case actWiderWindow:
		m.window = min(m.window*2, 3600)
	case actNarrowerWindow:
		m.window = max(m.window/2, 10)
	case actToggleSync:
		m.synced = !m.synced
	case actHelp:
		m.fullHelp = !m.fullHelp
	case actExport:
		if m.export != nil {
			r := m.res
			if r == nil {
				r = m.latest // an immutable snapshot: safe while the engine runs on
			}
			if r == nil {
				m.message = "nothing to export yet: once the first run ends, e writes the result so far as JSON to " + m.exportPath()
				break
			}
			path, err := m.export(r)
			if err != nil {
				m.message = "export failed: " + err.Error()
			} else {
				m.message = "exported to " + path
			}
		}
	}
	return m, nil
}

func snapshot(cs []*card) []*card {
	out := make([]*card, len(cs))
	for i, c := range cs {
		cp := *c
		for j := range cp.history {
			cp.history[j] = append([]float64(nil), c.history[j]...)
		}
		out[i] = &cp
	}
	return out
}

// apply folds an engine event into the cards (ingestion continues while paused).
func (m *Model) apply(e engine.Event) {
	c := m.byName[e.Target]
	if c == nil && e.Target != "" {
		c = &card{name: e.Target}
		m.cards = append(m.cards, c)
		m.byName[e.Target] = c
	}
	switch e.Kind {
	case engine.EventPhase:
		if e.Total > 0 {
			m.runsDone, m.totalRuns, m.eta, m.etaAt = e.Done, e.Total, e.ETA, m.now
		}
		for _, o := range m.cards {
			o.running = false
			if e.Index > 0 && o.phase == "preparing" {
				o.phase = "ready"
			}
		}
		c.phase = e.Phase
		if e.Index > 0 {
			m.point, m.threads = e.Point, e.Threads
			c.running = true
			c.cumEvents, c.cumQueries, c.cumSeconds, c.noisy = 0, 0, 0, 0
			c.history = [3][]float64{}
			m.phase = fmt.Sprintf("%s: %s (block %d)", e.Target, e.Phase, e.Block)
		} else {
			m.phase = e.Target + ": " + e.Phase
			if e.Phase == "preparing" {
				c.prepStarted = m.now
			}
		}
	case engine.EventProgress:
		c.prepRows, c.prepTotal = e.Progress.Rows, e.Progress.TotalRows
	case engine.EventInterval:
		iv := e.Interval
		c.last = iv
		if !iv.Warmup {
			c.cumEvents += iv.Events
			c.cumQueries += iv.Reads + iv.Writes + iv.Other
			c.cumSeconds += iv.SpanS
		}
		if f, _ := iv.Noise["flagged"].(bool); f && !iv.Warmup {
			c.noisy++
		}
		if m.info.TPCC {
			c.history[0] = append(c.history[0], iv.TPMC)
			c.history[1] = append(c.history[1], iv.TPM)
		} else {
			c.history[0] = append(c.history[0], iv.TPS)
			c.history[1] = append(c.history[1], iv.QPS)
		}
		c.history[2] = append(c.history[2], iv.P95US/1000)
	case engine.EventRunDone:
		c.running = false
		c.phase = "run done"
		r := *e.Run
		c.lastRun = &r
		if e.Snapshot != nil {
			m.latest = e.Snapshot
		}
		if e.Total > 0 {
			m.runsDone, m.totalRuns = e.Done, e.Total
		} else {
			m.runsDone++
		}
	case engine.EventNotice:
		m.message = e.Message
		if e.Target != "" {
			m.message = e.Target + ": " + e.Message
		}
	case engine.EventFinished:
		m.done = true
		m.res, m.err = e.Result, e.Err
		m.latest = e.Result
		m.phase = "done"
		if e.Result != nil && !e.Result.Complete {
			m.phase = "stopped"
		}
	}
}
