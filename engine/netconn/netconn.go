// Package netconn is the client's socket path: TCP connections read and
// written with plain blocking system calls instead of Go's network poller.
//
// Why: with the poller every response costs a failed read (EAGAIN), a park,
// an epoll wake-up and a second read; on a 2-core machine shared with the
// server, that client CPU is taken from the server. A blocking read costs one
// system call that returns when the response arrives. The driver
// (go-sql-driver/mysql) takes these connections through Config.DialFunc.
package netconn

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Dialer makes blocking connections and remembers them, so that an
// interrupted run can unblock every thread at once (ShutdownAll).
type Dialer struct {
	mu    sync.Mutex
	conns map[*Conn]struct{}
}

// NewDialer returns an empty dialer.
func NewDialer() *Dialer { return &Dialer{conns: map[*Conn]struct{}{}} }

// Dial connects like net.Dialer and hands the socket over to blocking I/O.
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
	bc := &Conn{fd: fd, local: tcp.LocalAddr(), remote: tcp.RemoteAddr(), owner: d}
	bc.refs.Store(1)
	d.mu.Lock()
	d.conns[bc] = struct{}{}
	d.mu.Unlock()
	return bc, nil
}

// ShutdownAll shuts every live connection down: blocked reads and writes
// return at once. Used when a run is interrupted.
func (d *Dialer) ShutdownAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.conns {
		_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	}
}

// Live is the number of open connections.
func (d *Dialer) Live() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// Conn is a TCP connection with blocking reads and writes. Deadlines are
// not supported (dbduel sets none); Close shuts the socket down first so a
// read blocked in another thread returns, and the descriptor is released
// only when no call uses it any more (no descriptor reuse races).
type Conn struct {
	fd            int
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
		if c.owner != nil {
			c.owner.mu.Lock()
			delete(c.owner.conns, c)
			c.owner.mu.Unlock()
		}
	}
}

func (c *Conn) Read(b []byte) (int, error) {
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	for {
		n, err := syscall.Read(c.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
		case n == 0 && len(b) > 0:
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
		n, err := syscall.Write(c.fd, b[written:])
		if err == syscall.EINTR {
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
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	c.release()
	return nil
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
