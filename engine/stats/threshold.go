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
// its metric: the ones whose whole CI lies past it (crossed), the ones
// whose CI holds it (straddled: inconclusive, more blocks would settle
// it), and the ones without a CI (unjudged). The baseline's A/A copy is a
// check of the design and is never judged.
type Judgement struct {
	Crossed, Straddled, Unjudged []result.Comparison
}

// Judge reads the comparisons against the threshold.
func (t Threshold) Judge(cs []result.Comparison) Judgement {
	var j Judgement
	for _, c := range cs {
		if c.Metric != t.Metric || IsCalibration(c.Target) {
			continue
		}
		switch {
		case !c.HasCI:
			j.Unjudged = append(j.Unjudged, c)
		case (t.Less && c.CIHighPct < t.Pct) || (!t.Less && c.CILowPct > t.Pct):
			j.Crossed = append(j.Crossed, c)
		case c.CILowPct <= t.Pct && c.CIHighPct >= t.Pct:
			j.Straddled = append(j.Straddled, c)
		}
	}
	return j
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
