package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat"

	"github.com/dbduel/dbduel/engine/result"
)

// The paired t assumes the blocks' log-ratios are independent. A slow
// drift (checkpoints, a table that grows under read_write, a buffer pool
// still warming, a machine's thermal state) makes neighbouring blocks
// alike, and the interval too narrow. The drift check reads the blocks in
// run order: their lag-1 autocorrelation and the slope of log-ratio on
// block index. Each test has α 0.025, so that with independent blocks a
// comparison is marked suspect for drift in about 4% of plans
// (TestDriftSimulation); per comparison, not adjusted for a plan's many
// (8 comparisons: at least one mark in ~27% of plans).
const (
	// DriftMinBlocks is the fewest blocks the drift check reads.
	DriftMinBlocks = 5
	// AR1MinBlocks is the fewest blocks whose interval allows for
	// autocorrelation: below it the lag-1 autocorrelation is mostly noise.
	AR1MinBlocks = 8
	driftAlpha   = 0.025
)

// Drift is the drift check of one comparison's log-ratios in block order.
type Drift struct {
	Rho          float64 // lag-1 autocorrelation
	RhoCritical  float64 // its one-sided critical value at n under independence
	Slope        float64 // log-ratio per block (OLS)
	SlopeLow     float64 // the slope's 97.5% interval
	SlopeHigh    float64
	Fired        bool
	Autocorrated bool // Rho above RhoCritical
	Trend        bool // the slope's interval excludes 0
}

// CheckDrift runs the drift check over log-ratios in block order; ok is
// false below DriftMinBlocks or without spread.
func CheckDrift(logs []float64) (d Drift, ok bool) {
	n := len(logs)
	if n < DriftMinBlocks || stat.StdDev(logs, nil) < 1e-12 {
		return d, false
	}
	d.Rho = lag1(logs)
	d.RhoCritical = lag1Critical(n)
	d.Slope, d.SlopeLow, d.SlopeHigh = slopeCI(logs)
	d.Autocorrated = d.Rho > d.RhoCritical
	d.Trend = d.SlopeLow > 0 || d.SlopeHigh < 0
	d.Fired = d.Autocorrated || d.Trend
	return d, true
}

// Reading is the drift as the result file records it (slopes in % per block).
func (d Drift) Reading() *result.Drift {
	pct := func(x float64) float64 { return math.Expm1(x) * 100 }
	return &result.Drift{Rho: d.Rho, SlopePctPerBlock: pct(d.Slope), CI: [2]float64{pct(d.SlopeLow), pct(d.SlopeHigh)}, Fired: d.Fired}
}

// Why is the verdict's sentence for a drift that fired.
func (d Drift) Why() string {
	var parts []string
	if d.Autocorrated {
		parts = append(parts, fmt.Sprintf("neighbouring blocks alike (lag-1 autocorrelation %.2f > %.2f)", d.Rho, d.RhoCritical))
	}
	if d.Trend {
		parts = append(parts, fmt.Sprintf("the ratio trends by %+.2f%% per block [%+.2f%%, %+.2f%%]",
			math.Expm1(d.Slope)*100, math.Expm1(d.SlopeLow)*100, math.Expm1(d.SlopeHigh)*100))
	}
	if len(parts) == 0 {
		return ""
	}
	s := "suspect: the blocks drift (" + parts[0]
	for _, p := range parts[1:] {
		s += "; " + p
	}
	return s + "): the interval assumes independent blocks; look for checkpoints, a growing table or a warming cache, or use more warm-up"
}

// lag1 is the lag-1 autocorrelation of xs: Σ(x_i−m)(x_{i+1}−m) / Σ(x_i−m)².
func lag1(xs []float64) float64 {
	m := stat.Mean(xs, nil)
	var num, den float64
	for i, x := range xs {
		den += (x - m) * (x - m)
		if i+1 < len(xs) {
			num += (x - m) * (xs[i+1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

var lag1Cache sync.Map // n → critical value

// lag1Critical is the 1−driftAlpha quantile of the lag-1 autocorrelation
// of n independent normal values: a Monte Carlo null (small n is far from
// the asymptotic N(−1/n, 1/n)), seeded so every run of dbduel agrees.
func lag1Critical(n int) float64 {
	if v, ok := lag1Cache.Load(n); ok {
		return v.(float64)
	}
	const sims = 20000
	rng := rand.New(rand.NewPCG(uint64(n), 0x6472696674))
	rs := make([]float64, sims)
	xs := make([]float64, n)
	for i := range rs {
		for j := range xs {
			xs[j] = rng.NormFloat64()
		}
		rs[i] = lag1(xs)
	}
	slices.Sort(rs)
	c := rs[int(math.Ceil((1-driftAlpha)*sims))-1]
	lag1Cache.Store(n, c)
	return c
}

// slopeCI is the OLS slope of ys on their index and its two-sided
// 1−driftAlpha interval from t(n−2).
func slopeCI(ys []float64) (b, low, high float64) {
	n := len(ys)
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	a, b := stat.LinearRegression(xs, ys, nil, false)
	var sse, sxx float64
	mx := float64(n-1) / 2
	for i, y := range ys {
		e := y - a - b*xs[i]
		sse += e * e
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	se := math.Sqrt(sse / float64(n-2) / sxx)
	half := tQuantileAt(n-2, 1-driftAlpha/2) * se
	return b, b - half, b + half
}

// ar1SE is the standard error of the mean of xs under an AR(1) model: the
// lag-1 autocorrelation bias-corrected for small n (E r1 ≈ ρ − (1+3ρ)/n),
// clipped to [0, 0.9], inflates the variance of the mean by
// 1 + 2Σ(1−k/n)ρ^k and undoes the sample variance's shrinkage under
// autocorrelation; 0 below AR1MinBlocks or when the estimate is not
// positive. Chosen over a Newey–West lag-1 variance, which at 8 blocks and
// ρ 0.5 covered 0.88 (this: 0.92) and at ρ 0.8 0.74 (this: 0.82). Its
// price is paid with independent blocks: it is conservative (0.97 at 8
// blocks) and its intervals wider than the plain t's (TestDriftSimulation
// states by how much).
func ar1SE(xs []float64) float64 {
	n := len(xs)
	if n < AR1MinBlocks {
		return 0
	}
	r1 := lag1(xs)
	rho := min(0.9, max(0, (r1*float64(n)+1)/(float64(n)-3)))
	if rho == 0 {
		return 0 // the plain variance, and the plain rule's name
	}
	var sum float64
	for k := 1; k < n; k++ {
		sum += (1 - float64(k)/float64(n)) * math.Pow(rho, float64(k))
	}
	inflate := (1 + 2*sum) / (1 - 2*sum/float64(n-1))
	sd := stat.StdDev(xs, nil)
	return sd * math.Sqrt(inflate/float64(n))
}
