package netconn

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// echo serves one connection, echoing what it reads.
func echo(t *testing.T) (addr string, accepted chan net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted = make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		accepted <- c
		io.Copy(c, c)
	}()
	return l.Addr().String(), accepted
}

func TestRoundTripAndEOF(t *testing.T) {
	for _, mode := range []Mode{Raw, Syscall, Poller, GoPoller} {
		t.Run(map[Mode]string{Raw: "raw", Syscall: "syscall", Poller: "poller", GoPoller: "go-poller"}[mode], func(t *testing.T) { roundTripAndEOF(t, mode) })
	}
}

func roundTripAndEOF(t *testing.T, mode Mode) {
	addr, accepted := echo(t)
	d := NewDialer(mode)
	c, err := d.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	msg := make([]byte, 100000) // larger than one segment: Write must loop
	for i := range msg {
		msg[i] = byte(i)
	}
	wrote := make(chan error, 1)
	go func() { _, err := c.Write(msg); wrote <- err }()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	// The writer holds a reference to the descriptor until Write returns,
	// which may be after the echo arrived; Live is only 0 once it has.
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != msg[i] {
			t.Fatalf("byte %d differs", i)
		}
	}
	srv := <-accepted
	srv.Close()
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("want EOF after the peer closed, got %v", err)
	}
	c.Close()
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("write after close succeeded")
	}
	if d.Live() != 0 {
		t.Fatalf("%d connections still tracked", d.Live())
	}
}

func TestCloseUnblocksReader(t *testing.T) {
	addr, _ := echo(t)
	d := NewDialer(Raw)
	c, err := d.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10)) // nothing will come
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	d.ShutdownAll()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("ShutdownAll did not unblock a blocked read")
	}
	c.Close()
}

func TestDeadlines(t *testing.T) {
	addr, _ := echo(t)
	c, err := NewDialer(Raw).Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.SetDeadline(time.Time{}) != nil || c.SetReadDeadline(time.Now()) == nil {
		t.Fatal("clearing a deadline must work, setting one must be refused")
	}
}

// A thread waiting in a raw read holds its P; a garbage collection must
// still be able to stop the world (the preemption signal ends the read with
// EINTR) rather than wait for the server. The I/O timeout is made long so
// that only the signal path can pass. A failure would stop the world, timers
// included, so the check runs in a child process that is killed on timeout.
func TestGCDoesNotWaitForRawRead(t *testing.T) {
	if os.Getenv("NETCONN_GC_CHILD") == "1" {
		gcWithBlockedRawRead(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGCDoesNotWaitForRawRead$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NETCONN_GC_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a garbage collection waited for a blocked raw read (%v):\n%s", err, out)
	}
}

func gcWithBlockedRawRead(t *testing.T) {
	ioTimeout = time.Hour
	addr, _ := echo(t)
	c, err := NewDialer(Raw).Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go c.Read(make([]byte, 10)) // nothing will come
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
}

// A raw read that times out with no data keeps waiting and returns the data
// once it comes.
func TestRawReadOutlastsTimeout(t *testing.T) {
	defer func(d time.Duration) { ioTimeout = d }(ioTimeout)
	ioTimeout = 10 * time.Millisecond
	addr, accepted := echo(t)
	c, err := NewDialer(Raw).Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := <-accepted
	go func() {
		time.Sleep(100 * time.Millisecond) // ten timeouts
		srv.Write([]byte("late"))
	}()
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "late" {
		t.Fatalf("read %q, %v; want \"late\"", got, err)
	}
}

// Every raw connection waiting in the kernel holds a P: Dial keeps the CPU
// count of Ps free beyond the open connections.
func TestDialReservesProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	addr, _ := echo(t)
	d := NewDialer(Raw)
	var conns []net.Conn
	for range 3 {
		c, err := d.Dial(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if got, want := runtime.GOMAXPROCS(0), int(rawConns.Load())+runtime.NumCPU(); got < want {
		t.Fatalf("GOMAXPROCS %d with %d raw connections open, want at least %d", got, rawConns.Load(), want)
	}
	for _, c := range conns {
		c.Close()
	}
}

// Small reads are served from the read-ahead buffer in order, across
// refills, and a large read bypasses it without losing buffered bytes.
func TestBufferedReads(t *testing.T) {
	addr, accepted := echo(t)
	c, err := NewDialer(Raw).Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := make([]byte, 3*readBufSize+123)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	<-accepted
	go c.Write(msg)
	var got []byte
	small := make([]byte, 1000)
	for len(got) < readBufSize+500 {
		n, err := c.Read(small)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, small[:n]...)
	}
	rest := make([]byte, len(msg)-len(got))
	if _, err := io.ReadFull(c, rest); err != nil {
		t.Fatal(err)
	}
	got = append(got, rest...)
	for i := range msg {
		if got[i] != msg[i] {
			t.Fatalf("byte %d differs", i)
		}
	}
	c.Close()
	if _, err := c.Read(small); err == nil {
		t.Fatal("read after close succeeded")
	}
}

// By default the threads choose the mode: raw calls up to RawMaxThreads,
// the poller above; SetThreads says when that changes; a fixed mode stays.
func TestModeByThreads(t *testing.T) {
	d := NewDialer(ByThreads)
	if d.Mode() != Raw || d.SetThreads(8) || d.Mode() != Raw {
		t.Fatalf("8 threads: mode %v", d.Mode())
	}
	if !d.SetThreads(RawMaxThreads()+1) || d.Mode() != Poller {
		t.Fatalf("%d threads: mode %v, want the poller", RawMaxThreads()+1, d.Mode())
	}
	if d.SetThreads(RawMaxThreads()+50) || !d.SetThreads(RawMaxThreads()) || d.Mode() != Raw {
		t.Fatalf("back to %d threads: mode %v", RawMaxThreads(), d.Mode())
	}
	fixed := NewDialer(Raw)
	if fixed.SetThreads(1000) || fixed.Mode() != Raw {
		t.Fatal("a fixed mode changed with the threads")
	}
}

// A poller connection stays on Go's poller (a *net.TCPConn underneath, no
// Ps reserved), and ShutdownAll unblocks its reader as a raw one's.
func TestPollerConnection(t *testing.T) {
	addr, _ := echo(t)
	d := NewDialer(ByThreads)
	d.SetThreads(RawMaxThreads() + 1)
	before := rawConns.Load()
	c, err := d.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if pc, ok := c.(*polledConn); !ok || pc.raw == nil || rawConns.Load() != before {
		t.Fatalf("dialled %T, raw connections %d→%d", c, before, rawConns.Load())
	}
	read := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 1)); read <- err }()
	time.Sleep(50 * time.Millisecond)
	d.ShutdownAll()
	select {
	case err := <-read:
		if err == nil {
			t.Fatal("the read returned no error after ShutdownAll")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ShutdownAll did not unblock the poller connection's reader")
	}
	c.Close()
	if d.Live() != 0 {
		t.Fatalf("%d connections tracked after Close", d.Live())
	}
}

// The Ps raw connections reserved are given back once none is open.
func TestProcsReleasedWithTheLastRawConnection(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	base := runtime.GOMAXPROCS(0)
	if os.Getenv("GOGC") != "" {
		t.Fatal("GOGC is set: unset it for this test of dbduel's own GC setting")
	}
	if rawConns.Load() != 0 {
		t.Fatalf("%d raw connections of another test are open", rawConns.Load()) // tests here run one at a time
	}
	addr, _ := echo(t)
	c, err := NewDialer(Raw).Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	gcPercent := func() int { v := debug.SetGCPercent(-1); debug.SetGCPercent(v); return v }
	if runtime.GOMAXPROCS(0) < 1+runtime.NumCPU() || gcPercent() != rawGCPercent {
		t.Fatalf("GOMAXPROCS %d, GC percent %d with a raw connection open", runtime.GOMAXPROCS(0), gcPercent())
	}
	c.Close()
	if got := runtime.GOMAXPROCS(0); got != base && base < 1+runtime.NumCPU() || gcPercent() != 100 {
		t.Fatalf("GOMAXPROCS %d (want %d), GC percent %d after the last raw connection closed", got, base, gcPercent())
	}
}

// A draining Close returns only once the server has read everything sent
// and closed its end (a MySQL server counts a client's quit then): here a
// server that reads 300 ms late. Without Drain, Close returns at once.
func TestDrainWaitsForTheServer(t *testing.T) {
	for _, mode := range []Mode{Raw, Syscall, Poller, GoPoller} {
		for _, drain := range []bool{true, false} {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			read := make(chan time.Time, 1)
			go func() {
				c, err := l.Accept()
				if err != nil {
					return
				}
				time.Sleep(300 * time.Millisecond)
				io.ReadAll(c) // the quit, then the client's end of writing
				read <- time.Now()
				c.Close()
			}()
			d := NewDialer(mode)
			d.Drain(drain)
			c, err := d.Dial(context.Background(), "tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write([]byte("QUIT")); err != nil {
				t.Fatal(err)
			}
			c.Close()
			closed := time.Now()
			serverRead := <-read
			l.Close()
			if drain && closed.Before(serverRead) {
				t.Errorf("mode %d: Close returned %s before the server read the quit", mode, serverRead.Sub(closed))
			}
			if !drain && closed.After(serverRead) {
				t.Errorf("mode %d: Close without Drain waited for the server", mode)
			}
		}
	}
}
