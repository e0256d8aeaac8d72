package engine

import (
	"context"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
)

// Remote is a DB that runs the workload itself, somewhere else (dbduel's
// agent inside a container): the engine hands it whole runs and table
// steps instead of driving connections to it. Its runs honour Config as
// Measure does, Telemetry, Noise, AtReady and AtEnd included, and emit
// intervals with their histograms as they arrive.
type Remote interface {
	driver.DB
	Check(ctx context.Context, w workload.Workload, threads int) (workload.TableState, error)
	Prepare(ctx context.Context, w workload.Workload, threads int, progress func(workload.Progress)) error
	Cleanup(ctx context.Context, w workload.Workload, threads int) ([]string, error)
	Measure(ctx context.Context, cfg Config, target string, emit func(result.Interval, *hdrhistogram.Histogram)) (result.Run, error)
}

// The table steps and runs go to the workload, or to a Remote DB whole.

func checkTables(ctx context.Context, w workload.Workload, db driver.DB, threads int) (workload.TableState, error) {
	if r, ok := db.(Remote); ok {
		return r.Check(ctx, w, threads)
	}
	return w.Check(ctx, db, threads)
}

func prepareTables(ctx context.Context, w workload.Workload, db driver.DB, threads int, progress func(workload.Progress)) error {
	if r, ok := db.(Remote); ok {
		return r.Prepare(ctx, w, threads, progress)
	}
	return w.Prepare(ctx, db, threads, progress)
}

func cleanupTables(ctx context.Context, w workload.Workload, db driver.DB, threads int) ([]string, error) {
	if r, ok := db.(Remote); ok {
		return r.Cleanup(ctx, w, threads)
	}
	return w.Cleanup(ctx, db, threads)
}

func measureOn(ctx context.Context, cfg Config, target string, db driver.DB, emit func(result.Interval, *hdrhistogram.Histogram)) (result.Run, error) {
	if r, ok := db.(Remote); ok {
		return r.Measure(ctx, cfg, target, emit)
	}
	return Measure(ctx, cfg, target, db, emit)
}
