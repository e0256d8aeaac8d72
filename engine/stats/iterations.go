package stats

import (
	"fmt"

	"github.com/dbduel/dbduel/engine/result"
)

// iterationDeltas fills each dbduel live iteration's Δ TPS against
// iteration 1 for every target it restarted (the baseline aside). The two
// iterations ran in different rounds, so they are not paired with each
// other: each block's target/baseline ratio takes out what the machine did
// in that round, and the two iterations' ratios are compared unpaired
// (ratio of geometric means, Welch t on the logs). Iteration 1's side is
// its latest segment with the same threads, rate and workload.
func iterationDeltas(r *result.Result) {
	names := r.TargetNames()
	if len(names) < 2 {
		return
	}
	base := names[0]
	for i := range r.Segments {
		seg := &r.Segments[i]
		seg.VsIteration1 = nil
		if seg.Iteration < 2 {
			continue
		}
		first := -1
		for j, s := range r.Segments[:i] {
			if s.Iteration == 1 && s.Threads == seg.Threads && s.Rate == seg.Rate && s.Workload == seg.Workload {
				first = j
			}
		}
		if first < 0 {
			continue
		}
		from := r.Segments[first]
		for _, target := range names[1:] {
			if _, restarted := seg.ReadBack[target]; !restarted && !restartedSince(r.Segments[first+1:i+1], target) {
				continue
			}
			now, _ := blockRatios(r, target, base, "tps", seg.Point)
			then, _ := blockRatios(r, target, base, "tps", from.Point)
			if len(now) == 0 || len(then) == 0 {
				continue // it sat out (a failed restart): no row, not −100%
			}
			p := compareUnpaired(now, then)
			c := result.Comparison{Target: target, Baseline: fmt.Sprintf("%s in segment %d (iteration 1)", target, first+1), Metric: "tps",
				Point: seg.Point, Ratio: p.Ratio, DeltaPct: (p.Ratio - 1) * 100, HasCI: p.HasCI, N: len(now), NBaseline: len(then),
				Method: p.Method + ", each block's ratio to " + base, Interim: true}
			if p.HasCI {
				c.CILowPct, c.CIHighPct = (p.Low-1)*100, (p.High-1)*100
				c.Interval = &result.IntervalRule{Rule: p.Rule, DF: p.DF}
				c.SELog, c.PValue = p.SE, p.PValue()
			}
			seg.VsIteration1 = append(seg.VsIteration1, c)
		}
	}
}

// restartedSince says target was restarted in one of segs.
func restartedSince(segs []result.Segment, target string) bool {
	for _, s := range segs {
		if _, ok := s.ReadBack[target]; ok {
			return true
		}
	}
	return false
}
