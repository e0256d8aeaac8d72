package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dbduel/dbduel/engine/result"
)

// Confidence is the level of every interval dbduel reports.
const Confidence = 0.95

// Describe summarises one metric over runs: mean, median, spread, a
// Student-t CI for the mean, and an order-statistic CI for the median when
// there are enough runs (n ≥ 6).
func Describe(xs []float64) result.Distribution {
	d := result.Distribution{N: len(xs)}
	if len(xs) == 0 {
		d.CIMethod = "no runs"
		return d
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	d.Min, d.Max = s[0], s[len(s)-1]
	d.Mean = stat.Mean(s, nil)
	d.Median = stat.Quantile(0.5, stat.Empirical, s, nil)
	if len(s)%2 == 0 {
		d.Median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if len(s) < 2 {
		d.CIMethod = "single run: no confidence interval; use --runs"
		return d
	}
	d.Stddev = stat.StdDev(s, nil)
	if d.Mean != 0 {
		d.CV = d.Stddev / math.Abs(d.Mean)
	}
	if lo, hi, ok := MedianCI(s, Confidence); ok {
		d.CILow, d.CIHigh = lo, hi
		d.CIMethod = "median, order statistics"
		return d
	}
	half := TQuantile(len(s)-1) * d.Stddev / math.Sqrt(float64(len(s)))
	d.CILow, d.CIHigh = d.Mean-half, d.Mean+half
	d.CIMethod = "mean, Student t (n too small for a median CI)"
	return d
}

// TQuantile is the two-sided 95% critical value of Student's t with df degrees of freedom.
func TQuantile(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - (1-Confidence)/2)
}

// MedianCI is the distribution-free CI for the median of sorted xs from
// order statistics: [x(l), x(n-l+1)] with the largest l such that
// P(Binomial(n, 1/2) < l) ≤ α/2. It needs n ≥ 6 at 95%.
func MedianCI(sorted []float64, conf float64) (lo, hi float64, ok bool) {
	n := len(sorted)
	if n < 6 {
		return 0, 0, false
	}
	alpha := 1 - conf
	b := distuv.Binomial{N: float64(n), P: 0.5}
	l := 0
	for k := 1; k <= n/2; k++ {
		if b.CDF(float64(k-1)) <= alpha/2 {
			l = k
		} else {
			break
		}
	}
	if l == 0 {
		return 0, 0, false
	}
	return sorted[l-1], sorted[n-l], true
}

// Paired is a target-vs-baseline comparison over blocks.
type Paired struct {
	Ratio, Low, High float64 // geometric-mean ratio and its CI (ratios, not %)
	N                int
	Method           string
	HasCI            bool
}

// ComparePaired compares target with baseline values paired by block: the
// point estimate is the geometric mean of per-block ratios; the CI comes
// from a paired t on log-ratios below 8 blocks and from a seeded bootstrap
// of the mean log-ratio from 8 on (Hoefler & Belli: never average ratios).
func ComparePaired(target, baseline []float64, seed int64) Paired {
	var logs []float64
	for i := range target {
		if i < len(baseline) && target[i] > 0 && baseline[i] > 0 {
			logs = append(logs, math.Log(target[i]/baseline[i]))
		}
	}
	p := Paired{N: len(logs)}
	if len(logs) == 0 {
		p.Method = "no paired runs"
		return p
	}
	m := stat.Mean(logs, nil)
	p.Ratio = math.Exp(m)
	switch {
	case len(logs) < 2:
		p.Method = "single run: no confidence interval; use --runs"
	case len(logs) < 8:
		half := TQuantile(len(logs)-1) * stat.StdDev(logs, nil) / math.Sqrt(float64(len(logs)))
		p.Low, p.High, p.HasCI = math.Exp(m-half), math.Exp(m+half), true
		p.Method = "paired t on log-ratios"
	default:
		lo, hi := bootstrapMeanCI(logs, seed, 10000)
		p.Low, p.High, p.HasCI = math.Exp(lo), math.Exp(hi), true
		p.Method = "bootstrap of log-ratios (10000 resamples)"
	}
	return p
}

// bootstrapMeanCI is the percentile bootstrap CI of the mean.
func bootstrapMeanCI(xs []float64, seed int64, resamples int) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xb007))
	means := make([]float64, resamples)
	for r := range means {
		sum := 0.0
		for range xs {
			sum += xs[rng.IntN(len(xs))]
		}
		means[r] = sum / float64(len(xs))
	}
	sort.Float64s(means)
	a := (1 - Confidence) / 2
	return stat.Quantile(a, stat.Empirical, means, nil), stat.Quantile(1-a, stat.Empirical, means, nil)
}

// Verdict says in words whether target differs from baseline on a metric.
// higherIsBetter is true for throughput, false for latency.
func Verdict(target, baseline, metric string, p Paired, higherIsBetter bool) string {
	delta := (p.Ratio - 1) * 100
	word := func(d float64) string {
		if (d < 0) == higherIsBetter {
			if higherIsBetter {
				return "slower"
			}
			return "faster"
		}
		if higherIsBetter {
			return "faster"
		}
		return "slower"
	}
	if !p.HasCI {
		return fmt.Sprintf("%s vs %s: %s %+.1f%% (%s)", target, baseline, metric, delta, p.Method)
	}
	lo, hi := (p.Low-1)*100, (p.High-1)*100
	if lo <= 0 && hi >= 0 {
		return fmt.Sprintf("%s vs %s: no significant %s difference (%+.1f%%, CI [%+.1f%%, %+.1f%%] spans 0; n=%d blocks, %s)",
			target, baseline, metric, delta, lo, hi, p.N, p.Method)
	}
	return fmt.Sprintf("%s is %s by %.1f%% [%.1f%%, %.1f%%] in %s (n=%d blocks, %s)",
		target, word(delta), math.Abs(delta), math.Min(math.Abs(lo), math.Abs(hi)), math.Max(math.Abs(lo), math.Abs(hi)), metric, p.N, p.Method)
}

// BlocksNeeded estimates how many blocks would resolve an effect of size
// effect (relative, e.g. 0.05) given the per-block log-ratio spread sd:
// n ≈ (2·1.96·sd / effect)² for a CI narrower than the effect.
func BlocksNeeded(sd, effect float64) int {
	if effect <= 0 || sd <= 0 {
		return 0
	}
	n := math.Pow(2*1.96*sd/effect, 2)
	return int(math.Ceil(n))
}
