// Package mysql is the MySQL/MariaDB protocol behind the engine's driver
// seam, on go-sql-driver/mysql: connections on blocking sockets, sysbench's
// error rules (--mysql-ignore-errors), the server's Questions counter for
// the honesty check, and the version and variables for parity.
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/netconn"
	"github.com/dbduel/dbduel/engine/schedhint"
)

// Protocol is this driver's name in endpoints and workloads.
const Protocol = "mysql"

// quietLogger drops the driver's log lines: lost connections and refused
// handshakes while a server starts reach the caller as errors anyway.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

func init() { _ = gomysql.SetLogger(quietLogger{}) }

func config(ep driver.Endpoint) *gomysql.Config {
	c := gomysql.NewConfig()
	c.User, c.Passwd = ep.User, ep.Password
	c.Net, c.Addr = "tcp", ep.Addr()
	c.DBName = ep.DB
	c.Timeout = 10 * time.Second
	c.Logger = quietLogger{}
	return c
}

// SQLOpen opens a plain database/sql pool to ep: the one way targets and
// tests open an administrative connection.
func SQLOpen(ep driver.Endpoint) (*sql.DB, error) {
	conn, err := gomysql.NewConnector(config(ep))
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

// Ping tries one connection to ep within timeout.
func Ping(ctx context.Context, ep driver.Endpoint, timeout time.Duration) error {
	c := config(ep)
	c.Timeout = timeout
	conn, err := gomysql.NewConnector(c)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return db.PingContext(pctx)
}

// errNoHandshake replaces the driver's bare "invalid connection" when the
// peer accepted the connection but never completed a MySQL handshake.
var errNoHandshake = errors.New("the connection closed without a MySQL handshake (not a MySQL/MariaDB port, or something in between cut it)")

// DialError turns a connection error into its short form, naming the cause.
func DialError(err error) error {
	if errors.Is(err, gomysql.ErrInvalidConn) {
		return errNoHandshake
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Err
	}
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me
	}
	return err
}

// DB is a pool to one MySQL/MariaDB server.
type DB struct {
	driver.SQLPool
	ignore   ErrorSet
	dialer   *netconn.Dialer
	maxConns int
}

// Opener returns the engine's opener for ep with the ignore rules of
// --mysql-ignore-errors.
func Opener(ep driver.Endpoint, ignore ErrorSet) driver.Opener {
	return func(_ context.Context, maxConns int) (driver.DB, error) { return Open(ep, maxConns, ignore) }
}

// Open connects to ep with the settings the engine needs.
func Open(ep driver.Endpoint, maxConns int, ignore ErrorSet) (*DB, error) {
	cfg := config(ep)
	// Text-mode statements (--db-ps-mode=disable, oltp_insert) are sent
	// with their parameters inlined, one round trip, as sysbench does.
	cfg.InterpolateParams = true
	schedHintOnce.Do(applySchedHint)
	d := &DB{ignore: ignore, maxConns: maxConns, dialer: netconn.NewDialer(netconn.ModeFromEnv())}
	// The engine's pools hold the largest run's threads and two more: the
	// counters' connections, made before the first run, get that run's mode.
	d.dialer.SetThreads(max(maxConns-2, 1))
	cfg.DialFunc = d.dialer.Dial
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxLifetime(0)
	d.SQLPool = driver.SQLPool{DB: db, Protocol: Protocol}
	return d, nil
}

// Unblock shuts down every connection's socket.
func (d *DB) Unblock() { d.dialer.ShutdownAll() }

// SetThreads picks the socket path of the next run's connections by its
// threads (netconn.RawMaxThreads); on a change the idle connections of the
// other path are closed, so the run's threads connect anew.
//
// The connections are dropped draining: their quit (COM_QUIT, which the
// server counts in Questions) is processed before the run's counter is
// read, not inside its window.
func (d *DB) SetThreads(n int) {
	if d.dialer.SetThreads(n) {
		d.closeIdle()
	}
}

// ReleaseIdle closes the pool's idle connections, draining (the quits
// are counted before another target's counters are read: targets may
// share a server).
func (d *DB) ReleaseIdle(context.Context) error {
	d.closeIdle()
	return nil
}

func (d *DB) closeIdle() {
	d.dialer.Drain(true)
	d.DB.SetMaxIdleConns(0)
	d.dialer.Drain(false)
	d.DB.SetMaxIdleConns(d.maxConns)
}

// Classify applies sysbench's MySQL driver rules: an error whose code is in
// --mysql-ignore-errors restarts the event, and a lost connection among
// them reconnects first; anything else ends the run.
func (d *DB) Classify(err error) driver.Failure {
	code := errorCode(err)
	if !d.ignore.Has(code) {
		return driver.Failure{Action: driver.Fatal, Code: codeString(code), Err: describeError(code, err)}
	}
	if isConnectionLost(code, err) {
		return driver.Failure{Action: driver.Reconnect, Code: codeString(code)}
	}
	return driver.Failure{Action: driver.Restart, Code: codeString(code)}
}

func codeString(code uint16) string {
	if code == 0 {
		return ""
	}
	return strconv.Itoa(int(code))
}

// OpCount reads the global Questions counter: it counts text queries and
// prepared-statement executions alike (over a sysbench run its delta
// equals sysbench's own query count).
func (d *DB) OpCount(ctx context.Context) (driver.OpCount, error) {
	var name string
	var n uint64
	if err := d.DB.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &n); err != nil {
		return driver.OpCount{}, err
	}
	return driver.OpCount{Counter: "Questions", N: n, Self: 1,
		Note: "the server counter includes any other client of this server"}, nil
}

// ServerTime sums performance_schema's statement events (prepared
// executions are statement/com/Execute there, not digests): their count
// and SUM_TIMER_WAIT (picoseconds). It needs performance_schema=ON.
func (d *DB) ServerTime(ctx context.Context) (driver.ServerTime, error) {
	var on int
	if err := d.DB.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		return driver.ServerTime{}, err
	}
	if on == 0 {
		return driver.ServerTime{}, errors.New("performance_schema is off (start the server with --performance-schema=ON)")
	}
	var n sql.NullInt64
	var ps sql.NullFloat64
	err := d.DB.QueryRowContext(ctx, `SELECT SUM(COUNT_STAR), SUM(SUM_TIMER_WAIT)
		FROM performance_schema.events_statements_summary_global_by_event_name WHERE EVENT_NAME LIKE 'statement/%'`).Scan(&n, &ps)
	if err != nil {
		return driver.ServerTime{}, err
	}
	return driver.ServerTime{Source: "performance_schema", Statements: uint64(n.Int64), NS: ps.Float64 / 1000}, nil
}

// ServerInfo reads VERSION() and @@datadir.
func ServerInfo(ctx context.Context, ep driver.Endpoint) (version, datadir string, err error) {
	db, err := SQLOpen(ep)
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	err = db.QueryRowContext(ctx, "SELECT VERSION(), @@datadir").Scan(&version, &datadir)
	return version, datadir, err
}

// Variables reads SHOW GLOBAL VARIABLES (names in lower case).
func Variables(ctx context.Context, ep driver.Endpoint) (map[string]string, error) {
	db, err := SQLOpen(ep)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return driver.ReadSettings(ctx, db, "SHOW GLOBAL VARIABLES", strings.ToLower)
}

// ParseURL parses mysql://user:pass@host:port/db (db defaults to sbtest,
// user to root); errors never contain the password.
func ParseURL(spec string) (driver.Endpoint, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return driver.Endpoint{}, fmt.Errorf("bad mysql:// SPEC %q: %s", Redact(spec), Redact(err.Error()))
	}
	if u.Scheme != "mysql" || u.Host == "" {
		return driver.Endpoint{}, fmt.Errorf("bad SPEC %q: want mysql://user:pass@host:port/db", Redact(spec))
	}
	e := driver.Endpoint{Protocol: Protocol, Host: u.Hostname(), Port: 3306, DB: "sbtest"}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return driver.Endpoint{}, fmt.Errorf("bad port %q in SPEC %q", p, Redact(spec))
		}
		e.Port = n
	}
	if u.User != nil {
		e.User = u.User.Username()
		e.Password, _ = u.User.Password()
	}
	if e.User == "" {
		e.User = "root"
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		e.DB = db
	}
	if len(u.Query()) > 0 {
		return driver.Endpoint{}, fmt.Errorf("SPEC %q: query parameters are not supported", Redact(spec))
	}
	return e, nil
}

// Redact hides a password in a URL or a message that quotes one.
func Redact(s string) string { return driver.RedactURL(s) }

// schedHintOnce applies the client's scheduling hint once per process, when
// the first target is opened: before the workers' threads exist, so the ones
// the runtime creates for them inherit it.
var schedHintOnce sync.Once

// applySchedHint asks for short slices for dbduel's threads when
// DBDUEL_SCHED_SLICE sets one (see schedhint for why it is off by default);
// a kernel that refuses leaves the run as it was, with a note on stderr.
func applySchedHint() {
	d, err := schedhint.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbduel:", err)
		return
	}
	if d == 0 {
		return
	}
	if _, err := schedhint.Apply(d); err != nil {
		fmt.Fprintln(os.Stderr, "dbduel: scheduling hint not applied:", err)
	}
}

// EnsureDatabase connects without a default database and creates ep.DB if
// missing; created says it did.
func EnsureDatabase(ctx context.Context, ep driver.Endpoint) (created bool, err error) {
	admin := ep
	admin.DB = ""
	db, err := SQLOpen(admin)
	if err != nil {
		return false, err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return false, fmt.Errorf("cannot connect to %s:%d as %s: %w", ep.Host, ep.Port, ep.User, DialError(err))
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", ep.DB).Scan(&n); err != nil {
		return false, fmt.Errorf("look for database %s: %w", ep.DB, err)
	}
	if n > 0 {
		return false, nil
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(ep.DB, "`", "``")+"`"); err != nil {
		return false, fmt.Errorf("create database %s: %w", ep.DB, err)
	}
	return true, nil
}
