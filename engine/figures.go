package engine

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
)

// mibPerS is the data a Transfer workload moved per second: each read and
// each write moves one block (0, 0 for other workloads).
func mibPerS(w workload.Workload, reads, writes uint64, sec float64) (read, written float64) {
	t, ok := w.(workload.Transfer)
	if !ok || sec <= 0 {
		return 0, 0
	}
	mib := float64(t.BlockBytes()) / (1 << 20)
	return float64(reads) * mib / sec, float64(writes) * mib / sec
}

func us(ns uint64) float64 { return float64(ns) / 1000 }

func makeInterval(at, span time.Duration, c stats.Counters, h *hdrhistogram.Histogram, pct float64) result.Interval {
	sec := span.Seconds()
	if sec <= 0 {
		sec = 1e-9
	}
	iv := result.Interval{
		TS:      math.Round(at.Seconds()*1000) / 1000,
		SpanS:   span.Seconds(),
		Figures: counted(c),
	}
	iv.TPS, iv.QPS = float64(c.Events)/sec, float64(c.Queries())/sec
	if h.TotalCount() > 0 {
		iv.P50US, iv.P95US, iv.P99US, iv.PctUS = percentiles(h, pct)
		iv.MaxUS = float64(h.Max())
	}
	return iv
}

// percentiles reads p50, p95, p99 and the --percentile value (0 if disabled) in µs.
func percentiles(h *hdrhistogram.Histogram, pct float64) (p50, p95, p99, at float64) {
	p50, p95, p99 = float64(h.ValueAtQuantile(50)), float64(h.ValueAtQuantile(95)), float64(h.ValueAtQuantile(99))
	if pct > 0 {
		at = float64(h.ValueAtQuantile(pct))
	}
	return p50, p95, p99, at
}

// counted are the counters as the result's figures (rates and
// percentiles are set by the caller).
func counted(c stats.Counters) result.Figures {
	return result.Figures{Events: c.Events, Reads: c.Reads, Writes: c.Writes, Other: c.Other,
		Errors: c.Errors, Reconnects: c.Reconnects}
}

func summarize(elapsed time.Duration, c stats.Counters, h *hdrhistogram.Histogram, pct float64) result.Summary {
	sec := elapsed.Seconds()
	s := result.Summary{
		DurationS: sec, Figures: counted(c), Queries: c.Queries(),
		MinUS: us(c.MinNS), SumUS: us(c.LatencySumNS),
		Percentile: pct,
	}
	s.MaxUS = us(c.MaxNS)
	if sec > 0 {
		s.TPS = float64(c.Events) / sec
		s.QPS = float64(c.Queries()) / sec
	}
	if c.Events > 0 {
		s.AvgUS = us(c.LatencySumNS) / float64(c.Events)
		s.P50US, s.P95US, s.P99US, s.PctUS = percentiles(h, pct)
	}
	return s
}

func fairness(recs []*stats.Recorder) *result.Fairness {
	n := float64(len(recs))
	if n == 0 {
		return nil
	}
	var ev, ex []float64
	for _, r := range recs {
		e, b := r.Fairness()
		ev = append(ev, float64(e))
		ex = append(ex, b.Seconds())
	}
	meanSD := func(xs []float64) (float64, float64) {
		m := 0.0
		for _, x := range xs {
			m += x
		}
		m /= n
		v := 0.0
		for _, x := range xs {
			v += (x - m) * (x - m)
		}
		return m, math.Sqrt(v / n) // population stddev, as sysbench
	}
	f := &result.Fairness{}
	f.EventsAvg, f.EventsStddev = meanSD(ev)
	f.ExecAvgS, f.ExecStddevS = meanSD(ex)
	return f
}
