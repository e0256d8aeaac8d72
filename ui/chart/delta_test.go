package chart

import (
	"strings"
	"testing"
)

// The marks sit where their values are on the shared axis: zero inside
// the CI that holds it and right of the one that does not, the estimate
// between its whiskers at its place along the axis.
func TestDeltaChartPlacesTheMarks(t *testing.T) {
	rows := []DeltaRow{
		{Label: "■ bridge", Delta: -40, Low: -50, High: -28, HasCI: true}, // ratio 0.6 ÷ and × 1.2
		{Label: "▲ host", Delta: 1, Low: -4, High: 6, HasCI: true},
	}
	lines := DeltaChart(rows, 100)
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	col := func(line string, mark rune) int {
		i := strings.IndexRune(line, mark)
		if i < 0 {
			t.Fatalf("no %c in %q", mark, line)
		}
		return len([]rune(line[:i]))
	}
	b, h := lines[0], lines[1]
	if w := len([]rune(b)); w > 100 {
		t.Fatalf("row is %d cells", w)
	}
	// The axis is ln(1+Δ/100) over [ln 0.5, ln 1.06] = [-0.6931, 0.0583]
	// plus 8% of 0.7514 each side: [-0.7532, 0.1184].
	bZero := col(b, MarkZero)
	bLow, bEst, bHigh := col(b, MarkLow), col(b, MarkEstimate), col(b, MarkHigh)
	if !(bLow < bEst && bEst < bHigh && bHigh < bZero) {
		t.Fatalf("bridge marks out of order: ├%d ◆%d ┤%d │%d", bLow, bEst, bHigh, bZero)
	}
	// A CI symmetric in log-ratio: the estimate is midway (±1 cell).
	if d := (bEst - bLow) - (bHigh - bEst); d < -1 || d > 1 {
		t.Fatalf("bridge whiskers uneven: %d %d %d", bLow, bEst, bHigh)
	}
	// The plot starts after the label (8), a space, the value (23) and a
	// space: cell 33, and is 100-8-23-3 = 66 cells wide. -40% is ln 0.6 =
	// -0.5108, (−0.5108+0.7532)/0.8716 = 0.2781 of the way: cell
	// 33+round(0.2781·65) = 51; zero at 33+round(0.8642·65) = 89. On a
	// linear axis they would be at 47 and 88.
	if bEst != 51 || bZero != 89 {
		t.Fatalf("bridge ● at %d, │ at %d; want 51 and 89:\n%s", bEst, bZero, b)
	}
	if col(h, '┼') != bZero {
		t.Fatalf("zero inside host's CI is not marked at %d:\n%s\n%s", bZero, b, h)
	}
	hLow, hHigh := col(h, MarkLow), col(h, MarkHigh)
	if !(hLow < bZero && bZero < hHigh) || strings.ContainsRune(h, MarkZero) && col(h, MarkZero) != bZero {
		t.Fatalf("host's CI [%d, %d] must hold zero at %d:\n%s\n%s", hLow, hHigh, bZero, b, h)
	}
	if !strings.Contains(b, "-40.0% [-50.0, -28.0]") || !strings.Contains(lines[2], "-53%") || !strings.Contains(lines[2], "+13%") {
		t.Fatalf("labels:\n%s", strings.Join(lines, "\n"))
	}
}

func TestFitCutsAtWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"bridge is 38.2% slower than native", 40, "bridge is 38.2% slower than native"},
		{"bridge is 38.2% slower than native", 20, "bridge is 38.2%…"},
		{"supercalifragilistic", 8, "superca…"},
	} {
		if got := Fit(c.in, c.w); got != c.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

// Labels are alike: the same unit and decimals, and two neighbouring rows
// never read the same.
func TestAxisLabelsAreConsistent(t *testing.T) {
	f := AxisLabels(990, 1012, 8)
	seen := map[string]bool{}
	for i := 0; i <= 8; i++ {
		s := f(990 + float64(i)*22/8)
		if seen[s] {
			t.Fatalf("label %q repeats", s)
		}
		seen[s] = true
	}
	if got := f(1000); got != "1000.0" {
		t.Fatalf("990..1012 over 8 rows: %q", got)
	}
	if got := AxisLabels(0, 16800, 10)(0); got != "0.0k" {
		t.Fatalf("0..16.8k: %q (same unit and decimals as 16.8k)", got)
	}
	if got := AxisLabels(0, 2.5, 10)(1.25); got != "1.25" {
		t.Fatalf("0..2.5 over 10 rows: %q", got)
	}
}

func TestWrapKeepsWordsWhole(t *testing.T) {
	got := Wrap("paired t on log-ratios); detecting a 0.1% effect", 20)
	want := []string{"paired t on", "log-ratios);", "detecting a 0.1%", "effect"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%q", got)
	}
	if got := Wrap("abcdefghij", 4); strings.Join(got, "|") != "abcd|efgh|ij" {
		t.Fatalf("long word: %q", got)
	}
}
