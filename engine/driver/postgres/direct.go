package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// The workloads' prepared statements run on pgconn, pgx's protocol layer,
// as pgbench's run on libpq: parameters sent as text, rows read off the
// wire and dropped undecoded (sysbench stores each result and frees it
// unread). Through database/sql's driver interface every statement built
// pgx's argument list, encode plans and row reader and decoded the first
// row: measured on a 2-core host at 64 threads (oltp_point_select), 10 µs
// of user CPU a statement against pgbench's 3.7 (docs/performance.md).
// Everything else (transactions, COPY, administrative queries) stays on
// pgx's stdlib driver, which the connection wraps.

// directConnector makes database/sql's connections directConns.
type directConnector struct{ driver.Connector }

func (c directConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := dc.(*stdlib.Conn)
	if !ok {
		dc.Close()
		return nil, fmt.Errorf("not a pgx connection: %T", dc)
	}
	return &directConn{Conn: sc}, nil
}

// directConn is pgx's stdlib connection (every optional interface
// database/sql looks for is its) whose prepared statements are
// directStmts.
type directConn struct {
	*stdlib.Conn
}

// stmtSeq names statements apart across connections (the names are per
// connection on the server; one sequence keeps them readable in logs).
var stmtSeq atomic.Uint64

func (c *directConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext prepares query on the server with pgx (which keeps its
// description for the stdlib path too).
func (c *directConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	name := "dbduel_" + strconv.FormatUint(stmtSeq.Add(1), 10)
	sd, err := c.Conn.Conn().Prepare(ctx, name, query)
	if err != nil {
		return nil, err
	}
	st := &directStmt{conn: c, sd: sd, buf: make([]byte, 0, 64)}
	for i, oid := range sd.ParamOIDs {
		if oid == pgtype.ByteaOID { // raw bytes (as text, byteain would read escapes)
			if st.formats == nil {
				st.formats = make([]int16, len(sd.ParamOIDs))
			}
			st.formats[i] = pgtype.BinaryFormatCode
		}
	}
	return st, nil
}

// directStmt is a prepared statement run on pgconn by the workloads'
// DropRows and Affected, and through pgx's stdlib connection by
// database/sql's QueryContext and ExecContext (values decoded as ever).
type directStmt struct {
	conn    *directConn
	sd      *pgconn.StatementDescription
	params  [][]byte // the call's encoded parameters, reused
	buf     []byte   // their bytes (never nil: a nil parameter is NULL)
	ends    []int    // where each parameter ends in buf (-1: NULL), reused
	formats []int16  // binary for bytea parameters; nil: all text

	// exchange's messages, reused (the frontend encodes them as sent).
	bind    pgproto3.Bind
	execute pgproto3.Execute
	sync    pgproto3.Sync
}

func (s *directStmt) Close() error {
	if s.conn.Conn.Conn().IsClosed() {
		return driver.ErrBadConn
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.conn.Conn.Conn().Deallocate(ctx, s.sd.Name)
}

func (s *directStmt) NumInput() int { return len(s.sd.ParamOIDs) }

func (s *directStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *directStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *directStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.conn.Conn.ExecContext(ctx, s.sd.Name, args)
}

func (s *directStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.conn.Conn.QueryContext(ctx, s.sd.Name, args)
}

// DropRows runs the statement and reads its result without decoding it.
func (s *directStmt) DropRows(ctx context.Context, args []driver.NamedValue) error {
	_, err := s.run(ctx, args)
	return err
}

// Affected runs the statement and returns the rows it changed.
func (s *directStmt) Affected(ctx context.Context, args []driver.NamedValue) (int64, error) {
	return s.run(ctx, args)
}

// exchangeMaxParams is the most parameter bytes a statement sends through
// exchange: far below a loopback socket's send buffer, so its write cannot
// wait on a server that is itself waiting to write to us (pgconn's guard
// against that deadlock, which larger ones keep).
const exchangeMaxParams = 16 << 10

func (s *directStmt) run(ctx context.Context, args []driver.NamedValue) (int64, error) {
	pc := s.conn.Conn.Conn().PgConn()
	if pc.IsClosed() {
		return 0, driver.ErrBadConn
	}
	if err := s.encode(args); err != nil {
		return 0, err
	}
	if ctx.Done() == nil && len(s.buf) <= exchangeMaxParams && !pc.IsBusy() {
		return s.exchange(pc)
	}
	// Cancellable or large: pgconn's own path, which watches the context
	// and guards a long write.
	tag, err := pc.ExecStatement(ctx, s.sd, s.params, s.formats, nil).Close()
	if err != nil && pgconn.SafeToRetry(err) {
		err = driver.ErrBadConn // nothing was sent: database/sql discards the connection (stdlib's rule)
	}
	return tag.RowsAffected(), err
}

// exchange sends Bind, Execute and Sync in one write and reads the reply
// up to ReadyForQuery through pgconn (which keeps the transaction status,
// notices and parameter changes, and closes the connection on a read
// error), returning the rows the statement changed. pgconn's
// ExecStatement does the same plus, around every write, a 15-ms timer
// armed and stopped (to start a reader should the write stall), and makes
// each reply's command tag a string: measured at 64 threads, exchange
// takes 15% less user CPU a statement, no change shown in the total
// (docs/performance.md).
func (s *directStmt) exchange(pc *pgconn.PgConn) (int64, error) {
	fe := pc.Frontend()
	s.bind.PreparedStatement, s.bind.ParameterFormatCodes, s.bind.Parameters = s.sd.Name, s.formats, s.params
	fe.SendBind(&s.bind)
	fe.SendExecute(&s.execute)
	fe.SendSync(&s.sync)
	if err := fe.Flush(); err != nil {
		closePgConn(pc) // how much of the statement went out is unknown
		return 0, fmt.Errorf("sending the statement: %w", err)
	}
	var affected int64
	var failed error
	for {
		msg, err := pc.ReceiveMessage(context.Background())
		if err != nil {
			closePgConn(pc) // mid-reply: the connection cannot be used again
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // not pgconn's "safe to retry": the statement went out
			}
			return 0, fmt.Errorf("reading the reply: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CommandComplete:
			affected = tagRows(m.CommandTag)
		case *pgproto3.ErrorResponse:
			if failed == nil {
				failed = pgconn.ErrorResponseToPgError(m)
			}
		case *pgproto3.ReadyForQuery:
			return affected, failed
		}
	}
}

// tagRows is the number at the end of a command tag ("UPDATE 1",
// "INSERT 0 1", "SELECT 10"; 0 without one), as pgconn's
// CommandTag.RowsAffected reads it, without making the tag a string.
func tagRows(tag []byte) int64 {
	var n, mult int64 = 0, 1
	for i := len(tag) - 1; i >= 0 && tag[i] >= '0' && tag[i] <= '9'; i-- {
		n += int64(tag[i]-'0') * mult
		mult *= 10
	}
	return n
}

// closePgConn closes a connection left mid-exchange, within a second.
func closePgConn(pc *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pc.Close(ctx)
}

// encode writes args as text parameters (the server parses each as its
// parameter's type, as for libpq's): the workloads' int64, string and
// []byte values, and NULL; a bytea parameter's bytes go as they are
// (formats).
func (s *directStmt) encode(args []driver.NamedValue) error {
	s.buf, s.params, s.ends = s.buf[:0], s.params[:0], s.ends[:0]
	for _, a := range args {
		switch v := a.Value.(type) {
		case int64:
			s.buf = strconv.AppendInt(s.buf, v, 10)
		case string:
			s.buf = append(s.buf, v...)
		case []byte:
			s.buf = append(s.buf, v...)
		case nil:
			s.ends = append(s.ends, -1)
			continue
		default:
			return fmt.Errorf("postgres: parameter %d: %T is not a workload value (int64, string, []byte)", a.Ordinal, a.Value)
		}
		s.ends = append(s.ends, len(s.buf))
	}
	start := 0
	for _, end := range s.ends {
		if end < 0 {
			s.params = append(s.params, nil)
			continue
		}
		s.params = append(s.params, s.buf[start:end:end])
		start = end
	}
	return nil
}

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}
