package tpcc

import (
	"context"
	"database/sql"
	"fmt"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
)

// Consistency checks the specification's consistency conditions 1-4
// (clauses 3.3.2.1-3.3.2.4) on a quiet database: each holds after the
// load and after any run of correct transactions.
func (w *tpccWorkload) Consistency(ctx context.Context, db enginedriver.DB) ([]workload.Condition, error) {
	sdb, d, err := w.sqlDB(db)
	if err != nil {
		return nil, err
	}
	if st, err := w.check(ctx, sdb, d); err != nil {
		return nil, err
	} else if st.Missing {
		return nil, fmt.Errorf("no TPC-C tables here: run dbduel prepare tpcc first")
	} else if !st.Reusable && st.Reason != "" {
		return nil, fmt.Errorf("%s", st.Reason)
	}
	checks := []struct {
		cond workload.Condition
		run  func(context.Context, *sql.DB) (string, error)
	}{
		{workload.Condition{ID: "1", Clause: "3.3.2.1", Text: "W_YTD = sum(D_YTD) for each warehouse"}, condition1},
		{workload.Condition{ID: "2", Clause: "3.3.2.2", Text: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district"}, condition2},
		{workload.Condition{ID: "3", Clause: "3.3.2.3", Text: "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER for each district"}, condition3},
		{workload.Condition{ID: "4", Clause: "3.3.2.4", Text: "sum(O_OL_CNT) = rows in ORDER-LINE for each district"}, condition4},
	}
	var out []workload.Condition
	for _, c := range checks {
		detail, err := c.run(ctx, sdb)
		if err != nil {
			return out, fmt.Errorf("condition %s: %w", c.cond.ID, err)
		}
		c.cond.OK, c.cond.Detail = detail == "", detail
		out = append(out, c.cond)
	}
	return out, nil
}

func condition1(ctx context.Context, db *sql.DB) (string, error) {
	var w int
	var wytd, dytd string
	err := db.QueryRowContext(ctx, `SELECT w_id, w_ytd, SUM(d_ytd) FROM warehouse JOIN district ON d_w_id = w_id
		GROUP BY w_id, w_ytd HAVING w_ytd <> SUM(d_ytd) ORDER BY w_id LIMIT 1`).Scan(&w, &wytd, &dytd)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("warehouse %d: W_YTD %s, sum(D_YTD) %s", w, wytd, dytd), nil
}

func condition2(ctx context.Context, db *sql.DB) (string, error) {
	rows, err := db.QueryContext(ctx, `SELECT d_w_id, d_id, d_next_o_id,
		(SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id),
		(SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id)
		FROM district ORDER BY d_w_id, d_id`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var w, d, next int64
		var maxO, maxNO sql.NullInt64
		if err := rows.Scan(&w, &d, &next, &maxO, &maxNO); err != nil {
			return "", err
		}
		// A district whose new orders were all delivered has no max(NO_O_ID).
		if !maxO.Valid || next-1 != maxO.Int64 || (maxNO.Valid && next-1 != maxNO.Int64) {
			return fmt.Sprintf("warehouse %d district %d: D_NEXT_O_ID - 1 = %d, max(O_ID) = %s, max(NO_O_ID) = %s",
				w, d, next-1, nullText(maxO), nullText(maxNO)), nil
		}
	}
	return "", rows.Err()
}

func condition3(ctx context.Context, db *sql.DB) (string, error) {
	var w, d, hi, lo, n int64
	err := db.QueryRowContext(ctx, `SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM new_order
		GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*) ORDER BY no_w_id, no_d_id LIMIT 1`).Scan(&w, &d, &hi, &lo, &n)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("warehouse %d district %d: max(NO_O_ID) - min(NO_O_ID) + 1 = %d, rows = %d", w, d, hi-lo+1, n), nil
}

func condition4(ctx context.Context, db *sql.DB) (string, error) {
	type key struct{ w, d int64 }
	counts := func(q string) (map[key]int64, error) {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		m := map[key]int64{}
		for rows.Next() {
			var k key
			var n int64
			if err := rows.Scan(&k.w, &k.d, &n); err != nil {
				return nil, err
			}
			m[k] = n
		}
		return m, rows.Err()
	}
	olCnt, err := counts("SELECT o_w_id, o_d_id, SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id")
	if err != nil {
		return "", err
	}
	lines, err := counts("SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id")
	if err != nil {
		return "", err
	}
	for k, n := range olCnt {
		if lines[k] != n {
			return fmt.Sprintf("warehouse %d district %d: sum(O_OL_CNT) = %d, order lines = %d", k.w, k.d, n, lines[k]), nil
		}
	}
	for k, n := range lines {
		if _, ok := olCnt[k]; !ok {
			return fmt.Sprintf("warehouse %d district %d: no orders, %d order lines", k.w, k.d, n), nil
		}
	}
	return "", nil
}

func nullText(v sql.NullInt64) string {
	if !v.Valid {
		return "none"
	}
	return fmt.Sprint(v.Int64)
}
