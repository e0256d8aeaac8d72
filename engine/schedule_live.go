package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// Restarter restarts a target whose configuration changed (dbduel live's
// iterations) and reads back the settings that differ from before.
type Restarter func(ctx context.Context, target string) (readBack map[string]string, err error)

// liveSchedule is dbduel live's schedule: targets take turns in short
// slices (the session's Load.Time, its first Load.Warmup not counted); a
// round (every target one slice, in a shuffled order) is a block, and a
// change from the control starts a segment (a point of its own: rounds
// are paired only within one). It runs until ctx ends (the user quit):
// the result is then complete, less the round the quit cut short.
type liveSchedule struct {
	ctl     *LiveControl
	restart Restarter
	seed    int64
	c       *conductor
	rng     *rand.Rand
	keep    *keeper
	out     map[string]error // targets that failed to restart: they sit out
	points  []Point          // one per segment
	seg     int              // index into the result's segments (-1: none yet)
	round   int              // rounds begun in all
	// runsBefore is how many runs the result held when the round began.
	runsBefore int
	switches   []time.Duration // of complete rounds
	iteration  int             // configuration iterations (1: as started)
	// settling holds, per target restarted and not yet steady, the TPS
	// of each of its settling slices (stats.Settled decides).
	settling map[string][]float64
	// The rounds' orders: Williams rows (plan.WilliamsRows) over the
	// targets taking part, in an order shuffled when that set changes.
	members []string
	rows    [][]int
	rowAt   int
}

// NewLive is dbduel live's schedule, steered by ctl; restart (may be nil)
// restarts the targets an iteration changes; seed shuffles the rounds.
func NewLive(ctl *LiveControl, restart Restarter, seed int64) Schedule {
	return &liveSchedule{ctl: ctl, restart: restart, seed: seed, seg: -1, iteration: 1,
		out: map[string]error{}, keep: &keeper{kept: map[string]*KeptThreads{}}, settling: map[string][]float64{}}
}

func (ls *liveSchedule) maxThreads() int { return MaxLiveThreads } // the keys may raise the threads

func (ls *liveSchedule) start(c *conductor) error {
	for name, db := range c.dbs {
		if _, ok := db.(Remote); ok {
			return fmt.Errorf("target %s: dbduel live drives every client from here and keeps its connections between slices; a client=netns agent runs whole runs (use dbduel run)", name)
		}
	}
	ls.c = c
	ls.rng = rand.New(rand.NewPCG(uint64(ls.seed), 0x11fe))
	set := ls.ctl.Settings()
	c.res.Workload = result.Workload{Name: set.Workload.Name(), Options: set.Workload.Options()}
	c.res.Plan.Seed, c.res.Plan.Threads, c.res.Plan.Rate = ls.seed, set.Threads, set.Rate
	c.res.Live = &result.Live{SliceS: c.s.Load.Time.Seconds(), SettleS: c.s.Load.Warmup.Seconds()}
	return nil
}

// next waits while the load is paused, applies what the control asks
// (restarts, then a new segment) and gives the next round.
func (ls *liveSchedule) next(ctx context.Context) (step, bool, error) {
	c := ls.c
	req, err := ls.ctl.next(ctx)
	if err != nil {
		return step{}, false, nil // quit (while paused, too)
	}
	if req.paused {
		ls.keep.noSwitch() // a pause is not a switch
	}
	for _, n := range ls.ctl.takeNotes() {
		c.send(Event{Kind: EventNotice, Message: n})
	}
	readBack := ls.restartAll(ctx, req.restart)
	if req.change != "" || ls.seg < 0 {
		ls.newSegment(req.set, req.change)
		c.res.Segments[ls.seg].Iteration, c.res.Segments[ls.seg].ReadBack = ls.iteration, readBack
	}
	seg := c.res.Segments[ls.seg]
	ls.round++
	order := ls.nextOrder()
	ls.runsBefore = len(c.res.Runs)
	b := plan.Block{Seq: ls.round, Point: seg.Point, Index: seg.Rounds + 1, Order: order}
	st := step{block: b, point: ls.points[seg.Point], phase: fmt.Sprintf("round %d", ls.round), keep: ls.keep}
	if len(ls.settling) > 0 {
		st.phaseOf = map[string]string{}
		for name := range ls.settling {
			st.phaseOf[name] = st.phase + " · " + SettlingPhase
		}
	}
	return st, true, nil
}

// nextOrder is the next round's order: the next Williams row over the
// targets taking part, so that within the rounds each follows each other
// equally often (with two targets a shuffle per round left the baseline
// after the other in 3 of 4 of its slices, counting across rounds; the
// rows make it half).
func (ls *liveSchedule) nextOrder() []string {
	var members []string
	for _, t := range ls.c.targets {
		if ls.out[t.Name] == nil {
			members = append(members, t.Name)
		}
	}
	if len(members) != len(ls.members) { // targets only ever leave (a failed restart)
		ls.members = members
		ls.rng.Shuffle(len(ls.members), func(i, j int) { ls.members[i], ls.members[j] = ls.members[j], ls.members[i] })
		ls.rows = plan.WilliamsRows(len(ls.members))
		ls.rowAt = ls.rng.IntN(max(len(ls.rows), 1))
	}
	if len(ls.rows) == 0 {
		return nil
	}
	row := ls.rows[ls.rowAt%len(ls.rows)]
	ls.rowAt++
	order := make([]string, len(row))
	for j, x := range row {
		order[j] = ls.members[x]
	}
	return order
}

// SettlingPhase marks a restarted target's slices while it warms up.
const SettlingPhase = "settling after restart"

// settle reads a round run while restarted targets settle: each one's
// slice joins its settling TPS, the steady ones leave the set, and the
// round is not counted (its runs are dropped) while any settles. It says
// whether the round was a settling round.
func (ls *liveSchedule) settle() bool {
	if len(ls.settling) == 0 {
		return false
	}
	c := ls.c
	seg := &c.res.Segments[ls.seg]
	for _, run := range c.res.Runs[ls.runsBefore:] {
		if tps, ok := ls.settling[run.Target]; ok {
			ls.settling[run.Target] = append(tps, run.Summary.TPS)
		}
	}
	for name, tps := range ls.settling {
		steady, capped := stats.Settled(tps)
		if capped {
			seg.SettleNote = fmt.Sprintf("%s not steady after %d settling rounds (TPS within ±%.0f%% slice to slice): counted from here on; its first rounds may still be warming", name, len(tps), stats.SettleTolerance*100)
			c.send(Event{Kind: EventNotice, Target: name, Message: seg.SettleNote})
		}
		if steady {
			delete(ls.settling, name)
		}
	}
	c.res.Runs = c.res.Runs[:ls.runsBefore]
	seg.SettlingRounds++
	return true
}

// ran counts a whole round; a round the quit cut short is left out.
func (ls *liveSchedule) ran(ctx context.Context, st step, err error) (bool, error) {
	c := ls.c
	if ctx.Err() != nil {
		c.res.Runs = c.res.Runs[:ls.runsBefore]
		ls.keep.switches = nil
		c.res.Live.Interrupted = true
		return true, nil
	}
	if err != nil {
		return false, err
	}
	ls.switches = append(ls.switches, ls.keep.switches...)
	ls.keep.switches = ls.keep.switches[:0]
	if ls.settle() {
		return false, nil
	}
	c.res.Segments[ls.seg].Rounds++
	c.res.Plan.Blocks = append(c.res.Plan.Blocks, st.block.Order)
	c.res.Plan.Runs++
	return false, nil
}

func (ls *liveSchedule) finish() { ls.record(ls.c.res.Live) }

func (ls *liveSchedule) close() { ls.keep.closeAll() }

// newSegment starts a segment with the settings set: a new point.
func (ls *liveSchedule) newSegment(set LiveSettings, change string) {
	c := ls.c
	if change == "" {
		change = "start"
	}
	pt := set.Point
	ls.points = append(ls.points, pt)
	at := len(ls.points) - 1
	c.res.Plan.Points = append(c.res.Plan.Points, result.Point{Threads: pt.Threads, TableSize: pt.TableSize()})
	ls.seg = len(c.res.Segments)
	c.res.Segments = append(c.res.Segments, result.Segment{Point: at, WhatChanged: change,
		Threads: pt.Threads, Rate: pt.Rate, Workload: pt.Workload.Name(), FirstBlock: ls.round + 1})
	ls.keep.noSwitch() // a segment's first switch may reconnect: not a switch
	c.send(Event{Kind: EventSegment, Point: at, Message: change})
}

// restartAll restarts the targets whose configuration changed, before
// the round of a new iteration: their kept threads are closed, their
// pools opened again, and what each now reads back is returned. A target
// that fails says why and sits out the rounds from then on; the others go
// on.
func (ls *liveSchedule) restartAll(ctx context.Context, names []string) map[string]map[string]string {
	if len(names) == 0 || ls.restart == nil {
		return nil
	}
	c := ls.c
	ls.iteration++
	got := map[string]map[string]string{}
	for _, name := range names {
		if _, known := c.byName[name]; !known || ls.out[name] != nil {
			continue
		}
		ls.keep.forget(name)
		var vars map[string]string
		err := c.reopen(ctx, name, func(ctx context.Context) (err error) {
			vars, err = ls.restart(ctx, name)
			return err
		})
		if err != nil {
			ls.out[name] = err
			c.send(Event{Kind: EventNotice, Target: name, Err: err, Message: fmt.Sprintf("restart failed: %v; it sits out the rounds from now", err)})
			continue
		}
		got[name] = vars
		ls.settling[name] = nil // cold: its next rounds settle
	}
	ls.keep.noSwitch() // a restart is not a switch
	return got
}

// record puts the switches' cost into the result.
func (ls *liveSchedule) record(l *result.Live) {
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
