// Package workload defines what the engine drives: a Workload prepares,
// checks and cleans its tables and makes one Worker per thread; a Worker runs
// one event (one call of a sysbench script's event()) at a time.
package workload

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/HdrHistogram/hdrhistogram-go"
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

// Nouns is a workload whose data is not rows in tables: what its
// progress and messages call a unit and its container (fileio: blocks in
// files).
type Nouns interface {
	Nouns() (unit, container string)
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

// ProcessShared is a workload whose threads may share state within one
// process (a sequence they all draw from): such a run cannot be split over
// agents, which could not share it.
type ProcessShared interface {
	// SharedState says what the threads share ("" when nothing).
	SharedState() string
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

// TypeCounts are what a worker did of one transaction type since the last
// swap: completed events (Rollbacks of them ended in an intended
// ROLLBACK), failed attempts, and the completed events' latencies in µs.
type TypeCounts struct {
	Done, Rollbacks, Errors uint64
	Hist                    *hdrhistogram.Histogram
}

// Typed is a workload whose events are of named transaction types (TPC-C's
// five): its workers are TypedWorkers and the engine reports each type.
type Typed interface {
	TypeNames() []string
	// HeadlineType is the type whose completed, committed events per
	// minute are the workload's throughput (TPC-C's New-Order: tpmC).
	HeadlineType() int
}

// TypedWorker is a Worker that counts its events per type.
type TypedWorker interface {
	// SwapTypes adds the counts since the last swap into into (indexed as
	// TypeNames) and starts new ones. Safe to call while Event runs.
	SwapTypes(into []TypeCounts)
}

// ServerCounters are a workload's own figures read from the server: the
// data it changed (TPC-C's sum of d_next_o_id) and the server's
// transaction counters, so that throughput is what the server did, as
// HammerDB reports it.
type ServerCounters struct {
	Headline     uint64 // e.g. New-Orders committed so far
	Transactions uint64 // commits + rollbacks
	Source       string // what was read
}

// ServerCounted is a workload whose throughput is read from the server
// before and after the measured time (NOPM and TPM).
type ServerCounted interface {
	ServerCounters(ctx context.Context, db driver.DB) (ServerCounters, error)
}

// Condition is one consistency condition checked on a target's data.
type Condition struct {
	ID     string // "1"
	Clause string // the specification's clause, "3.3.2.1"
	Text   string // what must hold
	OK     bool
	Detail string // the first violation, when !OK
}

// Consistent is a workload with consistency conditions on its data
// (TPC-C's 3.3.2.x): dbduel check runs them.
type Consistent interface {
	Consistency(ctx context.Context, db driver.DB) ([]Condition, error)
}
