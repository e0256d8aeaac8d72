// Package driver is the seam between the engine and database protocols.
// The engine drives load, classifies failures, checks its counts against the
// server's own and reads nothing protocol-specific: each protocol (mysql/,
// and later postgres/, mongo/) implements DB and Conn in a package of its
// own, and a workload reaches the protocol's client through them.
package driver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Action is what the engine does after an event failed.
type Action int

const (
	Fatal     Action = iota // end the run with the failure's message
	Restart                 // an ignored error: run the same event again
	Reconnect               // the connection is gone: replace it, then restart the event
)

// Failure is a driver's reading of an error an event returned.
type Failure struct {
	Action Action
	Code   string // the server's or client's code ("1213", "40P01"), "" when none
	// Err says what failed and the next step, for Fatal failures.
	Err error
}

// Unit is what a server counter counts.
type Unit int

const (
	Statements   Unit = iota // every statement (MySQL's Questions)
	Transactions             // transactions, implicit ones included (PostgreSQL's xact counters)
	Operations               // MongoDB's opcounters: documents inserted, statements, finds, commands
)

// OpCount is the server's own count of the operations it served: the
// honesty check compares its delta over a run with the client's count.
type OpCount struct {
	Counter string // e.g. "Questions"
	N       uint64
	Unit    Unit
	// Self is how many operations each reading adds to the counter itself.
	Self uint64
	// RollbackCounted says the counter counts the ROLLBACK dbduel sends
	// after an ignored error (PostgreSQL's; the client does not count it)
	// and not the failed statement (neither side counts that).
	RollbackCounted bool
	Note            string // what else the counter includes
}

// ServerTime is the server's own cumulative count of statements and the
// time it spent executing them (performance_schema, pg_stat_statements).
type ServerTime struct {
	Source     string // performance_schema, pg_stat_statements
	Statements uint64
	NS         float64
}

// ServerTimer is a DB whose server times its own statements: latency then
// splits into server time and everything between client and server.
type ServerTimer interface {
	ServerTime(ctx context.Context) (ServerTime, error)
}

// ErrNoOpCount says a server exposes no operation counter.
var ErrNoOpCount = errors.New("the server reports no operation count")

// DB is a pool of connections to one target.
type DB interface {
	Conn(ctx context.Context) (Conn, error)
	Classify(err error) Failure
	OpCount(ctx context.Context) (OpCount, error)
	// Unblock shuts down every connection's socket, so that threads stuck
	// in a statement return after an interruption.
	Unblock()
	Close() error
}

// ThreadsAware is a DB whose connections are made differently by the
// threads of the run (MySQL's socket path: netconn's mode): told before
// the run connects its threads, it drops idle connections of another mode.
type ThreadsAware interface {
	SetThreads(n int)
}

// IdleReleaser is a DB whose pool can close the connections it holds
// idle: the engine closes every target's before each run of a plan, so
// that each run connects its threads anew, as a sysbench invocation does,
// and a target between runs holds no sessions on its server. (MongoDB's
// driver keeps its own pool and the remote agent opens one per run: they
// are not IdleReleasers.)
type IdleReleaser interface {
	ReleaseIdle(ctx context.Context) error
}

// Conn is one dedicated connection (one per thread).
type Conn interface {
	// Discard drops a broken connection instead of returning it to the pool.
	Discard()
	Close() error
}

// Recoverer is a Conn that must be set right after an ignored error before
// its event restarts (PostgreSQL: roll back the aborted transaction).
type Recoverer interface {
	Recover(ctx context.Context) error
}

// RowSource yields rows for a bulk load; ok false ends them. A row and
// the []byte values in it are valid until the next call.
type RowSource func() (row []any, ok bool)

// ErrNoBulkLoad says a server refuses the bulk path: load with INSERTs.
var ErrNoBulkLoad = errors.New("the server refuses bulk loads")

// BulkLoader is a DB with a bulk load path faster than INSERTs (COPY,
// LOAD DATA LOCAL INFILE).
type BulkLoader interface {
	CopyRows(ctx context.Context, table string, columns []string, rows RowSource) (int64, error)
}

// TxnCounter is a DB whose server counts the database's transactions
// (commits and rollbacks) but publishes a connection's counts late
// (PostgreSQL's pg_stat_database): Transactions publishes every
// connection's counts before it reads, and leaves dbduel's own reads out.
type TxnCounter interface {
	Transactions(ctx context.Context) (uint64, error)
	// OwnRead runs one query of dbduel's own (a reading, not the
	// workload's) and scans its row into dest; its transactions are left
	// out of Transactions.
	OwnRead(ctx context.Context, query string, dest ...any) error
}

// StatsPublisher is a Conn whose server publishes its counts late:
// PublishStats makes them visible at once (a thread does it before the
// first reading and after its last event).
type StatsPublisher interface {
	PublishStats(ctx context.Context) error
}

// Opener opens a pool of at most maxConns connections to one target.
type Opener func(ctx context.Context, maxConns int) (DB, error)

// SQLDB is a DB of an SQL protocol: SQL workloads reach database/sql
// through it.
type SQLDB interface {
	DB
	SQL() *sql.DB
	Dialect() string // "mysql", "postgres"
}

// SQLConn is a Conn of an SQL protocol.
type SQLConn interface {
	Conn
	SQL() *sql.Conn
	Dialect() string
}

// Endpoint is how to reach a server.
type Endpoint struct {
	Protocol string // "mysql", "postgres", "mongodb"
	Host     string
	Port     int
	User     string
	Password string
	DB       string
	// Params are URL query parameters the protocol needs (MongoDB's
	// authSource, authMechanism), as a raw query string.
	Params string
}

// URL is the endpoint as protocol://user:pass@host:port/db.
func (e Endpoint) URL() string {
	u := url.URL{Scheme: e.Protocol, Host: net.JoinHostPort(e.Host, strconv.Itoa(e.Port)), Path: "/" + e.DB, RawQuery: e.Params}
	if e.Password != "" {
		u.User = url.UserPassword(e.User, e.Password)
	} else if e.User != "" {
		u.User = url.User(e.User)
	}
	return u.String()
}

// Redacted is the URL with the password replaced: the only form that may
// appear in output, logs, reports or errors.
func (e Endpoint) Redacted() string { return RedactURL(e.URL()) }

// Addr is host:port.
func (e Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// OneLine folds a multi-line message (a server's error, a start-up log)
// into one line, whole: dbduel's errors are one line each.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// SQLConnOf returns conn's database/sql connection.
func SQLConnOf(conn Conn, workload string) (*sql.Conn, error) {
	s, ok := conn.(SQLConn)
	if !ok {
		return nil, fmt.Errorf("workload %s speaks SQL; this target's protocol does not", workload)
	}
	return s.SQL(), nil
}
