package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
)

// conductor carries a Session through its schedule: open every target,
// then for each step its schedule gives, make the step's data and give
// each target of the block its turn (a run with the honesty check around
// it), with a snapshot after each. It never writes to the Session.
type conductor struct {
	s       Session
	targets []Target
	byName  map[string]Target
	res     *result.Result
	send    func(Event)
	merge   *intervalMerger
	snaps   *snapshotter
	dbs     map[string]driver.DB
	// prepared is the workload each target's data was last made or
	// checked for (nil: not yet, or its server was restarted).
	prepared map[string]workload.Workload
	last     Point // the last step's point: --cleanup drops its tables
	poolSize int
	done     int // runs done
	started  time.Time
}

func newConductor(ctx context.Context, s Session, targets []Target, events chan<- Event, res *result.Result) *conductor {
	l := s.Load
	res.Plan = result.Plan{TimeS: l.Time.Seconds(), Events: l.Events, Interval: l.ReportInterval.Seconds(),
		WarmupS: l.Warmup.Seconds(), Percentile: l.Percentile, MarginPct: s.MarginPct, PrecisionPct: s.PrecisionPct, Alpha: s.Alpha}
	c := &conductor{s: s, targets: targets, res: res, byName: map[string]Target{}, dbs: map[string]driver.DB{},
		prepared: map[string]workload.Workload{}, poolSize: s.Schedule.maxThreads() + 2, started: time.Now(),
		merge: newIntervalMerger(events, l.Percentile)}
	c.send = func(e Event) {
		select {
		case events <- e:
		case <-ctx.Done():
		}
	}
	for _, t := range targets {
		c.byName[t.Name] = t
	}
	return c
}

// conduct runs the session: the schedule's steps until it says the
// session is over (complete) or a step fails.
func (c *conductor) conduct(ctx context.Context) error {
	sched := c.s.Schedule
	if err := c.openAll(ctx); err != nil {
		return err
	}
	defer sched.close()
	if err := sched.start(c); err != nil {
		return err
	}
	c.snaps = newSnapshotter(c)
	defer c.snaps.stop()
	for {
		st, ok, err := sched.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		err = c.prepare(ctx, st)
		if err == nil {
			err = c.runBlock(ctx, st)
		}
		over, err := sched.ran(ctx, st, err)
		if err != nil {
			return err
		}
		if over {
			break
		}
	}
	sched.finish()
	c.res.Complete = true
	if c.s.Cleanup {
		return c.cleanup(ctx)
	}
	return nil
}

// openAll opens one pool per target, large enough for the schedule's most
// threads.
func (c *conductor) openAll(ctx context.Context) error {
	for _, t := range c.targets {
		db, err := t.Open(ctx, c.poolSize)
		if err != nil {
			return &TargetError{Target: t.Name, Where: "connecting", Err: err}
		}
		c.dbs[t.Name] = db
	}
	return nil
}

func (c *conductor) closeAll() {
	for _, db := range c.dbs {
		db.Close()
	}
}

// reopen closes target name's pool, lets restart restart its server, and
// opens a new pool; its data is checked again before its next turn.
func (c *conductor) reopen(ctx context.Context, name string, restart func(context.Context) error) error {
	c.dbs[name].Close()
	delete(c.prepared, name)
	if err := restart(ctx); err != nil {
		return err
	}
	db, err := c.byName[name].Open(ctx, c.poolSize)
	if err != nil {
		return err
	}
	c.dbs[name] = db
	return nil
}

// prepare makes the data of st's point on each target of its block, once
// per workload: a target whose data was made for another table size
// (a sweep) has it made again.
func (c *conductor) prepare(ctx context.Context, st step) error {
	wl := st.point.Workload
	c.last = st.point
	for _, name := range st.block.Order {
		prev := c.prepared[name]
		if prev == wl {
			continue
		}
		resize := prev != nil && prev.Shape().TableSize != wl.Shape().TableSize
		if err := ensureTables(ctx, wl, st.point.Threads, c.s.Reprepare || resize, name, c.dbs[name], c.send); err != nil {
			return &TargetError{Target: name, Where: "prepare", Err: err}
		}
		c.prepared[name] = wl
	}
	return nil
}

// runBlock gives each target of st's block its turn, in order.
func (c *conductor) runBlock(ctx context.Context, st step) error {
	for _, name := range st.block.Order {
		if err := c.turn(ctx, st, name); err != nil {
			return err
		}
	}
	return nil
}

// turn is target name's run in step st: cool down, restart if asked, run
// with the honesty check, record it and offer a snapshot.
func (c *conductor) turn(ctx context.Context, st step, name string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	b, s := st.block, c.s
	if st.keep == nil { // live keeps every target's threads connected
		if err := c.releaseIdle(ctx); err != nil {
			return err
		}
		// The last run's garbage (its connections, buffers, stacks) goes
		// back to the system before the next: a plan of hours holds what
		// it uses, not each run's high-water mark (the collector alone
		// keeps its freed pages for reuse, and RSS crept up run by run).
		freeOSMemory()
	}
	if c.done > 0 && s.Cooldown != 0 {
		c.send(Event{Kind: EventPhase, Target: name, Phase: "cooling down before the next run"})
		cooldown(ctx, s.Cooldown)
	}
	if s.BeforeRun != nil {
		c.send(Event{Kind: EventPhase, Target: name, Phase: "restarting"})
		if err := s.BeforeRun(ctx, name); err != nil {
			return &TargetError{Target: name, Where: "restart", Err: err}
		}
	}
	var eta time.Duration
	if c.done > 0 && st.total > 0 {
		eta = time.Since(c.started) / time.Duration(c.done) * time.Duration(st.total-c.done)
	}
	threads, size := st.point.Threads, st.point.TableSize()
	phase := st.phase
	if p, ok := st.phaseOf[name]; ok {
		phase = p
	}
	c.send(Event{Kind: EventPhase, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point,
		Warmup: b.Warmup, Phase: phase, Done: c.done, Total: st.total, ETA: eta, Threads: threads, TableSize: size, Rate: st.point.Rate})
	run, err := c.countedRun(ctx, st, name)
	c.res.Runs = append(c.res.Runs, run)
	c.done++
	c.snaps.offer()
	c.send(Event{Kind: EventRunDone, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point, Warmup: b.Warmup,
		Threads: threads, TableSize: size, Run: &run, Done: c.done, Total: st.total})
	if err != nil {
		return &TargetError{Target: name, Where: st.phase, Err: err}
	}
	if !run.Complete {
		return &TargetError{Target: name, Where: st.phase, Err: cutShort(ctx)}
	}
	return nil
}

// freeOSMemory is debug.FreeOSMemory (a test counts its calls).
var freeOSMemory = debug.FreeOSMemory

// releaseIdle closes every target's idle connections before a run (and
// its cool-down): each run connects its threads anew, whatever ran before
// it (a table load, its own last run, another target's), and a target
// between runs holds no sessions on its server nor the client's memory.
func (c *conductor) releaseIdle(ctx context.Context) error {
	for name, db := range c.dbs {
		if r, ok := db.(driver.IdleReleaser); ok {
			if err := r.ReleaseIdle(ctx); err != nil {
				return &TargetError{Target: name, Where: "closing idle connections", Err: err}
			}
		}
	}
	return nil
}

// countedRun runs st's point once on target name, with the server's own
// operation count read exactly around the events (the honesty check) and
// its statement timing beside it.
func (c *conductor) countedRun(ctx context.Context, st step, name string) (result.Run, error) {
	b, db, t := st.block, c.dbs[name], c.byName[name]
	rc := Config{Point: st.point, Load: c.s.Load, Telemetry: t.Telemetry, Health: t.Health}
	if c.s.NoiseSampler != nil {
		rc.Noise = c.s.NoiseSampler()
	}
	rc.Seed = c.s.Load.Seed + uint64(b.Seq)*7919
	var before, after driver.OpCount
	var beforeErr, afterErr error
	var ready, ended bool
	var timing serverTiming
	// The timer's own statements stay outside the counter's window:
	// read before the counter at the start, after it at the end.
	bounded := func(parent context.Context, read func(context.Context)) {
		rctx, cancel := context.WithTimeout(parent, CounterReadTimeout)
		defer cancel()
		read(rctx)
	}
	rc.Kept = st.keep.threads(name)
	rc.AtReady = func() {
		bounded(ctx, func(c context.Context) { timing.start(c, db); before, beforeErr = db.OpCount(c) })
		ready = true
		st.keep.ready()
	}
	rc.AtEnd = func() {
		st.keep.ended()
		bounded(context.WithoutCancel(ctx), func(c context.Context) { after, afterErr = db.OpCount(c) })
		ended = true
		bounded(context.WithoutCancel(ctx), func(c context.Context) { timing.end(c, db) })
	}
	run, err := measureOn(ctx, rc, name, db, func(iv result.Interval, h *hdrhistogram.Histogram) {
		c.merge.send(Event{Kind: EventInterval, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point, Warmup: b.Warmup,
			Threads: st.point.Threads, TableSize: st.point.TableSize(), Interval: iv}, h, st.point.Workload)
	})
	c.merge.flush(ctx)
	run.Block, run.Index, run.Point, run.Warmup = b.Seq, b.Index, b.Point, b.Warmup
	run.Honesty = c.honestyOf(name, st.point.Workload, run, before, after, ready && ended, beforeErr, afterErr)
	run.ServerTime = timing.result(run)
	return run, err
}

// honestyOf is the honesty check of a run: the server's count against
// the client's, or why it was not checked.
func (c *conductor) honestyOf(name string, wl workload.Workload, run result.Run, before, after driver.OpCount, read bool, beforeErr, afterErr error) *result.Honesty {
	switch {
	case read && run.Summary.Reconnects > 0:
		// A reconnect may follow a server restart, which resets the counter.
		return &result.Honesty{Note: fmt.Sprintf("not checked: the threads reconnected %d times (a restarted server starts its counters again)", run.Summary.Reconnects)}
	case read && beforeErr == nil && afterErr == nil:
		h := honesty(before, after, clientCount(after, wl, run))
		run.Honesty = h
		if msg := stats.HonestyWarning(run); msg != "" {
			c.send(Event{Kind: EventNotice, Target: name, Message: "warning: " + msg})
		}
		return h
	case errors.Is(beforeErr, driver.ErrNoOpCount):
		// Never a silent pass: the result says the check could not run, and why.
		return &result.Honesty{Note: "not checked: " + beforeErr.Error()}
	}
	return nil
}

// cleanup drops the run's tables on every target (--cleanup).
func (c *conductor) cleanup(ctx context.Context) error {
	if c.last.Workload == nil {
		return nil // nothing ran
	}
	for _, t := range c.targets {
		c.send(Event{Kind: EventPhase, Target: t.Name, Phase: "cleanup"})
		if _, err := cleanupTables(ctx, c.last.Workload, c.dbs[t.Name], c.poolSize-2); err != nil {
			return &TargetError{Target: t.Name, Where: "cleanup", Err: err}
		}
	}
	return nil
}
