package oltp

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/dbduel/dbduel/engine/workload"
)

// Statements run on the driver's connection (sql.Conn.Raw), not through
// database/sql's Stmt and Rows. Why: per query, that machinery takes the
// DB-wide mutex twice to track statement dependencies in maps, converts the
// arguments, and allocates a Rows with its own locks; on a 2-core host every
// client microsecond is taken from the server. The driver's own behaviour
// (protocol, errors, a lost connection marked bad) is unchanged: Raw hands
// the error back to database/sql, which discards a bad connection as before.

// call is the statement in flight, set by run and read by execOnDriver
// (a field, not a closure, so a query allocates no closure).
type call struct {
	ctx context.Context
	s   *stmt
	c   *workload.Counts
}

// run executes s and classifies it: a result set is a read; otherwise a
// write if rows were affected, else other (sysbench's MySQL driver rule).
// Arguments are int64, string or []byte: values the driver takes as they are.
func (wk *worker) run(ctx context.Context, s *stmt, c *workload.Counts, args ...any) error {
	wk.nv = wk.nv[:0]
	for i, a := range args {
		wk.nv = append(wk.nv, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	wk.cur = call{ctx: ctx, s: s, c: c}
	err := wk.conn.Raw(wk.onDriver)
	wk.cur = call{}
	return err
}

// execOnDriver runs wk.cur on the driver connection dc.
func (wk *worker) execOnDriver(dc any) error {
	ctx, s, c := wk.cur.ctx, wk.cur.s, wk.cur.c
	if s.fast != nil {
		return wk.execFast(ctx, s, c)
	}
	if s.read {
		rows, err := wk.query(ctx, dc, s)
		if err != nil {
			return err
		}
		// The rows are read off the wire but not decoded: the driver's
		// Close skips them packet by packet (an error packet among them
		// still fails the statement). sysbench does the same: it stores
		// each result and frees it without looking at a value.
		if err := rows.Close(); err != nil {
			return err
		}
		c.Reads++
		return nil
	}
	res, err := wk.exec(ctx, dc, s)
	if err != nil {
		return err
	}
	n, _ := res.RowsAffected()
	countDML(c, n)
	return nil
}

// countDML files a statement without a result set by sysbench's MySQL
// driver rule: a write if it changed rows, else other.
func countDML(c *workload.Counts, affected int64) {
	if affected > 0 {
		c.Writes++
	} else {
		c.Other++
	}
}

// execFast runs s on its driver's fast path (fastStmt), classified as
// execOnDriver does.
func (wk *worker) execFast(ctx context.Context, s *stmt, c *workload.Counts) error {
	if s.read {
		if err := s.fast.DropRows(ctx, wk.nv); err != nil {
			return err
		}
		c.Reads++
		return nil
	}
	n, err := s.fast.Affected(ctx, wk.nv)
	if err != nil {
		return err
	}
	countDML(c, n)
	return nil
}

// query runs a read: the prepared statement, or the text through the
// connection; a text the driver cannot send as text (driver.ErrSkip,
// database/sql's rule too) is prepared for this call. Its rows stay
// readable after that statement is closed, as database/sql relies on.
func (wk *worker) query(ctx context.Context, dc any, s *stmt) (driver.Rows, error) {
	if s.ps != nil {
		return s.ps.QueryContext(ctx, wk.nv)
	}
	if q, ok := dc.(driver.QueryerContext); ok {
		rows, err := q.QueryContext(ctx, s.query, wk.nv)
		if err != driver.ErrSkip {
			return rows, err
		}
	}
	ps, err := prepareOn(ctx, dc, s.query)
	if err != nil {
		return nil, err
	}
	defer ps.Close()
	return ps.QueryContext(ctx, wk.nv)
}

// exec runs a statement without a result set, as query does a read.
func (wk *worker) exec(ctx context.Context, dc any, s *stmt) (driver.Result, error) {
	if s.ps != nil {
		return s.ps.ExecContext(ctx, wk.nv)
	}
	if e, ok := dc.(driver.ExecerContext); ok {
		res, err := e.ExecContext(ctx, s.query, wk.nv)
		if err != driver.ErrSkip {
			return res, err
		}
	}
	ps, err := prepareOn(ctx, dc, s.query)
	if err != nil {
		return nil, err
	}
	defer ps.Close()
	return ps.ExecContext(ctx, wk.nv)
}

// ctxStmt is a driver statement that runs with a context and named values,
// as go-sql-driver's does; checked once at prepare, not per query.
type ctxStmt interface {
	driver.Stmt
	driver.StmtQueryContext
	driver.StmtExecContext
}

// fastStmt is a prepared statement its driver runs without building what
// the workloads drop: rows read off the wire undecoded, the parameters
// (int64, string, []byte) sent as they are (PostgreSQL's, whose stdlib
// path decodes every row). Checked once at prepare, not per query.
type fastStmt interface {
	DropRows(ctx context.Context, args []driver.NamedValue) error
	Affected(ctx context.Context, args []driver.NamedValue) (int64, error)
}

// prepareOn prepares query on the driver connection dc.
func prepareOn(ctx context.Context, dc any, query string) (ctxStmt, error) {
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("the driver's connection %T cannot prepare with a context", dc)
	}
	ps, err := pc.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cs, ok := ps.(ctxStmt)
	if !ok {
		ps.Close()
		return nil, fmt.Errorf("the driver's statement %T cannot run with a context", ps)
	}
	return cs, nil
}
