package stats

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultPrecisionPct is the half-width a TPS verdict is held to when the
// user named none (--ci-target, a --fail-if or --margin threshold).
const DefaultPrecisionPct = 5

// tQuantileAt is Student's t quantile q with df degrees of freedom.
// Quantiles are kept once computed: a verdict reads a handful of them,
// and the simulations read them for every plan.
func tQuantileAt(df int, q float64) float64 { return tQuantile(float64(df), q) }

// tQuantile is tQuantileAt for any degrees of freedom (Welch's are not whole).
func tQuantile(df, q float64) float64 {
	type key struct{ df, q float64 }
	if v, ok := tQuantiles.Load(key{df, q}); ok {
		return v.(float64)
	}
	v := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(q)
	tQuantiles.Store(key{df, q}, v)
	return v
}

var tQuantiles sync.Map

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
	return fmt.Sprintf("±%.1f%% now; about %d blocks for ±%g%%", h, BlocksFor(EffectiveSD(p), targetPct), targetPct)
}

// EffectiveSD is the per-block spread the interval was made with: the
// log-ratios' sd, or more where the rule widened it (AR(1)-corrected
// variance: SE·√n), so that a planning figure reads the interval shown.
func EffectiveSD(p Paired) float64 {
	if p.Rule == "paired-t-ar1" && p.SE > 0 {
		return max(p.SD, p.SE*math.Sqrt(float64(p.N)))
	}
	return p.SD
}

// Equivalence is the --margin reading of a paired comparison: two
// one-sided tests at α 0.05, i.e. the 90% interval against ±margin%
// (bounds 1−m and 1+m on the ratio), from the comparison's own standard
// error and degrees of freedom (Stein's t(n0−1) under --runs auto, the
// AR(1)-corrected variance from 8 blocks).
func Equivalence(p Paired, marginPct float64) string {
	if p.N < 2 || marginPct <= 0 {
		return ""
	}
	if !p.HasCI || p.SE <= 0 || p.DF <= 0 {
		return fmt.Sprintf("not tested at ±%g%%: no spread to test with", marginPct)
	}
	t := TOST(p.Ratio, p.SE, p.DF, marginPct)
	ci := fmt.Sprintf("(90%% CI [%+.1f%%, %+.1f%%])", (t.Low-1)*100, (t.High-1)*100)
	switch {
	case t.Equivalent:
		return fmt.Sprintf("equivalent within ±%g%% %s", marginPct, ci)
	case t.Different:
		return fmt.Sprintf("different by more than %g%% %s", marginPct, ci)
	}
	return fmt.Sprintf("inconclusive at ±%g%% %s", marginPct, ci)
}

// TOSTResult is an equivalence test's outcome: the 90% interval (ratios)
// and whether it lies within ±margin (equivalent) or wholly outside it.
type TOSTResult struct {
	Low, High             float64
	Equivalent, Different bool
}

// TOST is the two one-sided tests at α 0.05 of a ratio with standard
// error se (log scale) on df degrees of freedom against ±marginPct.
func TOST(ratio, se, df, marginPct float64) TOSTResult {
	m := math.Log(ratio)
	half := tQuantile(df, 0.95) * se
	t := TOSTResult{Low: math.Exp(m - half), High: math.Exp(m + half)}
	down, up := 1-marginPct/100, 1+marginPct/100
	t.Equivalent = t.Low > down && t.High < up
	t.Different = t.Low > up || t.High < down
	return t
}
