package stats

import (
	"maps"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/result"
)

// Latency is a target's latency percentiles over all its complete runs at
// a point, from their merged HDR histograms (not a mean of per-run
// percentiles), in µs.
type Latency struct {
	P50, P95, P99, Max float64
	Events             int64
}

// MergedLatency merges the histograms of target's runs in the blocks every
// target completed at point (ok false when no run carries one: results
// written before runs kept their histogram).
func MergedLatency(r *result.Result, target string, point int) (Latency, bool) {
	merged := NewHistogram()
	n := 0
	for _, run := range r.InCompleteBlocks(target, point) {
		if run.Histogram == "" {
			continue
		}
		h, err := hdrhistogram.Decode([]byte(run.Histogram))
		if err != nil {
			continue
		}
		merged.Merge(h)
		n++
	}
	if n == 0 || merged.TotalCount() == 0 {
		return Latency{}, false
	}
	return Latency{P50: float64(merged.ValueAtQuantile(50)), P95: float64(merged.ValueAtQuantile(95)),
		P99: float64(merged.ValueAtQuantile(99)), Max: float64(merged.Max()), Events: merged.TotalCount()}, true
}

// BlockDeltas are target's Δ% against the baseline on metric ("tps" or
// "nopm") block by block at a point: complete are the blocks every target
// completed (the ones its estimate reads), partial the others in which
// both ran, a run cut short among them.
func BlockDeltas(r *result.Result, target, baseline, metric string, point int) (complete, partial []float64) {
	complete, partial = blockRatios(r, target, baseline, metric, point)
	for _, s := range [][]float64{complete, partial} {
		for i := range s {
			s[i] = (s[i] - 1) * 100
		}
	}
	return complete, partial
}

// blockRatios are BlockDeltas as ratios target/baseline.
func blockRatios(r *result.Result, target, baseline, metric string, point int) (complete, partial []float64) {
	get := func(s result.Summary) float64 {
		if metric == "nopm" {
			return s.NOPM
		}
		return s.TPS
	}
	byBlock := result.PerBlock(r.Measured(result.AnyTarget, point), get)
	done := r.CompleteBlocks(point)
	for _, b := range slices.Sorted(maps.Keys(byBlock[target])) {
		t, bv := byBlock[target][b], byBlock[baseline][b]
		if t <= 0 || bv <= 0 {
			continue
		}
		if done[b] {
			complete = append(complete, t/bv)
		} else {
			partial = append(partial, t/bv)
		}
	}
	return complete, partial
}
