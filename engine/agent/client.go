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

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets/cgroupstat"
)

// Client talks to one agent: requests go to in, replies come from out. It
// is an engine.Remote; one request runs at a time.
type Client struct {
	mu   sync.Mutex
	inMu sync.Mutex // a request's stop or go is written while it runs
	in   io.Writer
	dec  *replyReader
	dir  string
	lost func() string // why the agent stopped answering (its stderr, its exit)
	// broken is why the conversation is over (a silent or gone agent):
	// every later request fails with it at once instead of waiting.
	broken error
	// endpoint, if set, is the server the agent reaches; args are the
	// workload's flags for workloads that cannot list their own.
	endpoint *driver.Endpoint
	args     []string
	Version  string
	Facts    map[string]string
	// read is what the agent read of the server's counters at a run's
	// start or end, handed to the engine's reading then (nil: no run is
	// at either point, OpCount and ServerTime ask the agent).
	readMu sync.Mutex
	read   *counterReading
}

// counterReading is the server's count and statement timer as the agent
// read them at a run's start or end.
type counterReading struct {
	count  *driver.OpCount
	timer  *driver.ServerTime
	failed string
}

// reading hands r to the engine's counter reads for the length of call.
func (c *Client) reading(r *counterReading, call func()) {
	c.readMu.Lock()
	c.read = r
	c.readMu.Unlock()
	call()
	c.readMu.Lock()
	c.read = nil
	c.readMu.Unlock()
}

func (c *Client) current() *counterReading {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	return c.read
}

var _ engine.Remote = (*Client)(nil)

// NewClient says hello to the agent and returns once it answered, within
// timeout. lost, if set, explains a missing answer (the agent's last words).
func NewClient(ctx context.Context, in io.Writer, out io.Reader, dir string, timeout time.Duration, lost func() string) (*Client, error) {
	c := &Client{in: in, dec: &replyReader{r: bufio.NewReader(out)}, dir: dir, lost: lost}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := c.do(hctx, request{Op: "hello"}, func(r reply) error {
		if r.Type == "hello" {
			c.Version, c.Facts = r.Version, r.Facts
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the agent did not answer: %w", err)
	}
	return c, nil
}

// do sends one request and hands every reply to on until done or error.
// A cancelled ctx sends stop and waits for the agent to finish the request.
func (c *Client) do(ctx context.Context, req request, on func(reply) error) error {
	return c.doWithin(ctx, req, 0, on)
}

// doWithin is do where the agent must reply at least every quiet (0: no
// bound): a paused container answers nothing, and the run must not wait
// on it for ever (--stall-timeout, from the host's side).
func (c *Client) doWithin(ctx context.Context, req request, quiet time.Duration, on func(reply) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	if err := c.write(req); err != nil {
		c.broken = c.gone(err)
		return c.broken
	}
	replies := make(chan reply)
	readErr := make(chan error, 1)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		defer close(replies)
		for {
			var r reply
			if err := c.dec.Decode(&r); err != nil {
				readErr <- err
				return
			}
			select {
			case replies <- r:
			case <-quit: // the caller gave up on a silent agent
				return
			}
			if r.Type == "done" || r.Type == "error" {
				return
			}
		}
	}()
	var onErr error
	stopped := false
	done := ctx.Done()
	var silence <-chan time.Time
	var timer *time.Timer
	if quiet > 0 {
		timer = time.NewTimer(quiet)
		defer timer.Stop()
		silence = timer.C
	}
	for {
		select {
		case <-silence:
			c.broken = c.gone(fmt.Errorf("%w: the agent sent nothing for %s (--stall-timeout)", engine.ErrServerStalled, quiet))
			_ = c.write(request{Op: "stop"}) // should it be alive after all, it stops its load
			return c.broken
		case <-done:
			done = nil
			if !stopped {
				stopped = true
				_ = c.write(request{Op: "stop"})
			}
		case r, ok := <-replies:
			if !ok {
				c.broken = c.gone(<-readErr)
				return c.broken
			}
			if timer != nil {
				timer.Reset(quiet)
			}
			switch r.Type {
			case "done":
				return onErr
			case "error":
				if onErr != nil {
					return onErr
				}
				return errors.New(r.Error)
			default:
				if onErr == nil {
					onErr = on(r)
				}
			}
		}
	}
}

// write sends one message to the agent.
func (c *Client) write(req request) error {
	c.inMu.Lock()
	defer c.inMu.Unlock()
	return json.NewEncoder(c.in).Encode(req)
}

// release lets a barrier run past the point it waits at (its "ready" or
// its "ended").
func (c *Client) release() error { return c.write(request{Op: "go"}) }

// gone explains a broken conversation with the agent's own last words.
func (c *Client) gone(err error) error {
	if errors.Is(err, io.EOF) {
		err = errors.New("the agent exited")
	}
	if c.lost != nil {
		if why := c.lost(); why != "" {
			return fmt.Errorf("%v: %s", err, why)
		}
	}
	return err
}

// SystemFacts are the agent's view of its place, read at hello.
func (c *Client) SystemFacts() map[string]string { return c.Facts }

// Reach makes the agent run workloads against ep, a server it reaches from
// where it runs, with the workload flags args.
func (c *Client) Reach(ep driver.Endpoint, args []string) { c.endpoint, c.args = &ep, args }

func (c *Client) workloadRequest(op string, w workload.Workload, threads int) (request, error) {
	args := c.args
	if p, ok := w.(workload.Portable); ok {
		args = p.Args()
	} else if c.endpoint == nil {
		return request{}, fmt.Errorf("workload %s cannot run in dbduel's agent", w.Name())
	}
	return request{Op: op, Workload: w.Name(), Args: args, Threads: threads, Endpoint: c.endpoint}, nil
}

// Check asks the agent whether the workload's files are there.
func (c *Client) Check(ctx context.Context, w workload.Workload, threads int) (workload.TableState, error) {
	req, err := c.workloadRequest("check", w, threads)
	if err != nil {
		return workload.TableState{}, err
	}
	var st workload.TableState
	err = c.do(ctx, req, func(r reply) error {
		if r.State != nil {
			st = *r.State
		}
		return nil
	})
	return st, err
}

// Prepare makes the workload's files where the agent runs.
func (c *Client) Prepare(ctx context.Context, w workload.Workload, threads int, progress func(workload.Progress)) error {
	req, err := c.workloadRequest("prepare", w, threads)
	if err != nil {
		return err
	}
	return c.do(ctx, req, func(r reply) error {
		if r.Progress != nil {
			progress(*r.Progress)
		}
		return nil
	})
}

// Cleanup removes the workload's files where the agent runs.
func (c *Client) Cleanup(ctx context.Context, w workload.Workload, threads int) ([]string, error) {
	req, err := c.workloadRequest("cleanup", w, threads)
	if err != nil {
		return nil, err
	}
	var removed []string
	err = c.do(ctx, req, func(r reply) error {
		removed = append(removed, r.Removed...)
		return nil
	})
	return removed, err
}

// Measure runs cfg in the agent. The host side adds what it alone can
// see to each interval as it arrives: the container's telemetry and the
// machine's noise.
func (c *Client) Measure(ctx context.Context, cfg engine.Config, target string, emit func(result.Interval, *hdrhistogram.Histogram)) (result.Run, error) {
	req, err := c.runRequest(cfg, runShare{threads: cfg.Threads, events: cfg.Events, rate: cfg.Rate})
	if err != nil {
		return result.Run{Target: target}, err
	}
	var sides []result.Interval // host-side additions, by interval
	var end reply
	run, err := c.runOn(ctx, req, quietOf(cfg), runHooks{
		// The run starts when the agent's workers are connected: its
		// "ready" carries the server's counters as the agent read them.
		ready: func(r reply) {
			if cfg.AtReady != nil {
				c.reading(&counterReading{count: r.OpCount, timer: r.Time, failed: r.Error}, cfg.AtReady)
			}
			cfg.StartWindows()
		},
		interval: func(iv result.Interval, h *hdrhistogram.Histogram) {
			cfg.AddHostSide(&iv)
			sides = append(sides, iv)
			if emit != nil {
				emit(iv, h)
			}
		},
		run: func(r reply) { end = r },
	})
	if cfg.AtEnd != nil {
		c.reading(&counterReading{count: end.OpCount, timer: end.Time, failed: end.Error}, cfg.AtEnd)
	}
	if run == nil {
		return result.Run{Target: target}, err
	}
	run.Target = target
	for i := range run.Intervals {
		if i < len(sides) {
			run.Intervals[i].Telemetry, run.Intervals[i].Noise = sides[i].Telemetry, sides[i].Noise
		}
	}
	if ctx.Err() != nil {
		run.Complete = false
	}
	return *run, err
}

// runShare is the part of a run one agent makes: all of it, or its share
// of a group's (its threads, placed at base among of, and its events;
// barrier: it waits for the group at its start and its end).
type runShare struct {
	threads, base, of int
	events            uint64
	rate              float64
	barrier           bool
}

// runRequest is the run of cfg's workload, share of it in this agent.
func (c *Client) runRequest(cfg engine.Config, share runShare) (request, error) {
	req, err := c.workloadRequest("run", cfg.Workload, share.threads)
	if err != nil {
		return req, err
	}
	req.Run = &runSpec{Threads: share.threads, Time: cfg.Time, Events: share.events, ReportInterval: cfg.ReportInterval,
		Percentile: cfg.Percentile, Seed: cfg.Seed, Rate: share.rate, Warmup: cfg.Warmup, Barrier: share.barrier,
		ThreadBase: share.base, ThreadsOf: share.of}
	return req, nil
}

// quietOf is the longest the agent may stay silent in a run of cfg
// (--stall-timeout past an interval; 0: no bound).
func quietOf(cfg engine.Config) time.Duration {
	if cfg.StallTimeout > 0 && cfg.ReportInterval > 0 {
		return cfg.StallTimeout + cfg.ReportInterval
	}
	return 0
}

// runHooks are what a run's replies are handed to, in the order they come.
type runHooks struct {
	ready    func(reply)
	interval func(result.Interval, *hdrhistogram.Histogram)
	ended    func() // a barrier run's statements are done
	run      func(reply)
}

// runOn runs req in the agent, handing its replies to h; the run's result
// is nil when the agent ended without one.
func (c *Client) runOn(ctx context.Context, req request, quiet time.Duration, h runHooks) (*result.Run, error) {
	var run *result.Run
	err := c.doWithin(ctx, req, quiet, func(r reply) error {
		switch {
		case r.Type == "ready":
			if h.ready != nil {
				h.ready(r)
			}
		case r.Type == "ended":
			if h.ended != nil {
				h.ended()
			}
		case r.Interval != nil:
			hist := stats.NewHistogram()
			if r.Hist != "" {
				d, err := hdrhistogram.Decode([]byte(r.Hist))
				if err != nil {
					return fmt.Errorf("agent interval histogram: %w", err)
				}
				hist = d
			}
			h.interval(*r.Interval, hist)
		case r.Run != nil:
			run = r.Run
			if h.run != nil {
				h.run(r)
			}
		}
		return nil
	})
	if run == nil && err == nil {
		err = errors.New("the agent ended the run without its result")
	}
	return run, err
}

// The driver.DB side: the engine opens the agent like any target; its
// connections are never used (runs go through Measure).

func (c *Client) Conn(ctx context.Context) (driver.Conn, error) { return system.New(c.dir).Conn(ctx) }
func (c *Client) Classify(err error) driver.Failure             { return system.New(c.dir).Classify(err) }

// OpCount is the server's own count, read by the agent where it reaches
// the server; the machine has none.
func (c *Client) OpCount(ctx context.Context) (driver.OpCount, error) {
	if c.endpoint == nil {
		return system.New(c.dir).OpCount(ctx)
	}
	if r := c.current(); r != nil {
		if r.count == nil {
			return driver.OpCount{}, fmt.Errorf("the agent could not read the server's count: %s", r.failed)
		}
		return *r.count, nil
	}
	var n *driver.OpCount
	err := c.do(ctx, request{Op: "opcount", Endpoint: c.endpoint, Threads: 0}, func(r reply) error {
		n = r.OpCount
		return nil
	})
	if err == nil && n == nil {
		err = errors.New("the agent sent no count")
	}
	if err != nil {
		return driver.OpCount{}, err
	}
	return *n, nil
}

// ServerTime is the server's own statement timer, read by the agent where
// it reaches the server.
func (c *Client) ServerTime(ctx context.Context) (driver.ServerTime, error) {
	if c.endpoint == nil {
		return driver.ServerTime{}, errors.New("the machine has no statement timer")
	}
	if r := c.current(); r != nil {
		if r.timer == nil {
			return driver.ServerTime{}, errors.New("the agent read no statement timer")
		}
		return *r.timer, nil
	}
	var t *driver.ServerTime
	err := c.do(ctx, request{Op: "servertime", Endpoint: c.endpoint}, func(r reply) error {
		t = r.Time
		return nil
	})
	if err == nil && t == nil {
		err = errors.New("the agent sent no server time")
	}
	if err != nil {
		return driver.ServerTime{}, err
	}
	return *t, nil
}

// Cgroup reads a pod's cgroup on the agent's node, below root (where the
// agent's pod mounts the node's /sys/fs/cgroup), or one of its
// containers' (container: the runtime's id; "": the pod's): found by the
// pod's uid, or at rel, the path an earlier reading found.
func (c *Client) Cgroup(ctx context.Context, root, uid, rel, container string) (cgroupstat.Usage, error) {
	var u *cgroupstat.Usage
	args := []string{root, uid, rel}
	if container != "" {
		args = append(args, container)
	}
	err := c.doWithin(ctx, request{Op: "cgroup", Args: args}, 10*time.Second, func(r reply) error {
		u = r.Cgroup
		return nil
	})
	if err == nil && u == nil {
		err = errors.New("the agent sent no cgroup reading")
	}
	if err != nil {
		return cgroupstat.Usage{}, err
	}
	return *u, nil
}

func (c *Client) Unblock()     {}
func (c *Client) Close() error { return nil }

// Dir is where the workload's files live inside the agent's container.
func (c *Client) Dir() string { return c.dir }

// MaxReplyBytes bounds one message from the agent: what runs in the
// container (its image is the user's choice) cannot make dbduel hold an
// unbounded message.
const MaxReplyBytes = 16 << 20

// replyReader reads the agent's messages, one JSON object a line (as
// json.Encoder writes them), each at most MaxReplyBytes.
type replyReader struct{ r *bufio.Reader }

// Decode reads the next message into v.
func (d *replyReader) Decode(v any) error {
	var line []byte
	for {
		chunk, err := d.r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxReplyBytes {
			return fmt.Errorf("the agent sent a message of more than %d bytes", MaxReplyBytes)
		}
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			if len(line) > 0 && err == io.EOF {
				break
			}
			return err
		}
	}
	return json.Unmarshal(line, v)
}
