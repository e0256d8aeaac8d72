package stats

import "math"

// A restarted server starts cold (an empty buffer pool, cold caches, a
// JIT or plan cache to fill): its first slices after a restart run slower
// and would bias the segment's Δ% (a −20% cold start fading over two
// rounds turned a true +10% into +1.5%, coverage 0.63). dbduel live
// therefore runs settling rounds after a restart, not counted, until the
// restarted target is steady.
const (
	// SettleTolerance: two consecutive slices of a restarted target whose
	// TPS differ by at most this (as a ratio, ±5%) are steady.
	SettleTolerance = 0.05
	// MaxSettlingRounds ends the settling however steady the target is:
	// the rounds after it count, with a note.
	MaxSettlingRounds = 3
)

// Settled says whether a restarted target whose settling slices gave tps
// (in order, one per settling round so far) is steady: the last two
// within SettleTolerance of each other (so at least two rounds settle:
// two slices are needed), or MaxSettlingRounds spent (capped). A warm-up
// gaining less than about SettleTolerance a round passes as steady.
func Settled(tps []float64) (steady, capped bool) {
	n := len(tps)
	if n >= 2 && tps[n-1] > 0 && tps[n-2] > 0 && math.Abs(math.Log(tps[n-1]/tps[n-2])) <= math.Log1p(SettleTolerance) {
		return true, false
	}
	if n >= MaxSettlingRounds {
		return true, true
	}
	return false, false
}
