package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
)

// Measure runs the workload once against db and returns the run with its
// intervals. emit receives each interval as it completes, with its latency
// histogram (valid only during the call). A cancelled ctx
// ends the run early: the result then has Complete false.
func Measure(ctx context.Context, cfg Config, target string, db driver.DB, emit func(result.Interval, *hdrhistogram.Histogram)) (result.Run, error) {
	r := &measurement{cfg: cfg, db: db, emit: emit, openLoop: cfg.Rate > 0,
		s:   &runState{cfg: cfg, db: db, stopCh: make(chan struct{})},
		run: result.Run{Target: target}}
	r.s.remaining.Store(int64(cfg.Events)) // used only when --events is set
	defer r.closeConns()
	if err := r.connectThreads(ctx); err != nil {
		return r.run, err
	}
	r.startClock(ctx)
	r.startWorkers(ctx)
	r.loop(ctx)
	r.finish(ctx)
	r.summarize()
	r.run.Complete = r.s.failErr == nil && ctx.Err() == nil
	if r.run.Complete && r.run.Summary.Events == 0 {
		// A run that measured nothing is a failed run, not a 0 to divide by.
		r.run.Complete = false
		return r.run, fmt.Errorf("%w (%.1f s measured)", ErrNoEvents, r.run.Summary.DurationS)
	}
	return r.run, r.s.failErr
}

// ErrNoEvents fails a run that ended without a measured event.
var ErrNoEvents = errors.New("the run completed no event: a failed run")

// measurement is one Measure in its steps: connect the threads, start the
// clock and the workers, collect an interval at each tick while the
// timers run, then the tail and the summary. Its fields are what the steps
// hand each other; nothing here runs per event.
type measurement struct {
	cfg      Config
	db       driver.DB
	emit     func(result.Interval, *hdrhistogram.Histogram)
	openLoop bool
	s        *runState
	run      result.Run

	conns   []driver.Conn
	workers []workload.Worker
	types   *typeTally    // per-type counts (TPC-C), nil for other workloads
	counts  *serverCounts // the server's own counts (NOPM), nil when none
	done    chan struct{} // closed when every worker has returned

	start, measuredStart, lastTick time.Time
	stoppedAt                      time.Time // when the threads were told to stop
	inWarmup                       bool
	measured                       int           // measured intervals so far
	elapsed                        time.Duration // the measured time, read when the workers are done
	maxIntervals                   int           // -1: no cap

	total               stats.Counters
	totalHist, totalSvc *hdrhistogram.Histogram
	ivHist, ivSvc       *hdrhistogram.Histogram
}

// connectThreads connects and prepares every thread before the clock
// starts (sysbench's thread_init).
func (r *measurement) connectThreads(ctx context.Context) error {
	cfg := r.cfg
	if k := cfg.Kept; k != nil && k.fits(cfg.Threads, cfg.Workload) {
		r.conns, r.workers = k.conns, k.workers
		for range r.conns {
			rec := stats.NewRecorder(r.openLoop)
			rec.SetMeasuring(cfg.Warmup <= 0)
			r.s.recs = append(r.s.recs, rec)
		}
		return nil
	}
	r.conns = make([]driver.Conn, cfg.Threads)
	r.workers = make([]workload.Worker, cfg.Threads)
	if k := cfg.Kept; k != nil {
		k.Close()
		// A reconnect replaces a thread in these slices: the kept ones too.
		k.conns, k.workers, k.wl = r.conns, r.workers, cfg.Workload
	}
	if ta, ok := r.db.(driver.ThreadsAware); ok {
		ta.SetThreads(cfg.Threads)
	}
	for i := range r.conns {
		c, err := r.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("connect thread %d: %w", i, err)
		}
		r.conns[i] = c
		n, of := cfg.ThreadBase+i, cfg.Threads
		if cfg.ThreadsOf > 0 {
			of = cfg.ThreadsOf
		}
		w, err := cfg.Workload.NewWorker(ctx, c, n, of, cfg.Seed+uint64(n)*0x9e3779b9+1)
		if err != nil {
			return fmt.Errorf("thread %d: %w", i, err)
		}
		r.workers[i] = w
		rec := stats.NewRecorder(r.openLoop)
		rec.SetMeasuring(cfg.Warmup <= 0) // before any worker starts
		r.s.recs = append(r.s.recs, rec)
	}
	return nil
}

func (r *measurement) closeConns() {
	if r.cfg.Kept != nil {
		return // its owner's
	}
	for _, c := range r.conns {
		if c != nil {
			c.Close()
		}
	}
}

// startClock opens the windows of every cumulative counter and starts the
// run's clock (and the open loop's schedule).
func (r *measurement) startClock(ctx context.Context) {
	cfg := r.cfg
	r.types = newTypeTally(cfg.Workload, r.workers)
	r.counts = newServerCounts(cfg.Workload)
	if r.counts != nil && cfg.Warmup <= 0 {
		// Read before the honesty counter's window opens: these reads are
		// not the workload's statements.
		rctx, cancel := context.WithTimeout(ctx, CounterReadTimeout)
		r.counts.read(rctx, r.db, &r.counts.before)
		cancel()
	}
	if cfg.AtReady != nil {
		cfg.AtReady() // every thread connected and prepared; no event yet
	}
	cfg.StartWindows()
	r.start = time.Now()
	r.measuredStart, r.lastTick = r.start, r.start
	r.inWarmup = cfg.Warmup > 0
	if r.openLoop {
		r.s.arrivals = newArrivals(r.start, cfg.Rate, cfg.Seed)
	}
	r.totalHist, r.ivHist = stats.NewHistogram(), stats.NewHistogram()
	r.totalSvc, r.ivSvc = stats.NewHistogram(), stats.NewHistogram()
	// With a time limit there are exactly floor(time/interval) measured
	// interval lines, as in sysbench, whichever of the last tick and the
	// limit fires first.
	r.maxIntervals = -1
	if cfg.Time > 0 && cfg.ReportInterval > 0 {
		r.maxIntervals = int(cfg.Time / cfg.ReportInterval)
	}
}

// startWorkers starts one goroutine per thread; done closes when all return.
func (r *measurement) startWorkers(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A panic in a thread (a workload's bug) ends the run like any
			// failure: the caller still stops its targets and writes the result.
			defer func() {
				if p := recover(); p != nil {
					r.s.fail(fmt.Errorf("thread %d: internal error: %v", i, p))
				}
			}()
			r.s.work(ctx, i, r.conns, r.workers)
		}()
	}
	r.done = make(chan struct{})
	go func() { wg.Wait(); close(r.done) }()
}

// timers are the run's clocks: the report tick, the warm-up's end and the
// time limit (nil channels never fire).
type timers struct {
	tick, warmupEnd, timeLimit <-chan time.Time
	ticker                     *time.Ticker
	stop                       []func() bool
}

func (r *measurement) newTimers() *timers {
	t := &timers{}
	if r.cfg.Warmup > 0 {
		w := time.NewTimer(r.cfg.Warmup)
		t.warmupEnd, t.stop = w.C, append(t.stop, w.Stop)
	}
	if r.cfg.Time > 0 {
		l := time.NewTimer(r.cfg.Warmup + r.cfg.Time)
		t.timeLimit, t.stop = l.C, append(t.stop, l.Stop)
	}
	if r.cfg.ReportInterval > 0 {
		t.ticker = time.NewTicker(r.cfg.ReportInterval)
		t.tick = t.ticker.C
		t.stop = append(t.stop, func() bool { t.ticker.Stop(); return true })
	}
	return t
}

// loop waits for the workers while the timers fire: an interval at each
// tick, the warm-up's end, the time limit, a cancellation.
func (r *measurement) loop(ctx context.Context) {
	t := r.newTimers()
	defer func() {
		for _, stop := range t.stop {
			stop()
		}
	}()
	cancelled := ctx.Done()
	dog := r.newWatchdog()
	defer dog.stop()
	if r.cfg.Health != nil {
		// Ended before the loop returns: the run's error is final then.
		hctx, cancel := context.WithCancel(ctx)
		exited := make(chan struct{})
		go func() { defer close(exited); r.watchHealth(hctx) }()
		defer func() { cancel(); <-exited }()
	}
	for {
		select {
		case now := <-dog.tick():
			dog.check(now)
		case now := <-t.tick:
			r.collect(now, r.inWarmup)
		case now := <-t.warmupEnd:
			r.endWarmup(ctx, now, t.ticker)
		case now := <-t.timeLimit:
			r.s.halt()
			r.stoppedAt = now
			if t.tick != nil && now.Sub(r.lastTick) > r.cfg.ReportInterval/2 {
				r.collect(now, false)
			}
		case <-cancelled:
			cancelled = nil // once
			r.s.halt()
			r.stoppedAt = time.Now()
			// Statements run without the context (no watcher per query);
			// threads stuck in one get a second, then their sockets are shut.
			time.AfterFunc(time.Second, func() {
				select {
				case <-r.done:
				default:
					r.db.Unblock()
				}
			})
		case <-r.done:
			r.s.halt()
			if r.stoppedAt.IsZero() {
				r.stoppedAt = time.Now()
			}
			return
		}
	}
}

// HealthInterval is how often Config.Health is asked during a run.
var HealthInterval = time.Second

// watchHealth asks Config.Health until ctx ends (the run's loop returns);
// its first error fails the run and shuts the sockets (threads may sit in
// a read).
func (r *measurement) watchHealth(ctx context.Context) {
	t := time.NewTicker(HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := r.cfg.Health(hctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			r.s.fail(err)
			r.db.Unblock()
			return
		}
	}
}

// CounterReadTimeout bounds each read of the server's own counters
// (honesty, server time, TPC-C's counts): a server that stopped answering
// must not hold the run's end for ever.
var CounterReadTimeout = 10 * time.Second

// ErrServerStalled fails a run in which no event completed for
// --stall-timeout while threads waited in one.
var ErrServerStalled = errors.New("the server stopped answering")

// watchdog checks, every quarter of the stall timeout, that events still
// complete; after a whole timeout without one while threads were in an
// event, it shuts the sockets and fails the run with the reason, instead
// of waiting for ever on a paused container.
type watchdog struct {
	r        *measurement
	ticker   *time.Ticker
	last     uint64
	lastMove time.Time
}

func (r *measurement) newWatchdog() *watchdog {
	if r.cfg.StallTimeout <= 0 {
		return nil
	}
	return &watchdog{r: r, ticker: time.NewTicker(max(r.cfg.StallTimeout/4, 10*time.Millisecond)), lastMove: time.Now()}
}

func (w *watchdog) tick() <-chan time.Time {
	if w == nil {
		return nil
	}
	return w.ticker.C
}

func (w *watchdog) stop() {
	if w != nil {
		w.ticker.Stop()
	}
}

// check is one look: has any thread completed an event since the last?
func (w *watchdog) check(now time.Time) {
	var n uint64
	for _, rec := range w.r.s.recs {
		e, _ := rec.Fairness()
		n += e
	}
	waiting := w.r.s.arrivals == nil || w.r.s.busy.Load() > 0 // an open loop may idle between arrivals
	if n != w.last || !waiting {
		w.last, w.lastMove = n, now
		return
	}
	if now.Sub(w.lastMove) >= w.r.cfg.StallTimeout {
		w.r.s.fail(fmt.Errorf("%w: no event completed for %s (--stall-timeout; a paused container, or a hung server)",
			ErrServerStalled, w.r.cfg.StallTimeout))
		w.r.db.Unblock()
		w.lastMove = now // once
	}
}

// endWarmup ends --warmup-time: its events ran but do not count (sysbench
// 1.1's rule). Each recorder starts measuring in the swap itself: an event
// that sees it measuring spends the --events budget and is recorded as
// measured; only events in flight (one per thread) straddle.
func (r *measurement) endWarmup(ctx context.Context, now time.Time, ticker *time.Ticker) {
	for _, rec := range r.s.recs {
		rec.MeasureFromNextSwap()
	}
	r.collect(now, true)
	for _, rec := range r.s.recs {
		rec.ResetTotals()
	}
	if r.counts != nil {
		rctx, cancel := context.WithTimeout(ctx, CounterReadTimeout)
		r.counts.read(rctx, r.db, &r.counts.before) // HammerDB's ramp-up ends here
		cancel()
	}
	r.inWarmup = false
	r.measuredStart, r.lastTick = now, now
	if ticker != nil {
		ticker.Reset(r.cfg.ReportInterval)
	}
}

// collect closes the interval ending at now: its counts and latencies
// from every thread's recorder, the target's telemetry and the machine's
// noise; a measured one adds to the run's totals.
func (r *measurement) collect(now time.Time, warm bool) {
	cfg := r.cfg
	if !warm && r.maxIntervals >= 0 && r.measured >= r.maxIntervals {
		return
	}
	var c stats.Counters
	r.ivHist.Reset()
	r.ivSvc.Reset()
	for _, rec := range r.s.recs {
		rec.Swap(&c, r.ivHist, r.ivSvc)
	}
	iv := makeInterval(now.Sub(r.measuredStart), now.Sub(r.lastTick), c, r.ivHist, cfg.Percentile)
	iv.ReadMiBPerS, iv.WrittenMiBPerS = mibPerS(cfg.Workload, c.Reads, c.Writes, iv.SpanS)
	iv.Warmup = warm
	if r.types != nil {
		r.types.swap()
		r.types.interval(&iv, !warm)
	}
	r.run.WarmupQueries += c.WarmQueries // events begun in the warm-up
	r.run.WarmupEvents += c.WarmEvents
	if warm {
		r.run.WarmupQueries += c.Queries()
		r.run.WarmupEvents += c.Events
		iv.TS = math.Round(now.Sub(r.start).Seconds()*1000) / 1000
	} else {
		r.total.Add(c)
		r.totalHist.Merge(r.ivHist)
		r.totalSvc.Merge(r.ivSvc)
		r.measured++
	}
	if r.openLoop {
		iv.QueueLen, _ = r.s.arrivals.backlog(now)
		if iv.QueueLen > QueueCapacity {
			r.s.fail(fmt.Errorf("%w (%g/s, more than %d events queued)", ErrQueueFull, cfg.Rate, QueueCapacity))
		}
		iv.Concurrency = uint64(max(r.s.busy.Load(), 0))
		if r.ivSvc.TotalCount() > 0 {
			iv.ServiceP95US = float64(r.ivSvc.ValueAtQuantile(95))
		}
	}
	cfg.AddHostSide(&iv)
	r.lastTick = now
	r.run.Intervals = append(r.run.Intervals, iv)
	if r.emit != nil {
		r.emit(iv, r.ivHist)
	}
}

// finish takes the tail after the last full interval into the totals (as
// sysbench does), closes the workers and reads the server's counts at
// the end.
func (r *measurement) finish(ctx context.Context) {
	r.elapsed = time.Since(r.measuredStart)
	var tail stats.Counters
	tailHist, tailSvc := stats.NewHistogram(), stats.NewHistogram()
	for _, rec := range r.s.recs {
		rec.Swap(&tail, tailHist, tailSvc)
		rec.Release() // every worker has returned: the next run reuses its histograms
	}
	for i, w := range r.workers {
		if r.cfg.Kept != nil {
			break // parked, not finished: the owner closes them
		}
		var c workload.Counts
		if err := w.Close(context.WithoutCancel(ctx), &c); err != nil && ctx.Err() == nil {
			r.s.fail(fmt.Errorf("thread %d finishing: %w", i, err))
		}
		tail.Reads += c.Reads
		tail.Writes += c.Writes
		tail.Other += c.Other
	}
	// A failed run's counters are not needed (and a stalled or dead
	// server's cannot be read), nor a stopped one's: a stop never waits on
	// the server.
	cut := r.s.failErr != nil || ctx.Err() != nil
	if r.cfg.AtEnd != nil && !cut {
		r.cfg.AtEnd() // every statement done, bulk_insert's last flush too
	}
	if r.counts != nil && !r.inWarmup && !cut {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CounterReadTimeout)
		r.counts.read(rctx, r.db, &r.counts.after)
		cancel()
	}
	if r.types != nil {
		var tailTypes result.Interval
		r.types.swap()
		r.types.interval(&tailTypes, !r.inWarmup)
	}
	r.run.WarmupQueries += tail.WarmQueries
	r.run.WarmupEvents += tail.WarmEvents
	if !r.inWarmup {
		r.total.Add(tail)
		r.totalHist.Merge(tailHist)
		r.totalSvc.Merge(tailSvc)
	}
}

// summarize is the run's summary over its measured time.
func (r *measurement) summarize() {
	elapsed := r.elapsed
	if r.inWarmup {
		elapsed = 0 // interrupted during warm-up: nothing was measured
	}
	cfg, total, sum := r.cfg, r.total, &r.run.Summary
	*sum = summarize(elapsed, total, r.totalHist, cfg.Percentile)
	sum.WarmupS = cfg.Warmup.Seconds()
	sum.ReadMiBPerS, sum.WrittenMiBPerS = mibPerS(cfg.Workload, total.Reads, total.Writes, elapsed.Seconds())
	if r.types != nil {
		r.types.summary(sum, elapsed.Minutes())
	}
	if r.counts != nil {
		r.counts.summary(sum, elapsed.Minutes())
	}
	if r.openLoop && total.Events > 0 {
		sum.ServiceAvgUS = us(total.ServiceSumNS) / float64(total.Events)
		sum.ServiceP95US = float64(r.totalSvc.ValueAtQuantile(95))
	}
	if r.openLoop {
		if total.Wakes > 0 {
			sum.WakeLateAvgUS = us(total.WakeLateNS) / float64(total.Wakes)
		}
		// Arrivals still queued when the run stopped were never served:
		// under overload they are the worst latencies, so say how many.
		n, oldest := r.s.arrivals.backlog(r.stoppedAt)
		sum.UnservedEvents = n
		if n > 0 {
			sum.UnservedMaxWaitUS = us(uint64(r.stoppedAt.Sub(oldest).Nanoseconds()))
		}
	}
	r.run.Fairness = fairness(r.s.recs)
	if r.totalHist.TotalCount() > 0 {
		if enc, err := r.totalHist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			r.run.Histogram = string(enc)
		}
	}
}
