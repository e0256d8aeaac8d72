package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
)

// ErrTablesRefused means existing tables cannot be reused and dbduel will
// not replace them without --reprepare.
type ErrTablesRefused struct{ Reason string }

func (e *ErrTablesRefused) Error() string {
	return e.Reason + " (use --reprepare to drop and re-create the workload's tables or files, or cleanup)"
}

// EnsureTables opens target and prepares missing tables, reuses matching
// ones, and refuses mismatching ones unless reprepare (prepare's verb).
func EnsureTables(ctx context.Context, w workload.Workload, threads int, reprepare bool, target Target, send func(Event)) error {
	db, err := target.Open(ctx, threads+2)
	if err != nil {
		return err
	}
	defer db.Close()
	return ensureTables(ctx, w, threads, reprepare, target.Name, db, send)
}

// Cleanup opens target and drops the workload's tables of its shape.
func Cleanup(ctx context.Context, w workload.Workload, threads int, target Target) ([]string, error) {
	db, err := target.Open(ctx, 2)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return cleanupTables(ctx, w, db, threads)
}

// ensureTables prepares missing tables, reuses matching ones, and refuses
// mismatching ones unless re-preparing is allowed.
func ensureTables(ctx context.Context, w workload.Workload, threads int, reprepare bool, target string, db driver.DB, send func(Event)) error {
	st, err := checkTables(ctx, w, db, threads)
	if err != nil {
		return err
	}
	if st.Reusable {
		if !st.Nothing {
			what := st.Objects
			if what == "" {
				what = "sbtestN tables"
			}
			send(Event{Kind: EventNotice, Target: target, Message: "reusing existing " + what})
		}
		return nil
	}
	if !st.Missing {
		if !reprepare {
			return &ErrTablesRefused{Reason: st.Reason}
		}
		send(Event{Kind: EventNotice, Target: target, Message: "re-preparing: " + st.Reason})
		if _, err := cleanupTables(ctx, w, db, threads); err != nil {
			return fmt.Errorf("re-prepare: %w", err)
		}
	}
	return Prepare(ctx, w, threads, target, db, send)
}

// Prepare loads the workload's tables, reporting progress at most every 200 ms.
func Prepare(ctx context.Context, w workload.Workload, threads int, target string, db driver.DB, send func(Event)) error {
	send(Event{Kind: EventPhase, Target: target, Phase: "preparing"})
	var last time.Time
	err := prepareTables(ctx, w, db, threads, func(p workload.Progress) {
		if now := time.Now(); now.Sub(last) >= 200*time.Millisecond || p.Rows == p.TotalRows {
			last = now
			send(Event{Kind: EventProgress, Target: target, Progress: p})
		}
	})
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	return nil
}

// Consistency opens target and runs the workload's consistency conditions.
func Consistency(ctx context.Context, w workload.Workload, target Target) ([]workload.Condition, error) {
	c, ok := w.(workload.Consistent)
	if !ok {
		return nil, fmt.Errorf("workload %s has no consistency conditions (tpcc has)", w.Name())
	}
	db, err := target.Open(ctx, 2)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return c.Consistency(ctx, db)
}
