package tpcc

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"regexp"
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

//go:embed procedures_mysql.sql
var proceduresMySQL string

// procedure is one stored procedure: its name and CREATE statement.
type procedure struct{ name, create string }

var procedures = parseProcedures(proceduresMySQL)

var procNameRE = regexp.MustCompile(`CREATE PROCEDURE (\w+)\(`)

func parseProcedures(src string) []procedure {
	var out []procedure
	for _, part := range strings.Split(src, "\n-- next procedure\n") {
		m := procNameRE.FindStringSubmatch(part)
		if m == nil {
			panic("tpcc: a procedure without CREATE PROCEDURE in procedures_mysql.sql")
		}
		out = append(out, procedure{name: m[1], create: strings.TrimSpace(part[strings.Index(part, "CREATE PROCEDURE"):])})
	}
	if len(out) != int(numTypes) {
		panic("tpcc: procedures_mysql.sql must hold the five transactions")
	}
	return out
}

// callSQL is the CALL of transaction t's procedure with its parameters.
func callSQL(t txnType) string {
	n := [numTypes]int{newOrder: 9, payment: 9, orderStatus: 5, delivery: 3, stockLevel: 3}[t]
	return "CALL " + procedures[t].name + "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// createMu serialises the creation of missing procedures by the threads
// of one dbduel (a CREATE races another's otherwise).
var createMu sync.Mutex

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// procedureExists says whether dbduel's procedure name is in the current
// database.
func procedureExists(ctx context.Context, db execer, name string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = ?", name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for procedure %s: %w", name, err)
	}
	return n > 0, nil
}

// createProcedures creates dbduel's procedures in the current database;
// replace drops and creates them again (prepare: a newer dbduel's
// definitions win), otherwise only missing ones are created.
func createProcedures(ctx context.Context, db execer, replace bool) error {
	createMu.Lock()
	defer createMu.Unlock()
	for _, p := range procedures {
		if !replace {
			exists, err := procedureExists(ctx, db, p.name)
			if err != nil {
				return err
			}
			if exists {
				continue
			}
		}
		if _, err := db.ExecContext(ctx, "DROP PROCEDURE IF EXISTS "+p.name); err != nil {
			return fmt.Errorf("drop procedure %s: %w", p.name, err)
		}
		if _, err := db.ExecContext(ctx, p.create); err != nil {
			return fmt.Errorf("create procedure %s: %w", p.name, err)
		}
	}
	return nil
}

// dropProcedures drops dbduel's own procedures (and no other).
func dropProcedures(ctx context.Context, db *sql.DB) ([]string, error) {
	var dropped []string
	for _, p := range procedures {
		exists, err := procedureExists(ctx, db, p.name)
		if err != nil {
			return dropped, err
		}
		if !exists {
			continue
		}
		if _, err := db.ExecContext(ctx, "DROP PROCEDURE "+p.name); err != nil {
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
	if err := createProcedures(ctx, wk.conn, false); err != nil {
		return err
	}
	for t := range numTypes {
		s, err := wk.conn.PrepareContext(ctx, callSQL(t))
		if err != nil {
			return fmt.Errorf("prepare %s: %w", callSQL(t), err)
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
