package engine

import (
	"context"
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
)

// typeTally collects a typed workload's per-type counts from its workers
// once per interval, and their totals over the measured time.
type typeTally struct {
	names    []string
	headline int
	workers  []workload.TypedWorker
	iv, tot  []workload.TypeCounts
}

func newTypeTally(w workload.Workload, workers []workload.Worker) *typeTally {
	typed, ok := w.(workload.Typed)
	if !ok {
		return nil
	}
	t := &typeTally{names: typed.TypeNames(), headline: typed.HeadlineType()}
	for _, wk := range workers {
		if tw, ok := wk.(workload.TypedWorker); ok {
			t.workers = append(t.workers, tw)
		}
	}
	t.iv, t.tot = make([]workload.TypeCounts, len(t.names)), make([]workload.TypeCounts, len(t.names))
	for i := range t.names {
		t.iv[i].Hist, t.tot[i].Hist = stats.NewHistogram(), stats.NewHistogram()
	}
	return t
}

// swap takes the workers' counts since the last swap into the interval's.
func (t *typeTally) swap() {
	for i := range t.iv {
		t.iv[i] = workload.TypeCounts{Hist: t.iv[i].Hist}
		t.iv[i].Hist.Reset()
	}
	for _, w := range t.workers {
		w.SwapTypes(t.iv)
	}
}

// interval fills iv's per-type figures and client-counted rates, and adds
// the interval to the totals when it is measured.
func (t *typeTally) interval(iv *result.Interval, measured bool) {
	iv.Types = map[string]result.TypeInterval{}
	var all uint64
	for i, n := range t.names {
		c := t.iv[i]
		ti := result.TypeInterval{Count: c.Done, Rollbacks: c.Rollbacks, Errors: c.Errors}
		if c.Hist.TotalCount() > 0 {
			ti.P95US = float64(c.Hist.ValueAtQuantile(95))
		}
		iv.Types[n] = ti
		all += c.Done
		if measured {
			t.add(i, c)
		}
	}
	if iv.SpanS > 0 {
		h := t.iv[t.headline]
		iv.TPMC = float64(h.Done-h.Rollbacks) * 60 / iv.SpanS
		iv.TPM = float64(all) * 60 / iv.SpanS
	}
}

func (t *typeTally) add(i int, c workload.TypeCounts) {
	t.tot[i].Done += c.Done
	t.tot[i].Rollbacks += c.Rollbacks
	t.tot[i].Errors += c.Errors
	t.tot[i].Hist.Merge(c.Hist)
}

// summary fills the run's per-type figures and the client's tpmC.
func (t *typeTally) summary(s *result.Summary, minutes float64) {
	s.Types = map[string]result.TypeSummary{}
	for i, n := range t.names {
		c := t.tot[i]
		ts := result.TypeSummary{Count: c.Done, Rollbacks: c.Rollbacks, Errors: c.Errors}
		if c.Hist.TotalCount() > 0 {
			ts.AvgUS, ts.P50US, ts.P95US, ts.P99US, ts.MaxUS = typePercentiles(c.Hist)
		}
		s.Types[n] = ts
	}
	if minutes > 0 {
		h := t.tot[t.headline]
		s.ClientTPMC = float64(h.Done-h.Rollbacks) / minutes
	}
}

func typePercentiles(h *hdrhistogram.Histogram) (avg, p50, p95, p99, maxV float64) {
	return h.Mean(), float64(h.ValueAtQuantile(50)), float64(h.ValueAtQuantile(95)), float64(h.ValueAtQuantile(99)), float64(h.Max())
}

// serverCounts reads a ServerCounted workload's figures at the start and
// the end of the measured time.
type serverCounts struct {
	w             workload.ServerCounted
	before, after workload.ServerCounters
	err           error
}

func newServerCounts(w workload.Workload) *serverCounts {
	sc, ok := w.(workload.ServerCounted)
	if !ok {
		return nil
	}
	return &serverCounts{w: sc}
}

// read takes one reading into into; after a failed one the run has none.
func (c *serverCounts) read(ctx context.Context, db driver.DB, into *workload.ServerCounters) {
	if c.err == nil {
		*into, c.err = c.w.ServerCounters(ctx, db)
	}
}

// summary sets NOPM and TPM, or says why they are missing.
func (c *serverCounts) summary(s *result.Summary, minutes float64) {
	switch {
	case c.err != nil:
		s.ServerCountsNote = fmt.Sprintf("the server's counts could not be read: %v", c.err)
	case minutes <= 0:
		s.ServerCountsNote = "no measured time"
	case c.after.Headline < c.before.Headline || c.after.Transactions < c.before.Transactions:
		s.ServerCountsNote = "the server's counters went back (a restart or a reload during the run?)"
	default:
		s.NOPM = float64(c.after.Headline-c.before.Headline) / minutes
		s.TPM = float64(c.after.Transactions-c.before.Transactions) / minutes
		s.CountedBy = c.after.Source
	}
}
