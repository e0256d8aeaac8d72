// Package theme holds the colours and glyphs of each series (target) index,
// shared by the terminal UI and the reports, so a target looks the same
// everywhere. Glyphs keep series apart when colour is off (NO_COLOR).
package theme

import (
	"os"

	"github.com/guptarohit/asciigraph"
)

// Series is one target's look.
type Series struct {
	ANSI  asciigraph.AnsiColor // chart line colour
	Color string               // lipgloss colour (ANSI 256 index)
	Glyph string               // marker used in legends and without colour
}

var palette = []Series{
	{asciigraph.DodgerBlue, "33", "●"},
	{asciigraph.Orange, "208", "▲"},
	{asciigraph.LimeGreen, "40", "■"},
	{asciigraph.HotPink, "205", "◆"},
	{asciigraph.Gold, "220", "★"},
	{asciigraph.Cyan, "51", "✚"},
}

// For returns the look of series i.
func For(i int) Series { return palette[i%len(palette)] }

// ColorEnabled is false when NO_COLOR is set (https://no-color.org).
func ColorEnabled() bool { return os.Getenv("NO_COLOR") == "" }
