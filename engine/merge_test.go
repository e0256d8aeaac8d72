package engine

import (
	"context"
	"math"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

func TestMergerNeverBlocksAndMergesExactly(t *testing.T) {
	out := make(chan Event, 1)
	m := newIntervalMerger(out, 95)
	hist := func(vals ...int64) *hdrhistogram.Histogram {
		h := stats.NewHistogram()
		for _, v := range vals {
			h.RecordValue(v)
		}
		return h
	}
	iv := func(ts float64, events uint64) result.Interval {
		return result.Interval{Figures: result.Figures{Events: events, Reads: events, TPS: float64(events)}, TS: ts, SpanS: 1}
	}
	// The consumer takes nothing: the first send fills the channel, the
	// next two merge into one pending interval; none of the calls blocks.
	m.send(Event{Kind: EventInterval, Target: "a", Interval: iv(1, 10)}, hist(100), nil)
	m.send(Event{Kind: EventInterval, Target: "a", Interval: iv(2, 20)}, hist(100, 200), nil)
	m.send(Event{Kind: EventInterval, Target: "a", Interval: iv(3, 30)}, hist(5000, 5000, 5000), nil)
	first := <-out
	if first.Interval.Events != 10 {
		t.Fatalf("first interval altered: %+v", first.Interval)
	}
	m.flush(context.Background())
	merged := (<-out).Interval
	if merged.Events != 50 || merged.Reads != 50 || merged.TS != 3 || merged.TPS != 25 {
		t.Fatalf("merged counts: %+v", merged)
	}
	// p95 of {100, 200, 5000, 5000, 5000} from the merged histogram.
	if merged.P95US < 4990 || merged.P95US > 5010 || merged.P50US < 4990 {
		t.Fatalf("merged percentiles not from the merged histograms: %+v", merged)
	}
}

// TestMergeKeepsAStalledIntervalsLength: a second with no completed event
// still lasted a second. Merged with a 100-event second it gives 50 TPS
// (the rate rebuilt from events/TPS took its length as 0 and gave 100).
func TestMergeKeepsAStalledIntervalsLength(t *testing.T) {
	out := make(chan Event, 1)
	out <- Event{} // the consumer is behind: the next two merge
	m := newIntervalMerger(out, 95)
	stalled := result.Interval{Figures: result.Figures{Errors: 8}, TS: 1, SpanS: 1}
	busy := result.Interval{Figures: result.Figures{Events: 100, Reads: 100, TPS: 100, QPS: 100}, TS: 2, SpanS: 1}
	m.send(Event{Kind: EventInterval, Target: "a", Interval: stalled}, stats.NewHistogram(), nil)
	m.send(Event{Kind: EventInterval, Target: "a", Interval: busy}, stats.NewHistogram(), nil)
	<-out
	m.flush(context.Background())
	merged := (<-out).Interval
	if merged.SpanS != 2 || merged.TPS != 50 || merged.QPS != 50 || merged.Errors != 8 {
		t.Fatalf("merged: %+v, want span 2 s, 50 TPS, 8 errors", merged)
	}
}

// TPC-C's per-minute rates merge as counts over the joint span: 10
// New-Orders in 1 s (600 tpmC) and 10 in 2 s (300) are 20 in 3 s (400).
func TestMergeAddsTPCCCounts(t *testing.T) {
	out := make(chan Event, 1)
	out <- Event{}
	m := newIntervalMerger(out, 95)
	a := result.Interval{Figures: result.Figures{Events: 20}, TS: 1, SpanS: 1, TPMC: 600, TPM: 1200,
		Types: map[string]result.TypeInterval{"new_order": {Count: 10, P95US: 900}, "payment": {Count: 10, Errors: 1, P95US: 400}}}
	b := result.Interval{Figures: result.Figures{Events: 30}, TS: 3, SpanS: 2, TPMC: 300, TPM: 900,
		Types: map[string]result.TypeInterval{"new_order": {Count: 11, Rollbacks: 1, P95US: 1200}, "payment": {Count: 19, P95US: 300}}}
	m.send(Event{Kind: EventInterval, Target: "a", Interval: a}, stats.NewHistogram(), nil)
	m.send(Event{Kind: EventInterval, Target: "a", Interval: b}, stats.NewHistogram(), nil)
	<-out
	m.flush(context.Background())
	got := (<-out).Interval
	if math.Abs(got.TPMC-400) > 1e-9 || math.Abs(got.TPM-1000) > 1e-9 {
		t.Fatalf("merged tpmC %.2f TPM %.2f, want 400 and 1000", got.TPMC, got.TPM)
	}
	no, pay := got.Types["new_order"], got.Types["payment"]
	if no.Count != 21 || no.Rollbacks != 1 || no.P95US != 1200 || pay.Count != 29 || pay.Errors != 1 || pay.P95US != 400 {
		t.Fatalf("merged types %+v", got.Types)
	}
}
