package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
)

// conductor carries a Session's plan through its steps: open every
// target, prepare the data per table size, run each block's runs (with
// the honesty check and a snapshot after each), and under --runs auto
// end a point's blocks once its intervals are narrow enough.
type conductor struct {
	s       Session
	targets []Target
	byName  map[string]Target
	res     *result.Result
	send    func(Event)
	merge   *intervalMerger
	dbs     map[string]driver.DB

	maxThreads   int
	total, done  int // runs planned (less those --runs auto skips) and done
	started      time.Time
	preparedSize int // -1: nothing prepared yet
	wl           workload.Workload
	settled      map[int]bool // --runs auto: points whose CIs are narrow enough
	rules        map[int]*stats.SteinRule

	// dbduel live: each target's threads kept between slices, when the
	// last slice ended (zero: no switch to time) and the switches timed.
	kept     map[string]*Threads
	lastEnd  time.Time
	switches []time.Duration
	out      map[string]error // targets that failed to restart: they sit out
}

func newConductor(ctx context.Context, s Session, targets []Target, events chan<- Event, res *result.Result) *conductor {
	cfg, p := s.Config, s.Plan
	res.Workload = result.Workload{Name: cfg.Workload.Name(), Options: cfg.Workload.Options()}
	res.Plan = result.Plan{
		Runs: p.Runs, WarmupRuns: p.WarmupRuns, Seed: p.Seed, Blocks: p.Orders(),
		Threads: cfg.Threads, TimeS: cfg.Time.Seconds(), Events: cfg.Events,
		Interval: cfg.ReportInterval.Seconds(), Rate: cfg.Rate, WarmupS: cfg.Warmup.Seconds(), Percentile: cfg.Percentile,
		MarginPct: s.MarginPct, PrecisionPct: s.PrecisionPct,
	}
	c := &conductor{s: s, targets: targets, res: res, byName: map[string]Target{}, dbs: map[string]driver.DB{},
		maxThreads: cfg.Threads, total: p.TotalRuns(), started: time.Now(), preparedSize: -1,
		settled: map[int]bool{}, rules: map[int]*stats.SteinRule{},
		merge: newIntervalMerger(events, cfg.Percentile, cfg.Workload)}
	for _, pt := range p.Points {
		res.Plan.Points = append(res.Plan.Points, result.Point{Threads: pt.Threads, TableSize: pt.TableSize})
		c.maxThreads = max(c.maxThreads, pt.Threads)
	}
	c.send = func(e Event) {
		select {
		case events <- e:
		case <-ctx.Done():
		}
	}
	for _, t := range targets {
		c.byName[t.Name] = t
	}
	if s.Live != nil {
		c.maxThreads = MaxLiveThreads // the keys may raise the threads
	}
	return c
}

// openAll opens one pool per target, large enough for the plan's most threads.
func (c *conductor) openAll(ctx context.Context) error {
	for _, t := range c.targets {
		db, err := t.Open(ctx, c.maxThreads+2)
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

// skip says --runs auto leaves out block b: its point has settled, or
// --max-time has passed.
func (c *conductor) skip(b plan.Block) bool {
	a := c.s.Adaptive
	if a == nil || b.Warmup {
		return false
	}
	if c.settled[b.Point] {
		c.total -= len(b.Order)
		return true
	}
	if a.MaxTime > 0 && time.Since(c.started) >= a.MaxTime {
		c.res.Plan.StoppedBy = "max-time"
		c.total -= len(b.Order)
		return true
	}
	return false
}

// prepareFor makes the data of pt's table size on every target: once per
// size, and a new size re-prepares.
func (c *conductor) prepareFor(ctx context.Context, pt plan.Point) error {
	if pt.TableSize == c.preparedSize {
		return nil
	}
	c.wl = c.s.Config.Workload
	if c.s.WorkloadFor != nil {
		var err error
		if c.wl, err = c.s.WorkloadFor(pt.TableSize); err != nil {
			return err
		}
	}
	sweep := c.preparedSize >= 0
	for _, t := range c.targets {
		if c.out[t.Name] != nil {
			continue
		}
		if err := ensureTables(ctx, c.wl, pt.Threads, c.s.Reprepare || sweep, t.Name, c.dbs[t.Name], c.send); err != nil {
			return &TargetError{Target: t.Name, Where: "prepare", Err: err}
		}
	}
	c.preparedSize = pt.TableSize
	return nil
}

// phaseOf names a run for people: "point 2/3 (8 threads) · run 1 of 3".
func (c *conductor) phaseOf(b plan.Block) string {
	p := c.s.Plan
	phase := fmt.Sprintf("run %d of %d", b.Index, p.Runs)
	if b.Warmup {
		phase = fmt.Sprintf("warm-up run %d of %d", b.Index, p.WarmupRuns)
	}
	if len(p.Points) > 1 {
		phase = fmt.Sprintf("point %d/%d (%s) · %s", b.Point+1, len(p.Points), p.Points[b.Point], phase)
	}
	return phase
}

// runOne is one run of block b on target name: cool down, restart if
// asked, run, check honesty, record it and send the snapshot.
func (c *conductor) runOne(ctx context.Context, b plan.Block, name string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s, pt := c.s, c.s.Plan.Points[b.Point]
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
	phase := c.phaseOf(b)
	var eta time.Duration
	if c.done > 0 {
		eta = time.Since(c.started) / time.Duration(c.done) * time.Duration(c.total-c.done)
	}
	c.send(Event{Kind: EventPhase, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point,
		Warmup: b.Warmup, Phase: phase, Done: c.done, Total: c.total, ETA: eta, Threads: pt.Threads, TableSize: pt.TableSize})
	run, err := c.measure(ctx, b, name)
	c.res.Runs = append(c.res.Runs, run)
	c.done++
	snap := c.res.Clone()
	if s.Annotate != nil {
		s.Annotate(snap)
	}
	if s.OnSnapshot != nil {
		s.OnSnapshot(snap)
	}
	c.send(Event{Kind: EventRunDone, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point, Warmup: b.Warmup,
		Threads: pt.Threads, TableSize: pt.TableSize, Run: &run, Done: c.done, Total: c.total, Snapshot: snap})
	if err != nil {
		return &TargetError{Target: name, Where: phase, Err: err}
	}
	if !run.Complete {
		return &TargetError{Target: name, Where: phase, Err: cutShort(ctx)}
	}
	return nil
}

// ErrCutShort is a run that ended early with no error of its own: an
// agent stopped from outside (its container stopped or restarted).
var ErrCutShort = errors.New("the run ended early without an error of its own (its process was stopped from outside)")

func cutShort(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ErrCutShort
}

// measure runs the workload once on target name, with the server's own
// operation count read exactly around the events (the honesty check) and
// its statement timing beside it.
func (c *conductor) measure(ctx context.Context, b plan.Block, name string) (result.Run, error) {
	pt, db := c.s.Plan.Points[b.Point], c.dbs[name]
	rc := c.s.Config
	rc.Workload, rc.Threads = c.wl, pt.Threads
	rc.Telemetry = c.byName[name].Telemetry
	rc.Health = c.byName[name].Health
	if c.s.NoiseSampler != nil {
		rc.Noise = c.s.NoiseSampler()
	}
	rc.Seed = c.s.Config.Seed + uint64(b.Seq)*7919
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
	rc.Kept = c.kept[name]
	rc.AtReady = func() {
		bounded(ctx, func(c context.Context) { timing.start(c, db); before, beforeErr = db.OpCount(c) })
		ready = true
		if c.kept != nil && !c.lastEnd.IsZero() {
			// The idle time between two slices: no statement of the
			// workload ran since the last one's.
			c.switches = append(c.switches, time.Since(c.lastEnd))
		}
	}
	rc.AtEnd = func() {
		c.lastEnd = time.Now()
		bounded(context.WithoutCancel(ctx), func(c context.Context) { after, afterErr = db.OpCount(c) })
		ended = true
		bounded(context.WithoutCancel(ctx), func(c context.Context) { timing.end(c, db) })
	}
	run, err := runOn(ctx, rc, name, db, func(iv result.Interval, h *hdrhistogram.Histogram) {
		c.merge.send(Event{Kind: EventInterval, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point, Warmup: b.Warmup,
			Threads: pt.Threads, TableSize: pt.TableSize, Interval: iv}, h)
	})
	c.merge.flush(ctx)
	run.Block, run.Index, run.Point, run.Warmup = b.Seq, b.Index, b.Point, b.Warmup
	switch {
	case ready && ended && run.Summary.Reconnects > 0:
		// A reconnect may follow a server restart, which resets the counter.
		run.Honesty = &result.Honesty{Note: fmt.Sprintf("not checked: the threads reconnected %d times (a restarted server starts its counters again)", run.Summary.Reconnects)}
	case ready && ended && beforeErr == nil && afterErr == nil:
		run.Honesty = honesty(before, after, clientCount(after, c.wl, run))
		if msg := stats.HonestyWarning(run); msg != "" {
			c.send(Event{Kind: EventNotice, Target: name, Message: "warning: " + msg})
		}
	case errors.Is(beforeErr, driver.ErrNoOpCount):
		// Never a silent pass: the result says the check could not run, and why.
		run.Honesty = &result.Honesty{Note: "not checked: " + beforeErr.Error()}
	}
	run.ServerTime = timing.result(run)
	return run, err
}

// adaptiveStep, under --runs auto, reports the point's TPS CIs after block
// b and settles the point when Stein's rule has its blocks (fixed at the
// pilot from the pilot's spread).
func (c *conductor) adaptiveStep(b plan.Block) {
	a := c.s.Adaptive
	if a == nil || b.Warmup {
		return
	}
	widths, _ := stats.HalfWidths(c.res, b.Point)
	c.res.Plan.CIHalfWidthPct = widths
	c.send(Event{Kind: EventNotice, Message: fmt.Sprintf("after %d block(s): TPS CI half-widths %s (target ±%g%%)", b.Index, formatWidths(widths), a.CITargetPct)})
	if c.rules[b.Point] == nil {
		c.rules[b.Point] = &stats.SteinRule{TargetPct: a.CITargetPct}
	}
	if c.rules[b.Point].Step(c.res, b.Point, b.Index) {
		c.settled[b.Point] = true
		if c.res.Plan.StoppedBy == "" {
			c.res.Plan.StoppedBy = "ci-target"
		}
	}
}

// recordBlocksRun rewrites the plan of a --runs auto session as the
// blocks that ran, in order, and says why it stopped.
func (c *conductor) recordBlocksRun() {
	res := c.res
	res.Plan.Blocks = nil
	for _, run := range res.Runs {
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
		if !run.Warmup && run.Target == c.targets[0].Name && run.Point == 0 {
			res.Plan.Runs++
		}
	}
}

// cleanup drops the run's tables on every target (--cleanup).
func (c *conductor) cleanup(ctx context.Context) error {
	for _, t := range c.targets {
		c.send(Event{Kind: EventPhase, Target: t.Name, Phase: "cleanup"})
		if _, err := cleanupTables(ctx, c.wl, c.dbs[t.Name], c.maxThreads); err != nil {
			return &TargetError{Target: t.Name, Where: "cleanup", Err: err}
		}
	}
	return nil
}
