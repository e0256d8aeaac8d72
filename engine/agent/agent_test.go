package agent

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
	_ "github.com/dbduel/dbduel/engine/workload/sys"
)

// pair connects a Client to Serve through pipes, as a container's attached
// stdin and stdout would.
func pair(t *testing.T, dir string) *Client { return pairOpening(t, dir, nil) }

// pairOpening is pair with an agent that reaches servers through open.
func pairOpening(t *testing.T, dir string, open Opener) *Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), inR, outW, dir, "test", func() map[string]string { return map[string]string{"fs_type": "x"} }, open)
		outW.Close()
	}()
	c, err := NewClient(context.Background(), inW, outR, dir, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		inW.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return c
}

func build(t *testing.T, name string, args ...string) workload.Workload {
	t.Helper()
	w, err := rebuild(name, args)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A run in the agent reaches the host as the engine's own would: every
// interval with its histogram (whose count is the interval's events), the
// host's telemetry on each, and a summary whose events are the intervals'
// plus the tail.
func TestRunThroughTheAgent(t *testing.T) {
	c := pair(t, t.TempDir())
	if c.Version != "test" || c.Facts["fs_type"] != "x" {
		t.Fatalf("hello: %q %v", c.Version, c.Facts)
	}
	w := build(t, "cpu", "--cpu-max-prime=2000")
	calls := 0
	cfg := engine.Config{Point: engine.Point{Workload: w, Threads: 2}, Load: engine.Load{Time: 1200 * time.Millisecond, ReportInterval: 300 * time.Millisecond, Percentile: 95}, Telemetry: func() result.Telemetry {
		calls++
		return result.TelemetryOf(map[string]float64{result.TelServerMemBytes: float64(calls)})
	}}
	var emitted []result.Interval
	var histEvents int64
	run, err := c.Measure(context.Background(), cfg, "ctr", func(iv result.Interval, h *hdrhistogram.Histogram) {
		emitted = append(emitted, iv)
		histEvents += h.TotalCount()
	})
	if err != nil || !run.Complete || run.Target != "ctr" {
		t.Fatalf("run: %v complete=%v target=%q", err, run.Complete, run.Target)
	}
	if len(emitted) != 4 || len(run.Intervals) != 4 {
		t.Fatalf("1.2 s at 0.3 s: %d emitted, %d in the run, want 4", len(emitted), len(run.Intervals))
	}
	var sum uint64
	for i, iv := range run.Intervals {
		sum += iv.Events
		n, ok := iv.Telemetry.Get(result.TelServerMemBytes)
		if e, _ := emitted[i].Telemetry.Get(result.TelServerMemBytes); !ok || n != e {
			t.Fatalf("interval %d: host telemetry %v, emitted %v", i, iv.Telemetry, emitted[i].Telemetry)
		}
	}
	if histEvents != int64(sum) {
		t.Fatalf("histograms hold %d events, intervals %d", histEvents, sum)
	}
	if run.Summary.Events < sum || run.Summary.Events == 0 {
		t.Fatalf("summary %d events, intervals %d", run.Summary.Events, sum)
	}
}

// Stopping the host's context stops the agent's run promptly; the partial
// run comes back marked incomplete and the agent serves the next request.
func TestStopReachesTheAgent(t *testing.T) {
	c := pair(t, t.TempDir())
	w := build(t, "cpu")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	run, _ := c.Measure(ctx, engine.Config{Point: engine.Point{Workload: w, Threads: 1}, Load: engine.Load{Time: time.Minute, ReportInterval: time.Second, Percentile: 95}}, "ctr", nil)
	if took := time.Since(start); took > 10*time.Second || run.Complete {
		t.Fatalf("stopped run took %s, complete=%v", took, run.Complete)
	}
	st, err := c.Check(context.Background(), w, 1)
	if err != nil || !st.Reusable {
		t.Fatalf("after a stop the agent must still answer: %+v %v", st, err)
	}
}

// A stop written right behind its run (a host cancelled while it sent
// the run) stops that run: the agent makes each request's context as it
// reads the request, so the stop cannot land on the one before it.
func TestStopRightBehindTheRunStopsIt(t *testing.T) {
	c := pair(t, t.TempDir())
	w := build(t, "cpu")
	for range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		run, _ := c.Measure(ctx, engine.Config{Point: engine.Point{Workload: w, Threads: 1}, Load: engine.Load{Time: 10 * time.Minute, ReportInterval: time.Second, Percentile: 95}}, "ctr", nil)
		if took := time.Since(start); took > time.Minute || run.Complete {
			t.Fatalf("a run stopped as it was sent took %s, complete=%v", took, run.Complete)
		}
	}
}

// fileio's files are made, found and removed where the agent runs.
func TestFileStepsThroughTheAgent(t *testing.T) {
	dir := t.TempDir()
	c := pair(t, dir)
	w := build(t, "fileio", "--file-num=2", "--file-total-size=1M", "--file-block-size=4K")
	if st, err := c.Check(context.Background(), w, 1); err != nil || !st.Missing {
		t.Fatalf("before prepare: %+v %v", st, err)
	}
	var last workload.Progress
	if err := c.Prepare(context.Background(), w, 1, func(p workload.Progress) { last = p }); err != nil {
		t.Fatal(err)
	}
	if last.Rows != last.TotalRows || last.TotalRows != 256 {
		t.Fatalf("progress: %+v, want 256 of 256 blocks", last)
	}
	if st, _ := c.Check(context.Background(), w, 1); !st.Reusable {
		t.Fatalf("after prepare: %+v", st)
	}
	removed, err := c.Cleanup(context.Background(), w, 1)
	if err != nil || len(removed) != 2 {
		t.Fatalf("cleanup: %v %v", removed, err)
	}
}

// A workload the agent does not know fails with its message, in one line.
func TestUnknownWorkloadErrorComesBack(t *testing.T) {
	c := pair(t, t.TempDir())
	err := c.do(context.Background(), request{Op: "check", Workload: "nope"}, func(reply) error { return nil })
	if err == nil {
		t.Fatal("unknown workload accepted")
	}
}

// gate passes writes until frozen: a paused container's agent, whose
// replies stop coming.
type gate struct {
	w      io.Writer
	mu     sync.Mutex
	frozen chan struct{} // non-nil while frozen
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	f := g.frozen
	g.mu.Unlock()
	if f != nil {
		<-f
	}
	return g.w.Write(p)
}

func (g *gate) freeze() { g.mu.Lock(); g.frozen = make(chan struct{}); g.mu.Unlock() }

func (g *gate) thaw() {
	g.mu.Lock()
	if g.frozen != nil {
		close(g.frozen)
		g.frozen = nil
	}
	g.mu.Unlock()
}

// An agent that stops answering (its container paused) ends the run after
// --stall-timeout plus an interval, with the stall named: the host waited
// for ever on a paused agent.
func TestSilentAgentEndsTheRun(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	g := &gate{w: outW}
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), inR, g, t.TempDir(), "test", func() map[string]string { return nil }, nil)
		outW.Close()
	}()
	c, err := NewClient(context.Background(), inW, outR, t.TempDir(), 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { g.thaw(); outR.Close(); inW.Close(); <-served }()
	cfg := engine.Config{Point: engine.Point{Workload: build(t, "cpu"), Threads: 1}, Load: engine.Load{Time: time.Minute, ReportInterval: 100 * time.Millisecond, Percentile: 95, StallTimeout: 300 * time.Millisecond}}
	start := time.Now()
	run, err := c.Measure(context.Background(), cfg, "ctr", func(result.Interval, *hdrhistogram.Histogram) { g.freeze() })
	if !errors.Is(err, engine.ErrServerStalled) || run.Complete || time.Since(start) > 20*time.Second {
		t.Fatalf("after %s: complete %v, err %v", time.Since(start), run.Complete, err)
	}
	// The clean-up that follows must not wait on the silent agent either.
	if _, err := c.Check(context.Background(), cfg.Workload, 1); !errors.Is(err, engine.ErrServerStalled) {
		t.Fatalf("a request after the stall: %v", err)
	}
}

// A signal to the agent's own process (docker stop, docker restart) ends
// its run with an error that says so: the cut run must not come back as a
// run without an error.
func TestSignalledAgentSaysSo(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, signalled := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, inR, outW, t.TempDir(), "test", func() map[string]string { return nil }, nil)
		outW.Close()
	}()
	c, err := NewClient(context.Background(), inW, outR, t.TempDir(), 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { inW.Close(); <-served }()
	cfg := engine.Config{Point: engine.Point{Workload: build(t, "cpu"), Threads: 1}, Load: engine.Load{Time: time.Minute, ReportInterval: 100 * time.Millisecond, Percentile: 95}}
	run, err := c.Measure(context.Background(), cfg, "ctr", func(result.Interval, *hdrhistogram.Histogram) { signalled() })
	if err == nil || err.Error() != ErrAgentSignalled.Error() || run.Complete {
		t.Fatalf("complete %v, err %v", run.Complete, err)
	}
}

// A message from the agent is bounded: a container that sends an endless
// line fails the read with the reason instead of filling dbduel's memory.
func TestAgentMessagesAreBounded(t *testing.T) {
	big := io.MultiReader(strings.NewReader(`{"type":"progress","facts":{"x":"`), strings.NewReader(strings.Repeat("a", MaxReplyBytes+1)))
	d := &replyReader{r: bufio.NewReader(big)}
	var r reply
	if err := d.Decode(&r); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("an oversized message: %v", err)
	}
	d = &replyReader{r: bufio.NewReader(strings.NewReader("{\"type\":\"hello\",\"version\":\"1\"}\n{\"type\":\"done\"}\n"))}
	for _, want := range []string{"hello", "done"} {
		if err := d.Decode(&r); err != nil || r.Type != want {
			t.Fatalf("%v %+v, want %s", err, r, want)
		}
	}
}
