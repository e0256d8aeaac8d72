package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/result"
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
	EventSnapshot                  // Snapshot is the result so far (dbduel live, after each round)
	EventSegment                   // a dbduel live segment begins: Point is its plan point, Message what changed
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
	// MarginPct (--margin) and PrecisionPct (the half-width the primary
	// verdicts are held to) go into the result's plan for its analysis.
	MarginPct, PrecisionPct float64
	// NoiseSampler, if set, makes each run's noise reader (started with the run).
	NoiseSampler func() func(telemetry map[string]any) map[string]any
	// Annotate adds what the engine does not measure (targets as read
	// back, versions, parity) and the analysis to a copy of the result;
	// it runs once on each snapshot and once on the final result.
	Annotate func(*result.Result)
	// OnSnapshot receives each snapshot (e.g. to rewrite --out); may be nil.
	OnSnapshot func(*result.Result)
	// Live, if set, replaces the plan's blocks with dbduel live's rounds.
	Live *Live
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
	c := newConductor(ctx, s, targets, events, res)
	defer c.closeAll()
	if err := c.openAll(ctx); err != nil {
		return res, err
	}
	if s.Live != nil {
		return executeLive(ctx, c, *s.Live)
	}
	for _, b := range s.Plan.Blocks {
		if c.skip(b) {
			continue
		}
		if err := c.prepareFor(ctx, s.Plan.Points[b.Point]); err != nil {
			return res, err
		}
		for _, name := range b.Order {
			if err := c.runOne(ctx, b, name); err != nil {
				return res, err
			}
		}
		c.adaptiveStep(b)
	}
	if s.Adaptive != nil {
		c.recordBlocksRun()
	}
	res.Complete = true
	if s.Cleanup {
		return res, c.cleanup(ctx)
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
