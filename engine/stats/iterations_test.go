package stats

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dbduel/dbduel/engine/result"
)

// An iteration's Δ against iteration 1 is the ratio of the two
// iterations' geometric-mean target/baseline ratios, with a Welch t CI on
// the logs: the baseline's round-to-round swings cancel, the direction is
// iteration 2 over iteration 1, and a target not restarted gets none.
func TestIterationDeltaAgainstIterationOne(t *testing.T) {
	then := []float64{0.50, 0.52, 0.48, 0.50}
	now := []float64{0.75, 0.80, 0.70, 0.74, 0.76}
	baseTPS := []float64{1000, 1400, 800, 1200, 900} // the machine's swings
	r := &result.Result{Complete: true, Targets: []result.Target{{Name: "a"}, {Name: "b"}, {Name: "c"}},
		Plan: result.Plan{Points: []result.Point{{Threads: 4}, {Threads: 4}}},
		Segments: []result.Segment{{Point: 0, Iteration: 1, Threads: 4, Workload: "w"},
			{Point: 1, Iteration: 2, Threads: 4, Workload: "w", ReadBack: map[string]map[string]string{"b": {"innodb_buffer_pool_size": "268435456"}}}}}
	block := 0
	for pt, rs := range [][]float64{then, now} {
		for i, ratio := range rs {
			block++
			for _, run := range []result.Run{{Target: "a"}, {Target: "b"}, {Target: "c"}} {
				run.Block, run.Index, run.Point, run.Complete = block, i+1, pt, true
				run.Summary.TPS = baseTPS[i]
				if run.Target != "a" {
					run.Summary.TPS = baseTPS[i] * ratio
				}
				r.Runs = append(r.Runs, run)
			}
		}
	}
	Analyze(r)
	vs := r.Segments[1].VsIteration1
	if len(vs) != 1 || vs[0].Target != "b" {
		t.Fatalf("want one comparison, for b (c was not restarted): %+v", vs)
	}
	logs := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = math.Log(x)
		}
		return out
	}
	ln, lt := logs(now), logs(then)
	d := stat.Mean(ln, nil) - stat.Mean(lt, nil)
	vn, vt := stat.Variance(ln, nil)/5, stat.Variance(lt, nil)/4
	df := (vn + vt) * (vn + vt) / (vn*vn/4 + vt*vt/3)
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
	want, low, high := (math.Exp(d)-1)*100, (math.Exp(d-q*math.Sqrt(vn+vt))-1)*100, (math.Exp(d+q*math.Sqrt(vn+vt))-1)*100
	c := vs[0]
	if math.Abs(c.DeltaPct-want) > 1e-6 || math.Abs(c.CILowPct-low) > 1e-6 || math.Abs(c.CIHighPct-high) > 1e-6 || !c.HasCI || c.N != 5 || c.NBaseline != 4 {
		t.Errorf("got %+.4f%% [%+.4f, %+.4f] n=%d/%d, want %+.4f%% [%+.4f, %+.4f]", c.DeltaPct, c.CILowPct, c.CIHighPct, c.N, c.NBaseline, want, low, high)
	}
	if want < 45 || want > 55 {
		t.Fatalf("the fixture's Δ is %.1f%%, not about +50%%", want)
	}
}
