package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
)

// txnType is one of the five transactions.
type txnType int

const (
	newOrder txnType = iota
	payment
	orderStatus
	delivery
	stockLevel
	numTypes
)

var typeNames = [numTypes]string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// The statements, prepared once per thread on its connection. Each
// transaction runs them between BEGIN and COMMIT, as HammerDB's stored
// procedures do, with SELECT ... FOR UPDATE where a row is read to be
// changed.
const (
	noCustWh = iota
	noDistrict
	noDistrictUpd
	noOrder
	noNewOrder
	noItem
	noStock
	noStockUpd
	noLine
	payWhUpd
	payWh
	payDistUpd
	payDist
	custByName
	payCust
	payCustData
	payCustUpdBC
	payCustUpd
	payHistory
	osCust
	osOrder
	osLines
	dlNewOrder
	dlDelete
	dlOrder
	dlOrderUpd
	dlLinesUpd
	dlLinesSum
	dlCustUpd
	slDistrict
	slCount
	numStmts
)

var stmtSQL = [numStmts]string{
	noCustWh:      "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?",
	noDistrict:    "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
	noDistrictUpd: "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
	noOrder:       "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
	noNewOrder:    "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
	noItem:        "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
	noStock: "SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 " +
		"FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE",
	noStockUpd: "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
	noLine: "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) " +
		"VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
	payWhUpd:   "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
	payWh:      "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?",
	payDistUpd: "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
	payDist:    "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?",
	custByName: "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
	payCust: "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since " +
		"FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
	payCustData: "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	payCustUpdBC: "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? " +
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	payCustUpd: "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 " +
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	payHistory: "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	osCust:     "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	osOrder:    "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
	osLines:    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	dlNewOrder: "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
	dlDelete:   "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
	dlOrder:    "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
	dlOrderUpd: "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
	dlLinesUpd: "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	dlLinesSum: "SELECT COALESCE(SUM(ol_amount), 0) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	dlCustUpd:  "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	slDistrict: "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
	slCount: "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? " +
		"AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
}

// worker runs one virtual user's transactions on its connection.
type worker struct {
	w         *tpccWorkload
	d         *dialect
	conn      *sql.Conn
	publisher enginedriver.StatsPublisher // PostgreSQL's late counters, nil elsewhere
	g         *rng
	st        [numStmts]*sql.Stmt
	calls     [numTypes]*sql.Stmt // the procedures mode's CALLs
	retryType txnType             // the type of a failed transaction, run again
	retry     bool
	// alwaysRollback makes every New-Order take the 1% rollback path (tests).
	alwaysRollback bool
	mu             sync.Mutex // guards types: the engine swaps them while Event runs
	types          [numTypes]workload.TypeCounts
}

// NewWorker prepares the statements (or the CALLs) on the thread's
// connection; where the server publishes its counters late, the thread's
// are published before the first reading.
func (w *tpccWorkload) NewWorker(ctx context.Context, dc enginedriver.Conn, thread, threads int, seed uint64) (workload.Worker, error) {
	sc, ok := dc.(enginedriver.SQLConn)
	if !ok {
		return nil, fmt.Errorf("workload tpcc runs on MySQL, MariaDB and PostgreSQL targets only")
	}
	d, err := dialectOf(sc.Dialect())
	if err != nil {
		return nil, err
	}
	wk := &worker{w: w, d: d, conn: sc.SQL(), g: newRNG(seed)}
	wk.publisher, _ = dc.(enginedriver.StatsPublisher)
	for i := range wk.types {
		wk.types[i].Hist = stats.NewHistogram()
	}
	if err := wk.prepare(ctx); err != nil {
		wk.closeStmts()
		return nil, err
	}
	if wk.publisher != nil {
		if err := wk.publisher.PublishStats(ctx); err != nil {
			wk.closeStmts()
			return nil, err
		}
	}
	return wk, nil
}

// prepare prepares the mode's statements.
func (wk *worker) prepare(ctx context.Context) error {
	if wk.w.o.Mode == modeProcedures {
		return wk.prepareCalls(ctx)
	}
	for i, q := range stmtSQL {
		s, err := wk.conn.PrepareContext(ctx, wk.d.bind(q))
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		wk.st[i] = s
	}
	return nil
}

func (wk *worker) closeStmts() {
	for _, s := range append(wk.st[:], wk.calls[:]...) {
		if s != nil {
			s.Close()
		}
	}
}

// Close publishes the thread's counters where the server publishes them
// late (one statement, counted), before the reading after the run.
func (wk *worker) Close(ctx context.Context, c *workload.Counts) error {
	wk.closeStmts()
	if wk.publisher == nil {
		return nil
	}
	if c != nil {
		c.Other++
	}
	return wk.publisher.PublishStats(ctx)
}

// SwapTypes hands the counts since the last swap to the engine.
func (wk *worker) SwapTypes(into []workload.TypeCounts) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	for i := range wk.types {
		t := &wk.types[i]
		into[i].Done += t.Done
		into[i].Rollbacks += t.Rollbacks
		into[i].Errors += t.Errors
		into[i].Hist.Merge(t.Hist)
		t.Done, t.Rollbacks, t.Errors = 0, 0, 0
		t.Hist.Reset()
	}
}

// pick draws a transaction from the standard mix (clause 5.2.3): 45%
// New-Order, 43% Payment, 4% each of the others.
func (wk *worker) pick() txnType {
	switch n := wk.g.uniform(1, 100); {
	case n <= 45:
		return newOrder
	case n <= 88:
		return payment
	case n <= 92:
		return orderStatus
	case n <= 96:
		return delivery
	}
	return stockLevel
}

// Event runs one transaction; a failed one is run again (same type, new
// inputs) when the engine restarts the event.
func (wk *worker) Event(ctx context.Context, c *workload.Counts) error {
	t := wk.pick()
	if wk.retry {
		t, wk.retry = wk.retryType, false
	}
	return wk.transact(ctx, t, c)
}

// transact runs one transaction of type t and records it.
func (wk *worker) transact(ctx context.Context, t txnType, c *workload.Counts) error {
	start := time.Now()
	var rolledBack bool
	var err error
	if wk.w.o.Mode == modeProcedures {
		rolledBack, err = wk.call(ctx, t, c)
	} else {
		if err := wk.exec(ctx, -1, c, "BEGIN"); err != nil {
			return wk.failed(t, err)
		}
		rolledBack, err = wk.statements(ctx, t, c)
	}
	if err != nil {
		// A lock-wait timeout rolls back one statement, not the
		// transaction: end it here, or the next one would commit its
		// first half.
		_ = wk.exec(ctx, -1, c, "ROLLBACK")
		return wk.failed(t, err)
	}
	wk.record(t, rolledBack, time.Since(start))
	return nil
}

// statements runs transaction t's statements after BEGIN, and COMMIT
// unless New-Order rolled back.
func (wk *worker) statements(ctx context.Context, t txnType, c *workload.Counts) (rolledBack bool, err error) {
	switch t {
	case newOrder:
		rolledBack, err = wk.newOrder(ctx, c)
	case payment:
		err = wk.payment(ctx, c)
	case orderStatus:
		err = wk.orderStatus(ctx, c)
	case delivery:
		err = wk.delivery(ctx, c)
	default:
		err = wk.stockLevel(ctx, c)
	}
	if err == nil && !rolledBack {
		err = wk.exec(ctx, -1, c, "COMMIT")
	}
	return rolledBack, err
}

// record counts a finished transaction of type t and its latency.
func (wk *worker) record(t txnType, rolledBack bool, lat time.Duration) {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	tc := &wk.types[t]
	tc.Done++
	if rolledBack {
		tc.Rollbacks++
	}
	_ = tc.Hist.RecordValue(max(lat.Microseconds(), 1))
}

func (wk *worker) failed(t txnType, err error) error {
	wk.mu.Lock()
	wk.types[t].Errors++
	wk.mu.Unlock()
	wk.retry, wk.retryType = true, t
	return err
}

// exec runs statement k (or the text query when k < 0) and counts it as
// sysbench does: a write if it changed rows, other otherwise.
func (wk *worker) exec(ctx context.Context, k int, c *workload.Counts, args ...any) error {
	var res sql.Result
	var err error
	if k < 0 {
		res, err = wk.conn.ExecContext(ctx, args[0].(string))
	} else {
		res, err = wk.st[k].ExecContext(ctx, args...)
	}
	if err != nil {
		c.Other++
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 && k >= 0 {
		c.Writes++
	} else {
		c.Other++
	}
	return nil
}

// row runs SELECT k and scans its first row into dest; found is false
// when it returned none.
func (wk *worker) row(ctx context.Context, k int, c *workload.Counts, dest []any, args ...any) (found bool, err error) {
	c.Reads++
	err = wk.st[k].QueryRowContext(ctx, args...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// rows runs SELECT k and reads every row (the values are not used).
func (wk *worker) rows(ctx context.Context, k int, c *workload.Counts, args ...any) (int, error) {
	c.Reads++
	rs, err := wk.st[k].QueryContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	n := 0
	for rs.Next() {
		n++
	}
	return n, rs.Err()
}

// cents parses a DECIMAL(x,2) value the server returned.
func cents(b []byte) int64 {
	s := string(b)
	whole, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(whole, "-")
	v, _ := strconv.ParseInt(strings.TrimPrefix(whole, "-"), 10, 64)
	frac = (frac + "00")[:2]
	f, _ := strconv.ParseInt(frac, 10, 64)
	v = v*100 + f
	if neg {
		v = -v
	}
	return v
}

func now() string { return time.Now().UTC().Format(time.DateTime) }

// otherWarehouse is a warehouse other than w (there is more than one).
func (wk *worker) otherWarehouse(w int) int {
	o := wk.g.uniform(1, wk.w.o.Warehouses-1)
	if o >= w {
		o++
	}
	return o
}

// orderLine is one line of a New-Order's input.
type orderLine struct{ item, supply, qty int }

// newOrderInput is a New-Order's input (clause 2.4.1): the warehouse,
// district and customer, 5 to 15 lines, 1% of orders with an unused item
// as their last line, 1% of lines from another warehouse.
type newOrderInput struct {
	w, d, cid, allLocal int
	lines               []orderLine
}

func (wk *worker) newOrderInput() newOrderInput {
	W := wk.w.o.Warehouses
	in := newOrderInput{w: wk.g.uniform(1, W), d: wk.g.uniform(1, districtsPerW), allLocal: 1}
	in.cid = wk.g.nurand(1023, 1, customersPerD, cRunID)
	n := wk.g.uniform(5, 15)
	rbk := wk.g.uniform(1, 100)
	if wk.alwaysRollback {
		rbk = 1
	}
	in.lines = make([]orderLine, n)
	for i := range in.lines {
		l := orderLine{item: wk.g.nurand(8191, 1, itemCount, cRunItem), supply: in.w, qty: wk.g.uniform(1, 10)}
		if i == n-1 && rbk == 1 {
			l.item = itemCount + 1 // unused: the transaction rolls back
		}
		if W > 1 && wk.g.uniform(1, 100) == 1 {
			l.supply, in.allLocal = wk.otherWarehouse(in.w), 0
		}
		in.lines[i] = l
	}
	return in
}

// newOrder is clause 2.4.2; rolledBack reports the 1% of New-Orders with
// an unused item number, rolled back as the specification requires.
func (wk *worker) newOrder(ctx context.Context, c *workload.Counts) (rolledBack bool, err error) {
	in := wk.newOrderInput()
	w, d, cid, n, lines, allLocal := in.w, in.d, in.cid, len(in.lines), in.lines, in.allLocal
	var discount, last, credit, wtax []byte
	if _, err := wk.row(ctx, noCustWh, c, []any{&discount, &last, &credit, &wtax}, w, d, cid); err != nil {
		return false, err
	}
	var oid int64
	var dtax []byte
	if _, err := wk.row(ctx, noDistrict, c, []any{&oid, &dtax}, w, d); err != nil {
		return false, err
	}
	if err := wk.exec(ctx, noDistrictUpd, c, w, d); err != nil {
		return false, err
	}
	entry := now()
	if err := wk.exec(ctx, noOrder, c, oid, d, w, cid, entry, n, allLocal); err != nil {
		return false, err
	}
	if err := wk.exec(ctx, noNewOrder, c, oid, d, w); err != nil {
		return false, err
	}
	var price, iname, idata, sdata []byte
	var dist [10][]byte
	var sq int64
	for i, l := range lines {
		found, err := wk.row(ctx, noItem, c, []any{&price, &iname, &idata}, l.item)
		if err != nil {
			return false, err
		}
		if !found {
			// Clause 2.4.2.3: "Item number is not valid": roll back.
			c.Other++
			if _, err := wk.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				return false, err
			}
			return true, nil
		}
		dest := []any{&sq, &sdata}
		for k := range dist {
			dest = append(dest, &dist[k])
		}
		if _, err := wk.row(ctx, noStock, c, dest, l.item, l.supply); err != nil {
			return false, err
		}
		q := sq - int64(l.qty)
		if sq < int64(l.qty)+10 {
			q += 91
		}
		remote := 0
		if l.supply != w {
			remote = 1
		}
		if err := wk.exec(ctx, noStockUpd, c, q, l.qty, remote, l.item, l.supply); err != nil {
			return false, err
		}
		amount := int64(l.qty) * cents(price)
		if err := wk.exec(ctx, noLine, c, oid, d, w, i+1, l.item, l.supply, l.qty, decimal(amount, 2), string(dist[d-1])); err != nil {
			return false, err
		}
	}
	return false, nil
}

// customerID picks the customer as clauses 2.5.1.2 and 2.6.1.2 say: 60%
// by last name (the middle one of those sorted by first name), 40% by id.
func (wk *worker) customerID(ctx context.Context, c *workload.Counts, w, d int) (int64, error) {
	if wk.g.uniform(1, 100) > 60 {
		return int64(wk.g.nurand(1023, 1, customersPerD, cRunID)), nil
	}
	name := lastName(wk.g.nurand(255, 0, 999, cRunLast))
	c.Reads++
	rs, err := wk.st[custByName].QueryContext(ctx, w, d, name)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	var ids []int64
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := rs.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		// Every name exists in every district after the load; keep the
		// transaction going with an id as the by-id branch would.
		return int64(wk.g.nurand(1023, 1, customersPerD, cRunID)), nil
	}
	return ids[(len(ids)+1)/2-1], nil
}

// payment is clause 2.5.2.
func (wk *worker) payment(ctx context.Context, c *workload.Counts) error {
	W := wk.w.o.Warehouses
	w, d := wk.g.uniform(1, W), wk.g.uniform(1, districtsPerW)
	cw, cd := w, d
	if W > 1 && wk.g.uniform(1, 100) <= 15 {
		cw, cd = wk.otherWarehouse(w), wk.g.uniform(1, districtsPerW)
	}
	amount := int64(wk.g.uniform(100, 500000))
	amt := decimal(amount, 2)
	if err := wk.exec(ctx, payWhUpd, c, amt, w); err != nil {
		return err
	}
	var a [6][]byte
	if _, err := wk.row(ctx, payWh, c, []any{&a[0], &a[1], &a[2], &a[3], &a[4], &a[5]}, w); err != nil {
		return err
	}
	wname := string(a[5])
	if err := wk.exec(ctx, payDistUpd, c, amt, w, d); err != nil {
		return err
	}
	if _, err := wk.row(ctx, payDist, c, []any{&a[0], &a[1], &a[2], &a[3], &a[4], &a[5]}, w, d); err != nil {
		return err
	}
	dname := string(a[5])
	cid, err := wk.customerID(ctx, c, cw, cd)
	if err != nil {
		return err
	}
	var cf [13][]byte
	var since any // a time.Time on PostgreSQL
	dest := make([]any, len(cf), len(cf)+1)
	for i := range cf {
		dest[i] = &cf[i]
	}
	dest = append(dest, &since)
	if _, err := wk.row(ctx, payCust, c, dest, cw, cd, cid); err != nil {
		return err
	}
	if string(cf[9]) == "BC" {
		var data []byte
		if _, err := wk.row(ctx, payCustData, c, []any{&data}, cw, cd, cid); err != nil {
			return err
		}
		nd := fmt.Sprintf("%d %d %d %d %d %s|%s", cid, cd, cw, d, w, amt, data)
		if len(nd) > 500 {
			nd = nd[:500]
		}
		if err := wk.exec(ctx, payCustUpdBC, c, amt, amt, nd, cw, cd, cid); err != nil {
			return err
		}
	} else if err := wk.exec(ctx, payCustUpd, c, amt, amt, cw, cd, cid); err != nil {
		return err
	}
	hdata := wname + "    " + dname
	return wk.exec(ctx, payHistory, c, cd, cw, cid, d, w, now(), amt, hdata)
}

// orderStatus is clause 2.6.2 (read-only; it still ends with COMMIT).
func (wk *worker) orderStatus(ctx context.Context, c *workload.Counts) error {
	w, d := wk.g.uniform(1, wk.w.o.Warehouses), wk.g.uniform(1, districtsPerW)
	cid, err := wk.customerID(ctx, c, w, d)
	if err != nil {
		return err
	}
	var bal, first, middle, last []byte
	if _, err := wk.row(ctx, osCust, c, []any{&bal, &first, &middle, &last}, w, d, cid); err != nil {
		return err
	}
	var oid int64
	var carrier []byte
	var entry any // a time.Time on PostgreSQL
	found, err := wk.row(ctx, osOrder, c, []any{&oid, &carrier, &entry}, w, d, cid)
	if err != nil || !found {
		return err
	}
	_, err = wk.rows(ctx, osLines, c, w, d, oid)
	return err
}

// delivery is clause 2.7.4, all ten districts in one transaction as
// HammerDB runs it (the specification's deferred execution, not queued).
func (wk *worker) delivery(ctx context.Context, c *workload.Counts) error {
	w := wk.g.uniform(1, wk.w.o.Warehouses)
	carrier := wk.g.uniform(1, 10)
	at := now()
	for d := 1; d <= districtsPerW; d++ {
		var oid int64
		found, err := wk.row(ctx, dlNewOrder, c, []any{&oid}, w, d)
		if err != nil {
			return err
		}
		if !found {
			continue // no undelivered order in this district (clause 2.7.4.2)
		}
		if err := wk.exec(ctx, dlDelete, c, w, d, oid); err != nil {
			return err
		}
		var cid int64
		if _, err := wk.row(ctx, dlOrder, c, []any{&cid}, w, d, oid); err != nil {
			return err
		}
		if err := wk.exec(ctx, dlOrderUpd, c, carrier, w, d, oid); err != nil {
			return err
		}
		if err := wk.exec(ctx, dlLinesUpd, c, at, w, d, oid); err != nil {
			return err
		}
		var sum []byte
		if _, err := wk.row(ctx, dlLinesSum, c, []any{&sum}, w, d, oid); err != nil {
			return err
		}
		if err := wk.exec(ctx, dlCustUpd, c, decimal(cents(sum), 2), w, d, cid); err != nil {
			return err
		}
	}
	return nil
}

// stockLevel is clause 2.8.2.
func (wk *worker) stockLevel(ctx context.Context, c *workload.Counts) error {
	w, d := wk.g.uniform(1, wk.w.o.Warehouses), wk.g.uniform(1, districtsPerW)
	threshold := wk.g.uniform(10, 20)
	var next int64
	if _, err := wk.row(ctx, slDistrict, c, []any{&next}, w, d); err != nil {
		return err
	}
	var low int64
	_, err := wk.row(ctx, slCount, c, []any{&low}, w, d, next, next-20, w, threshold)
	return err
}
