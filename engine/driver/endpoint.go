package driver

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// The one way to reach a server of any protocol by its endpoint: the
// registry, looked up by the endpoint's protocol. An unknown protocol is
// an error, never a default.

// ProtocolOf is ep's registered protocol.
func ProtocolOf(ep Endpoint) (*Protocol, error) { return Lookup(ep.Protocol) }

// Ping tries one connection within timeout.
func Ping(ctx context.Context, ep Endpoint, timeout time.Duration) error {
	p, err := ProtocolOf(ep)
	if err != nil {
		return err
	}
	return p.Ping(ctx, ep, timeout)
}

// Ready is what a protocol does once a managed server first answers.
func Ready(ctx context.Context, ep Endpoint) error {
	p, err := ProtocolOf(ep)
	if err != nil || p.Ready == nil {
		return err
	}
	return p.Ready(ctx, ep)
}

// ServerInfo reads the server's version and data directory.
func ServerInfo(ctx context.Context, ep Endpoint) (version, datadir string, err error) {
	p, err := ProtocolOf(ep)
	if err != nil {
		return "", "", err
	}
	return p.ServerInfo(ctx, ep)
}

// Variables reads the server's settings (SHOW GLOBAL VARIABLES, pg_settings).
func Variables(ctx context.Context, ep Endpoint) (map[string]string, error) {
	p, err := ProtocolOf(ep)
	if err != nil {
		return nil, err
	}
	return p.Variables(ctx, ep)
}

// EnsureDatabase creates ep.DB if it is missing; created says it did.
func EnsureDatabase(ctx context.Context, ep Endpoint) (bool, error) {
	p, err := ProtocolOf(ep)
	if err != nil {
		return false, err
	}
	return p.EnsureDatabase(ctx, ep)
}

// OpenerFor is the engine's way to open a pool to ep; opts carry the
// protocols' own settings (--mysql-ignore-errors).
func OpenerFor(ep Endpoint, opts OpenOptions) Opener {
	p, err := ProtocolOf(ep)
	if err != nil {
		return func(context.Context, int) (DB, error) { return nil, err }
	}
	return p.Open(ep, opts)
}

// OpenSQL opens an SQL pool of one connection to ep (set-up statements).
func OpenSQL(ctx context.Context, ep Endpoint) (*sql.DB, func(), error) {
	db, err := OpenerFor(ep, nil)(ctx, 1)
	if err != nil {
		return nil, nil, err
	}
	s, ok := db.(SQLDB)
	if !ok {
		db.Close()
		return nil, nil, fmt.Errorf("%s does not speak SQL", ep.Protocol)
	}
	return s.SQL(), func() { db.Close() }, nil
}
