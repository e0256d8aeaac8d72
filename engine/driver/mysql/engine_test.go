// Tests of the engine over this driver against real servers: error
// classes, reconnects and counting as sysbench's MySQL driver has them.
package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mysqldrv "github.com/dbduel/dbduel/engine/driver/mysql"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/schedhint"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/oltp"
	"github.com/dbduel/dbduel/internal/testdb"
)

func prepared(t *testing.T, srv *testdb.Server, name string, o oltp.Options) (workload.Workload, *mysqldrv.DB) {
	t.Helper()
	w, err := oltp.New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	def, _ := mysqldrv.ParseErrorSet(mysqldrv.DefaultIgnoreErrors)
	db, err := mysqldrv.Open(srv.Endpoint(), 64, def)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := w.Prepare(context.Background(), db, 2, nil); err != nil {
		t.Fatal(err)
	}
	return w, db
}

func TestOpenLoopCountsQueueTime(t *testing.T) {
	srv := testdb.Start(t)
	o := oltp.DefaultOptions()
	o.TableSize = 1000
	w, db := prepared(t, srv, "oltp_point_select", o)
	// Far more arrivals than one thread can serve: events queue up.
	cfg := engine.Config{Point: engine.Point{Workload: w, Threads: 1, Rate: 50000}, Load: engine.Load{Time: 2 * time.Second, ReportInterval: time.Second, Percentile: 95, Seed: 1}}
	run, err := engine.Measure(context.Background(), cfg, "t", db, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Summary
	if s.ServiceAvgUS <= 0 || s.AvgUS < 10*s.ServiceAvgUS {
		t.Fatalf("under overload latency (%.0f µs) should far exceed service time (%.0f µs)", s.AvgUS, s.ServiceAvgUS)
	}
	if len(run.Intervals) != 2 || run.Intervals[1].QueueLen == 0 {
		t.Fatalf("intervals should report a growing queue: %+v", run.Intervals)
	}
	// Below capacity the rate is met and the queue stays short.
	cfg.Rate, cfg.Threads = 300, 2
	run, err = engine.Measure(context.Background(), cfg, "t", db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tps := run.Summary.TPS; tps < 200 || tps > 400 {
		t.Fatalf("rate 300/s gave %.1f tps", tps)
	}
}

// deadlocker is a workload whose first events of two threads deadlock for
// real: each locks its own row, waits for the other, then wants the other's.
type deadlocker struct {
	barrier sync.WaitGroup
	once    [2]sync.Once
}

func (d *deadlocker) Name() string            { return "deadlocker" }
func (d *deadlocker) Options() map[string]any { return nil }
func (d *deadlocker) Validate(int) error      { return nil }
func (d *deadlocker) Protocols() []string     { return []string{mysqldrv.Protocol} }
func (d *deadlocker) Shape() workload.Shape   { return workload.Shape{} }
func (d *deadlocker) Prepare(context.Context, driver.DB, int, func(workload.Progress)) error {
	return nil
}
func (d *deadlocker) Check(context.Context, driver.DB, int) (workload.TableState, error) {
	return workload.TableState{Reusable: true}, nil
}
func (d *deadlocker) Cleanup(context.Context, driver.DB, int) ([]string, error) { return nil, nil }
func (d *deadlocker) NewWorker(_ context.Context, c driver.Conn, thread, _ int, _ uint64) (workload.Worker, error) {
	sc, err := driver.SQLConnOf(c, "deadlocker")
	return &deadlockWorker{d: d, c: sc, me: thread + 1, other: 2 - thread}, err
}

type deadlockWorker struct {
	d         *deadlocker
	c         *sql.Conn
	me, other int
}

func (w *deadlockWorker) Event(ctx context.Context, c *workload.Counts) error {
	exec := func(q string, args ...any) error {
		_, err := w.c.ExecContext(ctx, q, args...)
		c.Other++
		return err
	}
	if err := exec("BEGIN"); err != nil {
		return err
	}
	if err := exec("UPDATE dl SET v = v + 1 WHERE id = ?", w.me); err != nil {
		return err
	}
	first := false
	w.d.once[w.me-1].Do(func() { first = true })
	if first { // only the first attempt of each thread meets the other
		w.d.barrier.Done()
		w.d.barrier.Wait()
	}
	if err := exec("UPDATE dl SET v = v + 1 WHERE id = ?", w.other); err != nil {
		w.c.ExecContext(context.Background(), "ROLLBACK")
		return err
	}
	return exec("COMMIT")
}

func (w *deadlockWorker) Close(context.Context, *workload.Counts) error { return nil }

func TestRealDeadlockIsCountedAndRestarted(t *testing.T) {
	srv := testdb.Start(t)
	srv.Exec(t, "CREATE TABLE dl (id INT PRIMARY KEY, v INT) ENGINE=InnoDB", "INSERT INTO dl VALUES (1, 0), (2, 0)")
	def, _ := mysqldrv.ParseErrorSet(mysqldrv.DefaultIgnoreErrors)
	db, err := mysqldrv.Open(srv.Endpoint(), 4, def)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := &deadlocker{}
	d.barrier.Add(2)
	run, err := engine.Measure(context.Background(), engine.Config{Point: engine.Point{Workload: d, Threads: 2}, Load: engine.Load{Events: 10, Percentile: 95}}, "t", db, nil)
	if err != nil {
		t.Fatalf("a deadlock (1213) is ignored by default and must not end the run: %v", err)
	}
	// The rendezvous forces one deadlock; the opposite lock orders may cause more.
	if run.Summary.Errors < 1 || run.Summary.Events != 10 {
		t.Fatalf("want the deadlock counted and all 10 events done, got errors=%d events=%d", run.Summary.Errors, run.Summary.Events)
	}
	var v1, v2 int
	db.DB.QueryRow("SELECT (SELECT v FROM dl WHERE id=1), (SELECT v FROM dl WHERE id=2)").Scan(&v1, &v2)
	if v1 != 10 || v2 != 10 {
		t.Fatalf("every event commits both rows once: got %d, %d", v1, v2)
	}
	// Not ignored: the run ends with the error named.
	d2 := &deadlocker{}
	d2.barrier.Add(2)
	setIgnore(db, "none")
	_, err = engine.Measure(context.Background(), engine.Config{Point: engine.Point{Workload: d2, Threads: 2}, Load: engine.Load{Events: 10, Percentile: 95}}, "t", db, nil)
	if err == nil || !strings.Contains(err.Error(), "1213") {
		t.Fatalf("want the deadlock to end the run, got %v", err)
	}
}

func TestReconnectAfterServerRestart(t *testing.T) {
	srv := testdb.Start(t)
	o := oltp.DefaultOptions()
	o.TableSize = 1000
	w, db := prepared(t, srv, "oltp_point_select", o)
	setIgnore(db, "all")
	cfg := engine.Config{Point: engine.Point{Workload: w, Threads: 2}, Load: engine.Load{Time: 6 * time.Second, ReportInterval: time.Second, Percentile: 95}}
	go func() {
		time.Sleep(1500 * time.Millisecond)
		if err := srv.Restart(context.Background()); err != nil {
			t.Errorf("restart: %v", err)
		}
	}()
	run, err := engine.Measure(context.Background(), cfg, "t", db, nil)
	if err != nil {
		t.Fatalf("with lost-connection errors ignored the run must survive a restart: %v", err)
	}
	if run.Summary.Reconnects == 0 || !run.Complete {
		t.Fatalf("want reconnects counted: %+v", run.Summary)
	}
	last := run.Intervals[len(run.Intervals)-1]
	if last.Events == 0 {
		t.Fatal("no events after the restart")
	}

	setIgnore(db, mysqldrv.DefaultIgnoreErrors)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		srv.Restart(context.Background())
	}()
	start := time.Now()
	_, err = engine.Measure(context.Background(), cfg, "t", db, nil)
	if err == nil || !strings.Contains(err.Error(), "lost the connection") || !strings.Contains(err.Error(), "--mysql-ignore-errors") {
		t.Fatalf("without ignoring, a restart must end the run with a clear message, got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the run did not stop promptly")
	}
}

func TestWarmupIsRunButNotCounted(t *testing.T) {
	srv := testdb.Start(t)
	o := oltp.DefaultOptions()
	o.TableSize = 1000
	w, db := prepared(t, srv, "oltp_point_select", o)
	cfg := engine.Config{Point: engine.Point{Workload: w, Threads: 2}, Load: engine.Load{Time: 2 * time.Second, Warmup: time.Second, ReportInterval: time.Second, Percentile: 95}}
	run, err := engine.Measure(context.Background(), cfg, "t", db, nil)
	if err != nil {
		t.Fatal(err)
	}
	var warm, measured uint64
	nWarm := 0
	for _, iv := range run.Intervals {
		if iv.Warmup {
			warm += iv.Events
			nWarm++
		} else {
			measured += iv.Events
		}
	}
	if nWarm == 0 || warm == 0 || run.WarmupQueries == 0 {
		t.Fatalf("no warm-up interval: %+v", run.Intervals)
	}
	if run.Summary.Events < measured || run.Summary.Events >= measured+warm {
		t.Fatalf("summary %d events should count the measured %d (+ tail) and not the warm-up %d", run.Summary.Events, measured, warm)
	}
	if run.Summary.DurationS < 1.9 || run.Summary.DurationS > 2.5 {
		t.Fatalf("measured duration %.2fs, want ~2s", run.Summary.DurationS)
	}
}

func TestIntervalCountMatchesSysbench(t *testing.T) {
	srv := testdb.Start(t)
	o := oltp.DefaultOptions()
	o.TableSize = 500
	w, db := prepared(t, srv, "oltp_point_select", o)
	for i := 0; i < 3; i++ {
		run, err := engine.Measure(context.Background(), engine.Config{Point: engine.Point{Workload: w, Threads: 1}, Load: engine.Load{Time: 2 * time.Second, ReportInterval: time.Second, Percentile: 95}}, "t", db, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Intervals) != 2 {
			t.Fatalf("--time 2 --report-interval 1 gave %d intervals", len(run.Intervals))
		}
	}
}

func TestCancelledRunIsIncomplete(t *testing.T) {
	srv := testdb.Start(t)
	o := oltp.DefaultOptions()
	o.TableSize = 500
	w, db := prepared(t, srv, "oltp_point_select", o)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	run, err := engine.Measure(ctx, engine.Config{Point: engine.Point{Workload: w, Threads: 2}, Load: engine.Load{Time: 30 * time.Second, ReportInterval: time.Second, Percentile: 95}}, "t", db, nil)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if run.Complete || time.Since(start) > 2*time.Second || run.Summary.Events == 0 {
		t.Fatalf("cancel must stop within a second with the events so far: complete=%v after %s, %d events", run.Complete, time.Since(start), run.Summary.Events)
	}
	var _ result.Run = run
}

// Without DBDUEL_SCHED_SLICE, opening a target leaves the scheduler alone:
// dbduel's threads keep the kernel's default slice, as sysbench's do.
func TestNoSchedulingHintByDefault(t *testing.T) {
	if os.Getenv("DBDUEL_SCHED_SLICE") != "" {
		t.Fatal("DBDUEL_SCHED_SLICE is set in the test environment")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := schedhint.Slice(syscall.Gettid())                                                              // the kernel's base slice
	mysqldrv.ResetSchedHint()                                                                                // make this Open decide again
	db, err := mysqldrv.Open(driver.Endpoint{Host: "127.0.0.1", Port: 1, User: "u"}, 1, mysqldrv.ErrorSet{}) // no connection is made
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if after := schedhint.Slice(syscall.Gettid()); after != before {
		t.Fatalf("thread slice %v after Open, was %v: a hint was applied without DBDUEL_SCHED_SLICE", after, before)
	}
}

func setIgnore(db *mysqldrv.DB, spec string) {
	e, err := mysqldrv.ParseErrorSet(spec)
	if err != nil {
		panic(err)
	}
	db.SetIgnore(e)
}

// A change of socket path (even rounds) and ReleaseIdle before a run (odd
// rounds) drop the pool's idle connections; each sends
// the server a quit (COM_QUIT), which it counts in Questions. They are
// dropped draining, so every quit is counted before either returns:
// the server's count over the next moments is the readings' own alone
// (live's first round saw one statement more, on both targets, when a
// quit landed after its counter's first reading).
func TestDroppedConnectionsQuitBeforeTheCount(t *testing.T) {
	srv := testdb.Start(t)
	def, _ := mysqldrv.ParseErrorSet(mysqldrv.DefaultIgnoreErrors)
	ctx := context.Background()
	var late []string
	for round := range 20 {
		db, err := mysqldrv.Open(srv.Endpoint(), 512, def) // sized for a live session: the poller's path
		if err != nil {
			t.Fatal(err)
		}
		// Idle connections of the poller's path, as a table load leaves.
		var held []driver.Conn
		for range 3 {
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
		}
		for _, c := range held {
			c.Close()
		}
		counter, err := mysqldrv.Open(srv.Endpoint(), 2, def)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := counter.OpCount(ctx); err != nil { // its pool opened before the window
			t.Fatal(err)
		}
		if round%2 == 0 {
			db.SetThreads(1) // raw calls: the three idle ones dropped
		} else if err := db.ReleaseIdle(ctx); err != nil { // before a run
			t.Fatal(err)
		}
		before, err := counter.OpCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		after, err := counter.OpCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		counter.Close()
		db.Close()
		if d := after.N - before.N; d != after.Self {
			late = append(late, fmt.Sprintf("round %d: %d statements between two readings, the readings' own %d", round, d, after.Self))
		}
	}
	// Drained, a busy CI machine still saw one quit late in one round of
	// twenty (why is not known: the server closed the socket before its
	// count showed it). Undrained, 2 rounds of 20 with 1 to 2 late quits
	// each, in two of three runs on this machine: this bound fails those.
	if len(late) > 1 || len(late) == 1 && !strings.Contains(late[0], "2 statements") {
		t.Fatalf("%d of 20 rounds counted quits after SetThreads returned: %s", len(late), strings.Join(late, "; "))
	}
}

// ReleaseIdle closes the idle connections and keeps the held ones.
func TestReleaseIdleClosesOnlyIdleConnections(t *testing.T) {
	srv := testdb.Start(t)
	def, _ := mysqldrv.ParseErrorSet(mysqldrv.DefaultIgnoreErrors)
	ctx := context.Background()
	db, err := mysqldrv.Open(srv.Endpoint(), 8, def)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var idle []driver.Conn
	for range 3 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	held, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, c := range idle {
		c.Close()
	}
	if err := db.ReleaseIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if s := db.DB.Stats(); s.Idle != 0 || s.OpenConnections != 1 {
		t.Fatalf("after ReleaseIdle: %d idle, %d open; want 0 and the held one", s.Idle, s.OpenConnections)
	}
	if err := held.(driver.SQLConn).SQL().PingContext(ctx); err != nil {
		t.Fatalf("the held connection: %v", err)
	}
	// The pool keeps connections again: the next run's threads, returned.
	held.Close()
	if s := db.DB.Stats(); s.Idle != 1 {
		t.Fatalf("a connection returned after ReleaseIdle: %d idle, want 1 (the pool's idle limit not restored)", s.Idle)
	}
}
