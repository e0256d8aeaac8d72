// Package tpcc is the TPC-C workload as HammerDB's TPROC-C runs it on
// MySQL, MariaDB and PostgreSQL: the specification's nine tables, its
// loader, and its five transactions in the standard mix with no keying or
// thinking time, each one call of a stored procedure (or the profile's
// statements from the client). Throughput is read from the server as
// HammerDB reads it: NOPM from the district table's d_next_o_id, TPM from
// the commit and rollback counters.
package tpcc

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/spf13/pflag"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
)

// Options are the workload's options.
type Options struct {
	Warehouses int
	RandSeed   uint64
	// Mode is how a transaction reaches the server: procedures (one CALL
	// of a stored procedure, as HammerDB) or statements (the profile's
	// statements from the client).
	Mode string
}

type family struct{}

func (family) Names() []string { return []string{"tpcc"} }

func (family) BindFlags(fs *pflag.FlagSet) func(string) (workload.Workload, error) {
	o := Options{}
	fs.IntVar(&o.Warehouses, "warehouses", 1, "TPC-C: number of warehouses (the scale; HammerDB's warehouse count)")
	fs.StringVar(&o.Mode, "tpcc-mode", modeProcedures, "TPC-C: `procedures` (one CALL of a stored procedure a transaction, as HammerDB) or statements (the profile's statements from the client: many round trips)")
	return func(name string) (workload.Workload, error) {
		// --rand-seed is sysbench's core option, bound by the OLTP family.
		o.RandSeed = workload.LookupUint64(fs, "rand-seed")
		return New(o)
	}
}

func init() { workload.Register(family{}) }

// New returns the TPC-C workload with options o.
func New(o Options) (workload.Workload, error) {
	if o.Warehouses < 1 {
		return nil, fmt.Errorf("--warehouses must be at least 1")
	}
	switch o.Mode {
	case "":
		o.Mode = modeProcedures
	case modeProcedures, modeStatements:
	default:
		return nil, fmt.Errorf("--tpcc-mode %q: want procedures or statements", o.Mode)
	}
	return &tpccWorkload{o: o, seed: workload.SeedOrClock(o.RandSeed)}, nil
}

type tpccWorkload struct {
	o    Options
	seed uint64
}

func (w *tpccWorkload) Name() string { return "tpcc" }

// Protocols: TPC-C on MySQL, MariaDB and PostgreSQL.
func (w *tpccWorkload) Protocols() []string { return []string{"mysql", "postgres"} }

// Shape: the warehouses are the scale (the nine tables are fixed).
func (w *tpccWorkload) Shape() workload.Shape {
	return workload.Shape{Tables: len(tables), TableSize: w.o.Warehouses, RandSeed: w.o.RandSeed}
}

func (w *tpccWorkload) Options() map[string]any {
	return map[string]any{"warehouses": w.o.Warehouses, "rand_seed": w.o.RandSeed, "mode": w.o.Mode,
		"mix": "new_order 45%, payment 43%, order_status 4%, delivery 4%, stock_level 4%", "keying_thinking": false}
}

func (w *tpccWorkload) Validate(threads int) error {
	if threads < 1 {
		return fmt.Errorf("--threads must be at least 1")
	}
	return nil
}

// UsesTransactions is false for the honesty check: the statements mode's
// BEGIN and COMMIT are plain statements (not prepared) that the server's
// statement counters count, as dbduel counts them, and the procedures mode
// sends none (one statement a transaction).
func (w *tpccWorkload) UsesTransactions() bool { return false }

func (w *tpccWorkload) sqlDB(db enginedriver.DB) (*sql.DB, *dialect, error) {
	sdb, ok := db.(enginedriver.SQLDB)
	if !ok {
		return nil, nil, fmt.Errorf("workload tpcc runs on MySQL, MariaDB and PostgreSQL targets only")
	}
	d, err := dialectOf(sdb.Dialect())
	return sdb.SQL(), d, err
}

func (w *tpccWorkload) Check(ctx context.Context, db enginedriver.DB, threads int) (workload.TableState, error) {
	sdb, d, err := w.sqlDB(db)
	if err != nil {
		return workload.TableState{}, err
	}
	return w.check(ctx, sdb, d)
}

func (w *tpccWorkload) Prepare(ctx context.Context, db enginedriver.DB, threads int, progress func(workload.Progress)) error {
	sdb, d, err := w.sqlDB(db)
	if err != nil {
		return err
	}
	bulk, _ := db.(enginedriver.BulkLoader)
	return w.prepare(ctx, sdb, d, bulk, threads, progress)
}

func (w *tpccWorkload) Cleanup(ctx context.Context, db enginedriver.DB, threads int) ([]string, error) {
	sdb, d, err := w.sqlDB(db)
	if err != nil {
		return nil, err
	}
	return w.cleanup(ctx, sdb, d)
}

// TypeNames are the five transactions, in the order of the mix.
func (w *tpccWorkload) TypeNames() []string { return typeNames[:] }

// HeadlineType is New-Order: its commits per minute are tpmC.
func (w *tpccWorkload) HeadlineType() int { return int(newOrder) }

// ServerCounters reads what HammerDB reads: the sum of d_next_o_id (each
// committed New-Order adds one) and the server's commits and rollbacks.
func (w *tpccWorkload) ServerCounters(ctx context.Context, db enginedriver.DB) (workload.ServerCounters, error) {
	sdb, d, err := w.sqlDB(db)
	if err != nil {
		return workload.ServerCounters{}, err
	}
	return d.serverCounters(ctx, db, sdb)
}
