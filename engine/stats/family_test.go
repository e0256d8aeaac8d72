package stats

import (
	"math"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine/result"
)

func TestHolmAdjust(t *testing.T) {
	// Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 → 0.06
	// (never below the step before it).
	got := HolmAdjust([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("HolmAdjust = %v, want %v", got, want)
		}
	}
	if got := HolmAdjust([]float64{0.6, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Fatalf("adjusted p-values are at most 1: %v", got)
	}
}

// fixedPlan is a result of given per-block TPS ratios against a baseline
// of 1000, per target and point (every point has len(ratios[...]) blocks).
func fixedPlan(points int, ratios map[string][][]float64, names []string) *result.Result {
	r := &result.Result{Complete: true}
	for _, n := range names {
		r.Targets = append(r.Targets, result.Target{Name: n})
	}
	for p := range points {
		if points > 1 {
			r.Plan.Points = append(r.Plan.Points, result.Point{Threads: p + 1, TableSize: 1000})
		}
		for _, n := range names {
			var xs []float64
			if n == names[0] {
				xs = make([]float64, len(ratios[names[1]][p]))
				for i := range xs {
					xs[i] = 1
				}
			} else {
				xs = ratios[n][p]
			}
			r.Plan.Runs = len(xs)
			for b, x := range xs {
				tps := 1000 * x
				r.Runs = append(r.Runs, result.Run{Target: n, Point: p, Block: b + 1, Complete: true,
					Summary: result.Summary{Figures: result.Figures{TPS: tps, QPS: tps}, AvgUS: 1e6 / tps}})
			}
		}
	}
	return r
}

// A −3% whose CI just excludes 0 is a word alone, and no word among four
// comparisons: Holm's adjusted p exceeds α, the verdict says so, and the
// family line is printed. A clear −20% keeps its word.
func TestHolmDecidesTheVerdictWords(t *testing.T) {
	marginal := []float64{0.94, 0.99, 0.96, 0.98, 0.98} // mean −3%, p ≈ 0.02
	clear := []float64{0.80, 0.81, 0.79, 0.80, 0.80}
	null := []float64{1.01, 0.99, 1.00, 1.02, 0.98}
	alone := fixedPlan(1, map[string][][]float64{"c": {marginal}}, []string{"n", "c"})
	Analyze(alone)
	c := alone.Comparison("c", "tps", 0)
	if !strings.HasPrefix(c.Verdict, "c is slower by ") || c.Family == nil || c.Family.Size != 1 || !c.Family.Significant {
		t.Fatalf("alone: %+v %+v", c, c.Family)
	}
	if FamilyLine(alone) != "" {
		t.Fatalf("a family of one has no line: %q", FamilyLine(alone))
	}
	four := fixedPlan(2, map[string][][]float64{"c": {marginal, null}, "d": {clear, null}}, []string{"n", "c", "d"})
	Analyze(four)
	c = four.Comparison("c", "tps", 0)
	if c.CIHighPct >= 0 {
		t.Fatalf("the setup needs a CI excluding 0: %+v", c)
	}
	if f := c.Family; f == nil || f.Size != 4 || f.Method != "holm" || f.Significant || f.PAdjusted <= 0.05 ||
		!strings.Contains(c.Verdict, "~ no significant tps (primary) difference") || !strings.Contains(c.Verdict, "over 4 comparisons") {
		t.Fatalf("marginal among four: %q %+v", c.Verdict, c.Family)
	}
	if d := four.Comparison("d", "tps", 0); !strings.HasPrefix(d.Verdict, "d is slower by ") || !d.Family.Significant {
		t.Fatalf("clear −20%% among four: %q", d.Verdict)
	}
	if got := FamilyLine(four); got != "4 comparisons, Holm-adjusted at α 0.05" {
		t.Fatalf("family line %q", got)
	}
	// The secondary metrics and the A/A copy are not in the family.
	for _, x := range four.Comparisons {
		if !x.Primary && x.Family != nil {
			t.Fatalf("a secondary comparison in the family: %+v", x)
		}
	}
}

// --fail-if over a family: a CI past the threshold alone but not after
// Holm is inconclusive (Unsettled), never crossed; alone it is crossed.
func TestFailIfHolm(t *testing.T) {
	th, _ := ParseThreshold("tps<-0.3%")
	marginal := []float64{0.94, 0.99, 0.96, 0.98, 0.98}
	null := []float64{1.01, 0.99, 1.00, 1.02, 0.98}
	alone := fixedPlan(1, map[string][][]float64{"c": {marginal}}, []string{"n", "c"})
	Analyze(alone)
	if j := th.Judge(alone.Comparisons, DefaultAlpha); len(j.Crossed) != 1 || j.Family != 1 {
		t.Fatalf("alone: %+v", j)
	}
	four := fixedPlan(2, map[string][][]float64{"c": {marginal, null}, "d": {null, null}}, []string{"n", "c", "d"})
	Analyze(four)
	j := th.Judge(four.Comparisons, DefaultAlpha)
	if len(j.Crossed) != 0 || len(j.Unsettled) != 1 || j.Unsettled[0].Target != "c" || j.Family != 4 {
		t.Fatalf("among four: crossed %d unsettled %d family %d", len(j.Crossed), len(j.Unsettled), j.Family)
	}
}
