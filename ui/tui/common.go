package tui

import (
	"time"

	"github.com/charmbracelet/bubbles/help"

	"github.com/dbduel/dbduel/engine/result"
)

// Info is what the header shows about the run.
type Info struct {
	Workload  string
	Tables    int
	TableSize int
	Threads   int
	Rate      float64
	Runs      int
	RunTime   time.Duration
	Targets   []result.Target // baseline first
	OutPath   string
	TotalRuns int // runs in the whole plan (all points, warm-ups included)
	// Data replaces "T×N rows" in the header for workloads without tables
	// (cpu, memory, fileio) and TPC-C's warehouses.
	Data string
	// Rows is what the workload's tables hold, for the header and the
	// prepare card: "rows" (the default), or MongoDB's "documents".
	Rows string
	// Figures is what the cards and charts count.
	Figures Figures
	// Schedule is how the screens follow the session (PlanView when nil).
	Schedule Schedule
	// Note follows the header's first line ("replay of a run measured …").
	Note string
}

// Figures is what a workload's cards and charts count.
type Figures int

const (
	// Transactions: TPS and QPS (sysbench's OLTP scripts, MongoDB's).
	Transactions Figures = iota
	// NewOrders: TPC-C's client-counted tpmC and TPM per interval, and
	// each finished run's server-counted NOPM and TPM.
	NewOrders
	// Events: the system tests' events/s and the MiB/s they moved.
	Events
)

// common is what every screen shares: the run's description, the
// terminal, the clock, the plan's state and its result, the last message.
type common struct {
	info     Info
	width    int
	height   int
	color    bool
	help     help.Model
	fullHelp bool
	started  time.Time
	now      time.Time
	phase    string
	message  string
	stopping bool           // the user asked to stop (q) before the plan finished
	done     bool           // the engine sent its final result
	res      *result.Result // the final result, once the plan ended
	latest   *result.Result // the newest snapshot (after each run)
	err      error
}

// exportPath is where e writes: -o's file, else a new timestamped one.
func (m *common) exportPath() string {
	if m.info.OutPath != "" {
		return m.info.OutPath
	}
	return "dbduel-<date>-<time>.json in this directory"
}

// notePrefix leads the header with the note ("replay of a run measured …")
// so that every width shows it: a replay must say it is one.
func (i Info) notePrefix() string {
	if i.Note == "" {
		return ""
	}
	return i.Note + " · "
}
