package mongo

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
)

// The server's opcounters.command counts every command, the driver's own
// too: each pooled connection's handshake (hello, authentication) and the
// monitor's heartbeats. A pool of 128 connections opening during a run put
// 40 of them into a 1792-operation run (-2.2%). The engine's pool counts
// what it sends for itself at the socket, and OpCount leaves those out.

const (
	opQuery = 2004 // the legacy handshake
	opMsg   = 2013
)

// ownCommands are the commands the driver sends for itself (OpCount's own
// serverStatus is counted apart, as OpCount.Self).
var ownCommands = map[string]bool{"hello": true, "isMaster": true, "ismaster": true, "saslStart": true,
	"saslContinue": true, "ping": true, "endSessions": true, "buildInfo": true}

// isOwnCommand reads the command name of one whole wire message.
func isOwnCommand(p []byte) bool {
	if len(p) < 16 {
		return false
	}
	switch binary.LittleEndian.Uint32(p[12:16]) {
	case opQuery:
		return true
	case opMsg:
		// header(16) flags(4) kind(1)=0 doclen(4) type(1) name\0
		if len(p) < 27 || p[20] != 0 {
			return false
		}
		name := p[26:]
		for i, c := range name {
			if c == 0 {
				return ownCommands[string(name[:i])]
			}
		}
	}
	return false
}

// selfCount is what a pool sent for itself: its own commands written,
// and those whose reply has not come yet. A command in flight may or may
// not be counted by the server yet, so OpCount reads the server's counter
// only when none is.
type selfCount struct {
	sent     atomic.Uint64
	inFlight atomic.Int64
}

// countingDialer dials connections that count the driver's own commands.
type countingDialer struct {
	d   net.Dialer
	own *selfCount
}

func (cd *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := cd.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, own: cd.own, pending: map[int32]bool{}}, nil
}

// countingConn counts the own commands written on a connection, and their
// replies as they are read (a reply's header names the request it answers).
type countingConn struct {
	net.Conn
	own     *selfCount
	mu      sync.Mutex
	pending map[int32]bool // request ids of own commands not answered yet
	hdr     [16]byte       // the reply header being read
	have    int            // bytes of hdr read
	skip    int            // bytes of the current reply's body still to come
}

// Write sees each message whole: the driver writes one message per call.
func (c *countingConn) Write(p []byte) (int, error) {
	if isOwnCommand(p) {
		c.mu.Lock()
		c.pending[int32(binary.LittleEndian.Uint32(p[4:8]))] = true
		c.mu.Unlock()
		c.own.sent.Add(1)
		c.own.inFlight.Add(1)
	}
	return c.Conn.Write(p)
}

// Read passes the bytes on and finds the replies to own commands in them.
func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.scan(p[:n])
	c.mu.Unlock()
	return n, err
}

// scan frames the bytes read into messages: each header's responseTo
// settles the own command it answers.
func (c *countingConn) scan(b []byte) {
	for len(b) > 0 {
		if c.skip > 0 {
			k := min(c.skip, len(b))
			c.skip, b = c.skip-k, b[k:]
			continue
		}
		k := copy(c.hdr[c.have:], b)
		c.have, b = c.have+k, b[k:]
		if c.have < len(c.hdr) {
			return
		}
		c.have = 0
		c.skip = max(int(int32(binary.LittleEndian.Uint32(c.hdr[0:4])))-len(c.hdr), 0)
		if to := int32(binary.LittleEndian.Uint32(c.hdr[8:12])); c.pending[to] {
			delete(c.pending, to)
			c.own.inFlight.Add(-1)
		}
	}
}

// Close settles what will never be answered.
func (c *countingConn) Close() error {
	c.mu.Lock()
	c.own.inFlight.Add(-int64(len(c.pending)))
	clear(c.pending)
	c.mu.Unlock()
	return c.Conn.Close()
}
