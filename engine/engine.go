// Package engine drives a workload against targets and measures it. It
// emits Events (phases, prepare progress, intervals, finished runs) on a
// bounded channel and returns the final Result. It imports no UI and no
// container code: targets reach it as a name and a DSN.
package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/go-sql-driver/mysql"
)

// Target is the engine's view of a database.
type Target struct {
	Name string
	DSN  string // go-sql-driver/mysql DSN
}

// Config is one run's settings (sysbench's general options).
type Config struct {
	Workload       workload.Workload
	Threads        int
	Time           time.Duration // 0: no time limit
	Events         uint64        // 0: no event limit
	ReportInterval time.Duration // 0: no intervals
	Percentile     float64       // 1..100; 0 disables it
	IgnoreErrors   ErrorSet
	Seed           uint64 // base of the per-thread workload seeds
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
	}
	return c.Workload.Validate(c.Threads)
}

// Open connects to a target with the driver settings the engine needs.
func Open(dsn string, maxConns int) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("bad DSN: %w", err)
	}
	// Text-mode statements (--db-ps-mode=disable, oltp_insert) are sent
	// with their parameters inlined, one round trip, as sysbench does.
	cfg.InterpolateParams = true
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxLifetime(0)
	return db, nil
}

// runState is shared by the workers of one run.
type runState struct {
	cfg       Config
	db        *sql.DB
	recs      []*stats.Recorder
	stop      atomic.Bool  // set at --time: workers finish their event and leave
	remaining atomic.Int64 // --events budget
	failOnce  sync.Once
	failErr   error
}

func (s *runState) fail(err error) {
	s.failOnce.Do(func() { s.failErr = err; s.stop.Store(true) })
}

// RunOnce runs the workload once against db and returns the run with its
// intervals. emit receives each interval as it completes. A cancelled ctx
// ends the run early: the result then has Complete false.
func RunOnce(ctx context.Context, cfg Config, target string, db *sql.DB, emit func(result.Interval)) (result.Run, error) {
	run := result.Run{Target: target}
	s := &runState{cfg: cfg, db: db}
	if cfg.Events > 0 {
		s.remaining.Store(int64(cfg.Events))
	} else {
		s.remaining.Store(math.MaxInt64)
	}
	// Connect and prepare every thread before the clock starts (thread_init).
	conns := make([]*sql.Conn, cfg.Threads)
	workers := make([]workload.Worker, cfg.Threads)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			return run, fmt.Errorf("connect thread %d: %w", i, err)
		}
		conns[i] = c
		w, err := cfg.Workload.NewWorker(ctx, c, i, cfg.Threads, cfg.Seed+uint64(i)*0x9e3779b9+1)
		if err != nil {
			return run, fmt.Errorf("thread %d: %w", i, err)
		}
		workers[i] = w
		s.recs = append(s.recs, stats.NewRecorder())
	}

	start := time.Now()
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.work(ctx, i, conns, workers)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var timeLimit <-chan time.Time
	if cfg.Time > 0 {
		t := time.NewTimer(cfg.Time)
		defer t.Stop()
		timeLimit = t.C
	}
	var tick <-chan time.Time
	if cfg.ReportInterval > 0 {
		tk := time.NewTicker(cfg.ReportInterval)
		defer tk.Stop()
		tick = tk.C
	}

	total := stats.Counters{}
	totalHist := stats.NewHistogram()
	ivHist := stats.NewHistogram()
	lastTick := start
	// With a time limit there are exactly floor(time/interval) interval
	// lines, as in sysbench, whichever of the last tick and the limit fires first.
	maxIntervals := -1
	if cfg.Time > 0 && cfg.ReportInterval > 0 {
		maxIntervals = int(cfg.Time / cfg.ReportInterval)
	}
	collect := func(now time.Time) {
		if maxIntervals >= 0 && len(run.Intervals) >= maxIntervals {
			return
		}
		var c stats.Counters
		ivHist.Reset()
		for _, r := range s.recs {
			r.Swap(&c, ivHist)
		}
		total.Add(c)
		totalHist.Merge(ivHist)
		iv := makeInterval(now.Sub(start), now.Sub(lastTick), c, ivHist, cfg.Percentile)
		lastTick = now
		run.Intervals = append(run.Intervals, iv)
		if emit != nil {
			emit(iv)
		}
	}
loop:
	for {
		select {
		case now := <-tick:
			collect(now)
		case now := <-timeLimit:
			s.stop.Store(true)
			if tick != nil && now.Sub(lastTick) > cfg.ReportInterval/2 {
				collect(now)
			}
		case <-ctx.Done():
			s.stop.Store(true)
		case <-done:
			break loop
		}
	}
	elapsed := time.Since(start)
	// The tail after the last full interval counts in the totals, as in sysbench.
	var tail stats.Counters
	tailHist := stats.NewHistogram()
	for _, r := range s.recs {
		r.Swap(&tail, tailHist)
	}
	for i, w := range workers {
		var c workload.Counts
		if err := w.Close(context.WithoutCancel(ctx), &c); err != nil && s.failErr == nil && ctx.Err() == nil {
			s.fail(fmt.Errorf("thread %d finishing: %w", i, err))
		}
		tail.Reads += c.Reads
		tail.Writes += c.Writes
		tail.Other += c.Other
	}
	total.Add(tail)
	totalHist.Merge(tailHist)

	run.Summary = summarize(elapsed, total, totalHist, cfg.Percentile)
	run.Fairness = fairness(s.recs)
	run.Complete = s.failErr == nil && ctx.Err() == nil
	return run, s.failErr
}

// work is one thread's loop: events until the time, the event budget, an
// interruption or a fatal error ends the run.
func (s *runState) work(ctx context.Context, i int, conns []*sql.Conn, workers []workload.Worker) {
	rec := s.recs[i]
	for !s.stop.Load() {
		if s.remaining.Add(-1) < 0 {
			s.stop.Store(true)
			return
		}
		var c workload.Counts
		t0 := time.Now()
		err := workers[i].Event(ctx, &c)
		if err == nil {
			rec.RecordEvent(time.Since(t0), c.Reads, c.Writes, c.Other)
			continue
		}
		rec.RecordStatements(c.Reads, c.Writes, c.Other)
		if ctx.Err() != nil {
			return
		}
		code := errorCode(err)
		if !s.cfg.IgnoreErrors.Has(code) {
			s.fail(fmt.Errorf("thread %d: %w", i, err))
			return
		}
		s.remaining.Add(1) // the event is restarted, as in sysbench
		if !isConnectionLost(code, err) {
			rec.RecordError(false)
			continue
		}
		// Reconnect and re-prepare (sysbench's before_restart_event hook).
		if err := s.reconnect(ctx, i, conns, workers); err != nil {
			s.fail(fmt.Errorf("thread %d: reconnect failed: %w", i, err))
			return
		}
		rec.RecordError(true)
	}
}

func (s *runState) reconnect(ctx context.Context, i int, conns []*sql.Conn, workers []workload.Worker) error {
	conns[i].Raw(func(any) error { return driverBadConn }) // discard the broken connection
	conns[i].Close()
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

func us(ns uint64) float64 { return float64(ns) / 1000 }

func makeInterval(at, span time.Duration, c stats.Counters, h *hdrhistogram.Histogram, pct float64) result.Interval {
	sec := span.Seconds()
	if sec <= 0 {
		sec = 1e-9
	}
	iv := result.Interval{
		TS:     math.Round(at.Seconds()*1000) / 1000,
		Events: c.Events, Reads: c.Reads, Writes: c.Writes, Other: c.Other,
		Errors: c.Errors, Reconnects: c.Reconnects,
		TPS: float64(c.Events) / sec, QPS: float64(c.Queries()) / sec,
	}
	if h.TotalCount() > 0 {
		iv.P50US = float64(h.ValueAtQuantile(50))
		iv.P95US = float64(h.ValueAtQuantile(95))
		iv.P99US = float64(h.ValueAtQuantile(99))
		iv.MaxUS = float64(h.Max())
		if pct > 0 {
			iv.PctUS = float64(h.ValueAtQuantile(pct))
		}
	}
	return iv
}

func summarize(elapsed time.Duration, c stats.Counters, h *hdrhistogram.Histogram, pct float64) result.Summary {
	sec := elapsed.Seconds()
	s := result.Summary{
		DurationS: sec, Events: c.Events, Queries: c.Queries(),
		Reads: c.Reads, Writes: c.Writes, Other: c.Other,
		Errors: c.Errors, Reconnects: c.Reconnects,
		MinUS: us(c.MinNS), MaxUS: us(c.MaxNS), SumUS: us(c.LatencySumNS),
		Percentile: pct,
	}
	if sec > 0 {
		s.TPS = float64(c.Events) / sec
		s.QPS = float64(c.Queries()) / sec
	}
	if c.Events > 0 {
		s.AvgUS = us(c.LatencySumNS) / float64(c.Events)
		s.P50US = float64(h.ValueAtQuantile(50))
		s.P95US = float64(h.ValueAtQuantile(95))
		s.P99US = float64(h.ValueAtQuantile(99))
		if pct > 0 {
			s.PctUS = float64(h.ValueAtQuantile(pct))
		}
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
