package engine

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
)

// EventKind tells what an Event carries.
type EventKind int

const (
	EventPhase    EventKind = iota // Phase names what starts now
	EventProgress                  // Progress of a prepare
	EventInterval                  // Interval of the current run
	EventRunDone                   // Run finished (Run)
	EventNotice                    // Message for the user (a warning)
)

// Event is one thing that happened, in order, for the UI or a printer.
type Event struct {
	Kind     EventKind
	Target   string
	Block    int // 1-based
	Index    int // run number within the target, 1-based
	Phase    string
	Progress workload.Progress
	Interval result.Interval
	Run      *result.Run
	Message  string
}

// Session is a whole invocation: targets, how many runs, and table handling.
type Session struct {
	Config    Config
	Runs      int   // measured runs per target
	Seed      int64 // shuffles the target order per block
	Reprepare bool  // drop and re-create tables that do not match
	Cleanup   bool  // drop the run's tables at the end
}

// Blocks returns the run order: each block holds every target once, in an
// order shuffled per block from seed (the first block of a 1-run plan keeps
// the given order, so a single comparison runs baseline first).
func Blocks(names []string, runs int, seed int64) [][]string {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xdbd0e1))
	blocks := make([][]string, runs)
	for b := range blocks {
		order := append([]string(nil), names...)
		if runs > 1 {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		blocks[b] = order
	}
	return blocks
}

// Run executes the session against targets, sending events (the channel is
// closed at the end) and returning the result, partial when ctx is cancelled
// or a run fails. onRun is called after every run with the result so far
// (to rewrite --out); it may be nil.
func Run(ctx context.Context, s Session, targets []Target, events chan<- Event, onRun func(*result.Result)) (*result.Result, error) {
	defer close(events)
	cfg := s.Config
	res := &result.Result{
		SchemaVersion: result.SchemaVersion,
		StartedAt:     time.Now().UTC(),
		Workload:      result.Workload{Name: cfg.Workload.Name(), Options: cfg.Workload.Options()},
		Stats:         map[string]result.TargetStats{},
	}
	names := make([]string, len(targets))
	byName := map[string]Target{}
	for i, t := range targets {
		names[i] = t.Name
		byName[t.Name] = t
	}
	res.Plan = result.Plan{
		Runs: s.Runs, Seed: s.Seed, Blocks: Blocks(names, s.Runs, s.Seed),
		Points:  []result.Point{{Threads: cfg.Threads, TableSize: tableSize(res.Workload.Options)}},
		Threads: cfg.Threads, TimeS: cfg.Time.Seconds(), Events: cfg.Events,
		Interval: cfg.ReportInterval.Seconds(),
		Rate:     cfg.Rate, WarmupS: cfg.Warmup.Seconds(),
	}
	send := func(e Event) {
		select {
		case events <- e:
		case <-ctx.Done():
		}
	}

	// Open every target and make sure its tables are there before any run.
	dbs := map[string]*sql.DB{}
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()
	for _, t := range targets {
		db, err := Open(t.DSN, cfg.Threads+2)
		if err != nil {
			return res, fmt.Errorf("target %s: %w", t.Name, err)
		}
		dbs[t.Name] = db
		if err := ensureTables(ctx, s, t.Name, db, send); err != nil {
			return res, fmt.Errorf("target %s: %w", t.Name, err)
		}
	}

	merge := newIntervalMerger(events)
	for b, block := range res.Plan.Blocks {
		for _, name := range block {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			index := b + 1
			send(Event{Kind: EventPhase, Target: name, Block: b + 1, Index: index,
				Phase: fmt.Sprintf("run %d of %d", index, s.Runs)})
			before := readQuestions(ctx, dbs[name])
			run, err := RunOnce(ctx, cfg, name, dbs[name], func(iv result.Interval) {
				merge.send(Event{Kind: EventInterval, Target: name, Block: b + 1, Index: index, Interval: iv})
			})
			merge.flush(ctx)
			run.Block, run.Index = b+1, index
			if before.ok {
				after := readQuestions(context.WithoutCancel(ctx), dbs[name])
				run.Honesty = honesty(before, after, run.Summary.Queries+run.WarmupQueries)
				if h := run.Honesty; h != nil && math.Abs(h.DiffPct) > 1 {
					msg := fmt.Sprintf("%s run %d: dbduel counted %d queries, the server's %s counter %d (%+.2f%%); %s",
						name, index, h.DbduelQueries, h.Counter, h.ServerQueries, h.DiffPct, h.Note)
					res.Warnings = append(res.Warnings, msg)
					send(Event{Kind: EventNotice, Target: name, Message: "warning: " + msg})
				}
			}
			res.Runs = append(res.Runs, run)
			r := run
			send(Event{Kind: EventRunDone, Target: name, Block: b + 1, Index: index, Run: &r})
			if onRun != nil {
				onRun(res)
			}
			if err != nil {
				return res, fmt.Errorf("target %s: %w", name, err)
			}
			if !run.Complete {
				return res, ctx.Err()
			}
		}
	}
	res.Complete = true
	if s.Cleanup {
		for _, t := range targets {
			send(Event{Kind: EventPhase, Target: t.Name, Phase: "cleanup"})
			if _, err := cfg.Workload.Cleanup(ctx, dbs[t.Name], cfg.Threads); err != nil {
				return res, fmt.Errorf("target %s: cleanup: %w", t.Name, err)
			}
		}
	}
	return res, nil
}

func tableSize(opts map[string]any) int {
	if v, ok := opts["table_size"].(int); ok {
		return v
	}
	return 0
}
