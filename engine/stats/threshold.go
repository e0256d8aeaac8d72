package stats

import (
	"fmt"
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

// Crossed returns the comparisons whose whole CI lies past the threshold,
// and those that could not be judged for want of a CI.
func (t Threshold) Crossed(cs []result.Comparison) (crossed []result.Comparison, unjudged []result.Comparison) {
	for _, c := range cs {
		if c.Metric != t.Metric {
			continue
		}
		if !c.HasCI {
			unjudged = append(unjudged, c)
			continue
		}
		if (t.Less && c.CIHighPct < t.Pct) || (!t.Less && c.CILowPct > t.Pct) {
			crossed = append(crossed, c)
		}
	}
	return crossed, unjudged
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
