package engine

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/dbduel/dbduel/engine/workload"
)

// ErrTablesRefused means existing tables cannot be reused and dbduel will
// not replace them without --reprepare.
type ErrTablesRefused struct{ Reason string }

func (e *ErrTablesRefused) Error() string {
	return e.Reason + " (use --reprepare to drop and re-create the sbtestN tables, or cleanup)"
}

// ensureTables prepares missing tables, reuses matching ones, and refuses
// mismatching ones unless the session allows re-preparing.
func ensureTables(ctx context.Context, s Session, target string, db *sql.DB, send func(Event)) error {
	w := s.Config.Workload
	st, err := w.Check(ctx, db, s.Config.Threads)
	if err != nil {
		return err
	}
	if st.Reusable {
		send(Event{Kind: EventNotice, Target: target, Message: "reusing existing sbtestN tables"})
		return nil
	}
	if !st.Missing {
		if !s.Reprepare {
			return &ErrTablesRefused{Reason: st.Reason}
		}
		send(Event{Kind: EventNotice, Target: target, Message: "re-preparing: " + st.Reason})
		if _, err := w.Cleanup(ctx, db, s.Config.Threads); err != nil {
			return fmt.Errorf("re-prepare: %w", err)
		}
	}
	return Prepare(ctx, w, s.Config.Threads, target, db, send)
}

// Prepare loads the workload's tables, reporting progress at most every 200 ms.
func Prepare(ctx context.Context, w workload.Workload, threads int, target string, db *sql.DB, send func(Event)) error {
	send(Event{Kind: EventPhase, Target: target, Phase: "preparing"})
	var last time.Time
	err := w.Prepare(ctx, db, threads, func(p workload.Progress) {
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
