package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets/cgroupstat"
)

// Opener opens a server the agent was given an endpoint of.
type Opener func(ctx context.Context, ep driver.Endpoint, maxConns int) (driver.DB, error)

// Serve answers requests from in on out until in ends. dir is where the
// workload's files live (the container's datadir); facts describe the
// place the agent runs in, sent with the hello; open reaches servers of
// requests that name one (nil: such requests are refused).
func Serve(ctx context.Context, in io.Reader, out io.Writer, dir, version string, facts func() map[string]string, open Opener) error {
	// Each request's context and barrier gate are made by the reader as
	// it reads the request, before anything after it: a stop or go that
	// follows at once (a host cancelled while sending) reaches this
	// request, not the one before it.
	ops := make(chan servedOp)
	readErr := make(chan error, 1)
	var mu sync.Mutex // stop and go requests arrive while an operation runs
	var cancelOp context.CancelFunc = func() {}
	var release chan struct{} // the latest operation's barrier
	go func() {
		dec := json.NewDecoder(bufio.NewReader(in))
		for {
			var r request
			if err := dec.Decode(&r); err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				mu.Lock()
				cancelOp() // the host is gone: stop what runs
				mu.Unlock()
				readErr <- err
				close(ops)
				return
			}
			if r.Op == "stop" {
				mu.Lock()
				cancelOp()
				mu.Unlock()
				continue
			}
			if r.Op == "go" {
				mu.Lock()
				select {
				case release <- struct{}{}:
				default: // one go is pending already
				}
				mu.Unlock()
				continue
			}
			op := servedOp{r: r, gate: make(chan struct{}, 1)}
			op.ctx, op.cancel = context.WithCancel(ctx)
			mu.Lock()
			cancelOp, release = op.cancel, op.gate
			mu.Unlock()
			ops <- op
		}
	}()
	w := &replyWriter{enc: json.NewEncoder(out)}
	counters := &counterDBs{open: open}
	defer counters.close()
	for op := range ops {
		err := serveOne(op.ctx, op.r, servePlace{dir: dir, open: open, counters: counters, version: version, facts: facts, release: op.gate}, w)
		op.cancel()
		if ctx.Err() != nil {
			// The agent's own process was told to stop (its container
			// stopped or restarted): the host must not read the cut
			// run as a complete one, nor wait for the next reply.
			w.send(reply{Type: "error", Error: ErrAgentSignalled.Error()})
			return w.err
		}
		if err != nil {
			w.send(reply{Type: "error", Error: err.Error()})
		} else {
			w.send(reply{Type: "done"})
		}
		if w.err != nil {
			return w.err
		}
	}
	return <-readErr
}

// servedOp is a request with its own context (what a stop cancels) and
// barrier gate (what a go opens).
type servedOp struct {
	r      request
	ctx    context.Context
	cancel context.CancelFunc
	gate   chan struct{}
}

// ErrAgentSignalled is the agent stopped by a signal to its process (a
// docker stop or restart of its container), not by the host.
var ErrAgentSignalled = errors.New("the agent's process was signalled to stop (its container was stopped or restarted)")

// replyWriter serialises replies (the run's intervals come from its
// reporting goroutine).
type replyWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
	err error
}

func (w *replyWriter) send(r reply) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.enc.Encode(r)
	}
}

// servePlace is what an operation needs of the agent's place: its files,
// the servers it reaches, and the barrier its run waits at.
type servePlace struct {
	dir      string
	open     Opener
	counters *counterDBs
	version  string
	facts    func() map[string]string
	release  <-chan struct{} // a "go" from the host
}

func serveOne(ctx context.Context, r request, p servePlace, w *replyWriter) error {
	dir, open, counters, version, facts := p.dir, p.open, p.counters, p.version, p.facts
	if r.Op == "hello" {
		w.send(reply{Type: "hello", Version: version, Facts: facts()})
		return nil
	}
	if r.Op == "cgroup" {
		u, err := readPodCgroup(r.Args)
		if err != nil {
			return err
		}
		w.send(reply{Type: "cgroup", Cgroup: &u})
		return nil
	}
	if (r.Op == "opcount" || r.Op == "servertime") && r.Endpoint != nil {
		db, err := counters.get(ctx, *r.Endpoint)
		if err != nil {
			return err
		}
		return readCounter(ctx, r.Op, db, w)
	}
	var db driver.DB = system.New(dir)
	if r.Endpoint != nil {
		if open == nil {
			return errors.New("this agent reaches no server")
		}
		var err error
		if db, err = open(ctx, *r.Endpoint, r.Threads+2); err != nil {
			return err
		}
		defer db.Close()
	}
	if r.Op == "opcount" || r.Op == "servertime" {
		return readCounter(ctx, r.Op, db, w)
	}
	wl, err := rebuild(r.Workload, r.Args)
	if err != nil {
		return err
	}
	switch r.Op {
	case "check":
		st, err := wl.Check(ctx, db, r.Threads)
		if err != nil {
			return err
		}
		w.send(reply{Type: "state", State: &st})
	case "prepare":
		return wl.Prepare(ctx, db, r.Threads, func(p workload.Progress) { w.send(reply{Type: "progress", Progress: &p}) })
	case "cleanup":
		removed, err := wl.Cleanup(ctx, db, r.Threads)
		w.send(reply{Type: "removed", Removed: removed})
		return err
	case "run":
		return serveRun(ctx, r, wl, db, p, w)
	default:
		return fmt.Errorf("unknown request %q", r.Op)
	}
	return nil
}

// serveRun runs one run of wl on db, sending its intervals as they come,
// and its result.
func serveRun(ctx context.Context, r request, wl workload.Workload, db driver.DB, p servePlace, w *replyWriter) error {
	if r.Run == nil {
		return errors.New("run request without its settings")
	}
	s := r.Run
	cfg := engine.Config{Point: engine.Point{Workload: wl, Threads: s.Threads, Rate: s.Rate},
		Load:       engine.Load{Time: s.Time, Events: s.Events, ReportInterval: s.ReportInterval, Percentile: s.Percentile, Seed: s.Seed, Warmup: s.Warmup},
		ThreadBase: s.ThreadBase, ThreadsOf: s.ThreadsOf}
	end := reply{Type: "run"}
	cfg.AtReady = func() { w.send(reply{Type: "ready"}) }
	if s.Barrier {
		// agents=N: the host reads the server's counters while every
		// agent waits, connected and idle, then releases them all.
		wait := func() { waitForGo(ctx, p.release, w) }
		cfg.AtReady = func() { w.send(reply{Type: "ready"}); wait() }
		cfg.AtEnd = func() { w.send(reply{Type: "ended"}); wait() }
	} else if r.Endpoint != nil {
		// The server's counters are read here, where the workers are
		// connected and done: the host reading them around the whole
		// request would count the pool's own opening statements.
		cdb, err := p.counters.get(ctx, *r.Endpoint)
		if err != nil {
			return err
		}
		cfg.AtReady = func() {
			ready := reply{Type: "ready"}
			ready.Time, ready.OpCount, ready.Error = readCounters(ctx, cdb, true)
			w.send(ready)
		}
		cfg.AtEnd = func() { end.Time, end.OpCount, end.Error = readCounters(context.WithoutCancel(ctx), cdb, false) }
	}
	run, runErr := engine.Measure(ctx, cfg, "", db, func(iv result.Interval, h *hdrhistogram.Histogram) {
		enc, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		w.send(reply{Type: "interval", Interval: &iv, Hist: string(enc)})
	})
	end.Run = &run
	w.send(end)
	return runErr
}

// waitForGo holds a barrier run until the host's go (or the run's end),
// saying so four times a second: the host's silence bound
// (--stall-timeout) is for a stalled agent, not a held one.
func waitForGo(ctx context.Context, release <-chan struct{}, w *replyWriter) {
	beat := time.NewTicker(250 * time.Millisecond)
	defer beat.Stop()
	for {
		select {
		case <-release:
			return
		case <-ctx.Done():
			return
		case <-beat.C:
			w.send(reply{Type: "waiting"})
		}
	}
}

// rebuild makes the workload from its name and flags, as the CLI does.
func rebuild(name string, args []string) (workload.Workload, error) {
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	factory := workload.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("workload options: %w", err)
	}
	return factory(name)
}

// readPodCgroup reads a pod's cgroup, or one of its containers': args are
// the node's cgroup root as the agent sees it, the pod's uid, its path
// when already found, and (optionally) the container's runtime id.
func readPodCgroup(args []string) (cgroupstat.Usage, error) {
	if len(args) != 3 && len(args) != 4 {
		return cgroupstat.Usage{}, errors.New("cgroup request: want the root, the pod's uid, its path and, for a container, its id")
	}
	root, uid, rel := args[0], args[1], args[2]
	if rel == "" {
		pod := cgroupstat.FindPod(root, uid)
		if pod == "" {
			return cgroupstat.Usage{}, fmt.Errorf("no cgroup of pod %s under %s (is the node's /sys/fs/cgroup mounted there?)", uid, root)
		}
		rel = pod
		if len(args) == 4 {
			if rel = cgroupstat.FindContainer(root, pod, args[3]); rel == "" {
				return cgroupstat.Usage{}, fmt.Errorf("no cgroup of container %s in pod %s's %s", args[3], uid, pod)
			}
		}
	}
	u := cgroupstat.Read(cgroupstat.Under(root, rel))
	if !u.OK {
		return u, fmt.Errorf("pod %s's cgroup %s has no CPU figures", uid, rel)
	}
	u.Path = rel
	return u, nil
}

// readCounter answers opcount (the server's count of operations) or
// servertime (its statement timer) from db.
func readCounter(ctx context.Context, op string, db driver.DB, w *replyWriter) error {
	if op == "servertime" {
		st, ok := db.(driver.ServerTimer)
		if !ok {
			return errors.New("this server does not time its statements")
		}
		t, err := st.ServerTime(ctx)
		if err != nil {
			return err
		}
		w.send(reply{Type: "servertime", Time: &t})
		return nil
	}
	n, err := db.OpCount(ctx)
	if err != nil {
		return err
	}
	w.send(reply{Type: "opcount", OpCount: &n})
	return nil
}

// counterDBs keeps open, per server, the pool the server's counters are
// read through: a pool opened for each reading would put its own opening
// statements between a run's two readings, and the server's count would
// exceed dbduel's by them.
type counterDBs struct {
	open Opener
	dbs  map[string]driver.DB
}

func (c *counterDBs) get(ctx context.Context, ep driver.Endpoint) (driver.DB, error) {
	if c.open == nil {
		return nil, errors.New("this agent reaches no server")
	}
	key := ep.URL()
	if db, ok := c.dbs[key]; ok {
		return db, nil
	}
	db, err := c.open(ctx, ep, 2)
	if err != nil {
		return nil, err
	}
	if c.dbs == nil {
		c.dbs = map[string]driver.DB{}
	}
	c.dbs[key] = db
	return db, nil
}

func (c *counterDBs) close() {
	for _, db := range c.dbs {
		db.Close()
	}
}

// readCounters reads the server's statement timer (when it has one) and
// its operation count: the timer first at a run's start, last at its end,
// as the host's conductor does (the timer's statements stay outside the
// count). What fails is said in the reply's error; the run goes on.
func readCounters(ctx context.Context, db driver.DB, timerFirst bool) (st *driver.ServerTime, n *driver.OpCount, failed string) {
	readTimer := func() {
		if timer, ok := db.(driver.ServerTimer); ok {
			if t, err := timer.ServerTime(ctx); err == nil {
				st = &t
			}
		}
	}
	if timerFirst {
		readTimer()
	}
	if c, err := db.OpCount(ctx); err != nil {
		failed = err.Error()
	} else {
		n = &c
	}
	if !timerFirst {
		readTimer()
	}
	return st, n, failed
}
