package stats

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dbduel/dbduel/engine/result"
)

// MismatchError says two result files did not measure the same thing.
type MismatchError struct{ Reason string }

func (e *MismatchError) Error() string { return "results are not comparable: " + e.Reason }

// CompareFiles compares NEW with BASE target by target (same names, same
// sweep points): the ratio of geometric means of the runs, with a Welch t CI
// on log values when both sides have two runs or more (unpaired: the runs
// were not interleaved).
func CompareFiles(base, cur *result.Result) ([]result.Comparison, error) {
	if err := sameMeasurement(base, cur); err != nil {
		return nil, err
	}
	collect := func(r *result.Result) map[string]map[int][]result.Summary {
		m := map[string]map[int][]result.Summary{}
		for _, run := range r.Runs {
			if run.Warmup || !run.Complete {
				continue
			}
			if m[run.Target] == nil {
				m[run.Target] = map[int][]result.Summary{}
			}
			m[run.Target][run.Point] = append(m[run.Target][run.Point], run.Summary)
		}
		return m
	}
	b, c := collect(base), collect(cur)
	var names []string
	for n := range c {
		if _, ok := b[n]; ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, &MismatchError{fmt.Sprintf("no target name is measured in both files (BASE has %s; NEW has %s); compare matches targets by name",
			strings.Join(sortedKeys(b), ", "), strings.Join(sortedKeys(c), ", "))}
	}
	var out []result.Comparison
	for _, n := range names {
		for pt := range max(len(cur.Plan.Points), 1) {
			bs, cs := b[n][pt], c[n][pt]
			if len(bs) == 0 || len(cs) == 0 {
				continue
			}
			for _, m := range metrics {
				var bv, cv []float64
				for _, s := range bs {
					bv = append(bv, m.get(s))
				}
				for _, s := range cs {
					cv = append(cv, m.get(s))
				}
				if slices.Contains(bv, 0) || slices.Contains(cv, 0) {
					// No ratio to nothing, as in Analyze: NOPM outside
					// TPC-C, cpu's queries, memory's sub-µs latencies.
					continue
				}
				p := compareUnpaired(cv, bv)
				comp := result.Comparison{Target: n, Baseline: n + " (base)", Metric: m.name, Point: pt,
					Ratio: p.Ratio, DeltaPct: (p.Ratio - 1) * 100, N: len(cv), NBaseline: len(bv), Method: p.Method, HasCI: p.HasCI}
				if p.HasCI {
					comp.CILowPct, comp.CIHighPct = (p.Low-1)*100, (p.High-1)*100
					comp.Interval = &result.IntervalRule{Rule: p.Rule, DF: p.DF}
					comp.SELog, comp.PValue = p.SE, p.PValue()
				}
				comp.Verdict = Verdict(n+" (new)", n+" (base)", m.name, p, m.higherIsBetter) + pointLabel(cur, pt)
				out = append(out, comp)
			}
		}
	}
	return out, nil
}

// measuredOptions lists the workload options that do not change what is
// measured; every other option must be equal on both sides.
var unmeasuredOptions = map[string]bool{
	"rand_seed": true, // another seed draws other rows from the same distribution
}

// sameMeasurement refuses two results that did not measure the same thing:
// the workload, every option that shapes it, the plan's loop, time, events,
// warm-up and percentile, and the sweep points.
func sameMeasurement(base, cur *result.Result) error {
	if base.Workload.Name != cur.Workload.Name {
		return &MismatchError{fmt.Sprintf("workload %s vs %s", base.Workload.Name, cur.Workload.Name)}
	}
	keys := map[string]bool{}
	for k := range base.Workload.Options {
		keys[k] = true
	}
	for k := range cur.Workload.Options {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		bv, bok := base.Workload.Options[k]
		cv, cok := cur.Workload.Options[k]
		if unmeasuredOptions[k] || (bok && cok && fmt.Sprint(bv) == fmt.Sprint(cv)) {
			continue
		}
		return &MismatchError{fmt.Sprintf("option --%s differs: %s vs %s", strings.ReplaceAll(k, "_", "-"), optionValue(bv, bok), optionValue(cv, cok))}
	}
	bp, cp := base.Plan, cur.Plan
	loop := func(rate float64) string {
		if rate == 0 {
			return "0 (closed loop)"
		}
		return fmt.Sprintf("%g/s (open loop)", rate)
	}
	for _, d := range []struct {
		name      string
		base, cur string
	}{
		{"--rate", loop(bp.Rate), loop(cp.Rate)},
		{"--time", fmt.Sprintf("%g s", bp.TimeS), fmt.Sprintf("%g s", cp.TimeS)},
		{"--events", fmt.Sprint(bp.Events), fmt.Sprint(cp.Events)},
		{"--warmup-time", fmt.Sprintf("%g s", bp.WarmupS), fmt.Sprintf("%g s", cp.WarmupS)},
		{"--warmup-runs", fmt.Sprint(bp.WarmupRuns), fmt.Sprint(cp.WarmupRuns)},
		{"--percentile", fmt.Sprint(bp.Percentile), fmt.Sprint(cp.Percentile)},
	} {
		if d.base != d.cur {
			return &MismatchError{fmt.Sprintf("%s differs: %s vs %s", d.name, d.base, d.cur)}
		}
	}
	if len(bp.Points) != len(cp.Points) {
		return &MismatchError{fmt.Sprintf("BASE has %d sweep point(s), NEW %d", len(bp.Points), len(cp.Points))}
	}
	for i := range bp.Points {
		b, c := bp.Points[i], cp.Points[i]
		if b.Threads != c.Threads {
			return &MismatchError{fmt.Sprintf("threads differ: %d vs %d; compare is for changes to the targets — sweep threads in one run with --threads %d,%d", b.Threads, c.Threads, b.Threads, c.Threads)}
		}
		if b.TableSize != c.TableSize {
			return &MismatchError{fmt.Sprintf("table sizes differ: %d vs %d rows; sweep sizes in one run with --table-size %d,%d", b.TableSize, c.TableSize, b.TableSize, c.TableSize)}
		}
	}
	return nil
}

func optionValue(v any, ok bool) string {
	if !ok {
		return "(not set)"
	}
	return fmt.Sprint(v)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// UnpairedZeroSpreadMethod says why two sets of runs, each all one value,
// have no CI.
const UnpairedZeroSpreadMethod = "the same value in every run on each side: no confidence interval (the figure's resolution hides any spread)"

// compareUnpaired is the ratio of geometric means with a Welch t CI on logs.
func compareUnpaired(cur, base []float64) Paired {
	logs := func(xs []float64) []float64 {
		var out []float64
		for _, x := range xs {
			if x > 0 {
				out = append(out, math.Log(x))
			}
		}
		return out
	}
	lc, lb := logs(cur), logs(base)
	p := Paired{N: min(len(lc), len(lb))}
	if len(lc) == 0 || len(lb) == 0 {
		p.Method = "no runs"
		return p
	}
	mc, mb := stat.Mean(lc, nil), stat.Mean(lb, nil)
	p.Ratio = math.Exp(mc - mb)
	if len(lc) < 2 || len(lb) < 2 {
		p.Method = "single run on a side: no confidence interval; use --runs"
		return p
	}
	vc, vb := stat.Variance(lc, nil)/float64(len(lc)), stat.Variance(lb, nil)/float64(len(lb))
	se := math.Sqrt(vc + vb)
	df := (vc + vb) * (vc + vb) / (vc*vc/float64(len(lc)-1) + vb*vb/float64(len(lb)-1))
	if se < 1e-12 || math.IsNaN(df) {
		// Every run of both sides gave the same figure (a p95 quantised
		// to the histogram's steps): a zero-width interval would claim a
		// precision the figure's resolution hides.
		p.Method = UnpairedZeroSpreadMethod
		return p
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Confidence)/2)
	p.Low, p.High, p.HasCI = math.Exp(mc-mb-q*se), math.Exp(mc-mb+q*se), true
	p.SE, p.DF, p.Rule = se, df, "welch"
	p.Method = fmt.Sprintf("Welch t on logs (unpaired, df %.1f)", df)
	return p
}
