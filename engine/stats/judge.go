package stats

import (
	"fmt"
	"math"
	"strings"

	"github.com/dbduel/dbduel/engine/result"
)

// CalibrationSuffix names the A/A copy of the baseline (--calibrate).
const CalibrationSuffix = "-aa"

// IsCalibration says target is the baseline's A/A copy: its rows are a
// check of the design, never judged (no precision line, no --fail-if).
func IsCalibration(target string) bool { return strings.HasSuffix(target, CalibrationSuffix) }

// PrecisionTarget is the half-width the result's primary verdicts are held to.
func PrecisionTarget(r *result.Result) float64 {
	if r.Plan.PrecisionPct > 0 {
		return r.Plan.PrecisionPct
	}
	return DefaultPrecisionPct
}

// role names a metric's part in the verdicts: the primary one (tps, or
// nopm for TPC-C) is what the verdict reads; the others are secondary.
func role(metric, primary string) string {
	if metric == primary {
		return "primary"
	}
	return "secondary"
}

// judge adds to a comparison what its verdict needs beyond the interval:
// primary or secondary, interim, the precision line (primary metric), the
// --margin equivalence reading.
func judge(r *result.Result, c *result.Comparison, p Paired, primary string) {
	// dbduel live's comparisons stay interim: the user stopped when they chose.
	c.Interim = !r.Complete || r.Live != nil
	if c.Interim {
		c.Verdict = "interim: " + c.Verdict
	}
	if IsCalibration(c.Target) {
		return
	}
	if c.Primary && p.HasCI {
		x := PrecisionTarget(r)
		if line := PrecisionLine(p, x); line != "" {
			c.BlocksForTarget = BlocksFor(EffectiveSD(p), x)
			c.Verdict += "; " + line
		}
	}
	if m := r.Plan.MarginPct; m > 0 {
		if e := Equivalence(p, m); e != "" {
			c.Equivalence = e
			c.Verdict += "; " + e
		}
	}
}

// checkAA reads the baseline's A/A copy (--calibrate) at every point and
// for every metric as a check of the design, never as a threshold: the
// target's own paired CI already holds the run-to-run noise. When the A/A
// interval excludes 0, identical targets differed: a bias (run order,
// warm-up, placement), and every verdict of that point is marked suspect.
func checkAA(r *result.Result) {
	r.NoiseFloor, r.NoiseFloors = nil, nil
	names := r.TargetNames()
	if len(names) < 2 {
		return
	}
	aa := names[0] + CalibrationSuffix
	suspect := map[int]string{}
	for _, c := range r.Comparisons {
		if c.Target != aa {
			continue
		}
		nf := result.NoiseFloor{Point: c.Point, Metric: c.Metric, DeltaPct: c.DeltaPct, N: c.N, HasCI: c.HasCI,
			CILowPct: c.CILowPct, CIHighPct: c.CIHighPct}
		label := pointLabel(r, c.Point)
		switch {
		case !c.HasCI:
			nf.Reading = fmt.Sprintf("A/A: %+.1f%% in %s%s, %d block(s): no interval yet to check the design with", c.DeltaPct, c.Metric, label, c.N)
		case c.CILowPct <= 0 && c.CIHighPct >= 0 && c.Drift != nil && c.Drift.Fired:
			nf.Reading = fmt.Sprintf("A/A: %+.1f%% [%+.1f%%, %+.1f%%] in %s%s, but its blocks drift (lag-1 autocorrelation %.2f, %+.2f%% per block): the check cannot vouch for the design",
				c.DeltaPct, c.CILowPct, c.CIHighPct, c.Metric, label, c.Drift.Rho, c.Drift.SlopePctPerBlock)
		case c.CILowPct <= 0 && c.CIHighPct >= 0:
			// Containing 0 shows no calibration: a drift passes too, and
			// so does any bias smaller than the check can see.
			nf.NoBiasDetected = true
			nf.Reading = fmt.Sprintf("A/A: %+.1f%% [%+.1f%%, %+.1f%%] in %s%s: no bias detected", c.DeltaPct, c.CILowPct, c.CIHighPct, c.Metric, label)
			if b := DetectableBiasPct(c); b > 0 {
				nf.DetectablePct = b
				nf.Reading += fmt.Sprintf("; at the spread observed, a bias of ±%.1f%% would be found with 80%% power", b)
			}
		default:
			nf.Reading = fmt.Sprintf("A/A: identical targets differ by %+.1f%% [%+.1f%%, %+.1f%%] in %s%s: a bias in the design (run order, warm-up, placement); every verdict at this point is suspect",
				c.DeltaPct, c.CILowPct, c.CIHighPct, c.Metric, label)
			if c.Primary {
				suspect[c.Point] = fmt.Sprintf("suspect: the A/A check failed here (%s vs %s %+.1f%% [%+.1f%%, %+.1f%%])", aa, names[0], c.DeltaPct, c.CILowPct, c.CIHighPct)
			}
		}
		r.NoiseFloors = append(r.NoiseFloors, nf)
		if c.Primary {
			if c.Point == 0 {
				cp := nf
				r.NoiseFloor = &cp
			}
			if !nf.NoBiasDetected && nf.HasCI {
				r.Warnings = append(r.Warnings, nf.Reading)
			}
		}
	}
	for i, c := range r.Comparisons {
		if why, ok := suspect[c.Point]; ok && c.Target != aa {
			markSuspect(&r.Comparisons[i], "aa", why)
		}
	}
}

// AALine is the A/A check's line for a point's primary metric ("" without --calibrate).
func AALine(r *result.Result, point int) string {
	for _, nf := range r.NoiseFloors {
		if nf.Point != point {
			continue
		}
		for _, c := range r.Comparisons {
			if c.Point == point && c.Metric == nf.Metric && c.Primary && IsCalibration(c.Target) {
				return nf.Reading
			}
		}
	}
	return ""
}

// DetectableBiasPct is the bias a comparison's two-sided 95% test finds
// with 80% power at its standard error and degrees of freedom:
// (t(.975) + t(.80))·SE on the log scale, in % (0 without an interval).
func DetectableBiasPct(c result.Comparison) float64 {
	if !c.HasCI || c.SELog <= 0 || c.Interval == nil || c.Interval.DF < 1 {
		return 0
	}
	t := func(q float64) float64 { return tQuantile(c.Interval.DF, q) }
	return math.Expm1((t(1-(1-Confidence)/2)+t(0.80))*c.SELog) * 100
}
