package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/result"
)

// Live is dbduel live's session: targets take turns in short slices, a
// round (every target one slice, in a shuffled order) is a block, and a
// change of the load from Control starts a segment (a plan point of its
// own: rounds are paired only within one).
type Live struct {
	Slice, Settle time.Duration
	Control       *LiveControl
	// Restart restarts a target whose configuration changed (Reconfigure)
	// and reads back the settings that differ from before; may be nil.
	Restart func(ctx context.Context, target string) (readBack map[string]string, err error)
}

// liveState is what the live loop keeps beside the conductor.
type liveState struct {
	Live
	rng       *rand.Rand
	cur       LiveSettings
	tableSize int
	seg       int // index into res.Segments (-1: none yet)
	round     int // rounds begun in all
	switches  []time.Duration
	iteration int // configuration iterations (1: as started)
}

// executeLive runs rounds until ctx ends (the user quit): the result is
// then complete, less the round the quit cut short.
func executeLive(ctx context.Context, c *conductor, l Live) (*result.Result, error) {
	for name, db := range c.dbs {
		if _, ok := db.(Remote); ok {
			return c.res, fmt.Errorf("target %s: dbduel live drives every client from here and keeps its connections between slices; a client=netns agent runs whole runs (use dbduel run)", name)
		}
	}
	ls := &liveState{Live: l, rng: rand.New(rand.NewPCG(uint64(c.s.Plan.Seed), 0x11fe)), seg: -1, iteration: 1}
	c.out = map[string]error{}
	if len(c.s.Plan.Points) > 0 {
		ls.tableSize = c.s.Plan.Points[0].TableSize
	}
	c.kept = map[string]*Threads{}
	defer func() {
		for _, k := range c.kept {
			k.Close()
		}
	}()
	c.s.Config.Time, c.s.Config.Warmup, c.s.Config.Events = l.Slice, l.Settle, 0
	c.s.Cooldown, c.s.BeforeRun = 0, nil
	c.res.Live = &result.Live{SliceS: l.Slice.Seconds(), SettleS: l.Settle.Seconds()}
	c.res.Plan.Runs, c.res.Plan.Blocks, c.res.Plan.Points = 0, nil, nil
	c.s.Plan.Points = nil
	snaps := newSnapshotter(c)
	defer snaps.stop()
	for {
		step, err := l.Control.next(ctx)
		if err != nil {
			break // quit (while paused, too)
		}
		if step.paused {
			c.lastEnd = time.Time{} // a pause is not a switch
		}
		for _, n := range l.Control.takeNotes() {
			c.send(Event{Kind: EventNotice, Message: n})
		}
		readBack := ls.restart(ctx, c, step.restart)
		if step.change != "" || ls.seg < 0 {
			if err := ls.newSegment(ctx, c, step.set, step.change); err != nil {
				return c.res, err
			}
			c.res.Segments[ls.seg].Iteration, c.res.Segments[ls.seg].ReadBack = ls.iteration, readBack
		}
		done, err := ls.runRound(ctx, c)
		if err != nil {
			return c.res, err
		}
		if !done {
			c.res.Live.Interrupted = true
			break
		}
		snaps.offer()
	}
	ls.record(c.res.Live)
	c.res.Complete = true
	return c.res, nil
}

// newSegment starts a segment with the settings set: a new plan point,
// its workload's tables checked (prepared when missing).
func (ls *liveState) newSegment(ctx context.Context, c *conductor, set LiveSettings, change string) error {
	if change == "" {
		change = "start"
	}
	pt := plan.Point{Threads: set.Threads, TableSize: ls.tableSize}
	c.s.Plan.Points = append(c.s.Plan.Points, pt)
	c.res.Plan.Points = append(c.res.Plan.Points, result.Point{Threads: pt.Threads, TableSize: pt.TableSize})
	c.s.Config.Rate = set.Rate
	if set.Workload != nil {
		c.s.Config.Workload = set.Workload
		c.s.WorkloadFor = nil
	}
	c.preparedSize = -1 // a new workload checks its tables
	if err := c.prepareFor(ctx, pt); err != nil {
		return err
	}
	ls.cur = set
	ls.seg = len(c.res.Segments)
	c.res.Segments = append(c.res.Segments, result.Segment{Point: len(c.s.Plan.Points) - 1, WhatChanged: change,
		Threads: set.Threads, Rate: set.Rate, Workload: c.wl.Name(), FirstBlock: ls.round + 1})
	c.lastEnd = time.Time{} // a segment's first switch may reconnect: not a switch
	c.send(Event{Kind: EventSegment, Point: len(c.s.Plan.Points) - 1, Message: change})
	return nil
}

// runRound runs one slice per target in a shuffled order; done is false
// when ctx ended it (its runs are then left out).
func (ls *liveState) runRound(ctx context.Context, c *conductor) (done bool, err error) {
	seg := &c.res.Segments[ls.seg]
	ls.round++
	order := make([]string, 0, len(c.targets))
	for _, t := range c.targets {
		if c.out[t.Name] == nil {
			order = append(order, t.Name)
		}
	}
	ls.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	b := plan.Block{Seq: ls.round, Point: seg.Point, Index: seg.Rounds + 1, Order: order}
	n := len(c.res.Runs)
	for _, name := range order {
		if ctx.Err() != nil {
			c.res.Runs = c.res.Runs[:n]
			return false, nil
		}
		if err := c.runSlice(ctx, b, name); err != nil {
			if ctx.Err() != nil {
				c.res.Runs = c.res.Runs[:n]
				return false, nil
			}
			return false, err
		}
	}
	ls.switches = append(ls.switches, c.switches...)
	c.switches = c.switches[:0]
	seg.Rounds++
	c.res.Plan.Blocks = append(c.res.Plan.Blocks, order)
	c.res.Plan.Runs++
	return true, nil
}

// runSlice is one target's slice of block b: measured as any run (its
// honesty check included), on the target's kept threads.
func (c *conductor) runSlice(ctx context.Context, b plan.Block, name string) error {
	pt := c.s.Plan.Points[b.Point]
	c.send(Event{Kind: EventPhase, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point,
		Phase: fmt.Sprintf("round %d", b.Seq), Threads: pt.Threads, TableSize: pt.TableSize})
	if c.kept[name] == nil {
		c.kept[name] = &Threads{}
	}
	run, err := c.measure(ctx, b, name)
	if err != nil {
		return &TargetError{Target: name, Where: fmt.Sprintf("round %d", b.Seq), Err: err}
	}
	c.res.Runs = append(c.res.Runs, run)
	c.done++
	c.send(Event{Kind: EventRunDone, Target: name, Block: b.Seq, Index: b.Index, Point: b.Point,
		Threads: pt.Threads, TableSize: pt.TableSize, Run: &run, Done: c.done})
	return nil
}

// restart restarts the targets whose configuration changed, before the
// round of a new iteration: their kept threads are closed, their pools
// opened again, and what each now reads back is returned. A target that
// fails says why and sits out the rounds from then on; the others go on.
func (ls *liveState) restart(ctx context.Context, c *conductor, names []string) map[string]map[string]string {
	if len(names) == 0 || ls.Restart == nil {
		return nil
	}
	ls.iteration++
	got := map[string]map[string]string{}
	for _, name := range names {
		if _, known := c.byName[name]; !known || c.out[name] != nil {
			continue
		}
		if k := c.kept[name]; k != nil {
			k.Close()
			delete(c.kept, name)
		}
		c.dbs[name].Close()
		vars, err := ls.Restart(ctx, name)
		if err == nil {
			var db driver.DB
			if db, err = c.byName[name].Open(ctx, c.maxThreads+2); err == nil {
				c.dbs[name] = db
			}
		}
		if err != nil {
			c.out[name] = err
			c.send(Event{Kind: EventNotice, Target: name, Err: err, Message: fmt.Sprintf("restart failed: %v; it sits out the rounds from now", err)})
			continue
		}
		got[name] = vars
	}
	c.lastEnd = time.Time{} // a restart is not a switch
	return got
}

// record puts the switches' cost into the result.
func (ls *liveState) record(l *result.Live) {
	l.Switches = len(ls.switches)
	if l.Switches == 0 {
		return
	}
	var sum, worst time.Duration
	for _, d := range ls.switches {
		sum += d
		worst = max(worst, d)
	}
	l.SwitchMs = float64(sum) / float64(l.Switches) / 1e6
	l.SwitchMaxMs = float64(worst) / 1e6
}
