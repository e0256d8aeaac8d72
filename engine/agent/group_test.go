package agent

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
)

// probeServer stands for the server a group's agents load: it counts the
// statements every agent's threads ran, as a server's Questions does.
var probeServer struct{ statements atomic.Uint64 }

type probeDB struct{}

func (probeDB) Conn(context.Context) (driver.Conn, error) { return probeConn{}, nil }
func (probeDB) Classify(error) driver.Failure             { return driver.Failure{} }
func (probeDB) OpCount(context.Context) (driver.OpCount, error) {
	return driver.OpCount{Counter: "probe", N: probeServer.statements.Load(), Unit: driver.Statements}, nil
}
func (probeDB) Unblock()     {}
func (probeDB) Close() error { return nil }

type probeConn struct{}

func (probeConn) Discard()     {}
func (probeConn) Close() error { return nil }

// probeWorkload runs one statement an event, of a varying length (so the
// latencies spread over the histogram).
type probeWorkload struct{}

func (probeWorkload) Name() string            { return "group_probe" }
func (probeWorkload) Protocols() []string     { return []string{"mysql"} }
func (probeWorkload) Shape() workload.Shape   { return workload.Shape{} }
func (probeWorkload) Options() map[string]any { return nil }
func (probeWorkload) Validate(int) error      { return nil }
func (probeWorkload) Args() []string          { return nil }
func (probeWorkload) Check(context.Context, driver.DB, int) (workload.TableState, error) {
	return workload.TableState{Reusable: true}, nil
}
func (probeWorkload) Prepare(context.Context, driver.DB, int, func(workload.Progress)) error {
	return nil
}
func (probeWorkload) Cleanup(context.Context, driver.DB, int) ([]string, error) { return nil, nil }
func (probeWorkload) NewWorker(_ context.Context, _ driver.Conn, thread, threads int, _ uint64) (workload.Worker, error) {
	probeThreads.Lock()
	probeThreads.seen = append(probeThreads.seen, [2]int{thread, threads})
	probeThreads.Unlock()
	return &probeWorker{n: thread}, nil
}

// probeThreads are the (thread, threads) the workers were made with.
var probeThreads struct {
	sync.Mutex
	seen [][2]int
}

func probeThreadsSeen() [][2]int {
	probeThreads.Lock()
	defer probeThreads.Unlock()
	out := probeThreads.seen
	probeThreads.seen = nil
	return out
}

type probeWorker struct{ n int }

func (w *probeWorker) Event(_ context.Context, c *workload.Counts) error {
	w.n++
	time.Sleep(time.Duration(50+w.n%7*40) * time.Microsecond)
	probeServer.statements.Add(1)
	c.Other++
	return nil
}
func (w *probeWorker) Close(context.Context, *workload.Counts) error { return nil }

type probeFamily struct{}

func (probeFamily) Names() []string { return []string{"group_probe"} }
func (probeFamily) BindFlags(*pflag.FlagSet) func(string) (workload.Workload, error) {
	return func(string) (workload.Workload, error) { return probeWorkload{}, nil }
}

var registerProbe sync.Once

func probeGroup(t *testing.T, k int) *Group {
	t.Helper()
	registerProbe.Do(func() { workload.Register(probeFamily{}) })
	open := func(context.Context, driver.Endpoint, int) (driver.DB, error) { return probeDB{}, nil }
	var members []*Client
	for range k {
		members = append(members, pairOpening(t, t.TempDir(), open))
	}
	g, err := NewGroup(members, pairOpening(t, t.TempDir(), open))
	if err != nil {
		t.Fatal(err)
	}
	g.Reach(driver.Endpoint{Protocol: "mysql", Host: "probe", Port: 1}, nil)
	return g
}

// Three agents run five threads between two barriers: while the server's
// counter is read every agent is connected and idle, so the server's count
// over the run is exactly the sum of the agents' statements; the merged
// intervals and run add up, and each merged histogram holds every event.
func TestGroupRunsBetweenBarriersAndMergesExactly(t *testing.T) {
	g := probeGroup(t, 3)
	var before, after driver.OpCount
	var idle bool
	var emitted []result.Interval
	var histEvents int64
	cfg := engine.Config{Point: engine.Point{Workload: probeWorkload{}, Threads: 5},
		Load: engine.Load{Time: 900 * time.Millisecond, ReportInterval: 300 * time.Millisecond, Percentile: 95}}
	cfg.AtReady = func() {
		before, _ = g.OpCount(context.Background())
		time.Sleep(30 * time.Millisecond) // an agent not held at the barrier would run now
		again, _ := g.OpCount(context.Background())
		idle = again.N == before.N
	}
	cfg.AtEnd = func() { after, _ = g.OpCount(context.Background()) }
	run, err := g.Measure(context.Background(), cfg, "pods", func(iv result.Interval, h *hdrhistogram.Histogram) {
		emitted = append(emitted, iv)
		histEvents += h.TotalCount()
		if uint64(h.TotalCount()) != iv.Events {
			t.Errorf("interval %d: histogram holds %d, events %d", len(emitted), h.TotalCount(), iv.Events)
		}
	})
	if err != nil || !run.Complete || run.Target != "pods" {
		t.Fatalf("run: %v complete=%v target=%q", err, run.Complete, run.Target)
	}
	if !idle {
		t.Error("statements ran while the counter was read at the start: the agents were not held")
	}
	// The agents' threads are one client's: threads 0..4 of 5, once each.
	seen := probeThreadsSeen()
	slices.SortFunc(seen, func(a, b [2]int) int { return a[0] - b[0] })
	if len(seen) != 5 {
		t.Errorf("threads made: %v", seen)
	}
	for i, th := range seen {
		if th != [2]int{i, 5} {
			t.Errorf("threads made: %v, want 0..4 of 5", seen)
			break
		}
	}
	if got := after.N - before.N; got != run.Summary.Other || got == 0 {
		t.Errorf("server counted %d statements, the merged run %d", got, run.Summary.Other)
	}
	if len(emitted) != 3 || len(run.Intervals) != 3 {
		t.Fatalf("0.9 s at 0.3 s: %d emitted, %d in the run, want 3", len(emitted), len(run.Intervals))
	}
	var ivEvents uint64
	for _, iv := range run.Intervals {
		ivEvents += iv.Events
	}
	if ivEvents > run.Summary.Events || uint64(histEvents) != ivEvents {
		t.Errorf("intervals %d events (histograms %d), run %d", ivEvents, histEvents, run.Summary.Events)
	}
	h, err := hdrhistogram.Decode([]byte(run.Histogram))
	if err != nil || uint64(h.TotalCount()) != run.Summary.Events {
		t.Errorf("run histogram: %v, holds %d of %d events", err, h.TotalCount(), run.Summary.Events)
	}
	if f := run.Fairness; f == nil || math.Abs(f.EventsAvg*5-float64(run.Summary.Events)) > 1e-6 {
		t.Errorf("fairness %+v: the mean over 5 threads must be the events over 5", run.Fairness)
	}
	if math.Abs(run.Summary.TPS-float64(run.Summary.Events)/run.Summary.DurationS) > 1e-9 {
		t.Errorf("tps %.1f is not events/duration", run.Summary.TPS)
	}
}

// An --events run: the agents end apart (shares 4, 3, 3 of 10 events, no
// time limit), the merged run has every event once, lasts as long as the
// longest, and a long wait at the barrier (the counters' reading) does not
// trip the silence bound: held agents say they wait.
func TestGroupEventsAndAHeldBarrier(t *testing.T) {
	g := probeGroup(t, 3)
	cfg := engine.Config{Point: engine.Point{Workload: probeWorkload{}, Threads: 3},
		Load: engine.Load{Events: 10, ReportInterval: 100 * time.Millisecond, Percentile: 95, StallTimeout: 200 * time.Millisecond}}
	cfg.AtReady = func() { time.Sleep(time.Second) } // five times the silence bound
	var before, after driver.OpCount
	cfg.AtEnd = func() { after, _ = g.OpCount(context.Background()) }
	before, _ = g.OpCount(context.Background())
	run, err := g.Measure(context.Background(), cfg, "pods", nil)
	if err != nil || !run.Complete {
		t.Fatalf("run: %v complete=%v", err, run.Complete)
	}
	if run.Summary.Events != 10 || after.N-before.N != 10 {
		t.Errorf("events %d, server %d: want 10", run.Summary.Events, after.N-before.N)
	}
	probeThreadsSeen()
}

// With a warm-up, the warm and measured intervals are joined apart: every
// measured interval holds every agent's events of its span.
func TestGroupWarmupIntervals(t *testing.T) {
	g := probeGroup(t, 2)
	cfg := engine.Config{Point: engine.Point{Workload: probeWorkload{}, Threads: 2},
		Load: engine.Load{Time: 600 * time.Millisecond, Warmup: 300 * time.Millisecond, ReportInterval: 150 * time.Millisecond, Percentile: 95}}
	var warm, measured int
	run, err := g.Measure(context.Background(), cfg, "pods", func(iv result.Interval, h *hdrhistogram.Histogram) {
		if iv.Warmup {
			warm++
		} else {
			measured++
		}
	})
	if err != nil || !run.Complete {
		t.Fatalf("run: %v", err)
	}
	if measured < 3 || warm < 1 {
		t.Errorf("%d warm, %d measured intervals", warm, measured)
	}
	var sum uint64
	for _, iv := range run.Intervals {
		if !iv.Warmup {
			sum += iv.Events
		}
	}
	if sum == 0 || sum > run.Summary.Events {
		t.Errorf("measured intervals %d events, run %d", sum, run.Summary.Events)
	}
	probeThreadsSeen()
}

// A failed agent ends the group's run: the others are stopped, the error
// names the agent, and the run is not complete.
func TestGroupFailsWhole(t *testing.T) {
	g := probeGroup(t, 2)
	g.members[1].broken = errors.New("the agent exited")
	cfg := engine.Config{Point: engine.Point{Workload: probeWorkload{}, Threads: 2},
		Load: engine.Load{Time: 120 * time.Second, ReportInterval: time.Second, Percentile: 95}}
	done := make(chan struct{})
	var run result.Run
	var err error
	go func() { run, err = g.Measure(context.Background(), cfg, "pods", nil); close(done) }()
	// The run would last two minutes; a group that waits for its other
	// agent instead of failing whole would still be running at 60 s (the
	// bound is far from both so a busy machine does not decide it).
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the group waited on after an agent failed")
	}
	if err == nil || !strings.Contains(err.Error(), "agent 2 of 2") || run.Complete {
		t.Fatalf("err %v complete %v", err, run.Complete)
	}
}

// What would not merge exactly is refused with the reason.
func TestGroupRefusesWhatDoesNotMerge(t *testing.T) {
	g := probeGroup(t, 3)
	for _, c := range []struct {
		cfg  engine.Config
		want string
	}{
		{engine.Config{Point: engine.Point{Workload: probeWorkload{}, Threads: 2}}, "at least 3 threads"},
		{engine.Config{Point: engine.Point{Workload: probeWorkload{}, Threads: 6, Rate: 100}}, "--rate"},
	} {
		if _, err := g.Measure(context.Background(), c.cfg, "pods", nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestShares(t *testing.T) {
	for _, c := range []struct {
		n, k int
		want []int
	}{{5, 3, []int{2, 2, 1}}, {6, 3, []int{2, 2, 2}}, {3, 3, []int{1, 1, 1}}} {
		got := Shares(c.n, c.k)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("Shares(%d,%d) = %v, want %v", c.n, c.k, got, c.want)
				break
			}
		}
	}
	ev := shareEvents(10, []int{2, 2, 1}, 5)
	if ev[0]+ev[1]+ev[2] != 10 || ev[2] != 2 {
		t.Errorf("shareEvents(10) = %v", ev)
	}
}
