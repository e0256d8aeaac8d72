package engine

import (
	"context"

	"github.com/dbduel/dbduel/engine/plan"
)

// Schedule says what the conductor runs next. There are two: NewPlan's
// interleaved blocks (dbduel run) and NewLive's rounds until the user
// quits (dbduel live). The conductor calls start once; then next, the
// step's turns and ran, for as long as next gives a step; then finish
// when the session ends as planned, and close in any case. Its methods are the engine's own.
type Schedule interface {
	// maxThreads is the most threads a step may run (the pools' size).
	maxThreads() int
	// start records the schedule in the result before anything runs.
	start(c *conductor) error
	// next is the next step; ok false ends the session as planned.
	next(ctx context.Context) (st step, ok bool, err error)
	// ran hears how a step's turns ended (err: the first failure); it
	// returns the error that ends the session, or over to end it as
	// planned.
	ran(ctx context.Context, st step, err error) (over bool, _ error)
	// finish records what the schedule adds to the result at the end.
	finish()
	// close lets go of what the schedule holds, on every exit path.
	close()
}

// step is one block the conductor runs: which targets take a turn, in
// which order, on which point, and what their runs are called.
type step struct {
	block plan.Block // Seq, Point (an index into the result's points), Index, Warmup, Order
	point Point
	phase string // "run 2 of 3", "point 2/3 (8 threads) · run 1 of 3", "round 4"
	// phaseOf, if set, is a target's own phase in this step (live: a
	// restarted target settling).
	phaseOf map[string]string
	total   int // runs in the session as now planned (0: open-ended)
	// keep, if set, keeps each target's threads from one of its runs to
	// the next and times the switches between runs (dbduel live).
	keep *keeper
}
