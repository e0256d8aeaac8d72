package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
)

// The specification's cardinalities (clause 4.2.2).
const (
	itemCount          = 100000
	districtsPerW      = 10
	customersPerD      = 3000
	ordersPerD         = 3000
	firstUndelivered   = 2101 // orders from here on are undelivered, with a new_order row
	stockChunk         = 10000
	avgOrderLinesPerD  = ordersPerD * 10
	rowsPerWarehouse   = 1 + districtsPerW + itemCount + districtsPerW*(2*customersPerD+ordersPerD+avgOrderLinesPerD+ordersPerD-firstUndelivered+1)
	loadReportEveryRow = 2000
)

// loadUnit is one independent piece of the load, with a generator seeded
// from its own position so that the data does not depend on scheduling.
type loadUnit struct {
	name string
	run  func(ctx context.Context, s *sink, g *rng) error
	// draw, if set, draws what the unit's row count depends on first (its
	// orders' line counts) and returns how many rows that adds to the
	// expected count: the load's total is then exact before it starts.
	draw func(g *rng) int
}

// units splits the load: items and stock in chunks, the rest per district.
func (w *tpccWorkload) units(now string) []loadUnit {
	var us []loadUnit
	for k := 0; k < itemCount/stockChunk; k++ {
		us = append(us, loadUnit{name: "item", run: func(ctx context.Context, s *sink, g *rng) error {
			return loadItems(ctx, s, g, k*stockChunk+1, stockChunk)
		}})
	}
	for wid := 1; wid <= w.o.Warehouses; wid++ {
		us = append(us, loadUnit{name: "warehouse", run: func(ctx context.Context, s *sink, g *rng) error { return loadWarehouse(ctx, s, g, wid) }})
		for k := 0; k < itemCount/stockChunk; k++ {
			us = append(us, loadUnit{name: "stock", run: func(ctx context.Context, s *sink, g *rng) error {
				return loadStock(ctx, s, g, wid, k*stockChunk+1, stockChunk)
			}})
		}
		for did := 1; did <= districtsPerW; did++ {
			us = append(us, loadUnit{name: "customer", run: func(ctx context.Context, s *sink, g *rng) error { return loadCustomers(ctx, s, g, wid, did, now) }})
			plan := &orderPlan{}
			us = append(us, loadUnit{name: "orders",
				run:  func(ctx context.Context, s *sink, g *rng) error { return loadOrders(ctx, s, g, wid, did, now, plan) },
				draw: func(g *rng) int { plan.draw(g); return plan.lineTotal - avgOrderLinesPerD }})
		}
	}
	return us
}

// prepare creates the nine tables and loads them with loaders in parallel.
func (w *tpccWorkload) prepare(ctx context.Context, db *sql.DB, d *dialect, bulk enginedriver.BulkLoader, threads int, progress func(workload.Progress)) error {
	for _, t := range tables {
		for _, q := range d.createTable(t) {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("create %s: %w", t.name, err)
			}
		}
	}
	units := w.units(time.Now().UTC().Format(time.DateTime))
	rngs := make([]*rng, len(units))
	total := uint64(itemCount + w.o.Warehouses*rowsPerWarehouse)
	for i, u := range units {
		rngs[i] = newRNG(w.seed*31 + uint64(i) + 1)
		if u.draw != nil {
			total = uint64(int64(total) + int64(u.draw(rngs[i])))
		}
	}
	var done atomic.Uint64
	var mu sync.Mutex
	var reported uint64 // the last count reported (the 100% line once)
	s := &sink{db: db, d: d, bulk: bulk, done: &done, report: func(table string) {
		if progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		reported = done.Load()
		progress(workload.Progress{Rows: reported, TotalRows: total, Table: table})
	}}
	next := atomic.Int64{}
	g, gctx := errgroup.WithContext(ctx)
	// The server does the work (parsing, indexes, the redo log): a few
	// loaders keep it busy whatever --threads is.
	for range max(threads, 4) {
		g.Go(func() error {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(units) {
					return nil
				}
				if err := units[i].run(gctx, s, rngs[i]); err != nil {
					return fmt.Errorf("load %s: %w", units[i].name, err)
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if progress != nil && reported != done.Load() {
		progress(workload.Progress{Rows: done.Load(), TotalRows: total, Table: "order_line"})
	}
	if done.Load() != total {
		return fmt.Errorf("loaded %d rows of the %d counted before the load", done.Load(), total)
	}
	if d.dollar {
		// PostgreSQL plans with statistics autovacuum would gather only
		// later, and vacuums freshly inserted tables when it gets to
		// them: both now, as a loader should, so that no autovacuum of
		// the load runs (and counts its transactions) in the first run.
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = t.name
		}
		if _, err := db.ExecContext(ctx, "VACUUM (ANALYZE) "+strings.Join(names, ", ")); err != nil {
			return fmt.Errorf("vacuum and analyze the loaded tables: %w", err)
		}
	}
	// Both modes' prepare makes the procedures: a later run in either
	// mode finds what it needs.
	return createProcedures(ctx, db, d, true)
}

// sink writes generated rows through the driver's bulk path (LOAD DATA
// LOCAL INFILE) or, where the server refuses it, multi-row INSERTs.
type sink struct {
	db     *sql.DB
	d      *dialect
	bulk   enginedriver.BulkLoader
	noBulk atomic.Bool
	done   *atomic.Uint64
	report func(table string)
}

// rows loads n rows into table, row(i, out) filling row i's values.
func (s *sink) rows(ctx context.Context, table string, n int, row func(i int, out []any)) error {
	cols := tableNamed(table).columnNames()
	out := make([]any, len(cols))
	if s.bulk != nil && !s.noBulk.Load() {
		i := 0
		_, err := s.bulk.CopyRows(ctx, table, cols, func() ([]any, bool) {
			if i == n {
				return nil, false
			}
			row(i, out)
			i++
			if i%loadReportEveryRow == 0 {
				s.done.Add(loadReportEveryRow)
				s.report(table)
			}
			return out, true
		})
		if err == nil {
			s.done.Add(uint64(n % loadReportEveryRow))
			s.report(table)
			return nil
		}
		if !errors.Is(err, enginedriver.ErrNoBulkLoad) {
			return err
		}
		s.noBulk.Store(true) // the same rows with INSERTs, from here on
	}
	const batch = 500
	head := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES "
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	args := make([]any, 0, batch*len(cols))
	for start := 0; start < n; start += batch {
		m := min(batch, n-start)
		args = args[:0]
		for i := start; i < start+m; i++ {
			row(i, out)
			args = append(args, out...)
		}
		q := s.d.bind(head + strings.TrimSuffix(strings.Repeat(one+", ", m), ", "))
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			return err
		}
		s.done.Add(uint64(m))
		s.report(table)
	}
	return nil
}

func loadItems(ctx context.Context, s *sink, g *rng, first, n int) error {
	return s.rows(ctx, "item", n, func(i int, r []any) {
		r[0], r[1], r[2], r[3], r[4] = int64(first+i), int64(g.uniform(1, 10000)), g.astring(14, 24),
			decimal(int64(g.uniform(100, 10000)), 2), g.data()
	})
}

// address fills street 1 and 2, city, state and zip.
func (g *rng) address(r []any) {
	r[0], r[1], r[2], r[3], r[4] = g.astring(10, 20), g.astring(10, 20), g.astring(10, 20), g.astring(2, 2), g.zip()
}

func loadWarehouse(ctx context.Context, s *sink, g *rng, w int) error {
	err := s.rows(ctx, "warehouse", 1, func(_ int, r []any) {
		r[0], r[1] = int64(w), g.astring(6, 10)
		g.address(r[2:7])
		r[7], r[8] = decimal(int64(g.uniform(0, 2000)), 4), "300000.00"
	})
	if err != nil {
		return err
	}
	return s.rows(ctx, "district", districtsPerW, func(i int, r []any) {
		r[0], r[1], r[2] = int64(i+1), int64(w), g.astring(6, 10)
		g.address(r[3:8])
		r[8], r[9], r[10] = decimal(int64(g.uniform(0, 2000)), 4), "30000.00", int64(ordersPerD+1)
	})
}

func loadStock(ctx context.Context, s *sink, g *rng, w, first, n int) error {
	return s.rows(ctx, "stock", n, func(i int, r []any) {
		r[0], r[1], r[2] = int64(first+i), int64(w), int64(g.uniform(10, 100))
		for d := 0; d < 10; d++ {
			r[3+d] = g.astring(24, 24)
		}
		r[13], r[14], r[15], r[16] = int64(0), int64(0), int64(0), g.data()
	})
}

func loadCustomers(ctx context.Context, s *sink, g *rng, w, d int, now string) error {
	err := s.rows(ctx, "customer", customersPerD, func(i int, r []any) {
		cid := i + 1
		last := cid - 1 // the first 1000 customers cover every name once (clause 4.3.3.1)
		if cid > 1000 {
			last = g.nurand(255, 0, 999, cLoad)
		}
		credit := "GC"
		if g.uniform(1, 10) == 1 {
			credit = "BC"
		}
		r[0], r[1], r[2], r[3], r[4], r[5] = int64(cid), int64(d), int64(w), g.astring(8, 16), "OE", lastName(last)
		g.address(r[6:11])
		r[11], r[12], r[13], r[14] = g.nstring(16), now, credit, "50000.00"
		r[15], r[16], r[17], r[18], r[19], r[20] = decimal(int64(g.uniform(0, 5000)), 4), "-10.00", "10.00", int64(1), int64(0), g.astring(300, 500)
	})
	if err != nil {
		return err
	}
	return s.rows(ctx, "history", customersPerD, func(i int, r []any) {
		r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7] = int64(i+1), int64(d), int64(w), int64(d), int64(w), now, "10.00", g.astring(12, 24)
	})
}

// orderPlan is a district's orders drawn before the load: the customers'
// permutation and each order's line count (the same draws, in the same
// order, as when they were drawn during it).
type orderPlan struct {
	cust, lines []int
	lineTotal   int
}

func (p *orderPlan) draw(g *rng) {
	// O_C_ID is a random permutation of the customers (clause 4.3.3.1).
	p.cust = make([]int, ordersPerD)
	for i := range p.cust {
		p.cust[i] = i + 1
	}
	g.r.Shuffle(len(p.cust), func(i, j int) { p.cust[i], p.cust[j] = p.cust[j], p.cust[i] })
	p.lines = make([]int, ordersPerD)
	p.lineTotal = 0
	for i := range p.lines {
		p.lines[i] = g.uniform(5, 15)
		p.lineTotal += p.lines[i]
	}
}

func loadOrders(ctx context.Context, s *sink, g *rng, w, d int, now string, p *orderPlan) error {
	if p.lines == nil {
		p.draw(g)
	}
	cust, lines, total := p.cust, p.lines, p.lineTotal
	err := s.rows(ctx, "orders", ordersPerD, func(i int, r []any) {
		oid := i + 1
		var carrier any
		if oid < firstUndelivered {
			carrier = int64(g.uniform(1, 10))
		}
		r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7] = int64(oid), int64(d), int64(w), int64(cust[i]), now, carrier, int64(lines[i]), int64(1)
	})
	if err != nil {
		return err
	}
	oid, num := 1, 0
	err = s.rows(ctx, "order_line", total, func(_ int, r []any) {
		num++
		if num > lines[oid-1] {
			oid, num = oid+1, 1
		}
		var delivered any
		amount := "0.00"
		if oid < firstUndelivered {
			delivered = now
		} else {
			amount = decimal(int64(g.uniform(1, 999999)), 2)
		}
		r[0], r[1], r[2], r[3], r[4], r[5] = int64(oid), int64(d), int64(w), int64(num), int64(g.uniform(1, itemCount)), int64(w)
		r[6], r[7], r[8], r[9] = delivered, int64(5), amount, g.astring(24, 24)
	})
	if err != nil {
		return err
	}
	return s.rows(ctx, "new_order", ordersPerD-firstUndelivered+1, func(i int, r []any) {
		r[0], r[1], r[2] = int64(firstUndelivered+i), int64(d), int64(w)
	})
}
