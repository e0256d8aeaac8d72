package stats

import (
	"fmt"
	"math"
	"sort"

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
	if base.Workload.Name != cur.Workload.Name {
		return nil, &MismatchError{fmt.Sprintf("workload %s vs %s", base.Workload.Name, cur.Workload.Name)}
	}
	for _, k := range []string{"tables", "table_size", "range_size", "db_ps_mode", "skip_trx"} {
		if fmt.Sprint(base.Workload.Options[k]) != fmt.Sprint(cur.Workload.Options[k]) {
			return nil, &MismatchError{fmt.Sprintf("option %s is %v vs %v", k, base.Workload.Options[k], cur.Workload.Options[k])}
		}
	}
	if len(base.Plan.Points) != len(cur.Plan.Points) {
		return nil, &MismatchError{"different sweep points"}
	}
	for i := range base.Plan.Points {
		if base.Plan.Points[i] != cur.Plan.Points[i] {
			return nil, &MismatchError{fmt.Sprintf("point %d is %+v vs %+v", i+1, base.Plan.Points[i], cur.Plan.Points[i])}
		}
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
		return nil, &MismatchError{"no target name is measured in both files"}
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
				p := compareUnpaired(cv, bv)
				comp := result.Comparison{Target: n, Baseline: n + " (base)", Metric: m.name, Point: pt,
					Ratio: p.Ratio, DeltaPct: (p.Ratio - 1) * 100, N: p.N, Method: p.Method, HasCI: p.HasCI}
				if p.HasCI {
					comp.CILowPct, comp.CIHighPct = (p.Low-1)*100, (p.High-1)*100
				}
				comp.Verdict = Verdict(n+" (new)", n+" (base)", m.name, p, m.higherIsBetter)
				out = append(out, comp)
			}
		}
	}
	return out, nil
}

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
	if se == 0 || math.IsNaN(df) {
		p.Low, p.High, p.HasCI = p.Ratio, p.Ratio, true
		p.Method = "Welch t on logs (no spread)"
		return p
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Confidence)/2)
	p.Low, p.High, p.HasCI = math.Exp(mc-mb-q*se), math.Exp(mc-mb+q*se), true
	p.Method = fmt.Sprintf("Welch t on logs (unpaired, df %.1f)", df)
	return p
}
