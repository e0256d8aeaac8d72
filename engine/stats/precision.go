package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultPrecisionPct is the half-width a TPS verdict is held to when the
// user named none (--ci-target, a --fail-if or --margin threshold).
const DefaultPrecisionPct = 5

// tQuantileAt is Student's t quantile q with df degrees of freedom.
func tQuantileAt(df int, q float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(q)
}

// HalfWidthPct is a ratio CI's half-width as dbduel states it: the
// interval is the estimate ×/÷ (1 + h/100), h = (√(high/low) − 1)·100. It
// is symmetric on the log-ratio axis every Δ% is estimated on.
func HalfWidthPct(low, high float64) float64 {
	if low <= 0 || high <= 0 {
		return math.Inf(1)
	}
	return (math.Sqrt(high/low) - 1) * 100
}

// BlocksFor is how many blocks a paired comparison with per-block
// log-ratio spread sd needs for a 95% half-width of ±pct%: the smallest n
// with t(n−1)·sd/√n ≤ ln(1 + pct/100). It is a planning figure from the
// spread seen so far, not a promise (the spread itself is estimated).
func BlocksFor(sd, pct float64) int {
	if sd <= 0 || pct <= 0 {
		return 2
	}
	goal := math.Log1p(pct / 100)
	// The z-based size is a lower bound; t only adds to it.
	n := max(2, int(math.Floor(math.Pow(1.959964*sd/goal, 2))))
	for ; n < 1_000_000; n++ {
		if TQuantile(n-1)*sd/math.Sqrt(float64(n)) <= goal {
			return n
		}
	}
	return n
}

// PrecisionLine is "±h% now; about N blocks for ±X%" when the comparison's
// half-width exceeds X ("" when it is narrow enough or has no spread).
func PrecisionLine(p Paired, targetPct float64) string {
	if !p.HasCI || p.SD <= 0 || targetPct <= 0 {
		return ""
	}
	h := HalfWidthPct(p.Low, p.High)
	if h <= targetPct {
		return ""
	}
	return fmt.Sprintf("±%.1f%% now; about %d blocks for ±%g%%", h, BlocksFor(p.SD, targetPct), targetPct)
}

// Equivalence is the --margin reading of a paired comparison: two
// one-sided tests at α 0.05, i.e. the 90% interval against ±margin%
// (bounds 1−m and 1+m on the ratio).
func Equivalence(p Paired, marginPct float64) string {
	if p.N < 2 || marginPct <= 0 {
		return ""
	}
	if p.SD <= 0 {
		return fmt.Sprintf("not tested at ±%g%%: no spread to test with", marginPct)
	}
	m := math.Log(p.Ratio)
	half := tQuantileAt(p.N-1, 0.95) * p.SD / math.Sqrt(float64(p.N))
	lo, hi := math.Exp(m-half), math.Exp(m+half)
	down, up := 1-marginPct/100, 1+marginPct/100
	switch {
	case lo > down && hi < up:
		return fmt.Sprintf("equivalent within ±%g%% (90%% CI [%+.1f%%, %+.1f%%])", marginPct, (lo-1)*100, (hi-1)*100)
	case lo > up || hi < down:
		return fmt.Sprintf("different by more than %g%% (90%% CI [%+.1f%%, %+.1f%%])", marginPct, (lo-1)*100, (hi-1)*100)
	}
	return fmt.Sprintf("inconclusive at ±%g%% (90%% CI [%+.1f%%, %+.1f%%])", marginPct, (lo-1)*100, (hi-1)*100)
}
