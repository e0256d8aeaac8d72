package oltp

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/sbrand"
)

// kind is one statement of oltp_common.lua's stmt_defs.
type kind int

const (
	pointSelect kind = iota
	simpleRange
	sumRange
	orderRange
	distinctRange
	indexUpdate
	nonIndexUpdate
	deleteRow
	insertRow
	numKinds
)

var stmtDefs = [numKinds]struct {
	sql  string
	read bool
}{
	pointSelect:    {"SELECT c FROM sbtest%d WHERE id=?", true},
	simpleRange:    {"SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?", true},
	sumRange:       {"SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?", true},
	orderRange:     {"SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c", true},
	distinctRange:  {"SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c", true},
	indexUpdate:    {"UPDATE sbtest%d SET k=k+1 WHERE id=?", false},
	nonIndexUpdate: {"UPDATE sbtest%d SET c=? WHERE id=?", false},
	deleteRow:      {"DELETE FROM sbtest%d WHERE id=?", false},
	insertRow:      {"INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)", false},
}

// kinds each script prepares (its prepare_statements()).
func (w *oltpWorkload) kinds() []kind {
	ranges := []kind{}
	if w.o.RangeSelects {
		ranges = []kind{simpleRange, sumRange, orderRange, distinctRange}
	}
	writes := []kind{indexUpdate, nonIndexUpdate, deleteRow, insertRow}
	switch w.name {
	case "oltp_read_write":
		return append(append([]kind{pointSelect}, ranges...), writes...)
	case "oltp_read_only":
		return append([]kind{pointSelect}, ranges...)
	case "oltp_write_only":
		return writes
	case "oltp_point_select":
		return []kind{pointSelect}
	case "oltp_update_index":
		return []kind{indexUpdate}
	case "oltp_update_non_index":
		return []kind{nonIndexUpdate}
	case "oltp_delete":
		return []kind{deleteRow}
	}
	return nil
}

// usesTrx says whether the script wraps its event in BEGIN/COMMIT.
func (w *oltpWorkload) usesTrx() bool {
	switch w.name {
	case "oltp_read_write", "oltp_read_only", "oltp_write_only":
		return !w.o.SkipTrx
	}
	return false
}

type oltpWorkload struct {
	name   string
	o      Options
	seed   uint64
	unique *sbrand.Unique // oltp_insert without auto_inc: one sequence for all threads
}

// New returns the named script with options o.
func New(name string, o Options) (workload.Workload, error) {
	known := false
	for _, s := range scripts {
		known = known || s == name
	}
	if !known {
		return nil, fmt.Errorf("unknown workload %q", name)
	}
	if err := o.validate(name); err != nil {
		return nil, err
	}
	w := &oltpWorkload{name: name, o: o, seed: workload.SeedOrClock(o.RandSeed)}
	s := sbrand.New(o.Rand, w.seed^0x5eed)
	w.unique = sbrand.NewUnique(uint32(s.Uint64()), uint32(s.Uint64()))
	return w, nil
}

// SharedState: oltp_insert without auto_inc draws every thread's ids from
// one sequence (sysbench.rand.unique), which agents could not share.
func (w *oltpWorkload) SharedState() string {
	if w.name == "oltp_insert" && !w.o.AutoInc {
		return "oltp_insert without --auto-inc draws its ids from one sequence its threads share"
	}
	return ""
}

// WithTableSize is the same script and options on tables of n rows (sweeps).
func (w *oltpWorkload) WithTableSize(n int) (workload.Workload, error) {
	o := w.o
	o.TableSize, o.TableSizes = n, []int{n}
	o.RandSeed = w.seed
	return New(w.name, o)
}

// TableSizes is the --table-size sweep (one entry without a sweep).
func (w *oltpWorkload) TableSizes() []int {
	if len(w.o.TableSizes) == 0 {
		return []int{w.o.TableSize}
	}
	return w.o.TableSizes
}

func (w *oltpWorkload) Name() string            { return w.name }
func (w *oltpWorkload) Options() map[string]any { return w.o.asMap(w.name) }

func (w *oltpWorkload) Validate(threads int) error {
	if threads < 1 {
		return fmt.Errorf("--threads must be at least 1")
	}
	return nil
}

// Protocols: sysbench's OLTP scripts run on MySQL and PostgreSQL, as
// sysbench's mysql and pgsql drivers run them.
func (w *oltpWorkload) Protocols() []string { return []string{"mysql", "postgres"} }

// UsesTransactions says whether events run in BEGIN ... COMMIT.
func (w *oltpWorkload) UsesTransactions() bool { return w.usesTrx() }

// Shape is the tables, rows and seed the script runs on.
func (w *oltpWorkload) Shape() workload.Shape {
	return workload.Shape{Tables: w.o.Tables, TableSize: w.o.TableSize, RandSeed: w.o.RandSeed}
}

// sqlTarget is a target's database/sql pool and what its dialect changes.
type sqlTarget struct {
	db   *sql.DB
	pg   bool                    // PostgreSQL: serial ids, $n placeholders, its catalogs
	bulk enginedriver.BulkLoader // COPY, when the driver has it
}

func (w *oltpWorkload) target(db enginedriver.DB) (sqlTarget, error) {
	sdb, ok := db.(enginedriver.SQLDB)
	if !ok {
		return sqlTarget{}, fmt.Errorf("workload %s speaks SQL; this target's protocol does not", w.name)
	}
	t := sqlTarget{db: sdb.SQL(), pg: sdb.Dialect() == "postgres"}
	t.bulk, _ = db.(enginedriver.BulkLoader)
	if t.pg && w.o.Secondary {
		return t, fmt.Errorf("--secondary makes MySQL's \"KEY xid (id)\", which PostgreSQL has no syntax for (sysbench's pgsql driver fails on it too)")
	}
	return t, nil
}

// Check reports whether the target holds reusable tables.
func (w *oltpWorkload) Check(ctx context.Context, db enginedriver.DB, threads int) (workload.TableState, error) {
	t, err := w.target(db)
	if err != nil {
		return workload.TableState{}, err
	}
	return w.check(ctx, t, threads)
}

// Prepare creates and loads the tables.
func (w *oltpWorkload) Prepare(ctx context.Context, db enginedriver.DB, threads int, progress func(workload.Progress)) error {
	t, err := w.target(db)
	if err != nil {
		return err
	}
	return w.prepare(ctx, t, threads, progress)
}

// Cleanup drops the script's sbtestN tables, and only those of its shape.
func (w *oltpWorkload) Cleanup(ctx context.Context, db enginedriver.DB, threads int) ([]string, error) {
	t, err := w.target(db)
	if err != nil {
		return nil, err
	}
	return w.cleanup(ctx, t, threads)
}

// stmt is one statement on one connection: server-side prepared
// (--db-ps-mode=auto) or sent as text with the parameters inlined (disable).
type stmt struct {
	query string
	read  bool
	ps    ctxStmt  // the driver's prepared statement; nil in text mode
	fast  fastStmt // ps, when its driver has the fast path
}

type worker struct {
	w        *oltpWorkload
	pg       bool // PostgreSQL: $n placeholders, text values as strings
	conn     *sql.Conn
	rng      *sbrand.Rand
	thread   int
	threads  int
	stmts    [][numKinds]*stmt // [table-1][kind]
	begin    *stmt
	commit   *stmt
	single   *stmt // select_random_*: the one statement
	body     func(context.Context, *workload.Counts) error
	args     []any
	cur      call                // the statement in flight (run → onDriver)
	nv       []driver.NamedValue // its arguments, reused
	onDriver func(any) error     // wk.execOnDriver, bound once
	cbuf     []byte
	padbuf   []byte
	// bulk_insert state
	bulkSize int
	bulkBuf  []byte
	bulkRows int
	bulkHead string
}

func (w *oltpWorkload) prepared() bool { return strings.EqualFold(w.o.PSMode, "auto") }

func (wk *worker) newStmt(ctx context.Context, query string, read bool) (*stmt, error) {
	if wk.pg {
		query = workload.NumberedPlaceholders(query)
	}
	s := &stmt{query: query, read: read}
	if wk.w.prepared() {
		err := wk.conn.Raw(func(dc any) (err error) {
			if s.ps, err = prepareOn(ctx, dc, query); err == nil {
				s.fast, _ = s.ps.(fastStmt)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("prepare %q: %w", query, err)
		}
	}
	return s, nil
}

// NewWorker prepares the script's statements for one thread (thread_init()).
func (w *oltpWorkload) NewWorker(ctx context.Context, dc enginedriver.Conn, thread, threads int, seed uint64) (workload.Worker, error) {
	sc, ok := dc.(enginedriver.SQLConn)
	if !ok {
		return nil, fmt.Errorf("workload %s speaks SQL; this target's protocol does not", w.name)
	}
	return w.newWorker(ctx, sc.SQL(), sc.Dialect() == "postgres", thread, threads, seed)
}

func (w *oltpWorkload) newWorker(ctx context.Context, conn *sql.Conn, pg bool, thread, threads int, seed uint64) (workload.Worker, error) {
	wk := &worker{pg: pg,
		w: w, conn: conn, thread: thread, threads: threads,
		rng:    sbrand.New(w.o.Rand, seed),
		cbuf:   make([]byte, len(cTemplate)),
		padbuf: make([]byte, len(padTemplate)),
	}
	wk.body = wk.pickBody()
	wk.onDriver = wk.execOnDriver
	var err error
	switch w.name {
	case "select_random_points":
		q := fmt.Sprintf("SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN (%s)\n        ",
			strings.TrimSuffix(strings.Repeat("?, ", w.o.RandomPoints), ", "))
		wk.single, err = wk.newStmt(ctx, q, true)
		wk.args = make([]any, w.o.RandomPoints)
		return wk, err
	case "select_random_ranges":
		q := fmt.Sprintf("SELECT count(k)\n          FROM sbtest1\n          WHERE %s",
			strings.TrimSuffix(strings.Repeat("k BETWEEN ? AND ? OR ", w.o.NumberOfRanges), " OR "))
		wk.single, err = wk.newStmt(ctx, q, true)
		wk.args = make([]any, 2*w.o.NumberOfRanges)
		return wk, err
	case "bulk_insert":
		wk.bulkHead = "INSERT INTO " + tableName(thread+1) + " VALUES"
		return wk, nil
	case "oltp_insert":
		return wk, nil // text queries only, as oltp_insert.lua
	}
	switch {
	case w.usesTrx() && pg:
		// Sent as text, where sysbench prepares them: pg_stat_statements
		// counts a prepared BEGIN or COMMIT at its first execution only, and
		// the honesty check needs each counted (one round trip either way).
		wk.begin, wk.commit = &stmt{query: "BEGIN"}, &stmt{query: "COMMIT"}
	case w.usesTrx():
		if wk.begin, err = wk.newStmt(ctx, "BEGIN", false); err != nil {
			return nil, err
		}
		if wk.commit, err = wk.newStmt(ctx, "COMMIT", false); err != nil {
			return nil, err
		}
	}
	wk.stmts = make([][numKinds]*stmt, w.o.Tables)
	for _, k := range w.kinds() {
		for t := 1; t <= w.o.Tables; t++ {
			s, err := wk.newStmt(ctx, fmt.Sprintf(stmtDefs[k].sql, t), stmtDefs[k].read)
			if err != nil {
				wk.closeStmts()
				return nil, err
			}
			wk.stmts[t-1][k] = s
		}
	}
	return wk, nil
}

// closeStmts closes the driver's statements (on a lost connection they
// went with it, and Raw refuses: nothing to do).
func (wk *worker) closeStmts() {
	all := []*stmt{wk.begin, wk.commit, wk.single}
	for _, row := range wk.stmts {
		all = append(all, row[:]...)
	}
	_ = wk.conn.Raw(func(any) error {
		for _, s := range all {
			if s != nil && s.ps != nil {
				s.ps.Close()
			}
		}
		return nil
	})
}

// Close flushes bulk_insert's last batch and closes the statements (thread_done()).
func (wk *worker) Close(ctx context.Context, c *workload.Counts) error {
	defer wk.closeStmts()
	if wk.w.name == "bulk_insert" {
		return wk.bulkFlush(ctx, c)
	}
	return nil
}

func (wk *worker) table() int { return int(wk.rng.Uniform(1, uint32(wk.w.o.Tables))) }
func (wk *worker) id() int64  { return int64(wk.rng.Default(1, uint32(wk.w.o.TableSize))) }

// Event is the script's event(), chosen once per worker (pickBody).
func (wk *worker) Event(ctx context.Context, c *workload.Counts) error {
	if wk.begin != nil {
		if err := wk.run(ctx, wk.begin, c); err != nil {
			return err
		}
	}
	if err := wk.body(ctx, c); err != nil {
		return err
	}
	if wk.commit != nil {
		return wk.run(ctx, wk.commit, c)
	}
	return nil
}

// pickBody selects the statements of the script's event() between BEGIN
// and COMMIT, so the per-event path does not compare script names.
func (wk *worker) pickBody() func(context.Context, *workload.Counts) error {
	o := &wk.w.o
	switch wk.w.name {
	case "oltp_insert":
		return wk.insertEvent
	case "bulk_insert":
		return wk.bulkEvent
	case "select_random_points":
		return func(ctx context.Context, c *workload.Counts) error {
			rlen := float64(o.TableSize) / float64(wk.threads)
			rmin := rlen * float64(wk.thread)
			for i := range wk.args {
				wk.args[i] = int64(wk.rng.Default(uint32(rmin), uint32(rmin+rlen)))
			}
			return wk.run(ctx, wk.single, c, wk.args...)
		}
	case "select_random_ranges":
		return func(ctx context.Context, c *workload.Counts) error {
			rlen := float64(o.TableSize) / float64(wk.threads)
			rmin := rlen * float64(wk.thread)
			for i := 0; i < len(wk.args); i += 2 {
				v := int64(wk.rng.Default(uint32(rmin), uint32(rmin+rlen)))
				wk.args[i], wk.args[i+1] = v, v+int64(o.Delta)
			}
			return wk.run(ctx, wk.single, c, wk.args...)
		}
	case "oltp_point_select":
		return func(ctx context.Context, c *workload.Counts) error { return wk.pointSelects(ctx, c, 1) }
	case "oltp_update_index":
		return wk.indexUpdates
	case "oltp_update_non_index":
		return wk.nonIndexUpdates
	case "oltp_delete":
		return func(ctx context.Context, c *workload.Counts) error {
			t := wk.table()
			return wk.run(ctx, wk.stmts[t-1][deleteRow], c, wk.id())
		}
	case "oltp_read_only":
		return wk.reads
	case "oltp_write_only":
		return wk.writes
	}
	return func(ctx context.Context, c *workload.Counts) error { // oltp_read_write
		if err := wk.reads(ctx, c); err != nil {
			return err
		}
		return wk.writes(ctx, c)
	}
}

func (wk *worker) reads(ctx context.Context, c *workload.Counts) error {
	o := &wk.w.o
	if err := wk.pointSelects(ctx, c, o.PointSelects); err != nil {
		return err
	}
	if !o.RangeSelects {
		return nil
	}
	for _, r := range []struct {
		k kind
		n int
	}{{simpleRange, o.SimpleRanges}, {sumRange, o.SumRanges}, {orderRange, o.OrderRanges}, {distinctRange, o.DistinctRanges}} {
		t := wk.table()
		for i := 0; i < r.n; i++ {
			id := wk.id()
			if err := wk.run(ctx, wk.stmts[t-1][r.k], c, id, id+int64(o.RangeSize)-1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (wk *worker) writes(ctx context.Context, c *workload.Counts) error {
	if err := wk.indexUpdates(ctx, c); err != nil {
		return err
	}
	if err := wk.nonIndexUpdates(ctx, c); err != nil {
		return err
	}
	t := wk.table()
	for i := 0; i < wk.w.o.DeleteInserts; i++ {
		id, k := wk.id(), wk.id()
		wk.rng.FillString(wk.cbuf, cTemplate)
		wk.rng.FillString(wk.padbuf, padTemplate)
		if err := wk.run(ctx, wk.stmts[t-1][deleteRow], c, id); err != nil {
			return err
		}
		if err := wk.run(ctx, wk.stmts[t-1][insertRow], c, id, k, wk.text(wk.cbuf), wk.text(wk.padbuf)); err != nil {
			return err
		}
	}
	return nil
}

func (wk *worker) pointSelects(ctx context.Context, c *workload.Counts, n int) error {
	t := wk.table()
	for i := 0; i < n; i++ {
		if err := wk.run(ctx, wk.stmts[t-1][pointSelect], c, wk.id()); err != nil {
			return err
		}
	}
	return nil
}

func (wk *worker) indexUpdates(ctx context.Context, c *workload.Counts) error {
	t := wk.table()
	for i := 0; i < wk.w.o.IndexUpdates; i++ {
		if err := wk.run(ctx, wk.stmts[t-1][indexUpdate], c, wk.id()); err != nil {
			return err
		}
	}
	return nil
}

func (wk *worker) nonIndexUpdates(ctx context.Context, c *workload.Counts) error {
	t := wk.table()
	for i := 0; i < wk.w.o.NonIndexUpdates; i++ {
		wk.rng.FillString(wk.cbuf, cTemplate)
		if err := wk.run(ctx, wk.stmts[t-1][nonIndexUpdate], c, wk.text(wk.cbuf), wk.id()); err != nil {
			return err
		}
	}
	return nil
}

// insertEvent is oltp_insert.lua's event(): a text INSERT even in prepared mode.
func (wk *worker) insertEvent(ctx context.Context, c *workload.Counts) error {
	o := &wk.w.o
	t := wk.rng.Uniform(1, uint32(o.Tables))
	k := wk.rng.Default(1, uint32(o.TableSize))
	wk.rng.FillString(wk.cbuf, cTemplate)
	wk.rng.FillString(wk.padbuf, padTemplate)
	if wk.pg && o.AutoInc { // the serial column chooses (oltp_insert.lua's pgsql branch)
		q := "INSERT INTO sbtest" + strconv.Itoa(int(t)) + " (k, c, pad) VALUES (" +
			strconv.FormatUint(uint64(k), 10) + ", '" + string(wk.cbuf) + "', '" + string(wk.padbuf) + "')"
		return wk.run(ctx, &stmt{query: q}, c)
	}
	id := int64(0) // 0 lets AUTO_INCREMENT choose
	if !o.AutoInc {
		id = int64(wk.w.unique.Next()) - 2147483648
	}
	q := "INSERT INTO sbtest" + strconv.Itoa(int(t)) + " (id, k, c, pad) VALUES (" +
		strconv.FormatInt(id, 10) + ", " + strconv.FormatUint(uint64(k), 10) + ", '" +
		string(wk.cbuf) + "', '" + string(wk.padbuf) + "')"
	return wk.run(ctx, &stmt{query: q}, c)
}

// bulkEvent adds one row to the thread's multi-row INSERT, flushing at
// sysbench's 512 KiB; an event is one row, as in bulk_insert.lua.
func (wk *worker) bulkEvent(ctx context.Context, c *workload.Counts) error {
	wk.bulkSize++
	row := "(" + strconv.Itoa(wk.bulkSize) + "," + strconv.Itoa(wk.bulkSize) + ")"
	if wk.bulkRows > 0 && len(wk.bulkBuf)+1+len(row) > bulkPacketSize {
		if err := wk.bulkFlush(ctx, c); err != nil {
			return err
		}
	}
	if wk.bulkRows == 0 {
		wk.bulkBuf = append(wk.bulkBuf[:0], wk.bulkHead...)
	} else {
		wk.bulkBuf = append(wk.bulkBuf, ',')
	}
	wk.bulkBuf = append(wk.bulkBuf, row...)
	wk.bulkRows++
	return nil
}

func (wk *worker) bulkFlush(ctx context.Context, c *workload.Counts) error {
	if wk.bulkRows == 0 {
		return nil
	}
	wk.bulkRows = 0
	return wk.run(ctx, &stmt{query: string(wk.bulkBuf)}, c)
}

// text is a generated string value as the driver takes it: MySQL's takes
// the bytes as they are; pgx would send []byte as bytea, so PostgreSQL gets
// a string.
func (wk *worker) text(b []byte) any {
	if wk.pg {
		return string(b)
	}
	return b
}
