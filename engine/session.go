package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/dbduel/dbduel/engine/result"
)

// Session is a whole invocation: the load every run shares, the schedule
// that says what runs next, and table handling. The conductor only reads
// it: whatever changes while a session runs (dbduel live's points) lives
// in its schedule.
type Session struct {
	Load     Load
	Schedule Schedule // NewPlan's blocks or NewLive's rounds
	// Reprepare drops and re-creates tables that do not match.
	Reprepare bool
	// Cleanup drops the run's tables at the end.
	Cleanup bool
	// Cooldown pauses between runs; negative: until the host is idle, at
	// most 10 s.
	Cooldown time.Duration
	// BeforeRun is called before every run (e.g. to restart a managed server).
	BeforeRun func(ctx context.Context, target string) error
	// MarginPct (--margin) and PrecisionPct (the half-width the primary
	// verdicts are held to) go into the result's plan for its analysis.
	MarginPct, PrecisionPct float64
	// Alpha (--alpha) is the family-wise level of the verdict words.
	Alpha float64
	// NoiseSampler, if set, makes each run's noise reader (started with the run).
	NoiseSampler func() func(telemetry result.Telemetry) result.Noise
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

// executeSafely runs the session; a panic becomes its error, so the
// caller's clean-up (stopping targets, writing the result) still happens.
func executeSafely(ctx context.Context, s Session, targets []Target, events chan<- Event) (res *result.Result, err error) {
	res = &result.Result{SchemaVersion: result.SchemaVersion, StartedAt: time.Now().UTC(), Stats: map[string]result.TargetStats{}}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	c := newConductor(ctx, s, targets, events, res)
	defer c.closeAll()
	return res, c.conduct(ctx)
}
