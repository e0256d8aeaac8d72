// Package postgres is PostgreSQL behind the engine's driver seam, on pgx
// (through database/sql, so SQL workloads run unchanged): sysbench's pgsql
// driver error rules, the server's own transaction count for the honesty
// check, COPY for bulk loads, and the version and settings for parity.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/netconn"
)

// Protocol is this driver's name in endpoints and workloads.
const Protocol = "postgres"

// ignorable are the SQLSTATEs sysbench's pgsql driver restarts the event on
// (after a ROLLBACK): deadlock_detected, unique_violation,
// serialization_failure. Anything else, a lost connection included, ends
// the run, as in sysbench.
var ignorable = map[string]string{"40P01": "deadlock detected", "23505": "unique violation", "40001": "serialization failure"}

// ConnConfig is ep as pgx's configuration. TLS is what ep's parameters
// say (a server URL's sslmode and certificates); without sslmode it is off:
// such endpoints are dbduel's own servers, on loopback or in its own
// containers, started without TLS.
func ConnConfig(ep driver.Endpoint) (*pgx.ConnConfig, error) {
	q, err := url.ParseQuery(ep.Params)
	if err != nil {
		return nil, fmt.Errorf("postgres parameters: %v", err)
	}
	if !q.Has("sslmode") {
		q.Set("sslmode", "disable")
	}
	if !q.Has("connect_timeout") {
		q.Set("connect_timeout", "10")
	}
	u := url.URL{Scheme: "postgres", Host: ep.Addr(), Path: "/" + ep.DB, RawQuery: q.Encode()}
	u.User = url.UserPassword(ep.User, ep.Password)
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, errors.New(driver.RedactURL(err.Error()))
	}
	return cfg, nil
}

// SQLOpen opens a plain database/sql pool to ep (administrative use).
func SQLOpen(ep driver.Endpoint) (*sql.DB, error) {
	cfg, err := ConnConfig(ep)
	if err != nil {
		return nil, err
	}
	return stdlib.OpenDB(*cfg), nil
}

// Ping tries one connection to ep within timeout.
func Ping(ctx context.Context, ep driver.Endpoint, timeout time.Duration) error {
	cfg, err := ConnConfig(ep)
	if err != nil {
		return err
	}
	cfg.ConnectTimeout = timeout
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := pgx.ConnectConfig(pctx, cfg)
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

// DB is a pool to one PostgreSQL server.
type DB struct {
	driver.SQLPool
	ep       driver.Endpoint
	conns    *connSet
	own      *ownTxns
	maxConns int
}

// Opener returns the engine's opener for ep.
func Opener(ep driver.Endpoint) driver.Opener {
	return func(_ context.Context, maxConns int) (driver.DB, error) { return Open(ep, maxConns) }
}

// Open connects to ep with the settings the engine needs.
func Open(ep driver.Endpoint, maxConns int) (*DB, error) {
	cfg, err := ConnConfig(ep)
	if err != nil {
		return nil, err
	}
	d := &DB{ep: ep, conns: &connSet{m: map[net.Conn]bool{}}, own: &ownTxns{}, maxConns: maxConns}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// TCP on the poller with raw calls (netconn.RawPolled says why),
		// unless DBDUEL_NET=go asks for Go's own calls (A/B measurements).
		if tcp, ok := c.(*net.TCPConn); ok && netconn.ModeFromEnv() != netconn.GoPoller {
			if rp, err := netconn.NewRawPolled(tcp); err == nil {
				c = rp
			}
		}
		return d.conns.track(c), nil
	}
	// No liveness ping when a pooled connection is taken again: a ping is
	// an empty query, a transaction the commit counter would count at a
	// time nobody knows (xact.go).
	db := sql.OpenDB(directConnector{stdlib.GetConnector(*cfg, stdlib.OptionShouldPing(func(context.Context, stdlib.ShouldPingParams) bool { return false }))})
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxLifetime(0)
	d.SQLPool = driver.SQLPool{DB: db, Protocol: Protocol}
	return d, nil
}

// ReleaseIdle closes the pool's idle connections, each a server process,
// once each has published its pending transaction counts (a loader's, a
// check's): an exiting backend publishes them too, but while it exits,
// after the client has gone on.
func (d *DB) ReleaseIdle(ctx context.Context) error {
	if err := d.publishIdle(ctx); err != nil {
		return err
	}
	d.DB.SetMaxIdleConns(0)
	d.DB.SetMaxIdleConns(d.maxConns)
	return nil
}

// Conn takes a dedicated connection that can roll back after an ignored error.
func (d *DB) Conn(ctx context.Context) (driver.Conn, error) {
	c, err := d.SQLPool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{SQLConn: c.(driver.SQLConn), own: d.own}, nil
}

// conn rolls back the aborted transaction before an event restarts, as
// sysbench's pgsql driver does after an ignorable error.
type conn struct {
	driver.SQLConn
	own *ownTxns
}

// Recover ends the aborted transaction.
func (c *conn) Recover(ctx context.Context) error {
	_, err := c.SQL().ExecContext(ctx, "ROLLBACK")
	return err
}

// Classify applies sysbench's pgsql rules.
func (d *DB) Classify(err error) driver.Failure {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if what, ok := ignorable[pe.Code]; ok {
			return driver.Failure{Action: driver.Restart, Code: pe.Code, Err: fmt.Errorf("%s (SQLSTATE %s)", what, pe.Code)}
		}
		return driver.Failure{Action: driver.Fatal, Code: pe.Code, Err: fmt.Errorf("%s (SQLSTATE %s); sysbench's pgsql driver ends the run on it too", pe.Message, pe.Code)}
	}
	if isConnectionLost(err) {
		return driver.Failure{Action: driver.Fatal, Err: fmt.Errorf("lost the connection to the server (%v); sysbench's pgsql driver does not reconnect", err)}
	}
	return driver.Failure{Action: driver.Fatal, Err: err}
}

func isConnectionLost(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "connection reset") ||
		strings.Contains(err.Error(), "broken pipe") || strings.Contains(err.Error(), "bad connection")
}

// OpCount reads the calls of every statement the database ran from
// pg_stat_statements: executions are counted there at once, prepares not
// (as MySQL's Questions). (A prepared BEGIN or COMMIT would be counted at
// its first execution only: the workloads send them as text, as sysbench.)
// (PostgreSQL's transaction counters serve TPC-C's TPM, made exact there:
// xact.go.) Without the extension the check is unavailable, and the result
// says why. The reading publishes itself (xact.go): the second reading
// then counts the first one's two statements.
func (d *DB) OpCount(ctx context.Context) (driver.OpCount, error) {
	var n sql.NullInt64
	published, err := d.ownRead(ctx, `SELECT sum(calls)::bigint FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`, &n)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "55000") {
			return driver.OpCount{}, fmt.Errorf("%w: pg_stat_statements is not installed in database %s (shared_preload_libraries and CREATE EXTENSION; dbduel's managed PostgreSQL targets have it)", driver.ErrNoOpCount, d.ep.DB)
		}
		return driver.OpCount{}, err
	}
	self := uint64(1)
	if published {
		self = 2
	}
	return driver.OpCount{Counter: "pg_stat_statements calls", N: uint64(n.Int64), Self: self, Unit: driver.Statements, RollbackCounted: true,
		Note: "the server counter includes any other client of this database"}, nil
}

// ServerTime sums pg_stat_statements' calls and total_exec_time (ms) of
// the database.
func (d *DB) ServerTime(ctx context.Context) (driver.ServerTime, error) {
	var n sql.NullInt64
	var ms sql.NullFloat64
	err := d.OwnRead(ctx, `SELECT sum(calls)::bigint, sum(total_exec_time) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`, &n, &ms)
	if err != nil {
		return driver.ServerTime{}, err
	}
	return driver.ServerTime{Source: "pg_stat_statements", Statements: uint64(n.Int64), NS: ms.Float64 * 1e6}, nil
}

// Unblock shuts down every connection's socket.
func (d *DB) Unblock() { d.conns.shutdownAll() }

// CopyRows loads rows into table with COPY FROM STDIN: PostgreSQL's bulk path.
func (d *DB) CopyRows(ctx context.Context, table string, columns []string, rows driver.RowSource) (int64, error) {
	c, err := d.DB.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	var n int64
	err = c.Raw(func(dc any) error {
		pc, ok := dc.(*directConn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", dc)
		}
		n, err = pc.Conn.Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromFunc(func() ([]any, error) {
			row, ok := rows()
			if !ok {
				return nil, nil
			}
			for i, v := range row { // pgx would send []byte as bytea
				if b, ok := v.([]byte); ok {
					row[i] = string(b)
				}
			}
			return row, nil
		}))
		return err
	})
	return n, err
}

// connSet tracks open sockets so an interrupted run can shut them down.
type connSet struct {
	mu sync.Mutex
	m  map[net.Conn]bool
}

func (s *connSet) track(c net.Conn) net.Conn {
	s.mu.Lock()
	s.m[c] = true
	s.mu.Unlock()
	return &trackedConn{Conn: c, set: s}
}

func (s *connSet) shutdownAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.m {
		if tc, ok := c.(interface{ CloseRead() error }); ok {
			_ = tc.CloseRead()
		}
		_ = c.SetDeadline(time.Now())
	}
}

type trackedConn struct {
	net.Conn
	set *connSet
}

func (c *trackedConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.m, c.Conn)
	c.set.mu.Unlock()
	return c.Conn.Close()
}

// ServerInfo reads the version and the data directory.
func ServerInfo(ctx context.Context, ep driver.Endpoint) (version, datadir string, err error) {
	db, err := SQLOpen(ep)
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, "SHOW server_version").Scan(&version); err != nil {
		return "", "", err
	}
	// data_directory is readable by superusers and pg_read_all_settings only.
	_ = db.QueryRowContext(ctx, "SELECT setting FROM pg_settings WHERE name = 'data_directory'").Scan(&datadir)
	return "PostgreSQL " + version, datadir, nil
}

// Variables reads pg_settings (names as they are).
func Variables(ctx context.Context, ep driver.Endpoint) (map[string]string, error) {
	db, err := SQLOpen(ep)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return driver.ReadSettings(ctx, db, "SELECT name, COALESCE(setting, '') || COALESCE(unit, '') FROM pg_settings", nil)
}

// ParseURL parses postgres://user:pass@host:port/db[?sslmode=...] (also
// postgresql://; db defaults to sbtest, user to postgres, sslmode to
// libpq's prefer); errors never hold the password.
func ParseURL(spec string) (driver.Endpoint, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return driver.Endpoint{}, fmt.Errorf("bad postgres:// SPEC %q: %s", driver.RedactURL(spec), driver.RedactURL(err.Error()))
	}
	if (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return driver.Endpoint{}, fmt.Errorf("bad SPEC %q: want postgres://user:pass@host:port/db", driver.RedactURL(spec))
	}
	e := driver.Endpoint{Protocol: Protocol, Host: u.Hostname(), Port: 5432, User: "postgres", DB: "sbtest"}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return driver.Endpoint{}, fmt.Errorf("bad port %q in SPEC %q", p, driver.RedactURL(spec))
		}
		e.Port = n
	}
	if u.User != nil && u.User.Username() != "" {
		e.User = u.User.Username()
		e.Password, _ = u.User.Password()
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		e.DB = db
	}
	q := u.Query()
	for k := range q {
		if !urlParams[k] {
			return driver.Endpoint{}, fmt.Errorf("SPEC %q: query parameter %q is not supported (want %s)", driver.RedactURL(spec), k, strings.Join(slices.Sorted(maps.Keys(urlParams)), ", "))
		}
	}
	if !q.Has("sslmode") {
		// What psql does with the same URL.
		q.Set("sslmode", "prefer")
	}
	e.Params = q.Encode()
	return e, nil
}

// urlParams are the query parameters a server URL may carry: libpq's TLS
// settings (as psql reads them) and the connect timeout.
var urlParams = map[string]bool{"sslmode": true, "sslrootcert": true, "sslcert": true, "sslkey": true, "sslpassword": true, "sslsni": true, "connect_timeout": true}

// EnsureDatabase creates ep.DB if missing (through the maintenance
// database); created says it did.
func EnsureDatabase(ctx context.Context, ep driver.Endpoint) (created bool, err error) {
	db, err := SQLOpen(maintenance(ep))
	if err != nil {
		return false, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", ep.DB).Scan(&n); err != nil {
		return false, fmt.Errorf("cannot connect to %s as %s: %w", ep.Addr(), ep.User, err)
	}
	if n > 0 {
		return false, nil
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+pgx.Identifier{ep.DB}.Sanitize()); err != nil {
		return false, fmt.Errorf("create database %s: %w", ep.DB, err)
	}
	return true, nil
}

// maintenance is ep on the maintenance database (postgres), which every
// cluster has and dbduel may connect to.
func maintenance(ep driver.Endpoint) driver.Endpoint {
	ep.DB = "postgres"
	return ep
}

// InstallStatementCounts creates pg_stat_statements in ep's database (the
// server must preload it): the server's own count for the honesty check.
func InstallStatementCounts(ctx context.Context, ep driver.Endpoint) error {
	db, err := SQLOpen(ep)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		return fmt.Errorf("create extension pg_stat_statements: %w", err)
	}
	return nil
}
