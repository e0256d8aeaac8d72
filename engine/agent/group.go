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
	return nil
}

// Measure runs cfg over the agents, each its share of the threads (and
// of --events), with seeds of its own, and merges what they send.
func (g *Group) Measure(ctx context.Context, cfg engine.Config, target string, emit func(result.Interval, *hdrhistogram.Histogram)) (result.Run, error) {
	k := len(g.members)
	if err := splittable(cfg, k); err != nil {
		return result.Run{Target: target}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	threads := Shares(cfg.Threads, k)
	events := shareEvents(cfg.Events, threads, cfg.Threads)
	ivs := newIntervalJoin(k, cfg, emit)
	ready, ended := make(chan int, k), make(chan int, k)
	outcomes := make(chan memberOutcome, k)
	for i, m := range g.members {
		// Seeds apart as the engine's threads are: no two agents draw the
		// same rows.
		req, err := m.runRequest(cfg, threads[i], events[i], 0, cfg.Seed+uint64(i)*0x5851f42d4c957f2d, true)
		if err != nil {
			return result.Run{Target: target}, err
		}
		go func() {
			run, err := m.runOn(ctx, req, quietOf(cfg), runHooks{
				ready:    func(reply) { ready <- i },
				ended:    func() { ended <- i },
				interval: func(iv result.Interval, h *hdrhistogram.Histogram) { ivs.add(i, iv, h) },
			})
			ivs.done(i)
			outcomes <- memberOutcome{i: i, run: run, err: err}
		}()
	}
	b := &barriers{g: g, cancel: cancel, ready: ready, ended: ended, outcomes: outcomes, runs: make([]*result.Run, k), errs: make([]error, k)}
	b.at(b.ready, func() {
		if cfg.AtReady != nil {
			cfg.AtReady()
		}
		startWindows(cfg)
	})
	b.at(b.ended, cfg.AtEnd)
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

// barriers walks the agents through a group run's two barriers.
type barriers struct {
	g               *Group
	cancel          context.CancelFunc
	ready, ended    chan int
	outcomes        chan memberOutcome
	runs            []*result.Run
	errs            []error
	finished, first int
	failed          bool
}

// at waits until every agent still running has reached the barrier
// reported on ch; when all of them did (none failed or was cut short),
// it runs between (the counters' reading) and releases them. An agent's
// failure cancels the others: a group's run stands or falls whole.
func (b *barriers) at(ch chan int, between func()) {
	k := len(b.g.members)
	waiting := map[int]bool{}
	for len(waiting)+b.finished < k {
		select {
		case i := <-ch:
			waiting[i] = true
		case o := <-b.outcomes:
			b.finish(o)
		}
	}
	if !b.failed && b.finished == 0 && between != nil {
		between()
	}
	for i := range waiting {
		_ = b.g.members[i].release()
	}
}

func (b *barriers) finish(o memberOutcome) {
	b.runs[o.i], b.errs[o.i] = o.run, o.err
	b.finished++
	if o.err != nil && !b.failed {
		b.failed, b.first = true, o.i
		b.cancel()
	}
}

// collect waits for every agent's run.
func (b *barriers) collect() {
	for b.finished < len(b.g.members) {
		b.finish(<-b.outcomes)
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
// interval is emitted once every agent still running has sent it, with
// the host's telemetry read then.
type intervalJoin struct {
	mu      sync.Mutex
	k       int
	cfg     engine.Config
	emit    func(result.Interval, *hdrhistogram.Histogram)
	sent    []int // intervals each agent has sent
	over    []bool
	pending []joinSlot // from index len(out) on
	out     []result.Interval
}

type joinSlot struct {
	ivs   []result.Interval
	hists []*hdrhistogram.Histogram
}

func newIntervalJoin(k int, cfg engine.Config, emit func(result.Interval, *hdrhistogram.Histogram)) *intervalJoin {
	return &intervalJoin{k: k, cfg: cfg, emit: emit, sent: make([]int, k), over: make([]bool, k)}
}

func (j *intervalJoin) add(agent int, iv result.Interval, h *hdrhistogram.Histogram) {
	j.mu.Lock()
	defer j.mu.Unlock()
	at := j.sent[agent] - len(j.out)
	j.sent[agent]++
	for len(j.pending) <= at {
		j.pending = append(j.pending, joinSlot{})
	}
	j.pending[at].ivs = append(j.pending[at].ivs, iv)
	j.pending[at].hists = append(j.pending[at].hists, h)
	j.flush()
}

// done marks an agent's run over: it sends no more intervals.
func (j *intervalJoin) done(agent int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.over[agent] = true
	j.flush()
}

// flush emits the intervals every agent still running has sent.
func (j *intervalJoin) flush() {
	for len(j.pending) > 0 {
		n := len(j.out)
		for a := range j.k {
			if j.sent[a] <= n && !j.over[a] {
				return
			}
		}
		slot := j.pending[0]
		j.pending = j.pending[1:]
		iv, h := engine.ConcurrentInterval(slot.ivs, slot.hists, j.cfg.Percentile, j.cfg.Workload)
		hostSide(j.cfg, &iv)
		j.out = append(j.out, iv)
		if j.emit != nil {
			j.emit(iv, h)
		}
	}
}

func (j *intervalJoin) merged() []result.Interval {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.out
}
