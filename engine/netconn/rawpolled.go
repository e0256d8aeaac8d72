package netconn

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// RawPolled is a TCP connection on Go's network poller whose reads and
// writes are raw system calls (syscall.RawSyscall), made through the
// socket's RawConn: the socket stays non-blocking, so a call never waits
// in the kernel, and a read that finds nothing parks the goroutine on the
// poller as net.Conn's would. Deadlines, Close and CloseRead are the
// TCPConn's own, so a driver's cancellation works unchanged.
//
// Why: an ordinary call tells the scheduler it is in a system call, and a
// loopback write is a long one (the writer's call carries the packet
// through TCP and wakes the server's thread). If it lasts past a sysmon
// tick while goroutines wait, sysmon hands the P to another thread, which
// must be woken, and the returning thread parks on a futex: extra context
// switches and sleeps per statement that a C client's thread never makes.
// A raw call keeps the P for the microseconds the call takes.
type RawPolled struct {
	*net.TCPConn
	rc syscall.RawConn

	// One read and one write at a time; each keeps its call's buffer and
	// outcome here so the callbacks, bound once, allocate nothing per call.
	rmu     sync.Mutex
	rbuf    []byte
	rn      int
	rerr    syscall.Errno
	readFn  func(uintptr) bool
	wmu     sync.Mutex
	wbuf    []byte
	wn      int
	werr    syscall.Errno
	writeFn func(uintptr) bool
}

// NewRawPolled wraps tcp; the TCPConn stays the socket's owner.
func NewRawPolled(tcp *net.TCPConn) (*RawPolled, error) {
	rc, err := tcp.SyscallConn()
	if err != nil {
		return nil, err
	}
	c := &RawPolled{TCPConn: tcp, rc: rc}
	c.readFn, c.writeFn = c.rawRead, c.rawWrite
	return c, nil
}

// Read is one read of what the socket holds, waiting on the poller (and
// the read deadline) while it holds nothing.
func (c *RawPolled) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil // as net's: no call made
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.rbuf, c.rn, c.rerr = b, 0, 0
	err := c.rc.Read(c.readFn)
	c.rbuf = nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case c.rerr != 0:
		return 0, c.opError("read", os.NewSyscallError("read", c.rerr))
	case c.rn == 0:
		return 0, io.EOF
	}
	return c.rn, nil
}

// rawRead makes the read; false asks the poller to wait for data (the
// poller is edge-triggered: only EAGAIN may wait, an EINTR retries).
func (c *RawPolled) rawRead(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.rbuf[0])), uintptr(len(c.rbuf)))
		switch e {
		case 0:
			c.rn = min(int(n), len(c.rbuf))
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			c.rerr = e
			return true
		}
	}
}

// Write writes all of b, waiting on the poller (and the write deadline)
// whenever the socket's buffer is full.
func (c *RawPolled) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf, c.wn, c.werr = b, 0, 0
	err := c.rc.Write(c.writeFn)
	n := c.wn
	c.wbuf = nil
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case c.werr != 0:
		return n, c.opError("write", os.NewSyscallError("write", c.werr))
	}
	return n, nil
}

// maxRawWrite bounds one raw write: the call holds its P, so a large
// write (a bulk insert's statement, COPY) is made in pieces between which
// the goroutine can be preempted and a stop-the-world need not wait.
const maxRawWrite = 128 << 10

func (c *RawPolled) rawWrite(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		rest := c.wbuf[c.wn:]
		if len(rest) > maxRawWrite {
			rest = rest[:maxRawWrite]
		}
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch e {
		case 0:
			if n == 0 || int(n) > len(rest) { // never on a socket; a loop that cannot end otherwise
				c.werr = syscall.EIO
				return true
			}
			c.wn += int(n)
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			c.werr = e
			return true
		}
	}
	return true
}

// opError is err as net.Conn's own reads and writes report it: the
// RawConn's "raw-read" error unwrapped to its cause (a deadline, a closed
// connection), so callers' errors.Is and Timeout checks hold.
func (c *RawPolled) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
