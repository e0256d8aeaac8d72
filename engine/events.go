package engine

import (
	"time"

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
	EventFinished                  // the session ended: Result is the final result, Err why it ended early
	EventSnapshot                  // Snapshot is the result so far (after a run)
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
	Total    int           // runs in the plan (0: open-ended, dbduel live)
	ETA      time.Duration // estimated time to the end of the plan (0: unknown yet)
	Phase    string
	Progress workload.Progress
	Interval result.Interval
	Run      *result.Run
	// Threads and TableSize are the shape of the run this event belongs to
	// (its point's own, not the first point's).
	Threads   int
	TableSize int
	// Rate is the run's open-loop rate per second (0: closed loop).
	Rate float64
	// Snapshot (EventSnapshot) is the result so far and Result
	// (EventFinished) the final one, both annotated; nobody changes them
	// once sent.
	Snapshot *result.Result
	Result   *result.Result
	Err      error
	Message  string
}
