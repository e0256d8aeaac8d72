package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/workload"
)

// prepareAll loads the workload's tables on every target, with progress:
// the same rules as run's prepare step (reuse, refuse, --reprepare).
func prepareAll(ctx context.Context, rc *runConfig, ts []engine.Target, reprepare bool, stderr io.Writer) error {
	for _, t := range ts {
		start := time.Now()
		progress := newProgressPrinter(stderr, rc.workload)
		err := engine.EnsureTables(ctx, rc.workload, rc.threads(), reprepare, t, func(e engine.Event) {
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
		dropped, err := engine.Cleanup(ctx, rc.workload, rc.threads(), t)
		what := "dropped " + nouns(rc.workload).table
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

// checkAll runs the workload's consistency conditions on every target and
// fails naming the conditions that do not hold.
func checkAll(ctx context.Context, rc *runConfig, st *startedTargets, stdout io.Writer) error {
	var failed []string
	for i, t := range st.engine {
		conds, err := engine.Consistency(ctx, rc.workload, t)
		if err != nil {
			if k := st.all[i].Kind(); k == "local" || k == "container" {
				// A managed server is made anew by each command: its data is gone.
				return fmt.Errorf("target %s: %w (a managed %s server is new each time dbduel starts it: run with --keep, then check the kept one with --target %s=kept:RUNID/%s)", t.Name, err, k, t.Name, t.Name)
			}
			return fmt.Errorf("target %s: %w", t.Name, err)
		}
		for _, c := range conds {
			verdict := "holds"
			if !c.OK {
				verdict = "FAILS: " + c.Detail
				failed = append(failed, fmt.Sprintf("%s condition %s (%s)", t.Name, c.ID, c.Clause))
			}
			fmt.Fprintf(stdout, "%s: condition %s (%s) %s: %s\n", t.Name, c.ID, c.Clause, c.Text, verdict)
		}
	}
	if len(failed) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("consistency conditions fail: %s", strings.Join(failed, ", "))}
	}
	return nil
}

// dataNouns are what a workload's data is called in messages.
type dataNouns struct{ row, table string }

// nouns: sysbench-mongodb's collections hold documents; SQL tables rows.
func nouns(wl workload.Workload) dataNouns {
	if n, ok := wl.(workload.Nouns); ok {
		unit, container := n.Nouns()
		return dataNouns{row: unit, table: container}
	}
	if slices.Contains(wl.Protocols(), "mongodb") {
		return dataNouns{row: "documents", table: "collection"}
	}
	return dataNouns{row: "rows", table: "table"}
}
