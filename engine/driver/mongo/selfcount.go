package mongo

import (
	"context"
	"encoding/binary"
	"net"
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

// countingDialer dials connections that count the driver's own commands.
type countingDialer struct {
	d   net.Dialer
	own *atomic.Uint64
}

func (cd *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := cd.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, own: cd.own}, nil
}

type countingConn struct {
	net.Conn
	own *atomic.Uint64
}

// Write sees each message whole: the driver writes one message per call.
func (c *countingConn) Write(p []byte) (int, error) {
	if isOwnCommand(p) {
		c.own.Add(1)
	}
	return c.Conn.Write(p)
}
