// Package engine drives a workload against targets and measures it. It
// emits Events (phases, prepare progress, intervals, finished runs) on a
// bounded channel and owns the Result. It imports no UI, no container code
// and no database protocol: targets reach it as a name and a driver.Opener.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/sbrand"
)

// Target is the engine's view of a database: a name and a way to open
// connections to it through its protocol's driver.
type Target struct {
	Name string
	Open driver.Opener
	// Telemetry reads the target's resource use at each interval (may be nil).
	Telemetry func() map[string]any
	// Health says whether whoever hosts the target still holds it (may be nil).
	Health func(context.Context) error
}

// Config is one run's settings (sysbench's general options).
type Config struct {
	Workload       workload.Workload
	Threads        int
	Time           time.Duration // 0: no time limit
	Events         uint64        // 0: no event limit
	ReportInterval time.Duration // 0: no intervals
	Percentile     float64       // 1..100; 0 disables it
	Seed           uint64        // base of the per-thread workload seeds
	Rate           float64       // open loop: events per second, Poisson arrivals (0: closed loop)
	Warmup         time.Duration // --warmup-time: run but do not count
	// StallTimeout ends a run in which no event completed for this long
	// while threads were in one (--stall-timeout: a paused container, a
	// hung server); 0: never.
	StallTimeout time.Duration
	// Health, if set, is asked every HealthInterval during a run whether
	// the target's host still holds it (the Docker engine answers, the
	// container is there): an error ends the run with that error, since
	// dbduel could neither watch nor remove what it started.
	Health func(context.Context) error
	// Telemetry, if set, is read at every interval (the target's resource
	// use: server CPU, memory, proxy CPU) into the interval's telemetry.
	Telemetry func() map[string]any
	// Noise, if set, is read at every interval after Telemetry, with it:
	// what else took the machine (steal, other processes' CPU).
	Noise func(telemetry map[string]any) map[string]any
	// Kept, if set, keeps the run's threads for the next run with the same
	// count and workload (dbduel live); its owner closes them.
	Kept *Threads
	// AtReady and AtEnd, if set, bracket the events exactly: after every
	// thread has connected and prepared its statements, and after the last
	// statement (bulk_insert's final flush included). The honesty check
	// reads the server's counter there.
	AtReady, AtEnd func()
}

// Validate rejects settings that cannot run.
func (c Config) Validate() error {
	switch {
	case c.Threads < 1:
		return errors.New("--threads must be at least 1")
	case c.Time < 0:
		return errors.New("--time must not be negative")
	case c.ReportInterval < 0:
		return errors.New("--report-interval must not be negative")
	case c.Percentile < 0 || c.Percentile > 100:
		return errors.New("--percentile must be within 0..100")
	case c.Rate < 0 || c.Warmup < 0:
		return errors.New("--rate and --warmup-time must not be negative")
	}
	return c.Workload.Validate(c.Threads)
}

// QueueCapacity bounds the open-loop event queue, as sysbench's; when it
// fills, the threads cannot keep up with --rate and the run stops.
const QueueCapacity = 131072

// ErrQueueFull ends an open-loop run whose queue overflowed.
var ErrQueueFull = errors.New("the event queue is full: the threads cannot keep up with --rate")

// runState is shared by the workers of one run.
type runState struct {
	cfg       Config
	db        driver.DB
	recs      []*stats.Recorder
	stop      atomic.Bool // set at --time: workers finish their event and leave
	stopCh    chan struct{}
	stopOnce  sync.Once
	remaining atomic.Int64 // --events budget
	busy      atomic.Int64 // threads inside an event (open-loop concurrency)
	sched     *schedule    // open loop only
	failOnce  sync.Once
	failErr   error
}

func (s *runState) halt() {
	s.stopOnce.Do(func() { s.stop.Store(true); close(s.stopCh) })
}

func (s *runState) fail(err error) {
	s.failOnce.Do(func() { s.failErr = err })
	s.halt()
}

// RunOnce runs the workload once against db and returns the run with its
// intervals. emit receives each interval as it completes, with its latency
// histogram (valid only during the call). A cancelled ctx
// ends the run early: the result then has Complete false.
func RunOnce(ctx context.Context, cfg Config, target string, db driver.DB, emit func(result.Interval, *hdrhistogram.Histogram)) (result.Run, error) {
	r := &oneRun{cfg: cfg, db: db, emit: emit, openLoop: cfg.Rate > 0,
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

// schedule is the open-loop arrival process: Poisson arrivals at rate per
// second. Each thread claims the next arrival; if it lies ahead the thread
// waits for it, if it lies behind the event waited in the queue and that
// wait counts in its latency (no coordinated omission). Claiming from one
// schedule instead of a generator goroutine costs no wake-up per event.
type schedule struct {
	mu   sync.Mutex
	rng  *sbrand.Rand
	rate float64
	next time.Time   // the first arrival not generated into due yet
	due  []time.Time // arrivals already due and not claimed, oldest first
}

func newSchedule(start time.Time, rate float64, seed uint64) *schedule {
	sc := &schedule{rng: sbrand.New(sbrand.DefaultParams(), seed^0xa11e), rate: rate}
	sc.next = start.Add(sc.gap())
	return sc
}

// gap is an exponential inter-arrival time.
func (sc *schedule) gap() time.Duration {
	return time.Duration(-math.Log(1-sc.rng.Float64()) / sc.rate * float64(time.Second))
}

func (sc *schedule) claim() time.Time {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.due) > 0 {
		t := sc.due[0]
		sc.due = sc.due[1:]
		return t
	}
	t := sc.next
	sc.next = t.Add(sc.gap())
	return t
}

// backlog counts the arrivals due by now that no thread has claimed: the
// queue's real length, not an estimate (it stops counting past the
// queue's capacity).
func (sc *schedule) backlog(now time.Time) (n uint64, oldest time.Time) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for !sc.next.After(now) && len(sc.due) <= QueueCapacity {
		sc.due = append(sc.due, sc.next)
		sc.next = sc.next.Add(sc.gap())
	}
	if len(sc.due) == 0 {
		return 0, time.Time{}
	}
	return uint64(len(sc.due)), sc.due[0]
}

// Waiting for an arrival: Go's timers wake up to about a millisecond late,
// and in an open loop that lateness would count as latency. So a thread
// sleeps on a timer until timerMargin before the arrival, then in a
// nanosleep (tens of µs of slack) until spinMargin before it, then yields
// until it is due.
const (
	timerMargin = 2 * time.Millisecond
	spinMargin  = 150 * time.Microsecond
)

// waitArrival claims the thread's next arrival and waits for it; false
// means the run stopped (or the queue overflowed) meanwhile.
func (s *runState) waitArrival(rec *stats.Recorder) (time.Time, bool) {
	arrival := s.sched.claim()
	now := time.Now()
	d := arrival.Sub(now)
	if d <= 0 {
		if n, _ := s.sched.backlog(now); n > QueueCapacity {
			s.fail(fmt.Errorf("%w (%g/s, more than %d events queued)", ErrQueueFull, s.cfg.Rate, QueueCapacity))
			return arrival, false
		}
		return arrival, true
	}
	if d > timerMargin {
		t := time.NewTimer(d - timerMargin)
		select {
		case <-t.C:
		case <-s.stopCh:
			t.Stop()
			return arrival, false
		}
	}
	if d := time.Until(arrival); d > spinMargin {
		ts := syscall.NsecToTimespec(int64(d - spinMargin))
		_ = syscall.Nanosleep(&ts, nil) // EINTR only shortens the sleep; the spin below finishes it
	}
	for time.Now().Before(arrival) {
		if s.stop.Load() {
			return arrival, false
		}
		runtime.Gosched()
	}
	rec.RecordWake(time.Since(arrival))
	return arrival, true
}

// work is one thread's loop: events until the time, the event budget, an
// interruption or a fatal error ends the run. An event restarted after an
// ignored error keeps its start (and, open loop, its arrival): as in
// sysbench, whose event timer starts before its retry loop, the failed
// attempts count in the event's latency.
func (s *runState) work(ctx context.Context, i int, conns []driver.Conn, workers []workload.Worker) {
	rec := s.recs[i]
	var arrival, first time.Time
	retry, warm, warmup := false, false, s.cfg.Warmup > 0
	for !s.stop.Load() {
		if !retry {
			if s.sched != nil {
				var ok bool
				if arrival, ok = s.waitArrival(rec); !ok {
					return
				}
			}
			// Shared counters are touched only when their feature is on: on
			// the per-event path every shared cache line costs all threads.
			// Warm-up events do not spend the --events budget (sysbench 1.1).
			// A spent budget ends only this thread: the others finish the
			// events they hold, retries of an ignored error included (a halt
			// here cut a deadlocked event's retry short: 9 of 10 in CI).
			if s.cfg.Events > 0 && rec.Measuring() && s.remaining.Add(-1) < 0 {
				return
			}
			// An event begun in the warm-up is the warm-up's, wherever it ends.
			warm = warmup && !rec.Measuring()
			first = time.Now()
		}
		retry = false
		var c workload.Counts
		if s.sched != nil {
			s.busy.Add(1)
		}
		// No context per statement: a cancellable one costs a watcher per
		// query in database/sql and the driver. Interruption is handled by
		// the stop flag and, for stuck statements, by shutting sockets down.
		err := workers[i].Event(context.Background(), &c)
		end := time.Now()
		if s.sched != nil {
			s.busy.Add(-1)
		}
		if err == nil {
			lat := end.Sub(first)
			if s.sched != nil {
				lat = end.Sub(arrival)
			}
			rec.RecordEvent(lat, end.Sub(first), c.Reads, c.Writes, c.Other, warm)
			continue
		}
		if errors.Is(err, workload.ErrEndOfEvents) {
			return // this thread's share is done (memory's --memory-total-size)
		}
		rec.RecordStatements(c.Reads, c.Writes, c.Other)
		if ctx.Err() != nil {
			return
		}
		f := s.db.Classify(err)
		if f.Action == driver.Fatal {
			s.fail(fmt.Errorf("thread %d: %w", i, f.Err))
			return
		}
		retry = true // the same event again, on its budget and its clock
		if f.Action == driver.Restart {
			rec.RecordError()
			if r, ok := conns[i].(driver.Recoverer); ok {
				if err := r.Recover(context.Background()); err != nil {
					s.fail(fmt.Errorf("thread %d: after %v: %w", i, f.Err, err))
					return
				}
			}
			continue
		}
		// Reconnect and re-prepare (sysbench's before_restart_event hook).
		if err := s.reconnect(ctx, i, conns, workers); err != nil {
			s.fail(fmt.Errorf("thread %d: reconnect failed: %w", i, err))
			return
		}
		rec.RecordReconnect()
	}
}

func (s *runState) reconnect(ctx context.Context, i int, conns []driver.Conn, workers []workload.Worker) error {
	conns[i].Discard()
	var lastErr error
	for attempt := 0; attempt < 300 && !s.stop.Load(); attempt++ {
		c, err := s.db.Conn(ctx)
		if err == nil {
			w, werr := s.cfg.Workload.NewWorker(ctx, c, i, s.cfg.Threads, s.cfg.Seed+uint64(i)*0x9e3779b9+uint64(attempt)+7)
			if werr == nil {
				conns[i], workers[i] = c, w
				return nil
			}
			c.Close()
			err = werr
		}
		lastErr = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lastErr == nil {
		lastErr = errors.New("run ended while reconnecting")
	}
	return lastErr
}

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
