package stats

import (
	"fmt"
	"maps"
	"slices"

	"github.com/dbduel/dbduel/engine/result"
)

// orderEffect is, for dbduel live, how much a comparison's per-round
// ratio moves with the order of the two targets in the round: the rounds
// in which the target ran before the baseline against those in which it
// ran after (ratio of geometric means, Welch t on the logs). With no
// carry-over from one slice to the next it is 1. A carry-over onto one
// side (the baseline's slices slower after the target's) moves the ratio
// in the rounds where that happens. With two targets, balanced rounds
// (Williams rows) make them half of the rounds, and a one-way carry-over
// biases the estimate by half the order effect (a shuffle: three
// quarters); with more targets, or carry-overs of opposite signs, the
// order effect is a warning, not a measure of the bias.
func orderEffect(r *result.Result, target, baseline string, point int) (Paired, bool) {
	if r.Live == nil {
		return Paired{}, false
	}
	type slot struct {
		t, b       float64
		tAt, bAt   int
		hasT, hasB bool
	}
	rounds := map[int]*slot{}
	done := r.CompleteBlocks(point)
	for i, run := range r.Runs {
		if run.Point != point || !run.Complete || run.Warmup || !done[run.Block] {
			continue
		}
		s := rounds[run.Block]
		if s == nil {
			s = &slot{}
			rounds[run.Block] = s
		}
		switch run.Target {
		case target:
			s.t, s.tAt, s.hasT = run.Summary.TPS, i, true
		case baseline:
			s.b, s.bAt, s.hasB = run.Summary.TPS, i, true
		}
	}
	var first, second []float64 // target/baseline ratios
	for _, b := range slices.Sorted(maps.Keys(rounds)) {
		s := rounds[b]
		if !s.hasT || !s.hasB || s.t <= 0 || s.b <= 0 {
			continue
		}
		if s.tAt < s.bAt {
			first = append(first, s.t/s.b)
		} else {
			second = append(second, s.t/s.b)
		}
	}
	if len(first) < 2 || len(second) < 2 {
		return Paired{}, false
	}
	p := compareUnpaired(first, second)
	return p, p.HasCI
}

// noteCarryOver records each live primary comparison's order effect and,
// when its interval excludes 0, says so in the verdict.
func noteCarryOver(r *result.Result) {
	for i, c := range r.Comparisons {
		if !c.Primary || IsCalibration(c.Target) {
			continue
		}
		p, ok := orderEffect(r, c.Target, c.Baseline, c.Point)
		if !ok {
			continue
		}
		co := &result.CarryOver{DeltaPct: (p.Ratio - 1) * 100, CILowPct: (p.Low - 1) * 100, CIHighPct: (p.High - 1) * 100}
		r.Comparisons[i].CarryOver = co
		if co.CILowPct > 0 || co.CIHighPct < 0 {
			r.Comparisons[i].Verdict += fmt.Sprintf("; order effect: the ratio is %+.1f%% [%+.1f%%, %+.1f%%] when %s runs before %s in a round: one slice carries over into the next, and the estimate is biased by it (longer slices or --settle)",
				co.DeltaPct, co.CILowPct, co.CIHighPct, c.Target, c.Baseline)
		}
	}
}
