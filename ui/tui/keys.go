package tui

import "github.com/charmbracelet/bubbles/key"

// action is what a key asks for; keyAction maps keys to actions (pure).
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
)

type keyMap struct {
	Quit, Pause, Metric, Window, Sync, Export, Help key.Binding
}

var keys = keyMap{
	Quit:   key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "stop / quit")),
	Pause:  key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause display")),
	Metric: key.NewBinding(key.WithKeys("tab", "[", "]"), key.WithHelp("tab/[/]", "metric")),
	Window: key.NewBinding(key.WithKeys("+", "-"), key.WithHelp("+/-", "time window")),
	Sync:   key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "sync Y scale")),
	Export: key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export JSON")),
	Help:   key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
}

func (k keyMap) ShortHelp() []key.Binding { return []key.Binding{k.Quit, k.Pause, k.Metric, k.Help} }
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Quit, k.Pause, k.Metric}, {k.Window, k.Sync, k.Export, k.Help}}
}

// keyAction maps a key to an action; stopping says a stop was already asked
// for, so a second ctrl+c quits at once.
func keyAction(k string, stopping bool) action {
	switch k {
	case "ctrl+c":
		if stopping {
			return actForceQuit
		}
		return actQuit
	case "q":
		return actQuit
	case "p":
		return actPause
	case "tab", "]":
		return actNextMetric
	case "[", "shift+tab":
		return actPrevMetric
	case "+", "=":
		return actWiderWindow
	case "-":
		return actNarrowerWindow
	case "y":
		return actToggleSync
	case "e":
		return actExport
	case "?":
		return actHelp
	}
	return actNone
}
