package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/textinput"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/ui/text"
)

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

// running is the screen while the plan runs: a card per target, the
// comparison lines and the chart. It folds the engine's events into the
// cards; the finished screen reads them too.
type running struct {
	*common
	cards     []*card
	byName    map[string]*card
	runsDone  int
	totalRuns int
	eta       time.Duration
	etaAt     time.Time // when eta was measured: it counts down from there
	page      int       // the full card shown in place of the chart (0: none)
	fromZero  bool      // the chart's Y axis starts at zero
	metric    int
	point     int     // the sweep point running now (its comparisons are shown)
	threads   int     // the running point's threads (0: Info's)
	rate      float64 // the running point's open-loop rate (0: closed loop)
	window    int     // intervals shown in charts
	synced    bool
	paused    bool
	frozen    []*card // cards as shown when paused
	// dbduel live: the round under way, what started the segment, and
	// where each segment began in the cards' histories (for the rules).
	round      int
	segWhat    string
	marks      []int
	markLabels []string
	rateBase   rateBase // what r opened the loop at
	// The SPEC editor: the selected card (-1: none), the open editor, and
	// the SPECs applied.
	selected int
	editor   *textinput.Model
	specs    map[string]string
}

func newRunning(c *common) *running {
	r := &running{common: c, byName: map[string]*card{}, window: 60, synced: true, selected: -1, specs: map[string]string{}}
	for _, t := range c.info.Targets {
		cd := &card{name: t.Name}
		cd.describe(t)
		r.cards = append(r.cards, cd)
		r.byName[t.Name] = cd
	}
	return r
}

// describe sets what a card says of its target, as read back.
func (cd *card) describe(t result.Target) {
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
	cd.kind, cd.image, cd.version = kind, t.Described.Image, t.ServerVersion
	if sys := t.Described.System; sys != nil {
		cd.place = fmt.Sprintf("cpus %s · quota %s · %s", sys["cpus_allowed"], sys["cpu_quota"], sys["fs_type"])
	}
}

// key handles the running screen's keys; it says whether it used k.
func (m *running) key(a action) bool {
	switch a {
	case actPause:
		m.paused = !m.paused
		if m.paused {
			m.frozen = snapshot(m.cards)
		}
	case actCards:
		m.page = (m.page + 1) % (len(m.cards) + 1)
	case actFromZero:
		m.fromZero = !m.fromZero
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
	default:
		return false
	}
	return true
}

// chartValues are an interval's values of the chart's metrics, in
// metricName's order: TPC-C's tpmC and TPM, the system workloads' events/s
// and MiB/s, or TPS and QPS; then p95 in ms.
func (m *running) chartValues(iv result.Interval) [3]float64 {
	switch {
	case m.info.Figures == NewOrders:
		return [3]float64{iv.TPMC, iv.TPM, iv.P95US / 1000}
	case text.IsSystemWorkload(m.info.Workload):
		return [3]float64{iv.TPS, iv.ReadMiBPerS + iv.WrittenMiBPerS, iv.P95US / 1000}
	default:
		return [3]float64{iv.TPS, iv.QPS, iv.P95US / 1000}
	}
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
func (m *running) apply(e engine.Event) {
	c := m.byName[e.Target]
	if c == nil && e.Target != "" {
		c = &card{name: e.Target}
		m.cards = append(m.cards, c)
		m.byName[e.Target] = c
	}
	switch e.Kind {
	case engine.EventPhase:
		m.applyPhase(e, c)
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
		if iv.Noise.Flagged && !iv.Warmup {
			c.noisy++
		}
		for k, v := range m.chartValues(iv) {
			c.history[k] = append(c.history[k], v)
		}
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
	case engine.EventSnapshot:
		m.latest = e.Snapshot
		// A live iteration may have given a target new limits or a new
		// container: the cards say what is read back now.
		for _, t := range e.Snapshot.Targets {
			if cd := m.byName[t.Name]; cd != nil {
				cd.describe(t)
			}
		}
	case engine.EventSegment:
		m.newSegment(e.Point, e.Message)
	case engine.EventNotice:
		m.message = e.Message
		if e.Target != "" {
			m.message = e.Target + ": " + e.Message
			if e.Err != nil && c != nil {
				c.phase = "out: restart failed" // the message line says why
			}
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

// newSegment starts a live segment: its figures so far start again, and
// the chart gets a rule where it began (none for the first).
func (m *running) newSegment(point int, what string) {
	m.segWhat = fmt.Sprintf("segment %d: %s", point+1, what)
	for _, c := range m.cards {
		c.cumEvents, c.cumQueries, c.cumSeconds, c.noisy = 0, 0, 0, 0
	}
	if len(m.cards) == 0 || len(m.cards[0].history[0]) == 0 {
		return
	}
	m.marks = append(m.marks, len(m.cards[0].history[0]))
	m.markLabels = append(m.markLabels, ruleLabel(point, what))
}

// ruleLabel is a segment's label under the chart: its number first (the
// label may be cut to it where rules are close; the segment table has it
// in full), then what it changed to: "3 rate→414/s" for "rate closed
// loop→414/s", "6 workload→oltp_read_write".
func ruleLabel(point int, what string) string {
	if kind, change, ok := strings.Cut(what, " "); ok {
		if _, to, ok := strings.Cut(change, "→"); ok && !strings.Contains(to, "→") {
			what = kind + "→" + to
		}
	}
	return fmt.Sprintf("%d %s", point+1, what)
}

// applyPhase folds a phase event: a run (or a live slice) starts, or a
// target prepares.
func (m *running) applyPhase(e engine.Event, c *card) {
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
		m.point, m.threads, m.rate = e.Point, e.Threads, e.Rate
		c.running = true
		m.info.Schedule.runStarts(m, e, c)
	} else {
		m.phase = e.Target + ": " + e.Phase
		if e.Phase == "preparing" {
			c.prepStarted = m.now
		}
	}
}
