// Package oltp is sysbench 1.0.20's OLTP family (oltp_common.lua and the
// scripts built on it, plus bulk_insert): the same schema, statements,
// statement mix, option names and defaults.
package oltp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/sbrand"
	"github.com/spf13/pflag"
)

// Options are oltp_common.lua's options plus the sysbench core options the
// scripts depend on (--rand-*, --db-ps-mode).
type Options struct {
	TableSize       int
	TableSizes      []int // --table-size 10000,100000: a sweep (TableSize is the first)
	Tables          int
	RangeSize       int
	PointSelects    int
	SimpleRanges    int
	SumRanges       int
	OrderRanges     int
	DistinctRanges  int
	IndexUpdates    int
	NonIndexUpdates int
	DeleteInserts   int
	RangeSelects    bool
	AutoInc         bool
	SkipTrx         bool
	Secondary       bool
	CreateSecondary bool
	StorageEngine   string
	RandomPoints    int // select_random_points
	NumberOfRanges  int // select_random_ranges
	Delta           int // select_random_ranges

	PSMode   string // --db-ps-mode: auto|disable
	RandType string
	RandSeed uint64
	Rand     sbrand.Params
}

// DefaultOptions are sysbench 1.0.20's defaults.
func DefaultOptions() Options {
	return Options{
		TableSize: 10000, Tables: 1, RangeSize: 100, PointSelects: 10,
		SimpleRanges: 1, SumRanges: 1, OrderRanges: 1, DistinctRanges: 1,
		IndexUpdates: 1, NonIndexUpdates: 1, DeleteInserts: 1,
		RangeSelects: true, AutoInc: true, CreateSecondary: true,
		StorageEngine: "innodb", RandomPoints: 10, NumberOfRanges: 10, Delta: 5,
		PSMode: "auto", RandType: "special", Rand: sbrand.DefaultParams(),
	}
}

// Bind registers the options under sysbench's names. sysbench accepts both
// --table-size and --table_size; so does dbduel (normalised to dashes).
func (o *Options) Bind(fs *pflag.FlagSet) {
	d := DefaultOptions()
	o.TableSizes = []int{d.TableSize}
	fs.Var(&sizeList{o}, "table-size", "number of rows per table; a comma-separated list sweeps (e.g. 10000,100000)")
	fs.IntVar(&o.Tables, "tables", d.Tables, "number of tables")
	fs.IntVar(&o.RangeSize, "range-size", d.RangeSize, "range size for range SELECT queries")
	fs.IntVar(&o.PointSelects, "point-selects", d.PointSelects, "number of point SELECT queries per transaction")
	fs.IntVar(&o.SimpleRanges, "simple-ranges", d.SimpleRanges, "number of simple range SELECT queries per transaction")
	fs.IntVar(&o.SumRanges, "sum-ranges", d.SumRanges, "number of SELECT SUM() queries per transaction")
	fs.IntVar(&o.OrderRanges, "order-ranges", d.OrderRanges, "number of SELECT ORDER BY queries per transaction")
	fs.IntVar(&o.DistinctRanges, "distinct-ranges", d.DistinctRanges, "number of SELECT DISTINCT queries per transaction")
	fs.IntVar(&o.IndexUpdates, "index-updates", d.IndexUpdates, "number of UPDATE index queries per transaction")
	fs.IntVar(&o.NonIndexUpdates, "non-index-updates", d.NonIndexUpdates, "number of UPDATE non-index queries per transaction")
	fs.IntVar(&o.DeleteInserts, "delete-inserts", d.DeleteInserts, "number of DELETE/INSERT combinations per transaction")
	workload.BoolFlag(fs, &o.RangeSelects, "range-selects", d.RangeSelects, "enable/disable all range SELECT queries")
	workload.BoolFlag(fs, &o.AutoInc, "auto-inc", d.AutoInc, "use AUTO_INCREMENT column as primary key; when off, use client-generated ids")
	workload.BoolFlag(fs, &o.SkipTrx, "skip-trx", d.SkipTrx, "don't start explicit transactions, run all queries in AUTOCOMMIT mode")
	workload.BoolFlag(fs, &o.Secondary, "secondary", d.Secondary, "use a secondary index in place of the PRIMARY KEY")
	workload.BoolFlag(fs, &o.CreateSecondary, "create-secondary", d.CreateSecondary, "create a secondary index in addition to the PRIMARY KEY")
	fs.StringVar(&o.StorageEngine, "mysql-storage-engine", d.StorageEngine, "storage engine")
	fs.IntVar(&o.RandomPoints, "random-points", d.RandomPoints, "number of random points in the IN() clause (select_random_points)")
	fs.IntVar(&o.NumberOfRanges, "number-of-ranges", d.NumberOfRanges, "number of random BETWEEN ranges per SELECT (select_random_ranges)")
	fs.IntVar(&o.Delta, "delta", d.Delta, "size of BETWEEN ranges (select_random_ranges)")
	fs.StringVar(&o.PSMode, "db-ps-mode", d.PSMode, "prepared statements usage mode {auto, disable}")
	fs.StringVar(&o.RandType, "rand-type", d.RandType, "random numbers distribution {uniform, gaussian, special, pareto; zipfian is a dbduel extension}")
	fs.Uint64Var(&o.RandSeed, "rand-seed", 0, "seed for the workload's random numbers; 0 uses the current time")
	fs.IntVar(&o.Rand.SpecIter, "rand-spec-iter", d.Rand.SpecIter, "number of iterations for the special distribution")
	fs.IntVar(&o.Rand.SpecPct, "rand-spec-pct", d.Rand.SpecPct, "percentage of the entire range where 'special' values will fall")
	fs.IntVar(&o.Rand.SpecRes, "rand-spec-res", d.Rand.SpecRes, "percentage of 'special' values to use for the special distribution")
	fs.Float64Var(&o.Rand.ParetoH, "rand-pareto-h", d.Rand.ParetoH, "shape parameter for the Pareto distribution")
	fs.Float64Var(&o.Rand.ZipfianExp, "rand-zipfian-exp", d.Rand.ZipfianExp, "shape parameter for the Zipfian distribution (dbduel extension)")
}

// sizeList is --table-size: one size or a sweep list.
type sizeList struct{ o *Options }

func (l *sizeList) String() string {
	var parts []string
	for _, n := range l.o.TableSizes {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ",")
}

func (l *sizeList) Set(s string) error {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return fmt.Errorf("want a row count or a comma-separated list such as 10000,100000")
		}
		sizes = append(sizes, n)
	}
	l.o.TableSizes, l.o.TableSize = sizes, sizes[0]
	return nil
}

func (l *sizeList) Type() string { return "rows[,rows...]" }

// validate checks what sysbench or the server would refuse.
func (o *Options) validate(name string) error {
	d, err := sbrand.ParseDist(o.RandType)
	if err != nil {
		return err
	}
	o.Rand.Dist = d
	if err := o.Rand.Validate(); err != nil {
		return err
	}
	switch strings.ToLower(o.PSMode) {
	case "auto", "disable":
	default:
		return fmt.Errorf("invalid --db-ps-mode %q: want auto or disable", o.PSMode)
	}
	if o.Tables < 1 {
		return fmt.Errorf("--tables must be at least 1")
	}
	if o.TableSize < 0 {
		return fmt.Errorf("--table-size must not be negative")
	}
	if o.TableSize > 1<<31-1 {
		return fmt.Errorf("--table-size must fit a SQL INTEGER")
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"range-size", o.RangeSize}, {"point-selects", o.PointSelects}, {"simple-ranges", o.SimpleRanges},
		{"sum-ranges", o.SumRanges}, {"order-ranges", o.OrderRanges}, {"distinct-ranges", o.DistinctRanges},
		{"index-updates", o.IndexUpdates}, {"non-index-updates", o.NonIndexUpdates}, {"delete-inserts", o.DeleteInserts},
		{"delta", o.Delta}} {
		if c.v < 0 {
			return fmt.Errorf("--%s must not be negative", c.name)
		}
	}
	if !validIdent(o.StorageEngine) {
		return fmt.Errorf("invalid --mysql-storage-engine %q", o.StorageEngine)
	}
	if (name == "select_random_points" || name == "select_random_ranges") && o.Tables != 1 {
		return fmt.Errorf("%s does not support --tables > 1", name)
	}
	if name == "select_random_points" && o.RandomPoints < 1 {
		return fmt.Errorf("--random-points must be at least 1")
	}
	if name == "select_random_ranges" && o.NumberOfRanges < 1 {
		return fmt.Errorf("--number-of-ranges must be at least 1")
	}
	return nil
}

func validIdent(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// asMap is the effective options for the result JSON, under sysbench's names.
func (o Options) asMap(name string) map[string]any {
	m := map[string]any{
		"tables": o.Tables, "table_size": o.TableSize, "db_ps_mode": o.PSMode,
		"rand_type": o.RandType, "rand_seed": o.RandSeed, "rand_spec_iter": o.Rand.SpecIter,
		"rand_spec_pct": o.Rand.SpecPct, "rand_spec_res": o.Rand.SpecRes, "rand_pareto_h": o.Rand.ParetoH,
		"auto_inc": o.AutoInc, "secondary": o.Secondary, "create_secondary": o.CreateSecondary,
		"mysql_storage_engine": o.StorageEngine, "skip_trx": o.SkipTrx, "range_size": o.RangeSize,
	}
	switch name {
	case "select_random_points":
		m["random_points"] = o.RandomPoints
	case "select_random_ranges":
		m["number_of_ranges"] = o.NumberOfRanges
		m["delta"] = o.Delta
	default:
		for k, v := range map[string]any{
			"point_selects": o.PointSelects, "simple_ranges": o.SimpleRanges, "sum_ranges": o.SumRanges,
			"order_ranges": o.OrderRanges, "distinct_ranges": o.DistinctRanges, "index_updates": o.IndexUpdates,
			"non_index_updates": o.NonIndexUpdates, "delete_inserts": o.DeleteInserts, "range_selects": o.RangeSelects,
		} {
			m[k] = v
		}
	}
	if o.RandType == "zipfian" {
		m["rand_zipfian_exp"] = o.Rand.ZipfianExp
	}
	return m
}

// family registers the OLTP scripts, which share one option set.
type family struct{}

var scripts = []string{
	"oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select",
	"oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete",
	"select_random_points", "select_random_ranges", "bulk_insert",
}

func (family) Names() []string { return scripts }

func (family) BindFlags(fs *pflag.FlagSet) func(string) (workload.Workload, error) {
	o := DefaultOptions()
	o.Bind(fs)
	return func(name string) (workload.Workload, error) { return New(name, o) }
}

func init() { workload.Register(family{}) }
