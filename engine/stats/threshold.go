package stats

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/dbduel/dbduel/engine/result"
)

// Threshold is one --fail-if condition on a metric's Δ% against the baseline.
type Threshold struct {
	Metric string // tps|qps|p95|p99|nopm|tpm
	Less   bool   // "<" (true) or ">" (false)
	Pct    float64
	Text   string
}

var thresholdRE = regexp.MustCompile(`^\s*(tps|qps|p95|p99|nopm|tpm)\s*([<>])\s*([+-]?[0-9]+(?:\.[0-9]+)?)\s*%\s*$`)

// ParseThreshold parses "tps<-5%" or "p95>+10%".
func ParseThreshold(s string) (Threshold, error) {
	m := thresholdRE.FindStringSubmatch(s)
	if m == nil {
		return Threshold{}, fmt.Errorf("invalid --fail-if %q: want METRIC<PCT%% or METRIC>PCT%% with METRIC tps, qps, p95, p99, nopm or tpm (e.g. 'tps<-5%%')", s)
	}
	v, _ := strconv.ParseFloat(m[3], 64)
	return Threshold{Metric: m[1], Less: m[2] == "<", Pct: v, Text: s}, nil
}

// Judgement is what one --fail-if threshold says of the comparisons of
// its metric: the ones found past it (crossed: Holm's step-down over
// every comparison judged, at the family-wise α), the ones whose CI holds
// it (straddled: inconclusive, more blocks would settle it), the ones
// whose 95% CI lies past it but that Holm's adjustment does not find
// past it (unsettled: inconclusive too), and the ones without a CI
// (unjudged). The baseline's A/A copy is a check of the design and is
// never judged. With one comparison and α 0.05, crossed is exactly "the
// whole 95% CI lies past the threshold".
type Judgement struct {
	Crossed, Straddled, Unsettled, Unjudged []result.Comparison
	// Family is how many comparisons the threshold judged (Holm's m).
	Family int
}

// Judge reads the comparisons against the threshold at family-wise alpha.
func (t Threshold) Judge(cs []result.Comparison, alpha float64) Judgement {
	var j Judgement
	var judged []result.Comparison
	var ps []float64
	for _, c := range cs {
		if c.Metric != t.Metric || IsCalibration(c.Target) {
			continue
		}
		if !c.HasCI {
			j.Unjudged = append(j.Unjudged, c)
			continue
		}
		judged, ps = append(judged, c), append(ps, t.pValue(c))
	}
	j.Family = len(judged)
	for i, adj := range HolmAdjust(ps) {
		c := judged[i]
		switch {
		case adj <= alpha && t.past(c):
			j.Crossed = append(j.Crossed, c)
		case c.CILowPct <= t.Pct && c.CIHighPct >= t.Pct:
			j.Straddled = append(j.Straddled, c)
		case t.past(c):
			j.Unsettled = append(j.Unsettled, c)
		}
	}
	return j
}

// past says the comparison's whole 95% CI lies past the threshold.
func (t Threshold) past(c result.Comparison) bool {
	return (t.Less && c.CIHighPct < t.Pct) || (!t.Less && c.CILowPct > t.Pct)
}

// pValue is the two-sided p-value of "the true Δ is at the threshold"
// from the comparison's own t, when its estimate lies past the threshold
// (1 otherwise: a test it cannot fail). A comparison read from an older
// file, without its standard error, is read by its CI alone.
func (t Threshold) pValue(c result.Comparison) float64 {
	if !t.past(c) && ((t.Less && c.DeltaPct >= t.Pct) || (!t.Less && c.DeltaPct <= t.Pct)) {
		return 1
	}
	if c.SELog <= 0 || c.Interval == nil || c.Interval.DF <= 0 {
		if t.past(c) {
			return 0
		}
		return 1
	}
	p := Paired{Ratio: c.Ratio, HasCI: true, SE: c.SELog, DF: c.Interval.DF}
	return p.PValueAgainst(1 + t.Pct/100)
}

// Settle is how many blocks a straddling comparison's spread needs for
// its CI to clear the threshold at the present estimate ("" when it
// cannot say: no spread known, an unpaired compare).
func (t Threshold) Settle(c result.Comparison) string {
	d := math.Abs(math.Log1p(c.DeltaPct/100) - math.Log1p(t.Pct/100))
	if c.SDLog <= 0 || d == 0 {
		return "more blocks would settle it"
	}
	return fmt.Sprintf("about %d blocks would settle it at this estimate and spread", BlocksFor(c.SDLog, math.Expm1(d)*100))
}

// ParseThresholds parses every --fail-if condition.
func ParseThresholds(specs []string) ([]Threshold, error) {
	var out []Threshold
	for _, s := range specs {
		th, err := ParseThreshold(s)
		if err != nil {
			return nil, err
		}
		out = append(out, th)
	}
	return out, nil
}
