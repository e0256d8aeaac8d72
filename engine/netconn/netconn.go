// Package netconn is the client's socket path: TCP connections read and
// written with plain blocking system calls instead of Go's network poller,
// made without telling the Go scheduler (syscall.RawSyscall), through a
// 32 KiB read-ahead buffer, up to RawMaxThreads threads; runs with more
// stay on Go's poller, their reads and writes still raw calls (RawPolled).
// The driver (go-sql-driver/mysql) takes these connections through
// Config.DialFunc (PostgreSQL's takes RawPolled); DBDUEL_NET=raw|syscall|
// poll|go fixes the mode (poll: the poller with raw calls; go: the poller
// with Go's own).
//
// What keeps raw calls safe:
//   - every socket has 100 ms receive and send timeouts, so a call returns
//     to Go at least that often even when the server is silent, and a
//     signal (the runtime's preemption, a garbage collection stopping the
//     world) ends it with EINTR at once (socket calls with a timeout are
//     never restarted, see signal(7)); both paths yield before retrying;
//   - a waiting thread holds a P, so Dial raises GOMAXPROCS to the number of
//     open connections plus the CPU count: the rest of the program (timers,
//     the UI, signal handling) always has Ps of its own.
//
// Why, and what it was measured to save: docs/performance.md.
package netconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Mode is how a connection's system calls are made.
type Mode int

const (
	// Raw calls keep the thread's P while blocked (the default up to
	// RawMaxThreads threads).
	Raw Mode = iota
	// Syscall calls are ordinary blocking system calls (the scheduler may
	// hand the P off while one waits).
	Syscall
	// Poller leaves the connection on Go's network poller, its reads and
	// writes raw calls (RawPolled; the default above RawMaxThreads threads).
	Poller
	// GoPoller leaves the connection on Go's poller with Go's own calls.
	GoPoller
)

// ByThreads is the dialer's default: Raw or Poller by the threads of the
// run (SetThreads).
const ByThreads Mode = -1

// ModeFromEnv reads DBDUEL_NET: "raw", "syscall", "poll" (the poller,
// raw calls) or "go" (the poller, Go's calls) fix the mode, for A/B
// measurements; anything else chooses by the threads.
func ModeFromEnv() Mode {
	switch os.Getenv("DBDUEL_NET") {
	case "raw":
		return Raw
	case "syscall":
		return Syscall
	case "poll":
		return Poller
	case "go":
		return GoPoller
	}
	return ByThreads
}

// RawMaxThreads is the most threads that use raw calls by default; more
// use Go's poller. A raw connection is a thread blocked in the kernel, as
// each of sysbench's: one context switch per query, cheapest for a few
// connections. Many connections share the poller's few threads, each
// epoll wake-up serving several responses. Measured on a 2-core host with
// oltp_point_select, the poller with raw calls against the blocking
// socket in one interleaved run (client CPU per query, poller/raw): 8
// threads 1.088 [0.984, 1.203], 16: 0.850 [0.788, 0.916]; the poller's
// lead grows with the threads (docs/performance.md).
func RawMaxThreads() int { return 4 * runtime.NumCPU() }

// ioTimeout bounds how long one raw call may keep a thread away from the
// scheduler when no signal arrives.
var ioTimeout = 100 * time.Millisecond

// rawConns counts open raw connections across dialers, for reserveProcs.
var rawConns atomic.Int64

var procsMu sync.Mutex

// baseProcs is GOMAXPROCS before the first raw connection raised it (0:
// not raised); baseGC is the GC percent before raw connections set
// rawGCPercent (when gcRaised).
var (
	baseProcs int
	gcRaised  bool
	baseGC    int
)

// rawGCPercent is the GC's percent while raw connections are open, unless
// GOGC says otherwise: every collection must interrupt each thread blocked
// in a raw call (a signal, EINTR, a yield) and its marking finds no idle
// P, so fewer collections cost less. The heap may grow to 5× the live
// data (tens of MB). Measured on a 2-core host, oltp_point_select: client
// CPU per query 8.3 → 7.1 µs at 16 threads, 7.0 → 6.5 at 8; none at 128
// threads (the poller's), where it is not set.
const rawGCPercent = 400

// reserveProcs makes sure that, with n threads waiting in raw calls, the
// CPU count of Ps is still free for everything else. It only raises
// GOMAXPROCS while raw connections are open (lowering it under a waiting
// thread would stall it); releaseProcs restores it once none is.
func reserveProcs(n int) {
	procsMu.Lock()
	defer procsMu.Unlock()
	if want := n + runtime.NumCPU(); runtime.GOMAXPROCS(0) < want {
		if baseProcs == 0 {
			baseProcs = runtime.GOMAXPROCS(0)
		}
		runtime.GOMAXPROCS(want)
	}
	if !gcRaised && os.Getenv("GOGC") == "" {
		baseGC, gcRaised = debug.SetGCPercent(rawGCPercent), true
	}
}

// releaseProcs gives the Ps back once no raw connection is open: the
// poller's goroutines then run on as many Ps as there are CPUs, not on
// dozens the scheduler would spin over.
func releaseProcs() {
	procsMu.Lock()
	defer procsMu.Unlock()
	if rawConns.Load() != 0 {
		return
	}
	if baseProcs != 0 {
		if os.Getenv("GOMAXPROCS") == "" {
			runtime.SetDefaultGOMAXPROCS() // the runtime's own, following the cgroup's limit again
		} else {
			runtime.GOMAXPROCS(baseProcs)
		}
		baseProcs = 0
	}
	if gcRaised {
		debug.SetGCPercent(baseGC)
		gcRaised = false
	}
}

// Dialer makes blocking connections and remembers them, so that an
// interrupted run can unblock every thread at once (ShutdownAll).
type Dialer struct {
	// draining makes Close wait for the server to close its end first
	// (Drain).
	draining atomic.Bool
	fixed    Mode // ByThreads: chosen by SetThreads
	mu       sync.Mutex
	threads  int // the run's threads (SetThreads), under mu
	conns    map[*Conn]struct{}
	polled   map[*polledConn]struct{}
}

// NewDialer returns an empty dialer making connections of the given mode
// (ByThreads: by the threads SetThreads gives, raw until it is called).
func NewDialer(mode Mode) *Dialer {
	return &Dialer{fixed: mode, conns: map[*Conn]struct{}{}, polled: map[*polledConn]struct{}{}}
}

// Mode is the mode new connections are made in.
func (d *Dialer) Mode() Mode {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.modeLocked()
}

func (d *Dialer) modeLocked() Mode {
	if d.fixed != ByThreads {
		return d.fixed
	}
	if d.threads > RawMaxThreads() {
		return Poller
	}
	return Raw
}

// SetThreads tells the dialer the threads of the next run; it says whether
// that changes the mode of new connections (the caller then drops its idle
// connections of the old mode). A pool sized for its largest run is told
// that first, so no connection is made raw before the threads are known.
func (d *Dialer) SetThreads(n int) (changed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	before := d.modeLocked()
	d.threads = n
	return d.modeLocked() != before
}

// Dial connects like net.Dialer and hands the socket over to blocking I/O,
// or leaves it on Go's poller in Poller mode.
func (d *Dialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil // not TCP (unix socket): keep Go's own path
	}
	_ = tcp.SetNoDelay(true)
	_ = tcp.SetKeepAlive(true)
	mode := d.Mode()
	if mode == Poller || mode == GoPoller {
		pc := &polledConn{TCPConn: tcp, owner: d}
		if mode == Poller {
			if pc.raw, err = NewRawPolled(tcp); err != nil {
				c.Close()
				return nil, err
			}
		}
		d.mu.Lock()
		d.polled[pc] = struct{}{}
		d.mu.Unlock()
		return pc, nil
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) { fd, dupErr = syscall.Dup(int(s)) }); err != nil || dupErr != nil {
		c.Close()
		return nil, errors.Join(err, dupErr)
	}
	// The duplicate shares the socket; the poller's descriptor is closed.
	c.Close()
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	bc := &Conn{fd: fd, raw: mode == Raw, local: tcp.LocalAddr(), remote: tcp.RemoteAddr(), owner: d}
	if bc.raw {
		tv := syscall.NsecToTimeval(ioTimeout.Nanoseconds())
		if err := errors.Join(syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv),
			syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)); err != nil {
			syscall.Close(fd)
			return nil, err
		}
		reserveProcs(int(rawConns.Add(1)))
	}
	bc.refs.Store(1)
	d.mu.Lock()
	d.conns[bc] = struct{}{}
	d.mu.Unlock()
	return bc, nil
}

// drainTimeout bounds how long a draining Close waits for the server.
const drainTimeout = 2 * time.Second

// Drain makes the connections closed while it is on wait until the
// server has closed its end (at most drainTimeout each): it has then read
// and counted everything sent on them, a client's quit included. A pool
// that drops idle connections just before the server's counters are read
// drains them, or their quits would land in the count.
func (d *Dialer) Drain(on bool) { d.draining.Store(on) }

// ShutdownAll shuts every live connection down: blocked reads and writes
// return at once. Used when a run is interrupted.
func (d *Dialer) ShutdownAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.conns {
		_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	}
	for c := range d.polled {
		_ = c.CloseRead()
		_ = c.CloseWrite()
	}
}

// Live is the number of open connections.
func (d *Dialer) Live() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns) + len(d.polled)
}

// polledConn is a connection left on Go's poller, remembered so that
// ShutdownAll reaches it too.
type polledConn struct {
	*net.TCPConn
	raw   *RawPolled // reads and writes as raw calls (nil: Go's own)
	owner *Dialer
}

func (c *polledConn) Read(b []byte) (int, error) {
	if c.raw != nil {
		return c.raw.Read(b)
	}
	return c.TCPConn.Read(b)
}

func (c *polledConn) Write(b []byte) (int, error) {
	if c.raw != nil {
		return c.raw.Write(b)
	}
	return c.TCPConn.Write(b)
}

func (c *polledConn) Close() error {
	c.owner.mu.Lock()
	delete(c.owner.polled, c)
	c.owner.mu.Unlock()
	if c.owner.draining.Load() {
		_ = c.CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(drainTimeout))
		_, _ = io.Copy(io.Discard, c.TCPConn)
	}
	return c.TCPConn.Close()
}

// Conn is a TCP connection with blocking reads and writes. Deadlines are
// not supported (dbduel sets none); Close shuts the socket down first so a
// read blocked in another thread returns, and the descriptor is released
// only when no call uses it any more (no descriptor reuse races).
type Conn struct {
	fd            int
	raw           bool
	rbuf          []byte // bytes read ahead; rbuf[rpos:] not yet returned
	rpos          int
	refs          atomic.Int32
	closed        atomic.Bool
	local, remote net.Addr
	owner         *Dialer
}

func (c *Conn) acquire() bool {
	for {
		n := c.refs.Load()
		if n <= 0 || c.closed.Load() {
			return false
		}
		if c.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (c *Conn) release() {
	if c.refs.Add(-1) == 0 {
		syscall.Close(c.fd)
		if c.raw && rawConns.Add(-1) == 0 {
			releaseProcs()
		}
		if c.owner != nil {
			c.owner.mu.Lock()
			delete(c.owner.conns, c)
			c.owner.mu.Unlock()
		}
	}
}

// readBufSize holds a whole sysbench range result (100 rows of sbtest, about
// 19 KB) so one system call reads it; the driver's own buffer is 4 KB and
// would take five.
const readBufSize = 32 << 10

// Read serves buffered bytes first; otherwise one system call fills the
// buffer (or b directly, when b is at least as large).
func (c *Conn) Read(b []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	if len(b) == 0 {
		return 0, nil
	}
	if c.rpos < len(c.rbuf) {
		n := copy(b, c.rbuf[c.rpos:])
		c.rpos += n
		return n, nil
	}
	if len(b) >= readBufSize {
		return c.readSocket(b)
	}
	if c.rbuf == nil {
		c.rbuf = make([]byte, 0, readBufSize)
	}
	n, err := c.readSocket(c.rbuf[:readBufSize])
	if err != nil {
		return 0, err
	}
	c.rbuf, c.rpos = c.rbuf[:n], 0
	n = copy(b, c.rbuf)
	c.rpos = n
	return n, nil
}

// readSocket is one successful read from the socket into b.
func (c *Conn) readSocket(b []byte) (int, error) {
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	for {
		n, err := c.read(b)
		switch {
		case err == syscall.EINTR || err == syscall.EAGAIN:
			runtime.Gosched() // let a pending preemption or stop-the-world happen
			continue
		case err != nil:
			return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *Conn) Write(b []byte) (int, error) {
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	written := 0
	for written < len(b) {
		n, err := c.write(b[written:])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			runtime.Gosched()
			continue
		}
		if err != nil {
			return written, &net.OpError{Op: "write", Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
		}
		written += n
	}
	return written, nil
}

// Close shuts the socket down and releases the descriptor once unused.
func (c *Conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	if c.owner != nil && c.owner.draining.Load() {
		c.drain()
	}
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	c.release()
	return nil
}

// drain ends the write side and reads until the server closes its end,
// for at most drainTimeout (reads time out every ioTimeout, whatever the
// mode, so the bound holds).
func (c *Conn) drain() {
	_ = syscall.Shutdown(c.fd, syscall.SHUT_WR)
	tv := syscall.NsecToTimeval(ioTimeout.Nanoseconds())
	_ = syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	buf := make([]byte, 512)
	for deadline := time.Now().Add(drainTimeout); time.Now().Before(deadline); {
		n, err := syscall.Read(c.fd, buf)
		if n > 0 || err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		return // the server's end closed (0), or the socket failed
	}
}

func (c *Conn) LocalAddr() net.Addr                { return c.local }
func (c *Conn) RemoteAddr() net.Addr               { return c.remote }
func (c *Conn) SetDeadline(t time.Time) error      { return deadlineUnsupported(t) }
func (c *Conn) SetReadDeadline(t time.Time) error  { return deadlineUnsupported(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error { return deadlineUnsupported(t) }

// deadlineUnsupported accepts clearing a deadline (the driver does that) and
// refuses setting one, which would silently not be honoured.
func deadlineUnsupported(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	return errors.New("netconn: deadlines are not supported on blocking connections")
}

// read is one read system call, raw or ordinary by the connection's mode.
func (c *Conn) read(b []byte) (int, error) {
	if !c.raw {
		return syscall.Read(c.fd, b)
	}
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// write is one write system call, raw or ordinary by the connection's mode.
func (c *Conn) write(b []byte) (int, error) {
	if !c.raw {
		return syscall.Write(c.fd, b)
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
