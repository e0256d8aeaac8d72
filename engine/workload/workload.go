// Package workload defines what the engine drives: a Workload prepares,
// checks and cleans its tables and makes one Worker per thread; a Worker runs
// one event (one call of a sysbench script's event()) at a time.
package workload

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine/driver"
)

// Counts are the statements an event ran, classified as sysbench does:
// reads returned a result set, writes affected rows, other is the rest
// (BEGIN, COMMIT, and DML that matched no row).
type Counts struct {
	Reads, Writes, Other uint64
}

// Total is the number of queries.
func (c Counts) Total() uint64 { return c.Reads + c.Writes + c.Other }

// Add accumulates o into c.
func (c *Counts) Add(o Counts) {
	c.Reads += o.Reads
	c.Writes += o.Writes
	c.Other += o.Other
}

// Worker runs events on one dedicated connection. Not safe for concurrent use.
type Worker interface {
	// Event runs one event and adds its statements to c, also on error
	// (statements that ran before the failing one count, as in sysbench).
	Event(ctx context.Context, c *Counts) error
	// Close finishes the thread's work (bulk_insert flushes its last batch)
	// and releases statements; the connection stays the caller's.
	Close(ctx context.Context, c *Counts) error
}

// TableState says whether a database holds the tables a workload needs.
type TableState struct {
	Missing  bool   // no table of the workload exists: prepare
	Reusable bool   // tables exist with the right shape, count and size
	Reason   string // why existing tables cannot be reused
	// Objects names what is reused ("" is sysbench's sbtestN tables);
	// Nothing says the workload needs no data at all (cpu, memory).
	Objects string
	Nothing bool
}

// Progress reports prepare progress.
type Progress struct {
	Rows, TotalRows uint64
	Table           string
}

// Workload is one benchmark script with its options already applied.
type Workload interface {
	Name() string
	// Protocols are the driver protocols the workload speaks ("mysql").
	Protocols() []string
	// Shape is the data the workload runs on, typed (no option lookups).
	Shape() Shape
	// Options are the effective option values, for the result JSON.
	Options() map[string]any
	// Validate checks option combinations the script would refuse, given the thread count.
	Validate(threads int) error
	Check(ctx context.Context, db driver.DB, threads int) (TableState, error)
	Prepare(ctx context.Context, db driver.DB, threads int, progress func(Progress)) error
	// Cleanup drops the workload's tables, and only those of its shape.
	Cleanup(ctx context.Context, db driver.DB, threads int) ([]string, error)
	// NewWorker prepares statements for thread on conn.
	NewWorker(ctx context.Context, conn driver.Conn, thread, threads int, seed uint64) (Worker, error)
}

// Shape is the size of a workload's data set and its random seed.
type Shape struct {
	Tables    int
	TableSize int
	RandSeed  uint64 // --rand-seed (0: from the clock)
}

// Transactional is a workload that says whether its events run in explicit
// transactions (BEGIN ... COMMIT), for servers that count transactions.
type Transactional interface {
	UsesTransactions() bool
}

// Transfer is a workload whose reads and writes each move BlockBytes
// bytes (memory's blocks, fileio's requests): the engine reports MiB/s.
type Transfer interface {
	BlockBytes() int64
}

// Portable is a workload that can be rebuilt elsewhere (by dbduel's agent
// inside a container) from its name and these flags.
type Portable interface {
	Args() []string
}

// ErrEndOfEvents is returned by a worker whose own limit is reached
// (memory's --memory-total-size): the thread ends, the event is not counted.
var ErrEndOfEvents = errors.New("the workload's own event limit is reached")

// Sweepable is a workload whose data size can vary across a sweep.
type Sweepable interface {
	TableSizes() []int
	WithTableSize(n int) (Workload, error)
}

// Family is a set of workloads sharing one option set (as sysbench's
// oltp_*.lua scripts share oltp_common.lua's options).
type Family interface {
	Names() []string
	// BindFlags binds a fresh option set to fs and returns the constructor
	// that reads it (each command gets its own options).
	BindFlags(fs *pflag.FlagSet) func(name string) (Workload, error)
}

var families []Family

// Register adds a family; called from the family's package init.
func Register(f Family) { families = append(families, f) }

// Factory makes a workload by name from the options bound to one flag set.
type Factory func(name string) (Workload, error)

// BindFlags binds every registered family's options to fs and returns the
// factory that builds workloads from them.
func BindFlags(fs *pflag.FlagSet) Factory {
	makers := map[string]func(string) (Workload, error){}
	for _, f := range families {
		mk := f.BindFlags(fs)
		for _, n := range f.Names() {
			makers[n] = mk
		}
	}
	return func(name string) (Workload, error) {
		if mk, ok := makers[name]; ok {
			return mk(name)
		}
		return nil, fmt.Errorf("unknown workload %q (known: %v)", name, Names())
	}
}

// Names lists every registered workload, sorted.
func Names() []string {
	var out []string
	for _, f := range families {
		out = append(out, f.Names()...)
	}
	sort.Strings(out)
	return out
}
