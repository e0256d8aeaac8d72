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
	"github.com/dbduel/dbduel/engine/stats"
)

// Adaptive is --runs auto's rule: a rule on the CI's width, never on the
// estimate (stopping when a verdict looks decided would bias it).
type Adaptive struct {
	CITargetPct float64       // half-width of every TPS comparison, in %
	MaxTime     time.Duration // the whole plan's budget (0: none)
}

// planSchedule is dbduel run's schedule: the plan's blocks in order, each
// on its point; under --runs auto a point's blocks end once its TPS CIs
// are narrow enough (or --max-time has passed).
type planSchedule struct {
	p        plan.Plan
	points   []Point
	adaptive *Adaptive
	c        *conductor
	at       int // the next block
	total    int // runs planned, less those --runs auto leaves out
	settled  map[int]bool
	rules    map[int]*stats.SteinRule
}

// NewPlan is the schedule of p's blocks, points[i] being the load of
// p's point i. adaptive, if set, is --runs auto (p then holds --max-runs
// blocks per point).
func NewPlan(p plan.Plan, points []Point, adaptive *Adaptive) (Schedule, error) {
	if len(points) != p.Points {
		return nil, fmt.Errorf("the plan has %d points, the session %d", p.Points, len(points))
	}
	return &planSchedule{p: p, points: points, adaptive: adaptive, total: p.TotalRuns(),
		settled: map[int]bool{}, rules: map[int]*stats.SteinRule{}}, nil
}

func (ps *planSchedule) maxThreads() int {
	n := 1
	for _, pt := range ps.points {
		n = max(n, pt.Threads)
	}
	return n
}

func (ps *planSchedule) start(c *conductor) error {
	ps.c = c
	p, rp := ps.p, &c.res.Plan
	rp.Runs, rp.WarmupRuns, rp.Seed, rp.Blocks = p.Runs, p.WarmupRuns, p.Seed, p.Orders()
	first := ps.points[0]
	rp.Threads, rp.Rate = first.Threads, first.Rate
	c.res.Workload = result.Workload{Name: first.Workload.Name(), Options: first.Workload.Options()}
	for _, pt := range ps.points {
		rp.Points = append(rp.Points, result.Point{Threads: pt.Threads, TableSize: pt.TableSize()})
	}
	return nil
}

func (ps *planSchedule) next(ctx context.Context) (step, bool, error) {
	for ; ps.at < len(ps.p.Blocks); ps.at++ {
		b := ps.p.Blocks[ps.at]
		if ps.skip(b) {
			continue
		}
		ps.at++
		return step{block: b, point: ps.points[b.Point], phase: ps.phaseOf(b), total: ps.total}, true, nil
	}
	return step{}, false, nil
}

func (ps *planSchedule) ran(_ context.Context, st step, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	ps.adaptiveStep(st.block)
	return false, nil
}

func (ps *planSchedule) finish() {
	if ps.adaptive != nil {
		ps.recordBlocksRun()
	}
}

func (ps *planSchedule) close() {}

// skip says --runs auto leaves out block b: its point has settled, or
// --max-time has passed.
func (ps *planSchedule) skip(b plan.Block) bool {
	a := ps.adaptive
	if a == nil || b.Warmup {
		return false
	}
	if ps.settled[b.Point] {
		ps.total -= len(b.Order)
		return true
	}
	if a.MaxTime > 0 && time.Since(ps.c.started) >= a.MaxTime {
		ps.c.res.Plan.StoppedBy = "max-time"
		ps.total -= len(b.Order)
		return true
	}
	return false
}

// phaseOf names a run for people: "point 2/3 (8 threads) · run 1 of 3".
func (ps *planSchedule) phaseOf(b plan.Block) string {
	p := ps.p
	phase := fmt.Sprintf("run %d of %d", b.Index, p.Runs)
	if b.Warmup {
		phase = fmt.Sprintf("warm-up run %d of %d", b.Index, p.WarmupRuns)
	}
	if len(ps.points) > 1 {
		pt := ps.points[b.Point]
		phase = fmt.Sprintf("point %d/%d (threads=%d table_size=%d) · %s", b.Point+1, len(ps.points), pt.Threads, pt.TableSize(), phase)
	}
	return phase
}

// adaptiveStep, under --runs auto, reports the point's TPS CIs after block
// b and settles the point when Stein's rule has its blocks (fixed at the
// pilot from the pilot's spread).
func (ps *planSchedule) adaptiveStep(b plan.Block) {
	a, res := ps.adaptive, ps.c.res
	if a == nil || b.Warmup {
		return
	}
	widths, _ := stats.HalfWidths(res, b.Point)
	res.Plan.CIHalfWidthPct = widths
	ps.c.send(Event{Kind: EventNotice, Message: fmt.Sprintf("after %d block(s): TPS CI half-widths %s (target ±%g%%)", b.Index, formatWidths(widths), a.CITargetPct)})
	if ps.rules[b.Point] == nil {
		ps.rules[b.Point] = &stats.SteinRule{TargetPct: a.CITargetPct}
	}
	if ps.rules[b.Point].Step(res, b.Point, b.Index) {
		ps.settled[b.Point] = true
		if res.Plan.StoppedBy == "" {
			res.Plan.StoppedBy = "ci-target"
		}
	}
}

// recordBlocksRun rewrites the plan of a --runs auto session as the
// blocks that ran, in order, and says why it stopped.
func (ps *planSchedule) recordBlocksRun() {
	res := ps.c.res
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
		if !run.Warmup && run.Target == ps.c.targets[0].Name && run.Point == 0 {
			res.Plan.Runs++
		}
	}
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
