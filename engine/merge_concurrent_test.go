package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// Three loads' latencies, drawn apart: the merged interval and run are
// those of the union (every percentile, the max, the counts), the rates
// are the counts over the shared span, and the pooled per-thread spread
// is the union's population mean and standard deviation.
func TestConcurrentMergeIsTheUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	union := stats.NewHistogram()
	var ivs []result.Interval
	var hs []*hdrhistogram.Histogram
	var runs []result.Run
	threads := []int{3, 2, 2}
	var perThread []float64 // every thread's events, across the loads
	for k, scale := range []float64{200, 900, 5000} {
		h := stats.NewHistogram()
		n := 1000 + 500*k
		var sum float64
		minUS := math.Inf(1)
		for range n {
			v := int64(scale * (0.5 + rng.ExpFloat64()))
			_ = h.RecordValue(v)
			_ = union.RecordValue(v)
			sum += float64(v)
			minUS = math.Min(minUS, float64(v))
		}
		span := 1 + 0.001*float64(k)
		ivs = append(ivs, result.Interval{TS: span, SpanS: span, Figures: result.Figures{Events: uint64(n), Other: uint64(2 * n), Errors: uint64(k)}})
		hs = append(hs, h)
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		// Each load's threads split its events unevenly.
		var ev []float64
		for i := range threads[k] {
			ev = append(ev, float64(n)/float64(threads[k])+float64(i*7-k))
		}
		perThread = append(perThread, ev...)
		m, sd := meanSDOf(ev)
		runs = append(runs, result.Run{Complete: true, Histogram: string(enc), Intervals: ivs[k:],
			Fairness: &result.Fairness{EventsAvg: m, EventsStddev: sd},
			Summary: result.Summary{DurationS: span, Figures: result.Figures{Events: uint64(n), Other: uint64(2 * n), MaxUS: float64(h.Max())},
				Queries: uint64(2 * n), SumUS: sum, MinUS: minUS}})
	}
	iv, h := ConcurrentInterval(ivs, hs, 99.9, nil)
	if h.TotalCount() != union.TotalCount() || iv.Events != uint64(union.TotalCount()) || iv.Errors != 3 || iv.Other != 2*iv.Events {
		t.Fatalf("interval counts: events %d, hist %d, union %d, errors %d", iv.Events, h.TotalCount(), union.TotalCount(), iv.Errors)
	}
	for q, got := range map[float64]float64{50: iv.P50US, 95: iv.P95US, 99: iv.P99US, 99.9: iv.PctUS} {
		if want := float64(union.ValueAtQuantile(q)); got != want {
			t.Errorf("interval p%g = %g, the union's %g", q, got, want)
		}
	}
	if iv.MaxUS != float64(union.Max()) || math.Abs(iv.SpanS-1.001) > 1e-12 || math.Abs(iv.TPS-float64(iv.Events)/1.001) > 1e-9 || iv.TS != 1.002 {
		t.Errorf("interval max %g span %g tps %g ts %g", iv.MaxUS, iv.SpanS, iv.TPS, iv.TS)
	}
	run, err := ConcurrentRun(runs, threads, []result.Interval{iv}, 95, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Summary
	if s.DurationS != 1.002 || math.Abs(s.TPS-float64(s.Events)/1.002) > 1e-9 {
		t.Errorf("run duration %g tps %g: want the longest run's 1.002 s", s.DurationS, s.TPS)
	}
	if s.Events != iv.Events || s.Queries != 2*s.Events || !run.Complete || len(run.Intervals) != 1 {
		t.Fatalf("run: %+v", s)
	}
	if s.P95US != float64(union.ValueAtQuantile(95)) || s.P99US != float64(union.ValueAtQuantile(99)) || s.MaxUS != float64(union.Max()) {
		t.Errorf("run p95 %g p99 %g max %g, union %d %d %d", s.P95US, s.P99US, s.MaxUS, union.ValueAtQuantile(95), union.ValueAtQuantile(99), union.Max())
	}
	var sumUS float64
	for _, r := range runs {
		sumUS += r.Summary.SumUS
	}
	if math.Abs(s.AvgUS-sumUS/float64(s.Events)) > 1e-9 || s.MinUS != runs[0].Summary.MinUS {
		t.Errorf("avg %g min %g", s.AvgUS, s.MinUS)
	}
	merged, err := hdrhistogram.Decode([]byte(run.Histogram))
	if err != nil || !merged.Equals(union) {
		t.Errorf("the run's histogram is not the union's (%v)", err)
	}
	m, sd := meanSDOf(perThread)
	if f := run.Fairness; math.Abs(f.EventsAvg-m) > 1e-9 || math.Abs(f.EventsStddev-sd) > 1e-9 {
		t.Errorf("pooled fairness %g±%g, the union's %g±%g", f.EventsAvg, f.EventsStddev, m, sd)
	}
	runs[1].Complete = false
	if r, _ := ConcurrentRun(runs, threads, nil, 95, nil); r.Complete {
		t.Error("a group with a cut run is complete")
	}
	runs[2].Histogram = ""
	if _, err := ConcurrentRun(runs, threads, nil, 95, nil); err == nil {
		t.Error("a run with events and no histogram merged")
	}
}

func meanSDOf(xs []float64) (float64, float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)))
}
