// Package tui is the live terminal UI: a card per target, charts of TPS,
// QPS and p95 per interval, a comparison line against the baseline, and the
// finished screen. Model is the root (glow's ui/ui.go): it owns the event
// stream, the clock, resizes and the global keys, and delegates the rest
// to the running screen or the summary, which share a common part. It
// reads the engine's event stream through a listening command; render
// functions are pure (model in, string out); file I/O runs in tea.Cmds.
package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
)

// EventMsg carries one engine event into the model.
type EventMsg engine.Event

// exportedMsg is what an export command did.
type exportedMsg struct {
	path string
	err  error
}

// Model is the Bubble Tea root model.
type Model struct {
	*common
	run    *running // the running screen (its cards live on into the summary)
	sum    *summary // the finished screen
	events <-chan engine.Event
	cancel func()
	export func(*result.Result) (string, error)
}

// New builds the model. events is the engine's stream; cancel stops the
// engine; export writes the result so far and says where.
func New(info Info, events <-chan engine.Event, cancel func(), export func(*result.Result) (string, error), color bool) *Model {
	if info.Schedule == nil {
		info.Schedule = PlanView{}
	}
	c := &common{info: info, color: color, help: help.New(), width: 120, height: 40, phase: "starting"}
	run := newRunning(c)
	return &Model{common: c, run: run, sum: &summary{running: run}, events: events, cancel: cancel, export: export}
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

// Update handles events, the clock, resizes and the global keys, and
// hands other keys to the screen shown.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case EventMsg:
		m.run.apply(engine.Event(msg))
		return m, listen(m.events)
	case tickMsg:
		m.now = time.Time(msg)
		return m, tick()
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		return m, nil
	case respecMsg:
		m.run.respecDone(msg)
		return m, nil
	case exportedMsg:
		if msg.err != nil {
			m.message = "export failed: " + msg.err.Error()
		} else {
			m.message = "exported to " + msg.path
		}
		return m, nil
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *Model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	if !m.done && !m.stopping {
		if used, cmd := m.info.Schedule.key(m, k); used {
			return m, cmd
		}
	}
	a := keyAction(k, m.stopping)
	switch a {
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
	case actHelp:
		m.fullHelp = !m.fullHelp
	case actExport:
		return m, m.exportCmd()
	default:
		if m.done {
			m.sum.key(a)
		} else {
			m.run.key(a)
		}
	}
	return m, nil
}

// scenarioCmd writes the explored segments as a scenario file (x).
func (m *Model) scenarioCmd(ctl LiveControl) tea.Cmd {
	r := m.latest
	if r == nil || len(r.Segments) == 0 {
		m.message = "x: nothing to export until a round has finished"
		return nil
	}
	return func() tea.Msg {
		path, err := ctl.ExportScenario(r)
		if path == "" && err == nil {
			err = errors.New("no scenario file to write (--export-scenario FILE names one)")
		}
		return exportedMsg{path: path, err: err}
	}
}

// exportCmd writes the final result, or the newest snapshot while the
// plan runs (immutable: safe while the engine goes on), in a command.
func (m *Model) exportCmd() tea.Cmd {
	if m.export == nil {
		return nil
	}
	r := m.res
	if r == nil {
		r = m.latest
	}
	if r == nil {
		m.message = "nothing to export yet: once the first run ends, e writes the result so far as JSON to " + m.exportPath()
		return nil
	}
	export := m.export
	return func() tea.Msg {
		path, err := export(r)
		return exportedMsg{path: path, err: err}
	}
}

// Minimum terminal size the layout needs.
const (
	MinWidth  = 80
	MinHeight = 24
)

// View renders the whole screen from the model (pure: no clock, no I/O).
// Every line fits the terminal's width and the screen its height.
func (m *Model) View() string {
	if m.width < MinWidth || m.height < MinHeight {
		// A replay says it is one at every size, this one too: its note
		// first, cut to the width, then why there is nothing else.
		// wrapped, then why there is nothing else, in lines short enough
		// for any terminal.
		small := fmt.Sprintf("terminal too small\nneed %d×%d, have %d×%d\npress q to stop", MinWidth, MinHeight, m.width, m.height)
		if m.info.Note == "" {
			return small
		}
		return lipgloss.NewStyle().Width(max(m.width, 10)).Render(m.info.Note) + "\n" + small
	}
	var lines []string
	if m.done {
		lines = m.sum.view()
	} else {
		lines = m.run.view()
	}
	if len(lines) > m.height {
		lines = lines[:m.height]
	}
	for i, l := range lines {
		if lipgloss.Width(l) > m.width {
			lines[i] = xansi.Truncate(l, m.width, "…") // a safety net: the parts fit their own text
		}
	}
	return strings.Join(lines, "\n")
}
