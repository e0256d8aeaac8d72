package chart

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// DeltaRow is one target's Δ% against the baseline and its 95% CI.
type DeltaRow struct {
	Label            string // e.g. "▲ bridge"
	Delta, Low, High float64
	HasCI            bool
	// Blocks are the Δ% of each complete block (one mark each, on a row of
	// their own under the estimate), Partial those of blocks with a run cut
	// short (hollow marks): an outlier that makes the mean shows.
	Blocks, Partial []float64
}

// Marks of a DeltaChart row.
const (
	MarkEstimate = '●'
	MarkLow      = '├'
	MarkHigh     = '┤'
	MarkZero     = '│'
	MarkBlock    = '•'
	MarkPartial  = '○'
)

// valueWidth holds "-38.2% [-41.0, -35.1]".
const valueWidth = 23

// DeltaChart draws each row's Δ% as ● with its CI as whiskers ├──●──┤ on
// one shared log-ratio axis that holds every interval and zero (│), over
// an axis line labelled at both ends and at zero. The rows are width
// cells wide.
func DeltaChart(rows []DeltaRow, width int) []string {
	labelW := 0
	for _, r := range rows {
		labelW = max(labelW, lipgloss.Width(r.Label))
	}
	labelW = min(labelW, 18)
	plotW := width - labelW - valueWidth - 3
	if plotW < 10 || len(rows) == 0 {
		return nil
	}
	// The axis is the log of the ratio: the CIs are symmetric in it (the
	// estimate is a geometric mean, its interval a t interval on logs),
	// and −50% lies as far from zero as +100%.
	pos := func(pct float64) float64 { return math.Log1p(pct / 100) }
	lo, hi := 0.0, 0.0
	for _, r := range rows {
		lo, hi = math.Min(lo, pos(r.Delta)), math.Max(hi, pos(r.Delta))
		if r.HasCI {
			lo, hi = math.Min(lo, pos(r.Low)), math.Max(hi, pos(r.High))
		}
		for _, b := range append(append([]float64(nil), r.Blocks...), r.Partial...) {
			lo, hi = math.Min(lo, pos(b)), math.Max(hi, pos(b))
		}
	}
	pad := (hi - lo) * 0.08
	if pad == 0 {
		pad = 0.01
	}
	lo, hi = lo-pad, hi+pad
	col := func(v float64) int {
		return int(math.Round((pos(v) - lo) / (hi - lo) * float64(plotW-1)))
	}
	zero := col(0)
	var out []string
	for _, r := range rows {
		cells := []rune(strings.Repeat(" ", plotW))
		cells[zero] = MarkZero
		value := fmt.Sprintf("%+.1f%% (no CI)", r.Delta)
		if r.HasCI {
			value = fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", r.Delta, r.Low, r.High)
			a, b := col(r.Low), col(r.High)
			for c := a; c <= b; c++ {
				cells[c] = '─'
			}
			if cells[zero] == '─' {
				cells[zero] = '┼' // zero stays visible inside the interval
			}
			cells[a], cells[b] = MarkLow, MarkHigh
		}
		cells[col(r.Delta)] = MarkEstimate
		label := Fit(r.Label, labelW)
		out = append(out, fmt.Sprintf("%s%s %-*s %s", label, strings.Repeat(" ", labelW-lipgloss.Width(label)), valueWidth, value, string(cells)))
		if len(r.Blocks)+len(r.Partial) > 0 {
			out = append(out, blockRow(r, labelW, plotW, zero, col))
		}
	}
	axis := []rune(strings.Repeat(" ", plotW))
	put := func(at int, s string) {
		r := []rune(s)
		at = max(0, min(at, plotW-len(r)))
		for i, c := range r {
			axis[at+i] = c
		}
	}
	left, right := fmt.Sprintf("%+.0f%%", math.Expm1(lo)*100), fmt.Sprintf("%+.0f%%", math.Expm1(hi)*100)
	put(0, left)
	put(plotW-len([]rune(right)), right)
	// Zero's label only where it clears both ends.
	if zero-1 > len([]rune(left)) && zero+2 < plotW-len([]rune(right)) {
		put(zero, "0")
	}
	out = append(out, strings.Repeat(" ", labelW+valueWidth+2)+string(axis))
	return out
}

// blockRow is the row of a target's per-block marks: • a complete block,
// ○ one with a run cut short, a digit where several land in one cell.
func blockRow(r DeltaRow, labelW, plotW, zero int, col func(float64) int) string {
	cells := []rune(strings.Repeat(" ", plotW))
	cells[zero] = MarkZero
	count := map[int]int{}
	for _, b := range r.Blocks {
		c := col(b)
		count[c]++
		cells[c] = MarkBlock
		if count[c] > 1 {
			cells[c] = rune('0' + min(count[c], 9))
		}
	}
	for _, b := range r.Partial {
		if c := col(b); cells[c] == ' ' || cells[c] == MarkZero {
			cells[c] = MarkPartial
		}
	}
	value := fmt.Sprintf("%d block(s)", len(r.Blocks))
	if len(r.Partial) > 0 {
		value += fmt.Sprintf(", %d cut ○", len(r.Partial))
	}
	label := "blocks"
	if labelW < len(label) {
		label = "·" // the label column is narrower: the value says what the row is
	}
	return fmt.Sprintf("%*s %-*s %s", labelW, label, valueWidth, value, string(cells))
}

// Fit cuts s to w cells at a word boundary, marking the cut with "…"
// (a single word longer than w is cut inside it). ANSI-free text only.
func Fit(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	if w <= 1 {
		return strings.Repeat("…", max(w, 0))
	}
	r := []rune(s)
	cut := r[:w-1]
	if i := strings.LastIndexAny(string(cut), " ,;·"); i > 0 && r[len(cut)] != ' ' {
		cut = []rune(strings.TrimRight(string(cut)[:i], " ,;·"))
	}
	return strings.TrimRight(string(cut), " ") + "…"
}

// Wrap breaks ANSI-free text into lines of at most w cells at spaces only
// (hyphenated words stay whole; a word longer than w is cut).
func Wrap(s string, w int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		for lipgloss.Width(word) > w {
			if line != "" {
				out, line = append(out, line), ""
			}
			r := []rune(word)
			out, word = append(out, string(r[:w])), string(r[w:])
		}
		switch {
		case line == "":
			line = word
		case lipgloss.Width(line)+1+lipgloss.Width(word) <= w:
			line += " " + word
		default:
			out, line = append(out, line), word
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
