// Package fakesql is a database/sql driver that answers every statement at
// once without a server, recording what it was sent. Unit tests use it to
// check a workload's statements and counts; benchmarks use it to measure
// the per-event path without network or server time.
package fakesql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// Log records the statements executed through one registered driver.
type Log struct {
	mu       sync.Mutex
	Enabled  bool
	Prepared []string
	Executed []string // "P:" prepared executions, "T:" text statements
	// NoText makes text statements answer driver.ErrSkip, as a driver does
	// when it cannot send one as text (the caller must prepare it).
	NoText bool
	count  atomic.Int64
}

// Count is the number of statements executed.
func (l *Log) Count() int64 { return l.count.Load() }

func (l *Log) add(kind, q string) {
	l.count.Add(1)
	if !l.Enabled {
		return
	}
	l.mu.Lock()
	l.Executed = append(l.Executed, kind+q)
	l.mu.Unlock()
}

// Snapshot returns a copy of the executed statements.
func (l *Log) Snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.Executed...)
}

var seq atomic.Int64

// Open registers a fresh driver and opens a DB on it.
func Open(record bool) (*sql.DB, *Log) {
	log := &Log{Enabled: record}
	name := fmt.Sprintf("fakesql-%d", seq.Add(1))
	sql.Register(name, &drv{log: log})
	db, _ := sql.Open(name, "")
	return db, log
}

type drv struct{ log *Log }

func (d *drv) Open(string) (driver.Conn, error) { return &conn{log: d.log}, nil }

type conn struct{ log *Log }

func (c *conn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}
func (c *conn) PrepareContext(_ context.Context, q string) (driver.Stmt, error) {
	c.log.mu.Lock()
	if c.log.Enabled {
		c.log.Prepared = append(c.log.Prepared, q)
	}
	c.log.mu.Unlock()
	return &stmt{c: c, q: q}, nil
}
func (c *conn) Close() error              { return nil }
func (c *conn) Begin() (driver.Tx, error) { return tx{}, nil }

// ExecContext and QueryContext are text statements (no prepare).
func (c *conn) ExecContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Result, error) {
	if c.log.NoText {
		return nil, driver.ErrSkip
	}
	c.log.add("T:", q)
	return result(q), nil
}
func (c *conn) QueryContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Rows, error) {
	if c.log.NoText {
		return nil, driver.ErrSkip
	}
	c.log.add("T:", q)
	return &rows{}, nil
}

// CheckNamedValue accepts every argument as it is.
func (c *conn) CheckNamedValue(*driver.NamedValue) error { return nil }

type tx struct{}

func (tx) Commit() error   { return nil }
func (tx) Rollback() error { return nil }

type stmt struct {
	c *conn
	q string
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return strings.Count(s.q, "?") }
func (s *stmt) Exec([]driver.Value) (driver.Result, error) {
	s.c.log.add("P:", s.q)
	return result(s.q), nil
}
func (s *stmt) Query([]driver.Value) (driver.Rows, error) {
	s.c.log.add("P:", s.q)
	return &rows{}, nil
}
func (s *stmt) ExecContext(_ context.Context, _ []driver.NamedValue) (driver.Result, error) {
	s.c.log.add("P:", s.q)
	return result(s.q), nil
}
func (s *stmt) QueryContext(_ context.Context, _ []driver.NamedValue) (driver.Rows, error) {
	s.c.log.add("P:", s.q)
	return &rows{}, nil
}
func (s *stmt) CheckNamedValue(*driver.NamedValue) error { return nil }

// result: DML affects one row, BEGIN/COMMIT none (as a real server).
type result string

func (r result) LastInsertId() (int64, error) { return 0, nil }
func (r result) RowsAffected() (int64, error) {
	switch strings.ToUpper(string(r)) {
	case "BEGIN", "COMMIT":
		return 0, nil
	}
	return 1, nil
}

// rows is one row of one column.
type rows struct{ done bool }

func (r *rows) Columns() []string { return []string{"c"} }
func (r *rows) Close() error      { return nil }
func (r *rows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	dest[0] = []byte("x")
	return nil
}
