package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
)

// EventKind tells what an Event carries.
type EventKind int

const (
	EventPhase    EventKind = iota // Phase names what starts now
	EventProgress                  // Progress of a prepare
	EventInterval                  // Interval of the current run
	EventRunDone                   // Run finished (Run)
	EventNotice                    // Message for the user (a warning)
	EventFinished                  // the plan ended: Result is the final result, Err why it ended early
)

// Event is one thing that happened, in order, for the UI or a printer.
type Event struct {
	Kind     EventKind
	Target   string
	Block    int // 1-based
	Index    int // run number within the target, 1-based
	Point    int // sweep point index
	Warmup   bool
	Done     int           // runs finished so far
	Total    int           // runs in the plan
	ETA      time.Duration // estimated time to the end of the plan (0: unknown yet)
	Phase    string
	Progress workload.Progress
	Interval result.Interval
	Run      *result.Run
	// Threads and TableSize are the shape of the run this event belongs to
	// (a sweep point's own, not the first point's).
	Threads   int
	TableSize int
	// Snapshot (EventRunDone) is the result so far and Result (EventFinished)
	// the final one, both annotated; nobody changes them once sent.
	Snapshot *result.Result
	Result   *result.Result
	Err      error
	Message  string
}

// Adaptive is --runs auto's rule: a rule on the CI's width, never on the
// estimate (stopping when a verdict looks decided would bias it).
type Adaptive struct {
	CITargetPct float64       // half-width of every TPS comparison, in %
	MaxTime     time.Duration // the whole plan's budget (0: none)
}

// TargetError is a failure of one target, and where in the plan it happened.
type TargetError struct {
	Target string
	Where  string // "prepare", "run 2 of 3", ...
	Err    error
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("target %s, %s: %v", e.Target, e.Where, e.Err)
}

func (e *TargetError) Unwrap() error { return e.Err }

// Session is a whole invocation: targets, the plan, and table handling.
type Session struct {
	Config Config // Threads and Workload are the defaults of every point
	Plan   plan.Plan
	// WorkloadFor returns the workload for a point's table size (sweeps);
	// nil runs Config.Workload everywhere.
	WorkloadFor func(tableSize int) (workload.Workload, error)
	Reprepare   bool          // drop and re-create tables that do not match
	Cleanup     bool          // drop the run's tables at the end
	Cooldown    time.Duration // pause between runs; negative: until the host is idle, at most 10 s
	// BeforeRun is called before every run (e.g. to restart a managed server).
	BeforeRun func(ctx context.Context, target string) error
	// Adaptive, if set, ends each point's measured blocks once every
	// target's TPS CI against the baseline is narrow enough (--runs auto;
	// the plan holds --max-runs blocks per point).
	Adaptive *Adaptive
	// NoiseSampler, if set, makes each run's noise reader (started with the run).
	NoiseSampler func() func(telemetry map[string]any) map[string]any
	// Annotate adds what the engine does not measure (targets as read
	// back, versions, parity) and the analysis to a copy of the result;
	// it runs once on each snapshot and once on the final result.
	Annotate func(*result.Result)
	// OnSnapshot receives each snapshot (e.g. to rewrite --out); may be nil.
	OnSnapshot func(*result.Result)
}

// Run executes the session against targets. It is the result's one owner:
// after every run it sends an annotated snapshot, and the final result
// (partial when ctx is cancelled or a run fails) travels as the last event,
// EventFinished, before the channel is closed. It also returns it.
func Run(ctx context.Context, s Session, targets []Target, events chan<- Event) (*result.Result, error) {
	defer close(events)
	res, err := executeSafely(ctx, s, targets, events)
	res.FinishedAt = time.Now().UTC()
	if err != nil {
		res.Error = err.Error()
	}
	if s.Annotate != nil {
		s.Annotate(res)
	}
	// The last event is delivered even after a cancellation: the consumer
	// needs the partial result.
	events <- Event{Kind: EventFinished, Result: res, Err: err}
	return res, err
}

// executeSafely runs the plan; a panic becomes the plan's error, so the
// caller's clean-up (stopping targets, writing the result) still happens.
func executeSafely(ctx context.Context, s Session, targets []Target, events chan<- Event) (res *result.Result, err error) {
	res = &result.Result{SchemaVersion: result.SchemaVersion, StartedAt: time.Now().UTC(), Stats: map[string]result.TargetStats{}}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return execute(ctx, s, targets, events, res)
}

func execute(ctx context.Context, s Session, targets []Target, events chan<- Event, res *result.Result) (*result.Result, error) {
	cfg := s.Config
	res.Workload = result.Workload{Name: cfg.Workload.Name(), Options: cfg.Workload.Options()}
	p := s.Plan
	res.Plan = result.Plan{
		Runs: p.Runs, WarmupRuns: p.WarmupRuns, Seed: p.Seed, Blocks: p.Orders(),
		Threads: cfg.Threads, TimeS: cfg.Time.Seconds(), Events: cfg.Events,
		Interval: cfg.ReportInterval.Seconds(), Rate: cfg.Rate, WarmupS: cfg.Warmup.Seconds(), Percentile: cfg.Percentile,
	}
	for _, pt := range p.Points {
		res.Plan.Points = append(res.Plan.Points, result.Point{Threads: pt.Threads, TableSize: pt.TableSize})
	}
	send := func(e Event) {
		select {
		case events <- e:
		case <-ctx.Done():
		}
	}
	byName := map[string]Target{}
	for _, t := range targets {
		byName[t.Name] = t
	}
	maxThreads := cfg.Threads
	for _, pt := range p.Points {
		maxThreads = max(maxThreads, pt.Threads)
	}
	dbs := map[string]driver.DB{}
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()
	for _, t := range targets {
		db, err := t.Open(ctx, maxThreads+2)
		if err != nil {
			return res, &TargetError{Target: t.Name, Where: "connecting", Err: err}
		}
		dbs[t.Name] = db
	}

	merge := newIntervalMerger(events, cfg.Percentile, cfg.Workload)
	total := p.TotalRuns()
	done := 0
	started := time.Now()
	preparedSize := -1
	var wl workload.Workload
	settled := map[int]bool{} // --runs auto: points whose CIs are narrow enough
	rules := map[int]*stats.AutoRule{}
	for _, b := range p.Blocks {
		pt := p.Points[b.Point]
		if s.Adaptive != nil && !b.Warmup {
			if settled[b.Point] {
				total -= len(b.Order)
				continue
			}
			if s.Adaptive.MaxTime > 0 && time.Since(started) >= s.Adaptive.MaxTime {
				res.Plan.StoppedBy = "max-time"
				total -= len(b.Order)
				continue
			}
		}
		// Data is prepared once per table size; a new size re-prepares.
		if pt.TableSize != preparedSize {
			var err error
			wl = cfg.Workload
			if s.WorkloadFor != nil {
				if wl, err = s.WorkloadFor(pt.TableSize); err != nil {
					return res, err
				}
			}
			sweep := preparedSize >= 0
			for _, t := range targets {
				if err := ensureTables(ctx, wl, pt.Threads, s.Reprepare || sweep, t.Name, dbs[t.Name], send); err != nil {
					return res, &TargetError{Target: t.Name, Where: "prepare", Err: err}
				}
			}
			preparedSize = pt.TableSize
		}
		for _, name := range b.Order {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			if done > 0 && s.Cooldown != 0 {
				send(Event{Kind: EventPhase, Target: name, Phase: "cooling down before the next run"})
				cooldown(ctx, s.Cooldown)
			}
			if s.BeforeRun != nil {
				send(Event{Kind: EventPhase, Target: name, Phase: "restarting"})
				if err := s.BeforeRun(ctx, name); err != nil {
					return res, &TargetError{Target: name, Where: "restart", Err: err}
				}
			}
			phase := fmt.Sprintf("run %d of %d", b.Index, p.Runs)
			if b.Warmup {
				phase = fmt.Sprintf("warm-up run %d of %d", b.Index, p.WarmupRuns)
			}
			if len(p.Points) > 1 {
				phase = fmt.Sprintf("point %d/%d (%s) · %s", b.Point+1, len(p.Points), pt, phase)
			}
			var eta time.Duration
			if done > 0 {
				eta = time.Since(started) / time.Duration(done) * time.Duration(total-done)
			}
			send(Event{Kind: EventPhase, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point,
				Warmup: b.Warmup, Phase: phase, Done: done, Total: total, ETA: eta, Threads: pt.Threads, TableSize: pt.TableSize})
			rc := cfg
			rc.Workload, rc.Threads = wl, pt.Threads
			rc.Telemetry = byName[name].Telemetry
			if s.NoiseSampler != nil {
				rc.Noise = s.NoiseSampler()
			}
			rc.Seed = cfg.Seed + uint64(b.Seq)*7919
			var before, after driver.OpCount
			var beforeErr, afterErr error
			var ready, ended bool
			var timing serverTiming
			// The timer's own statements stay outside the counter's window:
			// read before the counter at the start, after it at the end.
			rc.AtReady = func() { timing.start(ctx, dbs[name]); before, beforeErr = dbs[name].OpCount(ctx); ready = true }
			rc.AtEnd = func() {
				after, afterErr = dbs[name].OpCount(context.WithoutCancel(ctx))
				ended = true
				timing.end(context.WithoutCancel(ctx), dbs[name])
			}
			run, err := runOn(ctx, rc, name, dbs[name], func(iv result.Interval, h *hdrhistogram.Histogram) {
				merge.send(Event{Kind: EventInterval, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point, Warmup: b.Warmup,
					Threads: pt.Threads, TableSize: pt.TableSize, Interval: iv}, h)
			})
			merge.flush(ctx)
			run.Block, run.Index, run.Point, run.Warmup = b.Seq, b.Index, b.Point, b.Warmup
			switch {
			case ready && ended && beforeErr == nil && afterErr == nil:
				run.Honesty = honesty(before, after, clientCount(after, wl, run))
				if msg := stats.HonestyWarning(run); msg != "" {
					send(Event{Kind: EventNotice, Target: name, Message: "warning: " + msg})
				}
			case errors.Is(beforeErr, driver.ErrNoOpCount):
				// Never a silent pass: the result says the check could not run, and why.
				run.Honesty = &result.Honesty{Note: "not checked: " + beforeErr.Error()}
			}
			run.ServerTime = timing.result(run)
			res.Runs = append(res.Runs, run)
			done++
			r := run
			snap := res.Clone()
			if s.Annotate != nil {
				s.Annotate(snap)
			}
			if s.OnSnapshot != nil {
				s.OnSnapshot(snap)
			}
			send(Event{Kind: EventRunDone, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point, Warmup: b.Warmup,
				Threads: pt.Threads, TableSize: pt.TableSize, Run: &r, Done: done, Total: total, Snapshot: snap})
			if err != nil {
				return res, &TargetError{Target: name, Where: phase, Err: err}
			}
			if !run.Complete {
				return res, &TargetError{Target: name, Where: phase, Err: ctx.Err()}
			}
		}
		if s.Adaptive != nil && !b.Warmup {
			widths, ok := stats.HalfWidths(res, b.Point)
			res.Plan.CIHalfWidthPct = widths
			send(Event{Kind: EventNotice, Message: fmt.Sprintf("after %d block(s): TPS CI half-widths %s (target ±%g%%)", b.Index, formatWidths(widths), s.Adaptive.CITargetPct)})
			if rules[b.Point] == nil {
				rules[b.Point] = &stats.AutoRule{TargetPct: s.Adaptive.CITargetPct}
			}
			if rules[b.Point].Settled(b.Index, widths, ok) {
				settled[b.Point] = true
				if res.Plan.StoppedBy == "" {
					res.Plan.StoppedBy = "ci-target"
				}
			}
		}
	}
	if s.Adaptive != nil {
		res.Plan.Blocks = nil
		for _, run := range res.Runs { // the blocks that ran, in order
			if n := len(res.Plan.Blocks); n < run.Block {
				res.Plan.Blocks = append(res.Plan.Blocks, make([][]string, run.Block-n)...)
			}
			res.Plan.Blocks[run.Block-1] = append(res.Plan.Blocks[run.Block-1], run.Target)
		}
		res.Plan.Blocks = slices.DeleteFunc(res.Plan.Blocks, func(b []string) bool { return len(b) == 0 })
		if res.Plan.StoppedBy == "" {
			res.Plan.StoppedBy = "max-runs"
		}
		res.Plan.Runs = 0
		for _, run := range res.Runs {
			if !run.Warmup && run.Target == targets[0].Name && run.Point == 0 {
				res.Plan.Runs++
			}
		}
	}
	res.Complete = true
	if s.Cleanup {
		for _, t := range targets {
			send(Event{Kind: EventPhase, Target: t.Name, Phase: "cleanup"})
			if _, err := cleanupTables(ctx, wl, dbs[t.Name], maxThreads); err != nil {
				return res, &TargetError{Target: t.Name, Where: "cleanup", Err: err}
			}
		}
	}
	return res, nil
}

func formatWidths(w map[string]float64) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(w)) {
		parts = append(parts, fmt.Sprintf("%s ±%.1f%%", name, w[name]))
	}
	if len(parts) == 0 {
		return "not known yet"
	}
	return strings.Join(parts, ", ")
}
