package driver

import (
	"context"
	"database/sql"
	"database/sql/driver"
)

// SQLPool adapts a database/sql pool to DB for any SQL driver: protocol
// packages embed it and add their error classes and counters; unit tests
// use it as it is over a fake driver (every failure is fatal, no counter).
type SQLPool struct {
	DB       *sql.DB
	Protocol string
}

// Conn takes a dedicated connection.
func (p *SQLPool) Conn(ctx context.Context) (Conn, error) {
	c, err := p.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &sqlConn{c: c, dialect: p.Protocol}, nil
}

// Classify treats every error as fatal.
func (p *SQLPool) Classify(err error) Failure { return Failure{Action: Fatal, Err: err} }

// OpCount is not known for a generic pool.
func (p *SQLPool) OpCount(context.Context) (OpCount, error) { return OpCount{}, ErrNoOpCount }

// Unblock does nothing: a generic pool has no handle on its sockets.
func (p *SQLPool) Unblock() {}

// Close closes the pool.
func (p *SQLPool) Close() error { return p.DB.Close() }

// SQL is the database/sql pool.
func (p *SQLPool) SQL() *sql.DB { return p.DB }

// Dialect is the pool's protocol.
func (p *SQLPool) Dialect() string { return p.Protocol }

type sqlConn struct {
	c       *sql.Conn
	dialect string
}

func (c *sqlConn) SQL() *sql.Conn  { return c.c }
func (c *sqlConn) Dialect() string { return c.dialect }
func (c *sqlConn) Close() error    { return c.c.Close() }

// Discard tells database/sql to drop the connection, then releases it.
func (c *sqlConn) Discard() {
	_ = c.c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.c.Close()
}

// ReadSettings runs a query of (name, value) rows into a map: a server's
// variables or settings, for parity.
func ReadSettings(ctx context.Context, db *sql.DB, query string, normalize func(string) string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vars := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		if normalize != nil {
			k = normalize(k)
		}
		vars[k] = v
	}
	return vars, rows.Err()
}
