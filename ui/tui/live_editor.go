package tui

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/dbduel/dbduel/ui/chart"
)

// The SPEC editor of dbduel live: ←/→ select a target, enter opens its
// SPEC in a one-line editor, enter again applies it (from the next round,
// as an iteration), esc closes it.
var editorKeys = struct{ Left, Right, Open, Apply, Cancel key.Binding }{
	Left:   key.NewBinding(key.WithKeys("left"), key.WithHelp("←/→", "select target")),
	Right:  key.NewBinding(key.WithKeys("right")),
	Open:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "edit its SPEC")),
	Apply:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply from the next round")),
	Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
}

// editorKey handles a key while the editor is open or for selecting; it
// says whether it used k, and what to do next (applying a SPEC reads its
// files: a command).
func (m *running) editorKey(k tea.KeyMsg, ctl LiveControl) (bool, tea.Cmd) {
	if m.editor != nil {
		var cmd tea.Cmd
		switch {
		case k.String() == "ctrl+c":
			return false, nil // quits, as everywhere
		case key.Matches(k, editorKeys.Cancel):
			m.editor = nil
		case key.Matches(k, editorKeys.Apply):
			cmd = m.applySpec(ctl, m.editor.Value())
		default:
			ed, _ := m.editor.Update(k)
			m.editor = &ed
		}
		return true, cmd
	}
	n := len(m.cards)
	switch {
	case n == 0:
		return false, nil
	case key.Matches(k, editorKeys.Left):
		m.selected = (max(m.selected, 0) + n - 1) % n
	case key.Matches(k, editorKeys.Right):
		m.selected = (m.selected + 1) % n
	case key.Matches(k, editorKeys.Open) && m.selected >= 0:
		ed := textinput.New()
		ed.Prompt = "SPEC of " + m.cards[m.selected].name + ": "
		ed.CharLimit = 500
		ed.Width = max(m.width-len([]rune(ed.Prompt))-2, 10)
		ed.SetValue(m.specOf(m.cards[m.selected].name))
		ed.Focus()
		ed.CursorEnd() // where an added key goes
		m.editor = &ed
	default:
		return false, nil
	}
	return true, nil
}

// specOf is a target's SPEC as last applied (its read-back's at first).
func (m *running) specOf(name string) string {
	if s, ok := m.specs[name]; ok {
		return s
	}
	for _, t := range m.info.Targets {
		if t.Name == name {
			return t.SpecRedacted
		}
	}
	return ""
}

// respecMsg is what a SPEC's apply command found.
type respecMsg struct {
	target, spec string
	err          error
}

// applySpec asks for the edited SPEC in a command (checking it opens the
// files it names).
func (m *running) applySpec(ctl LiveControl, spec string) tea.Cmd {
	name := m.cards[m.selected].name
	return func() tea.Msg { return respecMsg{target: name, spec: spec, err: ctl.Respec(name, spec)} }
}

// respecDone says what became of an applied SPEC; the editor stays open
// when it was refused, with the reason under it.
func (m *running) respecDone(msg respecMsg) {
	if msg.err != nil {
		m.message = msg.target + ": " + msg.err.Error()
		return
	}
	m.specs[msg.target] = msg.spec
	m.message = msg.target + ": the new SPEC applies from the next round (a restart: an iteration)"
	m.editor = nil
}

// editorLines is the open editor, fitted to the width.
func (m *running) editorLines() []string {
	if m.editor == nil {
		return nil
	}
	m.editor.Width = max(m.width-len([]rune(m.editor.Prompt))-2, 10)
	return []string{chart.Fit(m.editor.View(), m.width), chart.Fit("enter applies from the next round (memory=, cpus=, cpuset= in place; other keys: a new container) · esc cancels", m.width)}
}
