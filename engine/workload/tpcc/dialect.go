package tpcc

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"regexp"
	"strings"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
)

// dialect is what differs between MySQL/MariaDB and PostgreSQL: types,
// placeholders, the catalog queries, the procedures and the server's
// counters. The tables, the transactions' statements and the loader are
// shared.
type dialect struct {
	name       string // the SQL protocol: "mysql", "postgres"
	procedures []procedure
	// columnsSQL lists a table's columns in order (one parameter: its name).
	columnsSQL string
	// routineSQL counts the routines of a name in the current schema.
	routineSQL string
	dropVerb   string // "DROP PROCEDURE", "DROP FUNCTION"
	// callVerb runs a procedure: "CALL" (MySQL's procedures) or "SELECT"
	// (PostgreSQL's functions, one implicit transaction each).
	callVerb string
	// types maps the tables' MySQL types to the dialect's.
	types *strings.Replacer
	// dollar says placeholders are $1, $2... instead of ?.
	dollar bool
}

//go:embed procedures_mysql.sql
var proceduresMySQL string

//go:embed procedures_postgres.sql
var proceduresPostgres string

var mysqlDialect = &dialect{
	name:       "mysql",
	procedures: parseProcedures(proceduresMySQL, "procedures_mysql.sql"),
	columnsSQL: `SELECT COLUMN_NAME FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
	routineSQL: "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = ?",
	dropVerb:   "DROP PROCEDURE",
	callVerb:   "CALL",
	types:      strings.NewReplacer(),
}

var postgresDialect = &dialect{
	name:       "postgres",
	procedures: parseProcedures(proceduresPostgres, "procedures_postgres.sql"),
	columnsSQL: `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
	routineSQL: `SELECT COUNT(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = current_schema() AND p.proname = $1`,
	dropVerb: "DROP FUNCTION",
	callVerb: "SELECT",
	types:    strings.NewReplacer("TINYINT", "SMALLINT", "DATETIME", "TIMESTAMP"),
	dollar:   true,
}

// dialectOf is the dialect of an SQL protocol, or an error naming the
// servers TPC-C runs on.
func dialectOf(protocol string) (*dialect, error) {
	switch protocol {
	case "mysql":
		return mysqlDialect, nil
	case "postgres":
		return postgresDialect, nil
	}
	return nil, fmt.Errorf("workload tpcc runs on MySQL, MariaDB and PostgreSQL targets only")
}

// bind rewrites ? placeholders as $1, $2... where the dialect wants them
// (no statement of the workload has a ? inside a string).
func (d *dialect) bind(q string) string {
	if !d.dollar {
		return q
	}
	return workload.NumberedPlaceholders(q)
}

// createTable is table t's CREATE TABLE and, on PostgreSQL, its CREATE
// INDEX statements (MySQL declares the keys inline).
func (d *dialect) createTable(t table) []string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.name + " (\n")
	for i, c := range t.columns {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  " + c[0] + " " + d.types.Replace(c[1]))
	}
	if t.primary != "" {
		b.WriteString(",\n  PRIMARY KEY (" + t.primary + ")")
	}
	if !d.dollar {
		for _, idx := range t.indexes {
			b.WriteString(",\n  KEY " + idx)
		}
		return []string{b.String() + "\n) ENGINE = InnoDB"}
	}
	out := []string{b.String() + "\n)"}
	for _, idx := range t.indexes {
		name, cols, _ := strings.Cut(idx, " ")
		out = append(out, "CREATE INDEX "+name+" ON "+t.name+" "+cols)
	}
	return out
}

// callSQL runs transaction t's procedure with its parameters.
func (d *dialect) callSQL(t txnType) string {
	n := [numTypes]int{newOrder: 9, payment: 9, orderStatus: 5, delivery: 3, stockLevel: 3}[t]
	return d.bind(d.callVerb + " " + d.procedures[t].name + "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")")
}

// procedure is one stored procedure (or function): its name and CREATE
// statement.
type procedure struct{ name, create string }

var procNameRE = regexp.MustCompile(`CREATE (?:PROCEDURE|FUNCTION) (\w+)\(`)

// parseProcedures splits an embedded file of the five transactions,
// separated by lines holding only "-- next procedure".
func parseProcedures(src, file string) []procedure {
	var out []procedure
	for _, part := range strings.Split(src, "\n-- next procedure\n") {
		loc := procNameRE.FindStringSubmatchIndex(part)
		if loc == nil {
			panic("tpcc: a part without CREATE PROCEDURE or FUNCTION in " + file)
		}
		out = append(out, procedure{name: part[loc[2]:loc[3]], create: strings.TrimSpace(part[loc[0]:])})
	}
	if len(out) != int(numTypes) {
		panic("tpcc: " + file + " must hold the five transactions")
	}
	return out
}

// serverCounters reads NOPM's and TPM's counters: sum(d_next_o_id), and
// the server's commits and rollbacks (MySQL's Com_ counters, counted at
// once; PostgreSQL's pg_stat_database, made exact by the driver).
func (d *dialect) serverCounters(ctx context.Context, db enginedriver.DB, sdb *sql.DB) (workload.ServerCounters, error) {
	const headline = "SELECT COALESCE(SUM(d_next_o_id), 0) FROM district"
	var c workload.ServerCounters
	if d.dollar {
		tc, ok := db.(enginedriver.TxnCounter)
		if !ok {
			return c, fmt.Errorf("this PostgreSQL target cannot read its transaction counters")
		}
		c.Source = "sum(district.d_next_o_id); pg_stat_database xact_commit + xact_rollback"
		if err := tc.OwnRead(ctx, headline, &c.Headline); err != nil {
			return c, fmt.Errorf("read district.d_next_o_id: %w", err)
		}
		n, err := tc.Transactions(ctx)
		c.Transactions = n
		return c, err
	}
	c.Source = "sum(district.d_next_o_id); Com_commit + Com_rollback"
	if err := sdb.QueryRowContext(ctx, headline).Scan(&c.Headline); err != nil {
		return c, fmt.Errorf("read district.d_next_o_id: %w", err)
	}
	rows, err := sdb.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')")
	if err != nil {
		return c, fmt.Errorf("read the commit counters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v uint64
		if err := rows.Scan(&name, &v); err != nil {
			return c, err
		}
		c.Transactions += v
	}
	return c, rows.Err()
}
