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

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/sbrand"
)

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
	arrivals  *arrivals    // open loop only
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

// arrivals are the open loop's arrival process: Poisson arrivals at rate per
// second. Each thread claims the next arrival; if it lies ahead the thread
// waits for it, if it lies behind the event waited in the queue and that
// wait counts in its latency (no coordinated omission). Claiming from one
// queue instead of a generator goroutine costs no wake-up per event.
type arrivals struct {
	mu   sync.Mutex
	rng  *sbrand.Rand
	rate float64
	next time.Time   // the first arrival not generated into due yet
	due  []time.Time // arrivals already due and not claimed, oldest first
}

func newArrivals(start time.Time, rate float64, seed uint64) *arrivals {
	sc := &arrivals{rng: sbrand.New(sbrand.DefaultParams(), seed^0xa11e), rate: rate}
	sc.next = start.Add(sc.gap())
	return sc
}

// gap is an exponential inter-arrival time.
func (sc *arrivals) gap() time.Duration {
	return time.Duration(-math.Log(1-sc.rng.Float64()) / sc.rate * float64(time.Second))
}

func (sc *arrivals) claim() time.Time {
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
func (sc *arrivals) backlog(now time.Time) (n uint64, oldest time.Time) {
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
	arrival := s.arrivals.claim()
	now := time.Now()
	d := arrival.Sub(now)
	if d <= 0 {
		if n, _ := s.arrivals.backlog(now); n > QueueCapacity {
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

// measurer is the recorder's side startEvent reads.
type measurer interface{ Measuring() bool }

// startEvent decides from one reading of the recorder whether an event is
// the warm-up's (an event begun in the warm-up is, wherever it ends) and
// whether it may start: warm-up events do not spend the --events budget
// (sysbench 1.1), measured ones do. One reading: two let an event begun
// as the warm-up ended be measured without spending the budget (N+1).
// Shared counters are touched only when their feature is on: on the
// per-event path every shared cache line costs all threads. A spent
// budget ends only this thread: the others finish the events they hold,
// retries of an ignored error included (a halt here cut a deadlocked
// event's retry short: 9 of 10 in CI).
func (s *runState) startEvent(rec measurer, warmup bool) (warm, ok bool) {
	measuring := !warmup || rec.Measuring()
	if s.cfg.Events > 0 && measuring && s.remaining.Add(-1) < 0 {
		return false, false
	}
	return !measuring, true
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
			if s.arrivals != nil {
				var ok bool
				if arrival, ok = s.waitArrival(rec); !ok {
					return
				}
			}
			var ok bool
			if warm, ok = s.startEvent(rec, warmup); !ok {
				return
			}
			first = time.Now()
		}
		retry = false
		var c workload.Counts
		if s.arrivals != nil {
			s.busy.Add(1)
		}
		// No context per statement: a cancellable one costs a watcher per
		// query in database/sql and the driver. Interruption is handled by
		// the stop flag and, for stuck statements, by shutting sockets down.
		err := workers[i].Event(context.Background(), &c)
		end := time.Now()
		if s.arrivals != nil {
			s.busy.Add(-1)
		}
		if err == nil {
			lat := end.Sub(first)
			if s.arrivals != nil {
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
