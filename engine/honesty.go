package engine

import (
	"math"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
)

// honesty compares the server counter's delta (less the checker's own
// reading) with the operations dbduel counted.
func honesty(before, after driver.OpCount, counted uint64) *result.Honesty {
	if after.N < before.N+after.Self {
		return nil
	}
	server := after.N - before.N - after.Self // the second reading counts itself
	unit := "statements"
	switch after.Unit {
	case driver.Transactions:
		unit = "transactions"
	case driver.Operations:
		unit = "operations"
	}
	h := &result.Honesty{Counter: after.Counter, ServerQueries: server, DbduelQueries: counted, Unit: unit, Note: after.Note}
	if server > 0 {
		h.DiffPct = math.Round((float64(counted)-float64(server))/float64(server)*10000) / 100
	}
	return h
}

// clientCount is what dbduel counted of what the server's counter counts:
// statements, or transactions (one per event in explicit transactions plus
// one rolled back per ignored error; otherwise every statement is its own).
// Where the counter counts the ROLLBACK sent after an ignored error (as
// sysbench's pgsql driver sends it; pg_stat_statements), it goes on: the
// failed statement itself is counted on neither side.
func clientCount(c driver.OpCount, wl workload.Workload, run result.Run) uint64 {
	queries := run.Summary.Queries + run.WarmupQueries
	t, ok := wl.(workload.Transactional)
	inTxn := ok && t.UsesTransactions()
	events := run.Summary.Events + run.WarmupEvents
	switch {
	case c.Unit == driver.Transactions && inTxn:
		return events + run.Summary.Errors
	case c.Unit == driver.Transactions:
		return queries
	case c.RollbackCounted:
		return queries + run.Summary.Errors
	}
	return queries
}
