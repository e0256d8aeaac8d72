package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/dbduel/dbduel/engine/workload"
)

// table is one of the nine TPC-C tables with the specification's names
// (clause 1.3) and the keys and indexes HammerDB's MySQL schema has; the
// types are MySQL's, mapped for PostgreSQL by its dialect.
type table struct {
	name    string
	columns [][2]string // name, MySQL type
	primary string
	indexes []string // "name (cols)"
}

var tables = []table{
	{"warehouse", [][2]string{{"w_id", "INT NOT NULL"}, {"w_name", "VARCHAR(10)"}, {"w_street_1", "VARCHAR(20)"},
		{"w_street_2", "VARCHAR(20)"}, {"w_city", "VARCHAR(20)"}, {"w_state", "CHAR(2)"}, {"w_zip", "CHAR(9)"},
		{"w_tax", "DECIMAL(4,4)"}, {"w_ytd", "DECIMAL(12,2)"}}, "w_id", nil},
	{"district", [][2]string{{"d_id", "TINYINT NOT NULL"}, {"d_w_id", "INT NOT NULL"}, {"d_name", "VARCHAR(10)"},
		{"d_street_1", "VARCHAR(20)"}, {"d_street_2", "VARCHAR(20)"}, {"d_city", "VARCHAR(20)"}, {"d_state", "CHAR(2)"},
		{"d_zip", "CHAR(9)"}, {"d_tax", "DECIMAL(4,4)"}, {"d_ytd", "DECIMAL(12,2)"}, {"d_next_o_id", "INT"}}, "d_w_id, d_id", nil},
	{"customer", [][2]string{{"c_id", "INT NOT NULL"}, {"c_d_id", "TINYINT NOT NULL"}, {"c_w_id", "INT NOT NULL"},
		{"c_first", "VARCHAR(16)"}, {"c_middle", "CHAR(2)"}, {"c_last", "VARCHAR(16)"}, {"c_street_1", "VARCHAR(20)"},
		{"c_street_2", "VARCHAR(20)"}, {"c_city", "VARCHAR(20)"}, {"c_state", "CHAR(2)"}, {"c_zip", "CHAR(9)"},
		{"c_phone", "CHAR(16)"}, {"c_since", "DATETIME"}, {"c_credit", "CHAR(2)"}, {"c_credit_lim", "DECIMAL(12,2)"},
		{"c_discount", "DECIMAL(4,4)"}, {"c_balance", "DECIMAL(12,2)"}, {"c_ytd_payment", "DECIMAL(12,2)"},
		{"c_payment_cnt", "INT"}, {"c_delivery_cnt", "INT"}, {"c_data", "VARCHAR(500)"}},
		"c_w_id, c_d_id, c_id", []string{"customer_i2 (c_w_id, c_d_id, c_last, c_first, c_id)"}},
	{"history", [][2]string{{"h_c_id", "INT"}, {"h_c_d_id", "TINYINT"}, {"h_c_w_id", "INT"}, {"h_d_id", "TINYINT"},
		{"h_w_id", "INT"}, {"h_date", "DATETIME"}, {"h_amount", "DECIMAL(6,2)"}, {"h_data", "VARCHAR(24)"}}, "", nil},
	{"new_order", [][2]string{{"no_o_id", "INT NOT NULL"}, {"no_d_id", "TINYINT NOT NULL"}, {"no_w_id", "INT NOT NULL"}},
		"no_w_id, no_d_id, no_o_id", nil},
	{"orders", [][2]string{{"o_id", "INT NOT NULL"}, {"o_d_id", "TINYINT NOT NULL"}, {"o_w_id", "INT NOT NULL"},
		{"o_c_id", "INT"}, {"o_entry_d", "DATETIME"}, {"o_carrier_id", "TINYINT"}, {"o_ol_cnt", "TINYINT"},
		{"o_all_local", "TINYINT"}}, "o_w_id, o_d_id, o_id", []string{"orders_i2 (o_w_id, o_d_id, o_c_id, o_id)"}},
	{"order_line", [][2]string{{"ol_o_id", "INT NOT NULL"}, {"ol_d_id", "TINYINT NOT NULL"}, {"ol_w_id", "INT NOT NULL"},
		{"ol_number", "TINYINT NOT NULL"}, {"ol_i_id", "INT"}, {"ol_supply_w_id", "INT"}, {"ol_delivery_d", "DATETIME"},
		{"ol_quantity", "TINYINT"}, {"ol_amount", "DECIMAL(6,2)"}, {"ol_dist_info", "CHAR(24)"}},
		"ol_w_id, ol_d_id, ol_o_id, ol_number", nil},
	{"item", [][2]string{{"i_id", "INT NOT NULL"}, {"i_im_id", "INT"}, {"i_name", "VARCHAR(24)"},
		{"i_price", "DECIMAL(5,2)"}, {"i_data", "VARCHAR(50)"}}, "i_id", nil},
	{"stock", [][2]string{{"s_i_id", "INT NOT NULL"}, {"s_w_id", "INT NOT NULL"}, {"s_quantity", "INT"},
		{"s_dist_01", "CHAR(24)"}, {"s_dist_02", "CHAR(24)"}, {"s_dist_03", "CHAR(24)"}, {"s_dist_04", "CHAR(24)"},
		{"s_dist_05", "CHAR(24)"}, {"s_dist_06", "CHAR(24)"}, {"s_dist_07", "CHAR(24)"}, {"s_dist_08", "CHAR(24)"},
		{"s_dist_09", "CHAR(24)"}, {"s_dist_10", "CHAR(24)"}, {"s_ytd", "INT"}, {"s_order_cnt", "INT"},
		{"s_remote_cnt", "INT"}, {"s_data", "VARCHAR(50)"}}, "s_w_id, s_i_id", nil},
}

func (t table) columnNames() []string {
	out := make([]string, len(t.columns))
	for i, c := range t.columns {
		out[i] = c[0]
	}
	return out
}

// columnsOf reads a table's column names in order (none: it does not exist).
func columnsOf(ctx context.Context, db *sql.DB, d *dialect, name string) ([]string, error) {
	rows, err := db.QueryContext(ctx, d.columnsSQL, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, strings.ToLower(c))
	}
	return cols, rows.Err()
}

// shapeProblem says why existing columns are not the TPC-C table's, or "".
func (t table) shapeProblem(cols []string) string {
	want := t.columnNames()
	if strings.Join(cols, ",") != strings.Join(want, ",") {
		return fmt.Sprintf("has columns (%s), TPC-C's %s has (%s)", strings.Join(cols, ", "), t.name, strings.Join(want, ", "))
	}
	return ""
}

// check says whether the nine tables exist with TPC-C's columns and the
// configured number of warehouses.
func (w *tpccWorkload) check(ctx context.Context, db *sql.DB, d *dialect) (workload.TableState, error) {
	present, missing := 0, []string{}
	for _, t := range tables {
		cols, err := columnsOf(ctx, db, d, t.name)
		if err != nil {
			return workload.TableState{}, fmt.Errorf("inspect %s: %w", t.name, err)
		}
		if len(cols) == 0 {
			missing = append(missing, t.name)
			continue
		}
		if p := t.shapeProblem(cols); p != "" {
			return workload.TableState{Reason: fmt.Sprintf("table %s %s: it is not a TPC-C table, and dbduel leaves it alone (use another database)", t.name, p)}, nil
		}
		present++
	}
	if present == 0 {
		return workload.TableState{Missing: true}, nil
	}
	if len(missing) > 0 {
		return workload.TableState{Reason: fmt.Sprintf("TPC-C tables %s are missing (an interrupted prepare?): --reprepare reloads them", strings.Join(missing, ", "))}, nil
	}
	var ws, items int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM warehouse").Scan(&ws); err != nil {
		return workload.TableState{}, err
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM item").Scan(&items); err != nil {
		return workload.TableState{}, err
	}
	if ws != w.o.Warehouses || items != itemCount {
		return workload.TableState{Reason: fmt.Sprintf("the TPC-C tables hold %d warehouse(s) and %d items, the run wants %d and %d: --reprepare reloads them",
			ws, items, w.o.Warehouses, itemCount)}, nil
	}
	return workload.TableState{Reusable: true, Objects: fmt.Sprintf("TPC-C's nine tables (%d warehouse(s))", ws)}, nil
}

// cleanup drops the nine tables that have TPC-C's columns (leaving any
// other table of the same name alone, naming it) and dbduel's procedures.
func (w *tpccWorkload) cleanup(ctx context.Context, db *sql.DB, d *dialect) ([]string, error) {
	var dropped, refused []string
	for _, t := range tables {
		cols, err := columnsOf(ctx, db, d, t.name)
		if err != nil {
			return dropped, fmt.Errorf("inspect %s: %w", t.name, err)
		}
		if len(cols) == 0 {
			continue
		}
		if p := t.shapeProblem(cols); p != "" {
			refused = append(refused, t.name+" "+p)
			continue
		}
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t.name); err != nil {
			return dropped, fmt.Errorf("drop %s: %w", t.name, err)
		}
		dropped = append(dropped, t.name)
	}
	procs, err := dropProcedures(ctx, db, d)
	dropped = append(dropped, procs...)
	if err != nil {
		return dropped, err
	}
	if len(refused) > 0 {
		return dropped, fmt.Errorf("left alone: %s", strings.Join(refused, "; "))
	}
	return dropped, nil
}

func tableNamed(name string) table {
	for _, t := range tables {
		if t.name == name {
			return t
		}
	}
	panic("tpcc: no table " + name) // the loader names only the nine
}
