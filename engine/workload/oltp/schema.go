package oltp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/sbrand"
	"golang.org/x/sync/errgroup"
)

// Templates of oltp_common.lua: 11-digit groups separated by dashes.
const (
	cTemplate   = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########" // 119 chars
	padTemplate = "###########-###########-###########-###########-###########"                                                             // 59 chars
)

// The templates compiled once for the loads' generators.
var cDigits, padDigits = sbrand.CompileDigits(cTemplate), sbrand.CompileDigits(padTemplate)

// bulkPacketSize is sysbench's flush threshold for multi-row INSERTs.
const bulkPacketSize = 512 * 1024

func tableName(i int) string { return "sbtest" + strconv.Itoa(i) }

// createSQL is oltp_common.lua's CREATE TABLE for the MySQL or pgsql driver.
func (w *oltpWorkload) createSQL(i int, pg bool) string {
	if pg {
		idDef := "SERIAL"
		if !w.o.AutoInc {
			idDef = "INTEGER NOT NULL"
		}
		return fmt.Sprintf("CREATE TABLE sbtest%d(\n  id %s,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n)  ", i, idDef)
	}
	idDef := "INTEGER NOT NULL AUTO_INCREMENT"
	if !w.o.AutoInc {
		idDef = "INTEGER NOT NULL"
	}
	idIndex := "PRIMARY KEY"
	if w.o.Secondary {
		idIndex = "KEY xid"
	}
	return fmt.Sprintf("CREATE TABLE sbtest%d(\n  id %s,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  %s (id)\n) /*! ENGINE = %s */ ",
		i, idDef, idIndex, w.o.StorageEngine)
}

func bulkCreateSQL(i int) string {
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS sbtest%d (\n  id INTEGER NOT NULL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  PRIMARY KEY (id))", i)
}

// tableCount is how many sbtestN tables the workload uses.
func (w *oltpWorkload) tableCount(threads int) int {
	if w.name == "bulk_insert" {
		return threads // one table per thread, as bulk_insert.lua
	}
	return w.o.Tables
}

// column is one row of information_schema.COLUMNS.
type column struct{ name, colType, extra string }

// shapeOf reads a table's columns and indexes; exists is false when the table is absent.
func shapeOf(ctx context.Context, t sqlTarget, table string) (cols []column, indexes map[string][]string, exists bool, err error) {
	if t.pg {
		return pgShapeOf(ctx, t.db, table)
	}
	db := t.db
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE, EXTRA FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, table)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.colType, &c.extra); err != nil {
			return nil, nil, false, err
		}
		c.colType = strings.ToLower(c.colType)
		c.extra = strings.ToLower(c.extra)
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, false, err
	}
	if len(cols) == 0 {
		return nil, nil, false, nil
	}
	indexes, err = indexesOf(ctx, db, `SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX`, table)
	return cols, indexes, err == nil, err
}

// indexesOf reads (index name, column) rows in column order into a map.
func indexesOf(ctx context.Context, db *sql.DB, query, table string) (map[string][]string, error) {
	rows, err := db.QueryContext(ctx, query, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	indexes := map[string][]string{}
	for rows.Next() {
		var idx, col string
		if err := rows.Scan(&idx, &col); err != nil {
			return nil, err
		}
		indexes[idx] = append(indexes[idx], col)
	}
	return indexes, rows.Err()
}

// isIntType accepts int and int(11): MySQL 8 drops the display width, MariaDB keeps it.
func isIntType(t string) bool { return t == "int" || strings.HasPrefix(t, "int(") }

// sysbenchShape says why a table is not one of sysbench's OLTP variants, or "" if it is.
// Accepted variants: auto_inc on/off, --secondary (KEY xid), with or without the k index.
func sysbenchShape(cols []column, indexes map[string][]string) string {
	want := []string{"id", "k", "c", "pad"}
	if len(cols) != len(want) {
		return fmt.Sprintf("has %d columns, sysbench's has 4 (id, k, c, pad)", len(cols))
	}
	for i, c := range cols {
		if c.name != want[i] {
			return fmt.Sprintf("column %d is %q, sysbench's is %q", i+1, c.name, want[i])
		}
	}
	if !isIntType(cols[0].colType) || !isIntType(cols[1].colType) || cols[2].colType != "char(120)" || cols[3].colType != "char(60)" {
		return fmt.Sprintf("column types %s/%s/%s/%s differ from sysbench's int/int/char(120)/char(60)",
			cols[0].colType, cols[1].colType, cols[2].colType, cols[3].colType)
	}
	hasID := false
	for name, idxCols := range indexes {
		switch {
		case len(idxCols) == 1 && idxCols[0] == "id" && (name == "PRIMARY" || name == "xid"):
			hasID = true
		case len(idxCols) == 1 && idxCols[0] == "k" && strings.HasPrefix(name, "k_"):
		default:
			return fmt.Sprintf("has index %s(%s), not one of sysbench's", name, strings.Join(idxCols, ","))
		}
	}
	if !hasID {
		return "has no index on id"
	}
	return ""
}

// bulkShape says why a table is not bulk_insert.lua's sbtestN(id, k), or "" if it is.
func bulkShape(cols []column, indexes map[string][]string) string {
	if len(cols) != 2 || cols[0].name != "id" || cols[1].name != "k" || !isIntType(cols[0].colType) || !isIntType(cols[1].colType) {
		return "is not bulk_insert's (id INTEGER, k INTEGER) table"
	}
	if len(indexes) != 1 || len(indexes["PRIMARY"]) != 1 || indexes["PRIMARY"][0] != "id" {
		return "does not have bulk_insert's PRIMARY KEY (id) alone"
	}
	return ""
}

func (w *oltpWorkload) shapeProblem(cols []column, idx map[string][]string) string {
	if w.name == "bulk_insert" {
		return bulkShape(cols, idx)
	}
	return sysbenchShape(cols, idx)
}

// Check decides whether existing tables can be reused: every table present
// with sysbench's shape and the expected row count.
func (w *oltpWorkload) check(ctx context.Context, st sqlTarget, threads int) (workload.TableState, error) {
	db := st.db
	n := w.tableCount(threads)
	present := 0
	for i := 1; i <= n; i++ {
		t := tableName(i)
		cols, idx, exists, err := shapeOf(ctx, st, t)
		if err != nil {
			return workload.TableState{}, fmt.Errorf("inspect %s: %w", t, err)
		}
		if !exists {
			continue
		}
		present++
		if p := w.shapeProblem(cols, idx); p != "" {
			return workload.TableState{Reason: fmt.Sprintf("table %s exists but %s; dbduel will not touch it", t, p)}, nil
		}
		var rows uint64
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t).Scan(&rows); err != nil {
			return workload.TableState{}, fmt.Errorf("count %s: %w", t, err)
		}
		if reason := w.sizeProblem(t, rows); reason != "" {
			return workload.TableState{Reason: reason}, nil
		}

	}
	switch {
	case present == 0:
		return workload.TableState{Missing: true}, nil
	case present < n:
		return workload.TableState{Reason: fmt.Sprintf("only %d of the %d sbtestN tables exist", present, n)}, nil
	}
	return workload.TableState{Reusable: true}, nil
}

// sizeProblem compares a table's row count with what the script expects.
// oltp_insert only grows tables and oltp_delete only shrinks them, so those
// accept more or fewer rows; bulk_insert needs empty tables (it inserts ids from 1).
func (w *oltpWorkload) sizeProblem(t string, rows uint64) string {
	want := uint64(w.o.TableSize)
	if w.name == "oltp_insert" && !w.o.AutoInc {
		want = 0 // oltp_insert prepares empty tables without auto_inc
	}
	switch {
	case w.name == "bulk_insert" && rows != 0:
		return fmt.Sprintf("table %s holds %d rows; bulk_insert needs empty tables", t, rows)
	case w.name == "bulk_insert":
		return ""
	case w.name == "oltp_insert" && rows >= want, w.name == "oltp_delete" && rows <= want:
		return ""
	case rows != want:
		return fmt.Sprintf("table %s holds %d rows, --table-size is %d", t, rows, want)
	}
	return ""
}

// Prepare creates and loads the tables, tables spread across threads as
// sysbench's parallel prepare does; rows go in 512 KiB multi-row INSERTs.
func (w *oltpWorkload) prepare(ctx context.Context, st sqlTarget, threads int, progress func(workload.Progress)) error {
	db := st.db
	if w.name == "bulk_insert" {
		for i := 1; i <= threads; i++ {
			if _, err := db.ExecContext(ctx, bulkCreateSQL(i)); err != nil {
				return fmt.Errorf("create %s: %w", tableName(i), err)
			}
		}
		return nil
	}
	size := w.o.TableSize
	if w.name == "oltp_insert" && !w.o.AutoInc {
		size = 0 // ids drawn later by sysbench.rand.unique() must not collide
	}
	total := uint64(size) * uint64(w.o.Tables)
	var done atomic.Uint64
	var mu sync.Mutex
	report := func(table string) {
		if progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		progress(workload.Progress{Rows: done.Load(), TotalRows: total, Table: table})
	}
	g, gctx := errgroup.WithContext(ctx)
	workers := min(threads, w.o.Tables)
	for t := 0; t < workers; t++ {
		g.Go(func() error {
			rng := sbrand.New(w.o.Rand, w.seed+uint64(t)*7919+1)
			for i := t + 1; i <= w.o.Tables; i += workers {
				if err := w.loadTable(gctx, st, rng, i, size, &done, report); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

func (w *oltpWorkload) loadTable(ctx context.Context, st sqlTarget, rng *sbrand.Rand, i, size int, done *atomic.Uint64, report func(string)) error {
	db := st.db
	t := tableName(i)
	if _, err := db.ExecContext(ctx, w.createSQL(i, st.pg)); err != nil {
		return fmt.Errorf("create %s: %w", t, err)
	}
	if st.bulk != nil {
		err := w.copyTable(ctx, st.bulk, st.pg, rng, t, size, done, report)
		if err == nil {
			return w.secondaryIndex(ctx, db, i)
		}
		if !errors.Is(err, enginedriver.ErrNoBulkLoad) {
			return err
		}
		// The server refuses the bulk path: the same rows with INSERTs.
	}
	head := "INSERT INTO " + t + "(k, c, pad) VALUES"
	if !w.o.AutoInc {
		head = "INSERT INTO " + t + "(id, k, c, pad) VALUES"
	}
	var buf []byte
	rows := 0
	flush := func() error {
		if rows == 0 {
			return nil
		}
		if _, err := db.ExecContext(ctx, string(buf)); err != nil {
			return fmt.Errorf("load %s: %w", t, err)
		}
		done.Add(uint64(rows))
		report(t)
		rows = 0
		return nil
	}
	c := make([]byte, len(cTemplate))
	pad := make([]byte, len(padTemplate))
	for r := 1; r <= size; r++ {
		rng.FillDigits(c, cDigits)
		rng.FillDigits(pad, padDigits)
		k := rng.Default(1, uint32(size))
		if rows == 0 {
			buf = append(buf[:0], head...)
		} else {
			buf = append(buf, ',')
		}
		buf = append(buf, '(')
		if !w.o.AutoInc {
			buf = strconv.AppendInt(buf, int64(r), 10)
			buf = append(buf, ", "...)
		}
		buf = strconv.AppendUint(buf, uint64(k), 10)
		buf = append(buf, ", '"...)
		buf = append(buf, c...)
		buf = append(buf, "', '"...)
		buf = append(buf, pad...)
		buf = append(buf, "')"...)
		rows++
		if len(buf) >= bulkPacketSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return w.secondaryIndex(ctx, db, i)
}

// secondaryIndex makes the k index, last, as oltp_common.lua does.
func (w *oltpWorkload) secondaryIndex(ctx context.Context, db *sql.DB, i int) error {
	if !w.o.CreateSecondary {
		return nil
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE INDEX k_%d ON sbtest%d(k)", i, i)); err != nil {
		return fmt.Errorf("index %s: %w", tableName(i), err)
	}
	return nil
}

// copyTable loads a table through the driver's bulk path (COPY): the same
// rows, from the same generator, as the INSERTs would hold.
func (w *oltpWorkload) copyTable(ctx context.Context, bulk enginedriver.BulkLoader, pg bool, rng *sbrand.Rand, t string, size int, done *atomic.Uint64, report func(string)) error {
	// MySQL: the ids go explicitly even with auto_inc: an empty table's
	// counter would give the same 1..N (and ends at N+1 either way), and
	// the server does less per row (measured: about 5% of its CPU).
	cols := []string{"id", "k", "c", "pad"}
	if w.o.AutoInc && pg { // PostgreSQL's SERIAL would not advance: its sequence gives the ids
		cols = []string{"k", "c", "pad"}
	}
	c := make([]byte, len(cTemplate))
	pad := make([]byte, len(padTemplate))
	r := 0
	row := make([]any, len(cols))
	// The buffers are reused: a loader takes each row's values before it
	// asks for the next row (BulkLoader's contract); set once, they need
	// no conversion per row.
	row[len(cols)-2], row[len(cols)-1] = c, pad
	_, err := bulk.CopyRows(ctx, t, cols, func() ([]any, bool) {
		if r == size {
			return nil, false
		}
		r++
		rng.FillDigits(c, cDigits)
		rng.FillDigits(pad, padDigits)
		k := int64(rng.Default(1, uint32(size)))
		if len(cols) == 4 {
			row[0], row[1] = int64(r), k
		} else {
			row[0] = k
		}
		if r%10000 == 0 {
			done.Add(10000)
			report(t)
		}
		return row, true
	})
	if err != nil {
		return fmt.Errorf("load %s: %w", t, err)
	}
	done.Add(uint64(r % 10000))
	report(t)
	return nil
}

// Cleanup drops the run's sbtestN tables that have the workload's shape and
// leaves any other table alone, naming it.
func (w *oltpWorkload) cleanup(ctx context.Context, st sqlTarget, threads int) ([]string, error) {
	db := st.db
	var dropped []string
	var refused []string
	for i := 1; i <= w.tableCount(threads); i++ {
		t := tableName(i)
		cols, idx, exists, err := shapeOf(ctx, st, t)
		if err != nil {
			return dropped, fmt.Errorf("inspect %s: %w", t, err)
		}
		if !exists {
			continue
		}
		if p := w.shapeProblem(cols, idx); p != "" {
			refused = append(refused, t+" "+p)
			continue
		}
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return dropped, fmt.Errorf("drop %s: %w", t, err)
		}
		dropped = append(dropped, t)
	}
	if len(refused) > 0 {
		return dropped, fmt.Errorf("left alone: %s", strings.Join(refused, "; "))
	}
	return dropped, nil
}

// pgShapeOf reads a table's columns and indexes from PostgreSQL's catalogs
// in MySQL's terms (int, char(120); the primary key's index as PRIMARY), so
// one shape check serves both.
func pgShapeOf(ctx context.Context, db *sql.DB, table string) (cols []column, indexes map[string][]string, exists bool, err error) {
	rows, err := db.QueryContext(ctx, `SELECT column_name, data_type, COALESCE(character_maximum_length, 0) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var c column
		var n int
		if err := rows.Scan(&c.name, &c.colType, &n); err != nil {
			return nil, nil, false, err
		}
		switch c.colType {
		case "integer":
			c.colType = "int"
		case "character":
			c.colType = fmt.Sprintf("char(%d)", n)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil || len(cols) == 0 {
		return nil, nil, false, err
	}
	// The primary key's index reads as PRIMARY, as MySQL names it.
	indexes, err = indexesOf(ctx, db, `SELECT CASE WHEN x.indisprimary THEN 'PRIMARY' ELSE i.relname::text END, a.attname::text FROM pg_index x
		JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
		JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
		WHERE n.nspname = current_schema() AND t.relname = $1 ORDER BY 1, k.ord`, table)
	return cols, indexes, err == nil, err
}
