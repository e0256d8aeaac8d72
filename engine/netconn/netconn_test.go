package netconn

import (
	"context"
	"io"
	"net"
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
	addr, accepted := echo(t)
	d := NewDialer()
	c, err := d.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	msg := make([]byte, 100000) // larger than one segment: Write must loop
	for i := range msg {
		msg[i] = byte(i)
	}
	go c.Write(msg)
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
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
	d := NewDialer()
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
	c, err := NewDialer().Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.SetDeadline(time.Time{}) != nil || c.SetReadDeadline(time.Now()) == nil {
		t.Fatal("clearing a deadline must work, setting one must be refused")
	}
}
