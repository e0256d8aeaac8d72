package engine

import (
	"errors"
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
)

// The merges below join loads that ran at the same time against one
// target (its agents=N, each a share of the threads) into the series one
// client with all the threads would have made: counts add, histograms
// merge bucket by bucket, so every percentile is the union's, and every
// rate is a count over the span the loads shared.

// ConcurrentInterval merges the same interval of loads that ran at once.
// Their spans differ by how far apart they were released (milliseconds):
// the rates are over the mean span.
func ConcurrentInterval(ivs []result.Interval, hs []*hdrhistogram.Histogram, pct float64, w workload.Workload) (result.Interval, *hdrhistogram.Histogram) {
	h := stats.NewHistogram()
	var out result.Interval
	if len(ivs) == 0 {
		return out, h
	}
	out.Warmup = ivs[0].Warmup
	for i, iv := range ivs {
		out.TS = math.Max(out.TS, iv.TS)
		out.SpanS += iv.SpanS / float64(len(ivs))
		out.Figures.Add(iv.Figures)
		out.QueueLen += iv.QueueLen
		out.Concurrency += iv.Concurrency
		if i < len(hs) && hs[i] != nil {
			h.Merge(hs[i])
		}
	}
	if out.SpanS > 0 {
		out.TPS = float64(out.Events) / out.SpanS
		out.QPS = float64(out.Reads+out.Writes+out.Other) / out.SpanS
		out.ReadMiBPerS, out.WrittenMiBPerS = mibPerS(w, out.Reads, out.Writes, out.SpanS)
	}
	if h.TotalCount() > 0 {
		out.P50US, out.P95US, out.P99US, out.PctUS = percentiles(h, pct)
		out.MaxUS = float64(h.Max())
	}
	return out, h
}

// ConcurrentRun merges the runs of loads that ran at once (threads[i] is
// run i's thread count) with their merged intervals: the run lasts as long
// as the longest (an --events run's agents end apart). Each run must carry
// its histogram when it measured anything.
func ConcurrentRun(runs []result.Run, threads []int, intervals []result.Interval, pct float64, w workload.Workload) (result.Run, error) {
	if len(runs) == 0 || len(threads) != len(runs) {
		return result.Run{}, errors.New("merge: want one thread count per run")
	}
	out := result.Run{Target: runs[0].Target, Complete: true, Intervals: intervals}
	sum := &out.Summary
	h := stats.NewHistogram()
	for i, r := range runs {
		out.Complete = out.Complete && r.Complete
		out.WarmupQueries += r.WarmupQueries
		out.WarmupEvents += r.WarmupEvents
		s := r.Summary
		// One client's run lasts until its last thread is done.
		sum.DurationS = math.Max(sum.DurationS, s.DurationS)
		sum.Figures.Add(s.Figures)
		sum.Queries += s.Queries
		sum.SumUS += s.SumUS
		sum.MaxUS = math.Max(sum.MaxUS, s.MaxUS)
		if s.Events > 0 && (sum.MinUS == 0 || s.MinUS < sum.MinUS) {
			sum.MinUS = s.MinUS
		}
		if r.Histogram == "" {
			if s.Events > 0 {
				return result.Run{}, fmt.Errorf("merge: run %d measured %d events but carries no histogram", i, s.Events)
			}
			continue
		}
		d, err := hdrhistogram.Decode([]byte(r.Histogram))
		if err != nil {
			return result.Run{}, fmt.Errorf("merge: run %d's histogram: %w", i, err)
		}
		h.Merge(d)
	}
	sum.Percentile, sum.WarmupS = pct, runs[0].Summary.WarmupS
	if sum.DurationS > 0 {
		sum.TPS = float64(sum.Events) / sum.DurationS
		sum.QPS = float64(sum.Queries) / sum.DurationS
		sum.ReadMiBPerS, sum.WrittenMiBPerS = mibPerS(w, sum.Reads, sum.Writes, sum.DurationS)
	}
	if sum.Events > 0 {
		sum.AvgUS = sum.SumUS / float64(sum.Events)
		sum.P50US, sum.P95US, sum.P99US, sum.PctUS = percentiles(h, pct)
	}
	if h.TotalCount() > 0 {
		if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			out.Histogram = string(enc)
		}
	}
	out.Fairness = pooledFairness(runs, threads)
	return out, nil
}

// pooledFairness is the per-thread spread over all the runs' threads:
// the population mean and standard deviation of the union, from each
// run's own over its threads.
func pooledFairness(runs []result.Run, threads []int) *result.Fairness {
	var n, evSum, exSum float64
	for i, r := range runs {
		if r.Fairness == nil {
			return nil
		}
		k := float64(threads[i])
		n += k
		evSum += k * r.Fairness.EventsAvg
		exSum += k * r.Fairness.ExecAvgS
	}
	if n == 0 {
		return nil
	}
	f := &result.Fairness{EventsAvg: evSum / n, ExecAvgS: exSum / n}
	var evVar, exVar float64
	for i, r := range runs {
		k := float64(threads[i])
		evVar += k * (sq(r.Fairness.EventsStddev) + sq(r.Fairness.EventsAvg-f.EventsAvg))
		exVar += k * (sq(r.Fairness.ExecStddevS) + sq(r.Fairness.ExecAvgS-f.ExecAvgS))
	}
	f.EventsStddev, f.ExecStddevS = math.Sqrt(evVar/n), math.Sqrt(exVar/n)
	return f
}

func sq(x float64) float64 { return x * x }
