package stats

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// A ratio that slides by 2% a block is a drift: the primary verdict says
// so and is suspect for it; steady blocks are not.
func TestDriftMarksTheVerdictSuspect(t *testing.T) {
	slide := []float64{1.00, 0.98, 0.965, 0.94, 0.925, 0.90}
	r := fixedPlan(1, map[string][][]float64{"c": {slide}}, []string{"n", "c"})
	Analyze(r)
	c := r.Comparison("c", "tps", 0)
	if !c.Suspect || !slices.Contains(c.SuspectReasons, "drift") || c.Drift == nil || !c.Drift.Fired ||
		c.Drift.SlopePctPerBlock > -1.5 || c.Drift.CI[1] >= 0 || !strings.Contains(c.Verdict, "suspect: the blocks drift") {
		t.Fatalf("a sliding ratio: %q %+v", c.Verdict, c.Drift)
	}
	steady := []float64{0.95, 0.96, 0.94, 0.955, 0.945, 0.95}
	r = fixedPlan(1, map[string][][]float64{"c": {steady}}, []string{"n", "c"})
	Analyze(r)
	if c := r.Comparison("c", "tps", 0); c.Suspect || c.Drift == nil || c.Drift.Fired {
		t.Fatalf("steady blocks: %q %+v", c.Verdict, c.Drift)
	}
	// Fewer than 5 blocks: no check.
	r = fixedPlan(1, map[string][][]float64{"c": {slide[:4]}}, []string{"n", "c"})
	Analyze(r)
	if c := r.Comparison("c", "tps", 0); c.Drift != nil {
		t.Fatalf("4 blocks checked: %+v", c.Drift)
	}
}

// Blocks alike in pairs (autocorrelated) get a wider interval from 8
// blocks: the AR(1)-corrected variance, named in the interval's rule.
func TestAutocorrelatedBlocksWidenTheInterval(t *testing.T) {
	logs := []float64{0.02, 0.025, -0.01, -0.015, 0.03, 0.028, -0.02, -0.018, 0.01, 0.012}
	p := CompareLogs(logs)
	sd := 0.0
	m := 0.0
	for _, x := range logs {
		m += x / float64(len(logs))
	}
	for _, x := range logs {
		sd += (x - m) * (x - m)
	}
	plain := math.Sqrt(sd/float64(len(logs)-1)) / math.Sqrt(float64(len(logs)))
	if p.Rule != "paired-t-ar1" || p.SE <= plain*1.2 || !strings.Contains(p.Method, "AR(1)") {
		t.Fatalf("autocorrelated blocks: rule %q se %.5f plain %.5f", p.Rule, p.SE, plain)
	}
	if q := CompareLogs(logs[:7]); q.Rule != "paired-t" {
		t.Fatalf("7 blocks: rule %q", q.Rule)
	}
}
