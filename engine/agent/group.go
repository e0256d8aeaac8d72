package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
)

// Group is one target's load run by several agents at once (agents=N, as
// k6-operator runs a test as N pods): each runs a share of the threads,
// and their intervals and histograms merge exactly into one series. The
// agents start and end at barriers: the server's counters are read by
// counter, an idle agent beside them, while every agent waits connected
// and idle, so the honesty check counts exactly the agents' statements.
type Group struct {
	members []*Client
	counter *Client
}

var _ engine.Remote = (*Group)(nil)

// NewGroup runs loads on members; counter reads the server's counters
// (it must reach the same server: Reach is passed on to it).
func NewGroup(members []*Client, counter *Client) (*Group, error) {
	if len(members) < 2 || counter == nil {
		return nil, errors.New("a group needs at least two agents and one to read the server's counters")
	}
	return &Group{members: members, counter: counter}, nil
}

// Shares splits n over k agents as evenly as it goes, the first ones
// taking one more.
func Shares(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = n / k
		if i < n%k {
			out[i]++
		}
	}
	return out
}

// Reach points every agent, and the counter reader, at the server.
func (g *Group) Reach(ep driver.Endpoint, args []string) {
	for _, m := range g.members {
		m.Reach(ep, args)
	}
	g.counter.Reach(ep, args)
}

// SystemFacts are the first agent's.
func (g *Group) SystemFacts() map[string]string { return g.members[0].SystemFacts() }

// The table steps run once, through the first agent.

func (g *Group) Check(ctx context.Context, w workload.Workload, threads int) (workload.TableState, error) {
	return g.members[0].Check(ctx, w, threads)
}

func (g *Group) Prepare(ctx context.Context, w workload.Workload, threads int, progress func(workload.Progress)) error {
	return g.members[0].Prepare(ctx, w, threads, progress)
}

func (g *Group) Cleanup(ctx context.Context, w workload.Workload, threads int) ([]string, error) {
	return g.members[0].Cleanup(ctx, w, threads)
}

// The server's counters come from the counter reader, idle during runs.

func (g *Group) OpCount(ctx context.Context) (driver.OpCount, error) { return g.counter.OpCount(ctx) }
func (g *Group) ServerTime(ctx context.Context) (driver.ServerTime, error) {
	return g.counter.ServerTime(ctx)
}
func (g *Group) Conn(ctx context.Context) (driver.Conn, error) { return g.members[0].Conn(ctx) }
func (g *Group) Classify(err error) driver.Failure             { return g.members[0].Classify(err) }
func (g *Group) Unblock()                                      {}
func (g *Group) Close() error                                  { return nil }

// splittable says why cfg cannot be split over k agents, if it cannot:
// what would not merge exactly is refused rather than approximated.
func splittable(cfg engine.Config, k int) error {
	switch {
	case cfg.Threads < k:
		return fmt.Errorf("agents=%d needs at least %d threads (--threads %d)", k, k, cfg.Threads)
	case cfg.Events > 0 && cfg.Events < uint64(k):
		return fmt.Errorf("agents=%d needs at least %d events (--events %d): an agent with none would run without a limit", k, k, cfg.Events)
	case cfg.Rate > 0:
		return fmt.Errorf("agents=%d does not take --rate: the open loop's service times are not sent per interval, so they would not merge exactly", k)
	case cfg.Kept != nil:
		return fmt.Errorf("agents=%d does not keep threads between runs (dbduel live)", k)
	}
	if _, ok := cfg.Workload.(workload.Typed); ok {
		return fmt.Errorf("agents=%d does not take %s: its per-type latencies are not sent per interval, so they would not merge exactly", k, cfg.Workload.Name())
	}
	if _, ok := cfg.Workload.(workload.ServerCounted); ok {
		return fmt.Errorf("agents=%d does not take %s: its server counts are read by the agent that runs it", k, cfg.Workload.Name())
	}
	if ps, ok := cfg.Workload.(workload.ProcessShared); ok && ps.SharedState() != "" {
		return fmt.Errorf("agents=%d cannot split this run: %s", k, ps.SharedState())
	}
	return nil
}

// Measure runs cfg over the agents, each its share of the threads (placed
// among all of them, with their seeds: together they are the threads one
// client would run) and of --events, and merges what they send.
func (g *Group) Measure(ctx context.Context, cfg engine.Config, target string, emit func(result.Interval, *hdrhistogram.Histogram)) (result.Run, error) {
	k := len(g.members)
	if err := splittable(cfg, k); err != nil {
		return result.Run{Target: target}, err
	}
	threads := Shares(cfg.Threads, k)
	events := shareEvents(cfg.Events, threads, cfg.Threads)
	reqs := make([]request, k)
	base := 0
	for i, m := range g.members {
		var err error
		if reqs[i], err = m.runRequest(cfg, runShare{threads: threads[i], base: base, of: cfg.Threads, events: events[i], barrier: true}); err != nil {
			return result.Run{Target: target}, err
		}
		base += threads[i]
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ivs := newIntervalJoin(k, cfg, emit)
	b := &barriers{g: g, cancel: cancel, reached: make(chan int, 2*k), outcomes: make(chan memberOutcome, k),
		state: make([]memberState, k), runs: make([]*result.Run, k), errs: make([]error, k)}
	for i, m := range g.members {
		go func() {
			run, err := m.runOn(ctx, reqs[i], quietOf(cfg), runHooks{
				ready: func(reply) { b.reached <- i },
				ended: func() {
					ivs.done(i) // its intervals are all in
					b.reached <- i
				},
				interval: func(iv result.Interval, h *hdrhistogram.Histogram) { ivs.add(i, iv, h) },
			})
			ivs.done(i)
			b.outcomes <- memberOutcome{i: i, run: run, err: err}
		}()
	}
	b.at(func() {
		if cfg.AtReady != nil {
			cfg.AtReady()
		}
		cfg.StartWindows()
	})
	b.at(cfg.AtEnd)
	b.collect()
	return b.merged(ctx, cfg, target, threads, ivs.merged())
}

// shareEvents splits --events as the threads are split (0: no limit).
func shareEvents(events uint64, threads []int, total int) []uint64 {
	out := make([]uint64, len(threads))
	if events == 0 {
		return out
	}
	var given uint64
	for i, t := range threads {
		out[i] = events * uint64(t) / uint64(total)
		given += out[i]
	}
	for i := 0; given < events; i++ {
		out[i]++
		given++
	}
	return out
}

type memberOutcome struct {
	i   int
	run *result.Run
	err error
}

// memberState is where an agent is in a group run.
type memberState int

const (
	running  memberState = iota
	held                 // at a barrier, waiting for its go
	finished             // its run returned (done, failed or cut short)
)

// barriers walks the agents through a group run's two barriers.
type barriers struct {
	g        *Group
	cancel   context.CancelFunc
	reached  chan int // an agent is at a barrier (its ready, its ended)
	outcomes chan memberOutcome
	state    []memberState
	runs     []*result.Run
	errs     []error
	first    int // the first failed agent
	failed   bool
}

// at waits until no agent is running: each is held at the barrier or has
// finished. When all are held (none failed or was cut short) it runs
// between (the counters' reading); then it releases the held ones. An
// agent's failure cancels the others: a group's run stands or falls whole.
func (b *barriers) at(between func()) {
	for b.count(running) > 0 {
		select {
		case i := <-b.reached:
			if b.state[i] == running {
				b.state[i] = held
			}
		case o := <-b.outcomes:
			b.finish(o)
		}
	}
	if !b.failed && b.count(finished) == 0 && between != nil {
		between()
	}
	for i, st := range b.state {
		if st == held {
			b.state[i] = running
			_ = b.g.members[i].release()
		}
	}
}

func (b *barriers) count(st memberState) int {
	n := 0
	for _, s := range b.state {
		if s == st {
			n++
		}
	}
	return n
}

func (b *barriers) finish(o memberOutcome) {
	b.state[o.i] = finished
	b.runs[o.i], b.errs[o.i] = o.run, o.err
	if o.err != nil && !b.failed {
		b.failed, b.first = true, o.i
		b.cancel()
	}
}

// collect waits for every agent's run.
func (b *barriers) collect() {
	for b.count(finished) < len(b.state) {
		select {
		case <-b.reached: // a cut-short agent's late word
		case o := <-b.outcomes:
			b.finish(o)
		}
	}
}

// merged is the group's run: the agents' runs and intervals merged, or
// the first failure (with what was measured until then).
func (b *barriers) merged(ctx context.Context, cfg engine.Config, target string, threads []int, intervals []result.Interval) (result.Run, error) {
	var runs []result.Run
	for _, r := range b.runs {
		if r != nil {
			runs = append(runs, *r)
		}
	}
	var err error
	if b.failed {
		err = fmt.Errorf("agent %d of %d: %w", b.first+1, len(b.g.members), b.errs[b.first])
	}
	if len(runs) != len(b.runs) {
		if err == nil {
			err = errors.New("an agent ended the run without its result")
		}
		return result.Run{Target: target, Intervals: intervals}, err
	}
	run, mErr := engine.ConcurrentRun(runs, threads, intervals, cfg.Percentile, cfg.Workload)
	if mErr != nil {
		return result.Run{Target: target, Intervals: intervals}, mErr
	}
	run.Target = target
	if ctx.Err() != nil || err != nil {
		run.Complete = false
	}
	return run, err
}

// intervalJoin merges the agents' n-th intervals as they arrive: an
// interval is emitted once every agent still in its phase has sent it,
// with the host's telemetry read then. Warm-up and measured intervals are
// numbered apart (an agent may close its warm-up with one more short
// interval than another: the tick and the warm-up's end fire together).
type intervalJoin struct {
	mu    sync.Mutex
	cfg   engine.Config
	emit  func(result.Interval, *hdrhistogram.Histogram)
	warm  *phaseJoin
	meas  *phaseJoin
	out   []result.Interval
	ended []bool
}

// phaseJoin is one phase's intervals, by index.
type phaseJoin struct {
	sent    []int  // intervals each agent has sent in the phase
	over    []bool // the agent sends no more in the phase
	pending []joinSlot
	emitted int
}

type joinSlot struct {
	ivs   []result.Interval
	hists []*hdrhistogram.Histogram
}

func newIntervalJoin(k int, cfg engine.Config, emit func(result.Interval, *hdrhistogram.Histogram)) *intervalJoin {
	phase := func() *phaseJoin { return &phaseJoin{sent: make([]int, k), over: make([]bool, k)} }
	return &intervalJoin{cfg: cfg, emit: emit, warm: phase(), meas: phase(), ended: make([]bool, k)}
}

func (j *intervalJoin) add(agent int, iv result.Interval, h *hdrhistogram.Histogram) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ended[agent] {
		return
	}
	p := j.meas
	if iv.Warmup {
		p = j.warm
	} else {
		j.warm.over[agent] = true // its warm-up is over
	}
	at := p.sent[agent] - p.emitted
	p.sent[agent]++
	for len(p.pending) <= at {
		p.pending = append(p.pending, joinSlot{})
	}
	p.pending[at].ivs = append(p.pending[at].ivs, iv)
	p.pending[at].hists = append(p.pending[at].hists, h)
	j.flush()
}

// done marks an agent's run over: it sends no more intervals.
func (j *intervalJoin) done(agent int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.ended[agent] = true
	j.warm.over[agent], j.meas.over[agent] = true, true
	j.flush()
}

// flush emits the warm-up's complete intervals, then the measured ones
// (no measured interval can complete while an agent is still warming up).
func (j *intervalJoin) flush() {
	for _, p := range []*phaseJoin{j.warm, j.meas} {
		for len(p.pending) > 0 && p.complete() {
			slot := p.pending[0]
			p.pending = p.pending[1:]
			p.emitted++
			iv, h := engine.ConcurrentInterval(slot.ivs, slot.hists, j.cfg.Percentile, j.cfg.Workload)
			j.cfg.AddHostSide(&iv)
			j.out = append(j.out, iv)
			if j.emit != nil {
				j.emit(iv, h)
			}
		}
		if len(p.pending) > 0 {
			return // the next phase waits for this one
		}
	}
}

// complete says every agent still in the phase has sent its next interval.
func (p *phaseJoin) complete() bool {
	for a := range p.sent {
		if p.sent[a] <= p.emitted && !p.over[a] {
			return false
		}
	}
	return true
}

func (j *intervalJoin) merged() []result.Interval {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.out
}
