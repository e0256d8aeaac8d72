package engine

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
)

// NOPM and TPM are the counters' deltas per minute of measured time.
func TestServerCountsArePerMinuteDeltas(t *testing.T) {
	c := &serverCounts{before: workload.ServerCounters{Headline: 30010, Transactions: 5000},
		after: workload.ServerCounters{Headline: 30310, Transactions: 5700, Source: "test"}}
	var s result.Summary
	c.summary(&s, 0.5) // 30 s
	if s.NOPM != 600 || s.TPM != 1400 || s.CountedBy != "test" || s.ServerCountsNote != "" {
		t.Fatalf("summary %+v, want NOPM 600 TPM 1400", s)
	}
	back := &serverCounts{before: workload.ServerCounters{Headline: 500}, after: workload.ServerCounters{Headline: 100}}
	s = result.Summary{}
	back.summary(&s, 1)
	if s.NOPM != 0 || !strings.Contains(s.ServerCountsNote, "went back") {
		t.Fatalf("counters that went back: %+v", s)
	}
	failed := &serverCounts{err: errors.New("no district table")}
	s = result.Summary{}
	failed.summary(&s, 1)
	if s.NOPM != 0 || !strings.Contains(s.ServerCountsNote, "no district table") {
		t.Fatalf("a failed read: %+v", s)
	}
}

// fakeTyped is a worker that did a fixed set of transactions.
type fakeTyped struct{ counts []workload.TypeCounts }

func (f *fakeTyped) SwapTypes(into []workload.TypeCounts) {
	for i, c := range f.counts {
		into[i].Done += c.Done
		into[i].Rollbacks += c.Rollbacks
		into[i].Errors += c.Errors
		for range c.Done {
			_ = into[i].Hist.RecordValue(1000 * int64(i+1))
		}
	}
	f.counts = make([]workload.TypeCounts, len(f.counts))
}

// tpmC counts committed New-Orders only (rollbacks are out), TPM every
// completed transaction, both per minute of the interval's span.
func TestTypeTallyRates(t *testing.T) {
	w1 := &fakeTyped{counts: []workload.TypeCounts{{Done: 10, Rollbacks: 1}, {Done: 8, Errors: 2}}}
	w2 := &fakeTyped{counts: []workload.TypeCounts{{Done: 5}, {Done: 7}}}
	tt := &typeTally{names: []string{"new_order", "payment"}, headline: 0, workers: []workload.TypedWorker{w1, w2}}
	tt.iv, tt.tot = make([]workload.TypeCounts, 2), make([]workload.TypeCounts, 2)
	for i := range tt.iv {
		tt.iv[i].Hist, tt.tot[i].Hist = stats.NewHistogram(), stats.NewHistogram()
	}
	tt.swap()
	iv := result.Interval{SpanS: 2}
	tt.interval(&iv, true)
	// 14 committed New-Orders and 30 transactions in 2 s.
	if iv.TPMC != 420 || iv.TPM != 900 {
		t.Fatalf("tpmC %.1f TPM %.1f, want 420 and 900", iv.TPMC, iv.TPM)
	}
	if no := iv.Types["new_order"]; no.Count != 15 || no.Rollbacks != 1 || no.P95US < 999 || no.P95US > 1001 {
		t.Fatalf("new_order %+v", no)
	}
	if pay := iv.Types["payment"]; pay.Count != 15 || pay.Errors != 2 {
		t.Fatalf("payment %+v", pay)
	}
	// A second, empty interval adds nothing; a warm-up one is not totalled.
	tt.swap()
	tt.interval(&result.Interval{SpanS: 1}, true)
	w1.counts[0].Done = 100
	tt.swap()
	tt.interval(&result.Interval{SpanS: 1}, false)
	var s result.Summary
	tt.summary(&s, 0.5)
	if s.ClientTPMC != 28 || s.Types["new_order"].Count != 15 || math.Abs(s.Types["payment"].AvgUS-2000) > 2 {
		t.Fatalf("summary client tpmC %.1f types %+v", s.ClientTPMC, s.Types)
	}
}
