package netconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/nettest"
)

// dialRawPolled connects to addr and wraps the connection.
func dialRawPolled(t *testing.T, addr string) *RawPolled {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewRawPolled(c.(*net.TCPConn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rp.Close() })
	return rp
}

// A write larger than both sockets' buffers while the peer is not reading
// must wait on the poller (EAGAIN) and finish once it reads; every byte
// comes back in order, and EOF follows the peer's close.
func TestRawPolledRoundTripLargerThanTheSocketBuffers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := make(chan struct{})
	accepted := make(chan net.Conn, 1)
	go func() {
		s, err := l.Accept()
		if err != nil {
			return
		}
		accepted <- s
		<-start
		io.Copy(s, s)
		s.Close()
	}()
	c := dialRawPolled(t, l.Addr().String())
	msg := make([]byte, 16<<20)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	wrote := make(chan error, 1)
	go func() {
		n, err := c.Write(msg)
		if err == nil && n != len(msg) {
			err = io.ErrShortWrite
		}
		if err == nil {
			err = c.CloseWrite()
		}
		wrote <- err
	}()
	time.Sleep(100 * time.Millisecond) // the writer fills the buffers and parks
	select {
	case err := <-wrote:
		t.Fatalf("a 16 MiB write finished before the peer read anything: %v", err)
	default:
	}
	close(start)
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo differs: %d bytes back of %d", len(got), len(msg))
	}
	(<-accepted).Close()
}

// pgx cancels a statement by setting a deadline: a waiting read must end
// with a timeout that errors.Is and net.Error both recognise, and the
// connection must work again once the deadline is cleared.
func TestRawPolledReadDeadline(t *testing.T) {
	addr, _ := echo(t)
	c := dialRawPolled(t, addr)
	if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Read(make([]byte, 10))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("again")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "again" {
		t.Fatalf("after the deadline: %q, %v", got, err)
	}
}

// An interrupted run shuts sockets down from another goroutine
// (CloseRead, then Close): a read parked on the poller must return.
func TestRawPolledShutdownUnblocksAReader(t *testing.T) {
	for _, how := range []string{"CloseRead", "Close"} {
		t.Run(how, func(t *testing.T) {
			addr, _ := echo(t)
			c := dialRawPolled(t, addr)
			done := make(chan error, 1)
			go func() { _, err := c.Read(make([]byte, 10)); done <- err }()
			time.Sleep(50 * time.Millisecond)
			if how == "Close" {
				c.Close()
			} else {
				c.CloseRead()
			}
			select {
			case err := <-done:
				if how == "Close" && !errors.Is(err, net.ErrClosed) {
					t.Fatalf("read on a closed connection: %v, want net.ErrClosed", err)
				}
				if how == "CloseRead" && err != io.EOF {
					t.Fatalf("read after CloseRead: %v, want EOF", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the parked read did not return")
			}
		})
	}
}

// A reset connection is an error, not EOF.
func TestRawPolledReportsAReset(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dialed := make(chan struct{})
	go func() {
		s, err := l.Accept()
		if err != nil {
			return
		}
		<-dialed
		s.(*net.TCPConn).SetLinger(0) // close with a RST
		s.Close()
	}()
	c := dialRawPolled(t, l.Addr().String())
	close(dialed)
	_, err = c.Read(make([]byte, 10))
	var oe *net.OpError
	if err == nil || err == io.EOF || !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("read of a reset connection: %v, want a read OpError", err)
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read of a reset connection: %v, want ECONNRESET", err)
	}
}

// pgx cancels a stuck write with a deadline and abandons a connection by
// closing it: a write parked on a full buffer must return, with what it
// wrote and a timeout, or net.ErrClosed.
func TestRawPolledParkedWriteEnds(t *testing.T) {
	for _, how := range []string{"deadline", "close"} {
		t.Run(how, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() { // accepts and never reads
				s, err := l.Accept()
				if err == nil {
					t.Cleanup(func() { s.Close() })
				}
			}()
			c := dialRawPolled(t, l.Addr().String())
			type result struct {
				n   int
				err error
			}
			done := make(chan result, 1)
			msg := make([]byte, 64<<20)
			go func() { n, err := c.Write(msg); done <- result{n, err} }()
			time.Sleep(100 * time.Millisecond)
			if how == "deadline" {
				c.SetWriteDeadline(time.Now())
			} else {
				c.Close()
			}
			select {
			case r := <-done:
				if r.n <= 0 || r.n >= len(msg) {
					t.Errorf("wrote %d of %d bytes before it was stopped", r.n, len(msg))
				}
				var ne net.Error
				if how == "deadline" && (!errors.Is(r.err, os.ErrDeadlineExceeded) || !errors.As(r.err, &ne) || !ne.Timeout()) {
					t.Errorf("write past its deadline: %v, want a timeout", r.err)
				}
				if how == "close" && !errors.Is(r.err, net.ErrClosed) {
					t.Errorf("write on a closed connection: %v, want net.ErrClosed", r.err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the parked write did not return")
			}
		})
	}
}

// net.Conn's whole contract (concurrent reads and writes, deadlines,
// closing under a blocked call), as x/net's conformance suite checks it.
func TestRawPolledIsANetConn(t *testing.T) {
	nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, nil, err
		}
		accepted := make(chan net.Conn, 1)
		go func() {
			s, err := l.Accept()
			if err != nil {
				accepted <- nil
				return
			}
			accepted <- s
		}()
		d, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			l.Close()
			return nil, nil, nil, err
		}
		s := <-accepted
		l.Close()
		if s == nil {
			d.Close()
			return nil, nil, nil, errors.New("accept failed")
		}
		a, err1 := NewRawPolled(d.(*net.TCPConn))
		b, err2 := NewRawPolled(s.(*net.TCPConn))
		if err := errors.Join(err1, err2); err != nil {
			return nil, nil, nil, err
		}
		return a, b, func() { a.Close(); b.Close() }, nil
	})
}
