package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/dbduel/dbduel/engine"
)

// prepareAll loads the workload's tables on every target, with progress:
// the same rules as run's prepare step (reuse, refuse, --reprepare).
func prepareAll(ctx context.Context, rc *runConfig, ts []engine.Target, reprepare bool, stderr io.Writer) error {
	for _, t := range ts {
		start := time.Now()
		progress := newProgressPrinter(stderr)
		err := engine.EnsureTables(ctx, rc.workload, rc.engine.Threads, reprepare, t, func(e engine.Event) {
			switch e.Kind {
			case engine.EventProgress:
				progress.print(e)
			case engine.EventNotice:
				fmt.Fprintf(stderr, "dbduel: %s: %s\n", t.Name, e.Message)
			}
		})
		if err != nil {
			return fmt.Errorf("target %s: %w", t.Name, err)
		}
		fmt.Fprintf(stderr, "dbduel: %s: ready after %.1fs\n", t.Name, time.Since(start).Seconds())
	}
	return nil
}

// cleanupAll drops the workload's tables (only those of its shape).
func cleanupAll(ctx context.Context, rc *runConfig, ts []engine.Target, stderr io.Writer) error {
	for _, t := range ts {
		dropped, err := engine.Cleanup(ctx, rc.workload, rc.engine.Threads, t)
		what := "dropped table"
		if rc.onHost() {
			what = "removed file"
		}
		for _, d := range dropped {
			fmt.Fprintf(stderr, "dbduel: %s: %s '%s'\n", t.Name, what, d)
		}
		if err != nil {
			return fmt.Errorf("target %s: %w", t.Name, err)
		}
	}
	return nil
}
