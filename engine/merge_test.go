package engine

import (
	"context"
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
		return result.Interval{TS: ts, Events: events, Reads: events, TPS: float64(events)}
	}
	// The consumer takes nothing: the first send fills the channel, the
	// next two merge into one pending interval; none of the calls blocks.
	m.send(Event{Kind: EventInterval, Target: "a", Interval: iv(1, 10)}, hist(100))
	m.send(Event{Kind: EventInterval, Target: "a", Interval: iv(2, 20)}, hist(100, 200))
	m.send(Event{Kind: EventInterval, Target: "a", Interval: iv(3, 30)}, hist(5000, 5000, 5000))
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
