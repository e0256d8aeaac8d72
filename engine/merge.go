package engine

import (
	"context"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
)

// intervalMerger sends interval events without ever blocking the engine:
// when the consumer is behind, the intervals it has not taken are merged
// into one pending interval (counts and histograms add, so the merged
// figures stay exact) that is sent as soon as there is room.
type intervalMerger struct {
	out     chan<- Event
	pending *Event
	hist    *hdrhistogram.Histogram // the pending interval's latencies
	pct     float64
	// workload, if it moves data, gives the merged interval its MiB/s.
	workload workload.Workload
}

func newIntervalMerger(out chan<- Event, pct float64) *intervalMerger {
	return &intervalMerger{out: out, pct: pct}
}

// send sends e (an interval of workload w, with its latencies h), or
// merges it into the pending one.
func (m *intervalMerger) send(e Event, h *hdrhistogram.Histogram, w workload.Workload) {
	m.workload = w
	if m.pending != nil && (m.pending.Target != e.Target || m.pending.Block != e.Block || m.pending.Interval.Warmup != e.Interval.Warmup) {
		m.flushBlocking(context.Background())
	}
	if m.pending == nil {
		select {
		case m.out <- e:
			return
		default:
		}
		m.pending = &e
		m.hist = hdrhistogram.Import(h.Export())
		return
	}
	m.merge(e, h)
	select {
	case m.out <- *m.pending:
		m.pending, m.hist = nil, nil
	default:
	}
}

func (m *intervalMerger) merge(e Event, h *hdrhistogram.Histogram) {
	p, iv := &m.pending.Interval, e.Interval
	// Every rate is a count over the interval's own span, also for a span
	// in which no event completed (a stalled second still has its length).
	span := p.SpanS + iv.SpanS
	if span > 0 && (p.Types != nil || iv.Types != nil) {
		// TPC-C's rates are counts over each span: add the counts.
		p.TPMC = (p.TPMC*p.SpanS + iv.TPMC*iv.SpanS) / span
		p.TPM = (p.TPM*p.SpanS + iv.TPM*iv.SpanS) / span
		p.Types = mergeTypes(p.Types, iv.Types)
	}
	p.TS, p.SpanS = iv.TS, span
	p.Figures.Add(iv.Figures)
	p.QueueLen, p.Concurrency = iv.QueueLen, iv.Concurrency
	m.hist.Merge(h)
	if span > 0 {
		p.TPS = float64(p.Events) / span
		p.QPS = float64(p.Reads+p.Writes+p.Other) / span
		p.ReadMiBPerS, p.WrittenMiBPerS = mibPerS(m.workload, p.Reads, p.Writes, span)
	}
	if m.hist.TotalCount() > 0 {
		p.P50US, p.P95US, p.P99US, p.PctUS = percentiles(m.hist, m.pct)
		p.MaxUS = float64(m.hist.Max())
	}
}

func (m *intervalMerger) flushBlocking(ctx context.Context) {
	if m.pending == nil {
		return
	}
	select {
	case m.out <- *m.pending:
	case <-ctx.Done():
	}
	m.pending, m.hist = nil, nil
}

// flush delivers the pending interval at the end of a run.
func (m *intervalMerger) flush(ctx context.Context) { m.flushBlocking(ctx) }

// mergeTypes adds per-type counts; a merged p95 is the larger of the two
// (an upper bound: the per-type histograms are not carried to the display).
func mergeTypes(a, b map[string]result.TypeInterval) map[string]result.TypeInterval {
	out := map[string]result.TypeInterval{}
	for _, m := range []map[string]result.TypeInterval{a, b} {
		for n, t := range m {
			o := out[n]
			o.Count += t.Count
			o.Rollbacks += t.Rollbacks
			o.Errors += t.Errors
			o.P95US = max(o.P95US, t.P95US)
			out[n] = o
		}
	}
	return out
}
