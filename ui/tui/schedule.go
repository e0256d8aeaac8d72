package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
)

// Schedule is how the screens follow the session's schedule: PlanView
// (a plan's runs, each starting its target's figures anew), LadderView
// (explain's rungs, a waterfall in place of the comparison lines) or
// LiveView (dbduel live's rounds: each slice goes on where its target's
// last ended, segment by segment, steered by the keys). The screens ask it
// what to show instead of testing what kind of session runs.
type Schedule interface {
	// header is the running screen's two header lines.
	header(m *running) []string
	// below is what stands under the cards while the session runs.
	below(m *running, cards []*card) []string
	// runStarts folds the phase event of a target's new run into its card.
	runStarts(m *running, e engine.Event, c *card)
	// stretch names what a card's "so far" figures cover.
	stretch() string
	// ended is the finished screen's title once the session ended whole.
	ended(r *result.Result) string
	// key handles the schedule's own keys while the session runs.
	key(m *Model, k tea.KeyMsg) (used bool, cmd tea.Cmd)
	// help is the running screen's key help (full: every key).
	help(full bool) [][]key.Binding
	// selectable says the cards can be selected (the SPEC editor).
	selectable() bool
}

// PlanView follows dbduel run's plan: blocks of runs, a target's card
// starting anew with each of its runs.
type PlanView struct{}

func (PlanView) header(m *running) []string { return m.planHeader() }

func (PlanView) below(m *running, cards []*card) []string { return m.comparisonLines(cards) }

func (PlanView) runStarts(m *running, e engine.Event, c *card) {
	c.cumEvents, c.cumQueries, c.cumSeconds, c.noisy = 0, 0, 0, 0
	c.history = [3][]float64{}
	m.phase = fmt.Sprintf("%s: %s (block %d)", e.Target, e.Phase, e.Block)
}

func (PlanView) stretch() string { return "run" }

func (PlanView) ended(*result.Result) string { return "finished" }

func (PlanView) key(*Model, tea.KeyMsg) (bool, tea.Cmd) { return false, nil }

func (PlanView) help(full bool) [][]key.Binding {
	if full {
		return keys.FullHelp()
	}
	return [][]key.Binding{keys.ShortHelp()}
}

func (PlanView) selectable() bool { return false }

// LadderView follows dbduel explain's plan: its targets are the rungs,
// and a waterfall fills rung by rung in place of the comparison lines.
type LadderView struct{ PlanView }

func (LadderView) below(m *running, _ []*card) []string { return m.waterfallLines(false) }

// LiveView follows dbduel live's rounds: a slice goes on where its
// target's last one ended, a segment starts the figures anew, and the
// keys steer the load through Control. A replayed session has no Control:
// its header is the plan's, and no key steers it.
type LiveView struct{ Control LiveControl }

func (v LiveView) header(m *running) []string {
	if v.Control == nil {
		return m.planHeader()
	}
	return m.liveHeader(v.Control.Settings())
}

func (LiveView) below(m *running, cards []*card) []string { return m.comparisonLines(cards) }

func (LiveView) runStarts(m *running, e engine.Event, _ *card) {
	m.round = e.Block
	m.phase = fmt.Sprintf("%s: slice of round %d", e.Target, e.Block)
}

func (LiveView) stretch() string { return "segment" }

func (LiveView) ended(r *result.Result) string {
	return fmt.Sprintf("session ended after %d round(s), %d segment(s)", len(r.Plan.Blocks), len(r.Segments))
}

func (v LiveView) key(m *Model, k tea.KeyMsg) (bool, tea.Cmd) {
	if v.Control == nil {
		return false, nil
	}
	if used, cmd := m.run.editorKey(k, v.Control); used {
		return true, cmd
	}
	switch a := liveAction(k); a {
	case actNone:
		return false, nil
	case actScenario:
		return true, m.scenarioCmd(v.Control)
	default:
		m.run.liveKey(a, v.Control)
		return true, nil
	}
}

func (v LiveView) help(full bool) [][]key.Binding {
	if v.Control == nil {
		return PlanView{}.help(full)
	}
	if full {
		return liveFullHelp()
	}
	return [][]key.Binding{liveHelp()}
}

func (v LiveView) selectable() bool { return v.Control != nil }
