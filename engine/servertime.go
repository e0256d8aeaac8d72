package engine

import (
	"context"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
)

// serverTiming reads the server's own statement timer around a run, when
// the server has one (performance_schema on, pg_stat_statements).
type serverTiming struct {
	before, after driver.ServerTime
	ok            bool
	err           error
}

func (t *serverTiming) start(ctx context.Context, db driver.DB) {
	st, isTimer := db.(driver.ServerTimer)
	if !isTimer {
		return
	}
	t.before, t.err = st.ServerTime(ctx)
	t.ok = t.err == nil
}

func (t *serverTiming) end(ctx context.Context, db driver.DB) {
	if !t.ok {
		return
	}
	t.after, t.err = db.(driver.ServerTimer).ServerTime(ctx)
	t.ok = t.err == nil
}

// result splits the run's latency per statement into the server's time and
// the rest (nil when the server has no timer).
func (t *serverTiming) result(run result.Run) *result.ServerTime {
	if !t.ok || t.after.Statements <= t.before.Statements || run.Summary.Queries == 0 {
		return nil
	}
	n := t.after.Statements - t.before.Statements
	st := &result.ServerTime{Source: t.after.Source, Statements: n, AvgUS: (t.after.NS - t.before.NS) / float64(n) / 1000,
		Note: "the server's time includes any other client's statements and dbduel's few reading ones"}
	// An event's latency spread over its statements.
	st.ClientAvgUS = run.Summary.AvgUS * float64(run.Summary.Events) / float64(run.Summary.Queries)
	st.BetweenUS = st.ClientAvgUS - st.AvgUS
	return st
}
