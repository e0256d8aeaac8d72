// Package mongo is sysbench-mongodb's benchmark (Percona-Lab's
// jmongosysbench) on dbduel's engine: collections sbtestN of documents
// {_id, k, c, pad} with a secondary index on k, and its transaction of
// point finds, range finds, a sum aggregation, a sorted range, a distinct,
// $inc on k, $set on c and a delete + insert. mongo_read_only sets the
// three write counts to 0, as sysbench-mongodb's read-only set-up does.
package mongo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine/workload"
)

// Options are sysbench-mongodb's settings under sysbench's option names
// (its config.bash names them after oltp.lua's: SYSBENCH_POINT_SELECTS is
// --point-selects, NUM_COLLECTIONS --tables, NUM_DOCUMENTS_PER_COLLECTION
// --table-size); their defaults are the same numbers.
type Options struct {
	Tables, TableSize             int
	RangeSize                     int
	PointSelects, SimpleRanges    int
	SumRanges, OrderRanges        int
	DistinctRanges                int
	IndexUpdates, NonIndexUpdates int
	DeleteInserts                 int
	RandSeed                      uint64
	ReadOnly                      bool
	DocumentsPerInsert            int // NUM_DOCUMENTS_PER_INSERT, the loader's batch
}

// Defaults are sysbench-mongodb's transaction with dbduel's sysbench data
// size (--tables 1 --table-size 10000; seed 004 uses 1M documents).
func Defaults() Options {
	return Options{Tables: 1, TableSize: 10000, RangeSize: 100, PointSelects: 10, SimpleRanges: 1, SumRanges: 1,
		OrderRanges: 1, DistinctRanges: 1, IndexUpdates: 1, NonIndexUpdates: 1, DeleteInserts: 1, DocumentsPerInsert: 1000}
}

type family struct{}

func (family) Names() []string { return []string{"mongo_read_only", "mongo_read_write"} }

// BindFlags binds nothing of its own: the OLTP family binds sysbench's
// options, which these workloads read by name.
func (family) BindFlags(fs *pflag.FlagSet) func(string) (workload.Workload, error) {
	return func(name string) (workload.Workload, error) {
		o := Defaults()
		ints := map[string]*int{"tables": &o.Tables, "range-size": &o.RangeSize, "point-selects": &o.PointSelects,
			"simple-ranges": &o.SimpleRanges, "sum-ranges": &o.SumRanges, "order-ranges": &o.OrderRanges,
			"distinct-ranges": &o.DistinctRanges, "index-updates": &o.IndexUpdates, "non-index-updates": &o.NonIndexUpdates,
			"delete-inserts": &o.DeleteInserts}
		for flag, p := range ints {
			v, ok, err := workload.LookupInt(fs, flag)
			if err != nil {
				return nil, err
			}
			if ok {
				*p = v
			}
		}
		if f := fs.Lookup("table-size"); f != nil {
			s := f.Value.String()
			if strings.Contains(s, ",") {
				return nil, fmt.Errorf("--table-size %s: %s does not sweep the data size; run one size at a time", s, name)
			}
			v, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("--table-size: %v", err)
			}
			o.TableSize = v
		}
		o.RandSeed = workload.LookupUint64(fs, "rand-seed")
		o.ReadOnly = name == "mongo_read_only"
		return New(o)
	}
}

func init() { workload.Register(family{}) }

// New returns the workload with options o.
func New(o Options) (workload.Workload, error) {
	if o.Tables < 1 {
		return nil, fmt.Errorf("--tables must be at least 1")
	}
	if o.TableSize < 1 {
		return nil, fmt.Errorf("--table-size must be at least 1")
	}
	if o.RangeSize < 1 {
		return nil, fmt.Errorf("--range-size must be at least 1")
	}
	for _, n := range []int{o.PointSelects, o.SimpleRanges, o.SumRanges, o.OrderRanges, o.DistinctRanges, o.IndexUpdates, o.NonIndexUpdates, o.DeleteInserts} {
		if n < 0 {
			return nil, fmt.Errorf("operation counts per transaction must be 0 or more")
		}
	}
	if o.ReadOnly {
		o.IndexUpdates, o.NonIndexUpdates, o.DeleteInserts = 0, 0, 0
	}
	if o.DocumentsPerInsert < 1 {
		o.DocumentsPerInsert = 1000
	}
	return &mongoWorkload{o: o, seed: workload.SeedOrClock(o.RandSeed)}, nil
}

type mongoWorkload struct {
	o    Options
	seed uint64
}

func (w *mongoWorkload) Name() string {
	if w.o.ReadOnly {
		return "mongo_read_only"
	}
	return "mongo_read_write"
}

func (w *mongoWorkload) Protocols() []string { return []string{"mongodb"} }

func (w *mongoWorkload) Shape() workload.Shape {
	return workload.Shape{Tables: w.o.Tables, TableSize: w.o.TableSize, RandSeed: w.o.RandSeed}
}

func (w *mongoWorkload) Options() map[string]any {
	return map[string]any{"tables": w.o.Tables, "table_size": w.o.TableSize, "range_size": w.o.RangeSize,
		"point_selects": w.o.PointSelects, "simple_ranges": w.o.SimpleRanges, "sum_ranges": w.o.SumRanges,
		"order_ranges": w.o.OrderRanges, "distinct_ranges": w.o.DistinctRanges, "index_updates": w.o.IndexUpdates,
		"non_index_updates": w.o.NonIndexUpdates, "delete_inserts": w.o.DeleteInserts, "rand_seed": w.o.RandSeed,
		"rand_type": "uniform", "documents_per_insert": w.o.DocumentsPerInsert}
}

func (w *mongoWorkload) Validate(threads int) error {
	if threads < 1 {
		return fmt.Errorf("--threads must be at least 1")
	}
	return nil
}

// Objects is what a reused data set is called in messages.
func collectionName(i int) string { return "sbtest" + strconv.Itoa(i) }
