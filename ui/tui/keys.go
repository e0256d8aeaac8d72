package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// action is what a key asks for.
type action int

const (
	actNone action = iota
	actQuit
	actForceQuit
	actPause
	actNextMetric
	actPrevMetric
	actWiderWindow
	actNarrowerWindow
	actToggleSync
	actExport
	actHelp
	actCards
	actFromZero
	actTable
	actUp
	actDown
	actPageUp
	actPageDown
	actTop
	actBottom
	// dbduel live's keys (live.go)
	actMore
	actFewer
	actOneMore
	actOneFewer
	actLoadPause
	actOpenLoop
	actFaster
	actSlower
	actWorkload
	actScenario
)

// keyMap is the one list of keys: help is rendered from it and keyAction
// matches against it, so what help says and what a key does cannot drift.
type keyMap struct {
	Quit, Pause, NextMetric, PrevMetric, Wider, Narrower, Sync, Export, Help key.Binding
	Cards, FromZero, Table, Up, Down, PageUp, PageDown, Top, Bottom          key.Binding
}

var keys = keyMap{
	Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "stop / quit")),
	Pause:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause display")),
	NextMetric: key.NewBinding(key.WithKeys("tab", "]"), key.WithHelp("tab/]", "next metric")),
	PrevMetric: key.NewBinding(key.WithKeys("shift+tab", "["), key.WithHelp("shift+tab/[", "previous metric")),
	Wider:      key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+/=", "wider time window")),
	Narrower:   key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "narrower time window")),
	Sync:       key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "sync Y scale")),
	Export:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export JSON")),
	Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	Cards:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "full cards")),
	FromZero:   key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "Y axis from zero")),
	Table:      key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "table / chart")),
	Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
	Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
	PageUp:     key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup/b", "page up")),
	PageDown:   key.NewBinding(key.WithKeys("pgdown", "f"), key.WithHelp("pgdn/f", "page")),
	Top:        key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "top")),
	Bottom:     key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "bottom")),
}

func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Quit, k.Pause, k.NextMetric, k.Cards, k.Help}
}

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Quit, k.Pause, k.NextMetric, k.PrevMetric, k.Export}, {k.Wider, k.Narrower, k.Sync, k.FromZero, k.Cards, k.Help}}
}

// quitDone is q's help once the plan ended: it quits (keyAction matches
// q through Quit).
var quitDone = key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit"))

// SummaryHelp is the finished screen's keys.
func (k keyMap) SummaryHelp() []key.Binding {
	return []key.Binding{quitDone, k.Export, k.Table, k.Up, k.Down, k.PageDown}
}

// keyAction maps a key to an action; stopping says a stop was already asked
// for, so a second ctrl+c quits at once.
func keyAction(msg tea.KeyMsg, stopping bool) action {
	switch {
	case key.Matches(msg, keys.Quit):
		if stopping && msg.String() == "ctrl+c" {
			return actForceQuit
		}
		return actQuit
	case key.Matches(msg, keys.Pause):
		return actPause
	case key.Matches(msg, keys.NextMetric):
		return actNextMetric
	case key.Matches(msg, keys.PrevMetric):
		return actPrevMetric
	case key.Matches(msg, keys.Wider):
		return actWiderWindow
	case key.Matches(msg, keys.Narrower):
		return actNarrowerWindow
	case key.Matches(msg, keys.Sync):
		return actToggleSync
	case key.Matches(msg, keys.Export):
		return actExport
	case key.Matches(msg, keys.Help):
		return actHelp
	case key.Matches(msg, keys.Cards):
		return actCards
	case key.Matches(msg, keys.FromZero):
		return actFromZero
	case key.Matches(msg, keys.Table):
		return actTable
	case key.Matches(msg, keys.Up):
		return actUp
	case key.Matches(msg, keys.Down):
		return actDown
	case key.Matches(msg, keys.PageUp):
		return actPageUp
	case key.Matches(msg, keys.PageDown):
		return actPageDown
	case key.Matches(msg, keys.Top):
		return actTop
	case key.Matches(msg, keys.Bottom):
		return actBottom
	}
	return actNone
}
