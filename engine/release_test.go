package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/internal/fakesql"
)

// releaseLog is the order in which fake targets connect threads and close
// their idle connections.
type releaseLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *releaseLog) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

// releasing is a fake target's pool that logs what the engine asks of it.
type releasing struct {
	*driver.SQLPool
	name string
	log  *releaseLog
}

func (r releasing) Conn(ctx context.Context) (driver.Conn, error) {
	r.log.add("conn " + r.name)
	return r.SQLPool.Conn(ctx)
}

func (r releasing) ReleaseIdle(context.Context) error {
	r.log.add("release " + r.name)
	return nil
}

// In a plan, every target's idle connections are closed before each run
// connects its threads, the running target's own included: a run never
// starts on connections an earlier run or the table load left; and the
// heap's free pages go back to the system before each run.
func TestPlanReleasesIdleConnectionsBeforeEveryRun(t *testing.T) {
	log := &releaseLog{}
	defer func(f func()) { freeOSMemory = f }(freeOSMemory)
	freeOSMemory = func() { log.add("free") }
	open := func(name string) func(context.Context, int) (driver.DB, error) {
		return func(context.Context, int) (driver.DB, error) {
			db, _ := fakesql.Open(false)
			return releasing{&driver.SQLPool{DB: db, Protocol: "fake"}, name, log}, nil
		}
	}
	names := []string{"a", "b", "c"}
	sched, err := NewPlan(plan.New(names, 1, 2, 0, 7), []Point{{Workload: &scripted{sleep: time.Millisecond}, Threads: 2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess := Session{Load: Load{Time: 50 * time.Millisecond, Percentile: 95}, Schedule: sched,
		BeforeRun: func(_ context.Context, name string) error { log.add("restart " + name); return nil }}
	events := make(chan Event, 64)
	targets := []Target{{Name: "a", Open: open("a")}, {Name: "b", Open: open("b")}, {Name: "c", Open: open("c")}}
	go Run(context.Background(), sess, targets, events)
	for e := range events {
		if e.Kind == EventFinished && e.Err != nil {
			t.Fatal(e.Err)
		}
	}
	// Each run: the three targets released (in any order), the free pages
	// returned, the target restarted, then its two threads.
	lines := log.lines
	runs := 0
	for i := 0; i < len(lines); {
		released := map[string]bool{}
		freed := false
		for ; i < len(lines) && (strings.HasPrefix(lines[i], "release ") || lines[i] == "free"); i++ {
			freed = freed || lines[i] == "free"
			released[strings.TrimPrefix(lines[i], "release ")] = true
		}
		// The pages go back after the releases (what they free) and before
		// the restart and the run.
		if !freed || lines[i-1] != "free" || i >= len(lines) || !strings.HasPrefix(lines[i], "restart ") {
			t.Fatalf("at line %d: not releases, then the heap's free pages returned, then a restart: %q", i, lines)
		}
		restarted := strings.TrimPrefix(lines[i], "restart ")
		i++
		if i+2 > len(lines) || lines[i] != lines[i+1] || !strings.HasPrefix(lines[i], "conn ") {
			t.Fatalf("after the restart at line %d, not a run's two threads: %q", i, lines)
		}
		runner := strings.TrimPrefix(lines[i], "conn ")
		if runner != restarted {
			t.Fatalf("%s restarted, %s ran: %q", restarted, runner, lines)
		}
		for _, n := range names {
			if !released[n] {
				t.Fatalf("before %s's run, released %v (want every target's): %q", runner, released, lines)
			}
		}
		i += 2
		runs++
	}
	if runs != 6 {
		t.Fatalf("%d runs seen, want 6 (3 targets × 2 blocks): %q", runs, lines)
	}
}

// Live keeps every target's threads connected between its slices: no
// target's connections are closed (nor the collector forced between them).
func TestLiveReleasesNoConnections(t *testing.T) {
	log := &releaseLog{}
	defer func(f func()) { freeOSMemory = f }(freeOSMemory)
	freeOSMemory = func() { log.add("free") }
	open := func(context.Context, int) (driver.DB, error) {
		db, _ := fakesql.Open(false)
		return releasing{&driver.SQLPool{DB: db, Protocol: "fake"}, "x", log}, nil
	}
	ctl := NewLiveControl(Point{Workload: &scripted{sleep: time.Millisecond}, Threads: 2})
	sess := Session{Load: Load{Time: 100 * time.Millisecond, ReportInterval: 50 * time.Millisecond, Percentile: 95}, Schedule: NewLive(ctl, nil, 7)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan Event, 16)
	go Run(ctx, sess, []Target{{Name: "a", Open: open}, {Name: "b", Open: open}}, events)
	for e := range events {
		if e.Kind == EventSnapshot && e.Snapshot.Plan.Runs >= 3 {
			cancel()
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if s := fmt.Sprint(log.lines); strings.Contains(s, "release") || strings.Contains(s, "free") || !strings.Contains(s, "conn") {
		t.Fatalf("live: %s", s)
	}
}
