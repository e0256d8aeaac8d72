package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	dbdriver "github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/internal/testdb"
)

func TestTagRowsReadsTheCountAsPgconn(t *testing.T) {
	for _, tag := range []string{"UPDATE 3", "INSERT 0 1", "SELECT 10", "DELETE 0", "BEGIN", "", "COPY 1234567"} {
		if got, want := tagRows([]byte(tag)), pgconn.NewCommandTag(tag).RowsAffected(); got != want {
			t.Errorf("%q: %d, want pgconn's %d", tag, got, want)
		}
	}
}

// The workloads' statements, sent by exchange (a background context,
// small parameters) and by pgconn's own path (a cancellable context, or
// parameters over exchangeMaxParams), change the same rows and report the
// same counts; a failed statement returns the server's error and leaves
// the connection ready for the next, with pgconn's transaction status
// kept (so a transaction's failure is still seen by its ROLLBACK).
func TestExchangeRunsStatementsAsPgconn(t *testing.T) {
	srv := testdb.StartPostgres(t)
	ctx := context.Background()
	db, err := Open(srv.Endpoint(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc := c.(dbdriver.SQLConn).SQL()
	if _, err := sc.ExecContext(ctx, "CREATE TABLE xt (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	cancellable, cancel := context.WithCancel(ctx)
	defer cancel()
	err = sc.Raw(func(dc any) error {
		conn := dc.(*directConn)
		prep := func(q string) *directStmt {
			st, err := conn.PrepareContext(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return st.(*directStmt)
		}
		ins, upd, sel := prep("INSERT INTO xt VALUES ($1, $2)"), prep("UPDATE xt SET v = $1 WHERE id <= $2"), prep("SELECT v FROM xt WHERE id > $1")
		args := func(v ...any) []driver.NamedValue {
			nv := make([]driver.NamedValue, len(v))
			for i, x := range v {
				nv[i] = driver.NamedValue{Ordinal: i + 1, Value: x}
			}
			return nv
		}
		for id := int64(1); id <= 5; id++ {
			runCtx := ctx
			if id%2 == 0 {
				runCtx = cancellable // pgconn's path
			}
			if n, err := ins.Affected(runCtx, args(id, "a")); n != 1 || err != nil {
				t.Fatalf("insert %d: %d rows, %v", id, n, err)
			}
		}
		for _, runCtx := range []context.Context{ctx, cancellable} {
			if n, err := upd.Affected(runCtx, args("b", int64(3))); n != 3 || err != nil {
				t.Fatalf("update: %d rows, %v (want 3)", n, err)
			}
		}
		if n, err := upd.Affected(ctx, args("c", int64(0))); n != 0 || err != nil {
			t.Fatalf("update of no row: %d rows, %v", n, err)
		}
		if err := sel.DropRows(ctx, args(int64(1))); err != nil {
			t.Fatal(err)
		}
		// exchange's per-statement work: nothing allocated (pgconn's path
		// makes each reply's command tag a string, and arms a timer).
		one := args(int64(4))
		if a := testing.AllocsPerRun(200, func() { _ = sel.DropRows(ctx, one) }); a != 0 {
			t.Errorf("%.1f allocations a statement through exchange, want 0", a)
		}
		big := strings.Repeat("x", exchangeMaxParams+1) // pgconn's path
		if n, err := upd.Affected(ctx, args(big, int64(1))); n != 1 || err != nil {
			t.Fatalf("large update: %d rows, %v", n, err)
		}

		_, err := ins.Affected(ctx, args(int64(1), "dup"))
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" {
			t.Fatalf("duplicate key: %v, want the server's unique violation", err)
		}
		pc := conn.Conn.Conn().PgConn()
		if pc.IsClosed() || pc.TxStatus() != 'I' {
			t.Fatalf("after the error: closed %v, status %c", pc.IsClosed(), pc.TxStatus())
		}
		if err := sel.DropRows(ctx, args(int64(0))); err != nil {
			t.Fatalf("the next statement: %v", err)
		}

		if _, err := conn.ExecContext(ctx, "BEGIN", nil); err != nil {
			t.Fatal(err)
		}
		if n, err := upd.Affected(ctx, args("t", int64(5))); n != 5 || err != nil {
			t.Fatalf("update in a transaction: %d rows, %v", n, err)
		}
		if pc.TxStatus() != 'T' {
			t.Fatalf("in a transaction: status %c", pc.TxStatus())
		}
		if _, err := ins.Affected(ctx, args(int64(2), "dup")); err == nil {
			t.Fatal("a duplicate key in a transaction succeeded")
		}
		if pc.TxStatus() != 'E' {
			t.Fatalf("after a failed statement in a transaction: status %c, want E", pc.TxStatus())
		}
		if _, err := conn.ExecContext(ctx, "ROLLBACK", nil); err != nil {
			t.Fatal(err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var tv, bv, big int
	if err := sc.QueryRowContext(ctx, "SELECT count(*) FILTER (WHERE v = 't'), count(*) FILTER (WHERE v = 'b'), count(*) FILTER (WHERE length(v) > 1000) FROM xt").Scan(&tv, &bv, &big); err != nil {
		t.Fatal(err)
	}
	if tv != 0 || bv != 2 || big != 1 {
		t.Fatalf("rows: %d 't' (rolled back: want 0), %d 'b' (want 2), %d large (want 1)", tv, bv, big)
	}
}
