// Package engine drives a workload against targets and measures it. It
// emits Events (phases, prepare progress, intervals, finished runs) on a
// bounded channel and owns the Result. It imports no UI, no container code
// and no database protocol: targets reach it as a name and a driver.Opener.
//
// The files, by what they hold: session.go runs a Session (a Schedule of
// blocks over targets) through the conductor (conductor.go); the two
// schedules are the plan's (schedule_plan.go) and dbduel live's
// (schedule_live.go, steered by LiveControl in live_control.go); one run is
// Measure (measure.go) with its worker threads (worker.go) and its figures
// (figures.go).
package engine

import (
	"context"
	"errors"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
)

// Target is the engine's view of a database: a name and a way to open
// connections to it through its protocol's driver.
type Target struct {
	Name string
	Open driver.Opener
	// Telemetry reads the target's resource use at each interval (may be nil).
	Telemetry func() result.Telemetry
	// Health says whether whoever hosts the target still holds it (may be nil).
	Health func(context.Context) error
}

// Point is the load of a block's runs: which workload, how many threads,
// and at what rate. A plan's sweep points and dbduel live's segments are
// points; a point is the one place a run's threads come from.
type Point struct {
	Workload workload.Workload
	Threads  int
	Rate     float64 // open loop: events per second, Poisson arrivals (0: closed loop)
}

// TableSize is the size of the point's data (rows per table, warehouses).
func (p Point) TableSize() int { return p.Workload.Shape().TableSize }

// Validate rejects a point that cannot run.
func (p Point) Validate() error {
	switch {
	case p.Threads < 1:
		return errors.New("--threads must be at least 1")
	case p.Rate < 0:
		return errors.New("--rate must not be negative")
	}
	return p.Workload.Validate(p.Threads)
}

// Load is what every run of a session shares (sysbench's general options
// but the point's).
type Load struct {
	Time           time.Duration // 0: no time limit
	Events         uint64        // 0: no event limit
	ReportInterval time.Duration // 0: no intervals
	Percentile     float64       // 1..100; 0 disables it
	Seed           uint64        // base of the per-thread workload seeds
	Warmup         time.Duration // --warmup-time: run but do not count
	// StallTimeout ends a run in which no event completed for this long
	// while threads were in one (--stall-timeout: a paused container, a
	// hung server); 0: never.
	StallTimeout time.Duration
}

// StartWindows opens the windows of the cumulative readers (telemetry,
// noise) with the run, not at their previous call.
func (c Config) StartWindows() {
	if c.Telemetry != nil {
		c.Telemetry()
	}
	if c.Noise != nil {
		c.Noise(result.Telemetry{})
	}
}

// AddHostSide reads the interval's telemetry and noise into iv: what the
// host sees of the target and the machine over the interval.
func (c Config) AddHostSide(iv *result.Interval) {
	if c.Telemetry != nil {
		iv.Telemetry = c.Telemetry()
	}
	if c.Noise != nil {
		iv.Noise = c.Noise(iv.Telemetry)
	}
}

// Validate rejects settings that cannot run.
func (l Load) Validate() error {
	switch {
	case l.Time < 0:
		return errors.New("--time must not be negative")
	case l.ReportInterval < 0:
		return errors.New("--report-interval must not be negative")
	case l.Percentile < 0 || l.Percentile > 100:
		return errors.New("--percentile must be within 0..100")
	case l.Warmup < 0:
		return errors.New("--warmup-time must not be negative")
	}
	return nil
}

// Config is one run's settings: its point, the session's load, and what
// the conductor hooks into the run.
type Config struct {
	Point
	Load
	// Health, if set, is asked every HealthInterval during a run whether
	// the target's host still holds it (the Docker engine answers, the
	// container is there): an error ends the run with that error, since
	// dbduel could neither watch nor remove what it started.
	Health func(context.Context) error
	// Telemetry, if set, is read at every interval (the target's resource
	// use: server CPU, memory, proxy CPU) into the interval's telemetry.
	Telemetry func() result.Telemetry
	// Noise, if set, is read at every interval after Telemetry, with it:
	// what else took the machine (steal, other processes' CPU).
	Noise func(telemetry result.Telemetry) result.Noise
	// Kept, if set, keeps the run's threads for the next run with the same
	// count and workload (dbduel live); its owner closes them.
	Kept *KeptThreads
	// ThreadBase and ThreadsOf place the run's threads among a larger
	// client's (an agent's share of a target's agents=N): thread i is
	// thread ThreadBase+i of ThreadsOf, with that thread's seed, so the
	// agents' threads together are the ones one client would run (0: the
	// run's own Threads).
	ThreadBase, ThreadsOf int
	// AtReady and AtEnd, if set, bracket the events exactly: after every
	// thread has connected and prepared its statements, and after the last
	// statement (bulk_insert's final flush included). The honesty check
	// reads the server's counter there.
	AtReady, AtEnd func()
}

// Validate rejects settings that cannot run.
func (c Config) Validate() error {
	if err := c.Load.Validate(); err != nil {
		return err
	}
	return c.Point.Validate()
}
