package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/dbduel/dbduel/engine/workload"
)

// The procedures mode (HammerDB's way): each transaction is one CALL of a
// stored procedure of dbduel's own, created at prepare, or at run when
// missing; the client draws the inputs as the statements mode does.

const (
	modeProcedures = "procedures"
	modeStatements = "statements"
)

// createMu serialises the creation of missing procedures by the threads
// of one dbduel (a CREATE races another's otherwise).
var createMu sync.Mutex

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// procedureExists says whether dbduel's procedure name is in the current
// database (schema, on PostgreSQL).
func procedureExists(ctx context.Context, db execer, d *dialect, name string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, d.routineSQL, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for procedure %s: %w", name, err)
	}
	return n > 0, nil
}

// createProcedures creates dbduel's procedures in the current database;
// replace drops and creates them again (prepare: a newer dbduel's
// definitions win), otherwise only missing ones are created.
func createProcedures(ctx context.Context, db execer, d *dialect, replace bool) error {
	createMu.Lock()
	defer createMu.Unlock()
	for _, p := range d.procedures {
		if !replace {
			exists, err := procedureExists(ctx, db, d, p.name)
			if err != nil {
				return err
			}
			if exists {
				continue
			}
		}
		if _, err := db.ExecContext(ctx, d.dropVerb+" IF EXISTS "+p.name); err != nil {
			return fmt.Errorf("drop procedure %s: %w", p.name, err)
		}
		if _, err := db.ExecContext(ctx, p.create); err != nil {
			return fmt.Errorf("create procedure %s: %w", p.name, err)
		}
	}
	return nil
}

// dropProcedures drops dbduel's own procedures (and no other).
func dropProcedures(ctx context.Context, db *sql.DB, d *dialect) ([]string, error) {
	var dropped []string
	for _, p := range d.procedures {
		exists, err := procedureExists(ctx, db, d, p.name)
		if err != nil {
			return dropped, err
		}
		if !exists {
			continue
		}
		if _, err := db.ExecContext(ctx, d.dropVerb+" "+p.name); err != nil {
			return dropped, fmt.Errorf("drop procedure %s: %w", p.name, err)
		}
		dropped = append(dropped, "procedure "+p.name)
	}
	return dropped, nil
}

// prepareCalls prepares the five CALLs on the thread's connection, first
// creating what is missing (tables prepared by an older dbduel; a CALL of a
// missing procedure prepares fine and fails only when run).
func (wk *worker) prepareCalls(ctx context.Context) error {
	if err := createProcedures(ctx, wk.conn, wk.d, false); err != nil {
		return err
	}
	for t := range numTypes {
		s, err := wk.conn.PrepareContext(ctx, wk.d.callSQL(t))
		if err != nil {
			return fmt.Errorf("prepare %s: %w", wk.d.callSQL(t), err)
		}
		wk.calls[t] = s
	}
	return nil
}

// call runs transaction t as one CALL; rolledBack is New-Order's 1%
// rolled back inside the procedure. The CALL is the thread's one query.
func (wk *worker) call(ctx context.Context, t txnType, c *workload.Counts) (rolledBack bool, err error) {
	args := wk.callArgs(t)
	var rb int
	c.Other++
	if err := wk.calls[t].QueryRowContext(ctx, args...).Scan(&rb); err != nil {
		return false, err
	}
	return rb == 1, nil
}

// callArgs draws transaction t's inputs, as the statements mode draws them.
func (wk *worker) callArgs(t txnType) []any {
	W := wk.w.o.Warehouses
	switch t {
	case newOrder:
		in := wk.newOrderInput()
		items, supply, qty := make([]string, len(in.lines)), make([]string, len(in.lines)), make([]string, len(in.lines))
		for i, l := range in.lines {
			items[i], supply[i], qty[i] = strconv.Itoa(l.item), strconv.Itoa(l.supply), strconv.Itoa(l.qty)
		}
		return []any{in.w, in.d, in.cid, len(in.lines), in.allLocal, strings.Join(items, ","), strings.Join(supply, ","), strings.Join(qty, ","), now()}
	case payment:
		w, d := wk.g.uniform(1, W), wk.g.uniform(1, districtsPerW)
		cw, cd := w, d
		if W > 1 && wk.g.uniform(1, 100) <= 15 {
			cw, cd = wk.otherWarehouse(w), wk.g.uniform(1, districtsPerW)
		}
		amount := decimal(int64(wk.g.uniform(100, 500000)), 2)
		cid, byName, last := wk.customerDraw()
		return []any{w, d, cw, cd, cid, byName, last, amount, now()}
	case orderStatus:
		w, d := wk.g.uniform(1, W), wk.g.uniform(1, districtsPerW)
		cid, byName, last := wk.customerDraw()
		return []any{w, d, cid, byName, last}
	case delivery:
		return []any{wk.g.uniform(1, W), wk.g.uniform(1, 10), now()}
	}
	return []any{wk.g.uniform(1, W), wk.g.uniform(1, districtsPerW), wk.g.uniform(10, 20)}
}

// customerDraw is clauses 2.5.1.2 and 2.6.1.2's choice: 60% by last name,
// 40% by id (the id is also the procedure's fallback for a name with no
// customer, which the load never leaves).
func (wk *worker) customerDraw() (cid, byName int, last string) {
	if wk.g.uniform(1, 100) > 60 {
		return wk.g.nurand(1023, 1, customersPerD, cRunID), 0, ""
	}
	return wk.g.nurand(1023, 1, customersPerD, cRunID), 1, lastName(wk.g.nurand(255, 0, 999, cRunLast))
}
