// Package stats holds the measurement side of the engine: per-worker
// recorders whose interval histograms are swapped without stopping the
// workers, interval snapshots that merge exactly, and the statistics of runs.
package stats

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms cover 1 µs .. 1 h at 3 significant digits.
const (
	minLatencyUS = 1
	maxLatencyUS = 3600 * 1000 * 1000
	sigFigs      = 3
)

// NewHistogram returns an empty latency histogram in microseconds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(minLatencyUS, maxLatencyUS, sigFigs)
}

// freeHists keeps emptied histograms for the recorders. One histogram of
// that range and precision is 188 KB; a recorder used to own two (the
// second for Swap's exchange), made anew each run: at 128 threads 48 MB of
// a 50-MB live heap, and 48 MB more at every run of a long plan. Now a
// recorder owns one (two with service times), Swap exchanges it for one
// from here, and Release hands a finished run's to the next run's
// recorders (measured at 128 threads, four targets: live heap 50 → 28 MB,
// RSS at 60 s 130 MB → 99 MiB; docs/usage.md).
var freeHists = sync.Pool{New: func() any { return NewHistogram() }}

func takeHist() *hdrhistogram.Histogram { return freeHists.Get().(*hdrhistogram.Histogram) }

// giveHist empties h and keeps it for reuse.
func giveHist(h *hdrhistogram.Histogram) {
	h.Reset()
	freeHists.Put(h)
}

// Counters are what a worker adds up between two snapshots.
type Counters struct {
	Events, Reads, Writes, Other, Errors, Reconnects uint64
	LatencySumNS                                     uint64 // exact sum of event latencies
	ServiceSumNS                                     uint64 // exact sum of service times (open loop)
	WakeLateNS, Wakes                                uint64 // open loop: how late threads woke for their arrivals
	MinNS, MaxNS                                     uint64 // exact extremes (MinNS 0 = none yet)
	// WarmEvents and WarmQueries are events that began during
	// --warmup-time and ended after it: not measured events (they did not
	// spend --events), their statements counted with the warm-up's.
	WarmEvents, WarmQueries uint64
}

// Add accumulates o.
func (c *Counters) Add(o Counters) {
	c.Events += o.Events
	c.Reads += o.Reads
	c.Writes += o.Writes
	c.Other += o.Other
	c.Errors += o.Errors
	c.Reconnects += o.Reconnects
	c.LatencySumNS += o.LatencySumNS
	c.ServiceSumNS += o.ServiceSumNS
	c.WakeLateNS += o.WakeLateNS
	c.Wakes += o.Wakes
	if o.MinNS != 0 && (c.MinNS == 0 || o.MinNS < c.MinNS) {
		c.MinNS = o.MinNS
	}
	if o.MaxNS > c.MaxNS {
		c.MaxNS = o.MaxNS
	}
	c.WarmEvents += o.WarmEvents
	c.WarmQueries += o.WarmQueries
}

// Queries is reads + writes + other.
func (c Counters) Queries() uint64 { return c.Reads + c.Writes + c.Other }

// Recorder is one worker's measurements. The worker records under a mutex no
// other worker touches (so it is uncontended); the reporter takes the same
// mutex only to swap the histogram and counters out once per interval.
type Recorder struct {
	mu   sync.Mutex
	c    Counters
	hist *hdrhistogram.Histogram
	// service time (without queue wait) when an open-loop rate is set
	svc         *hdrhistogram.Histogram
	withService bool
	// measuring is false during --warmup-time; it turns true in the swap
	// that ends the warm-up, so an event sees it true only if it will be
	// recorded in the measured part (its --events budget is spent then).
	measuring      atomic.Bool
	pendingMeasure bool
	// per-thread totals for sysbench's "Threads fairness"
	totalEvents uint64
	totalBusyNS uint64
}

// NewRecorder returns an empty recorder; withService also keeps a
// histogram of service times (open-loop runs, where latency includes the
// time an event waited in the queue).
func NewRecorder(withService bool) *Recorder {
	r := &Recorder{hist: takeHist(), withService: withService}
	if withService {
		r.svc = takeHist()
	}
	return r
}

// Release gives the recorder's histograms back for reuse once its run is
// over (after the last Swap, every worker returned): nothing may record
// on it after that (RecordEvent would find no histogram); its counters
// and Fairness stay readable, and a Swap takes its counters only.
func (r *Recorder) Release() {
	r.mu.Lock()
	h, sh := r.hist, r.svc
	r.hist, r.svc = nil, nil
	r.mu.Unlock()
	for _, x := range []*hdrhistogram.Histogram{h, sh} {
		if x != nil {
			giveHist(x)
		}
	}
}

func toUS(d time.Duration) int64 {
	return min(max(d.Microseconds(), minLatencyUS), maxLatencyUS)
}

// RecordEvent adds one finished event with its latency, its service time
// (equal to the latency in closed-loop runs) and its statements. warm says
// the event began during --warmup-time: if the warm-up has ended since, it
// is not a measured event and goes with the warm-up's counts.
func (r *Recorder) RecordEvent(lat, service time.Duration, reads, writes, other uint64, warm bool) {
	ns := uint64(lat.Nanoseconds())
	us := toUS(lat)
	r.mu.Lock()
	if warm && r.measuring.Load() {
		r.c.WarmEvents++
		r.c.WarmQueries += reads + writes + other
		r.mu.Unlock()
		return
	}
	if r.svc != nil {
		_ = r.svc.RecordValue(toUS(service))
		r.c.ServiceSumNS += uint64(service.Nanoseconds())
	}
	r.c.Events++
	r.c.Reads += reads
	r.c.Writes += writes
	r.c.Other += other
	r.c.LatencySumNS += ns
	if r.c.MinNS == 0 || ns < r.c.MinNS {
		r.c.MinNS = ns
	}
	if ns > r.c.MaxNS {
		r.c.MaxNS = ns
	}
	_ = r.hist.RecordValue(us)
	r.totalEvents++
	r.totalBusyNS += uint64(service.Nanoseconds()) // time the thread spent executing, as sysbench's fairness
	r.mu.Unlock()
}

// RecordStatements adds statements that ran outside a finished event (an
// event cut short by an ignored error, bulk_insert's last flush).
func (r *Recorder) RecordStatements(reads, writes, other uint64) {
	r.mu.Lock()
	r.c.Reads += reads
	r.c.Writes += writes
	r.c.Other += other
	r.mu.Unlock()
}

// RecordWake adds how late a thread woke for an arrival it waited for
// (open loop): that lateness is counted in the event's latency although no
// queue caused it, so it is measured and reported.
func (r *Recorder) RecordWake(late time.Duration) {
	r.mu.Lock()
	r.c.WakeLateNS += uint64(max(late, 0).Nanoseconds())
	r.c.Wakes++
	r.mu.Unlock()
}

// RecordError counts an ignored error that restarts the event.
func (r *Recorder) RecordError() {
	r.mu.Lock()
	r.c.Errors++
	r.mu.Unlock()
}

// RecordReconnect counts a lost connection replaced by a new one. As in
// sysbench, a reconnect counts only as a reconnect, not also as an error.
func (r *Recorder) RecordReconnect() {
	r.mu.Lock()
	r.c.Reconnects++
	r.mu.Unlock()
}

// Swap moves the counters and histograms recorded since the last swap
// into acc, hist and svc (added to; svc may be nil), leaving the recorder
// empty. Only one goroutine (the reporter) may call Swap.
func (r *Recorder) Swap(acc *Counters, hist, svc *hdrhistogram.Histogram) {
	// The exchange histograms are taken before the lock: the worker waits
	// only for the pointers to change hands, never for a merge.
	fresh, freshSvc := takeHist(), (*hdrhistogram.Histogram)(nil)
	if r.withService {
		freshSvc = takeHist()
	}
	r.mu.Lock()
	if r.pendingMeasure {
		r.measuring.Store(true)
		r.pendingMeasure = false
	}
	c := r.c
	r.c = Counters{}
	h, sh := r.hist, r.svc
	if h != nil { // not released
		r.hist, r.svc = fresh, freshSvc
	}
	r.mu.Unlock()
	acc.Add(c)
	if h == nil {
		// Released (its run is over): no histogram to swap, and the
		// exchange ones go back.
		giveHist(fresh)
		if freshSvc != nil {
			giveHist(freshSvc)
		}
		return
	}
	hist.Merge(h)
	giveHist(h)
	if sh != nil {
		if svc != nil {
			svc.Merge(sh)
		}
		giveHist(sh)
	}
}

// ResetTotals forgets the per-thread totals (after a warm-up).
func (r *Recorder) ResetTotals() {
	r.mu.Lock()
	r.totalEvents, r.totalBusyNS = 0, 0
	r.mu.Unlock()
}

// Fairness returns the thread's events and busy time since it started.
func (r *Recorder) Fairness() (events uint64, busy time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.totalEvents, time.Duration(r.totalBusyNS)
}

// Measuring says whether an event starting now is measured (not warm-up).
func (r *Recorder) Measuring() bool { return r.measuring.Load() }

// SetMeasuring sets it at once (a run without warm-up).
func (r *Recorder) SetMeasuring(on bool) { r.measuring.Store(on) }

// MeasureFromNextSwap ends the warm-up at the next Swap, atomically with it.
func (r *Recorder) MeasureFromNextSwap() {
	r.mu.Lock()
	r.pendingMeasure = true
	r.mu.Unlock()
}
