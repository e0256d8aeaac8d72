package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/ui/theme"
	"github.com/dbduel/dbduel/ui/tui"
)

func newReplayCmd(st *State) *cobra.Command {
	var speed float64
	var castPath, size string
	cmd := &cobra.Command{
		Use:   "replay FILE.json [--speed 10] [--cast FILE.cast --size 100x30]",
		Short: "Play a saved result back in the terminal UI, from its intervals, ending on its finished screen",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if speed <= 0 {
				return usageErr("--speed must be positive (10 plays ten times faster than measured)")
			}
			w, h, err := parseSize(size)
			if err != nil {
				return err
			}
			if castPath == "" && !isTerminal(st.Stdout) {
				return usageErr("dbduel replay plays in a terminal; without one, dbduel report %s --format md prints the result, or --cast FILE records the replay", args[0])
			}
			r, err := readResult(args[0])
			if err != nil {
				return err
			}
			if len(r.Runs) == 0 {
				return usageErr("%s holds no runs to replay", args[0])
			}
			cause.Annotate(r)
			if castPath != "" {
				if err := replayToCast(cmd.Context(), r, speed, castPath, w, h); err != nil {
					return err
				}
				fmt.Fprintf(st.Stderr, "dbduel: wrote %s (asciicast v2, %dx%d: asciinema play %s)\n", castPath, w, h, castPath)
				return nil
			}
			return replay(cmd.Context(), st, r, speed)
		},
	}
	cmd.Flags().Float64Var(&speed, "speed", 10, "`FACTOR` faster than the run was measured (1: as it happened)")
	cmd.Flags().StringVar(&castPath, "cast", "", "record the replay as an asciicast v2 `FILE` (asciinema plays it; agg or svg-term turn it into a GIF or SVG) instead of playing it here")
	cmd.Flags().StringVar(&size, "size", "100x30", "with --cast: the recorded terminal's `COLUMNSxLINES`")
	return cmd
}

// replay shows r in the TUI as its run went: each run's intervals at
// their own pace over speed, the comparisons as they stood after each run,
// then the recorded result's finished screen.
func replay(ctx context.Context, st *State, r *result.Result, speed float64) error {
	// q skips the rest of the replay (feedCtx), not the program (ctx).
	feedCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	gone := make(chan struct{})
	defer close(gone)
	events := make(chan engine.Event)
	go replayEvents(feedCtx, r, speed, events, gone)
	model := tui.New(replayInfo(r), events, cancel, func(res *result.Result) (string, error) { return exportNow("", res) }, theme.ColorEnabled())
	prog := tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(st.Stdout), tea.WithFPS(10))
	if _, err := prog.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("terminal UI: %v", err)
	}
	return nil
}

// replayInfo is the header of a replayed result.
func replayInfo(r *result.Result) tui.Info {
	info := tui.Info{Workload: r.Workload.Name, Targets: r.Targets, Runs: max(r.Plan.Runs, 1), TotalRuns: len(r.Runs),
		Note: "replay of a run measured " + r.StartedAt.Local().Format("2006-01-02 15:04")}
	switch {
	case r.Explain != nil:
		info.Schedule = tui.LadderView{}
	case r.Live != nil:
		info.Schedule = tui.LiveView{} // no control: nothing steers a replay
	}
	o := r.Workload.Options
	info.Tables, _ = toIntOK(o["tables"])
	info.TableSize, _ = toIntOK(o["table_size"])
	if len(r.Plan.Points) > 0 {
		info.Threads = r.Plan.Points[0].Threads
	}
	if s := r.Runs[0].Summary; s.DurationS > 0 {
		info.RunTime = time.Duration(s.DurationS * float64(time.Second)).Round(100 * time.Millisecond)
	}
	if r.Runs[0].Summary.CountedBy != "" {
		info.Figures = tui.NewOrders
	}
	return info
}

func toIntOK(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), true
	case int:
		return n, true
	}
	return 0, false
}

// replayEvents sends r's runs as the engine sent them; a quit (ctx) skips
// to the end, gone says the program has ended.
func replayEvents(ctx context.Context, r *result.Result, speed float64, events chan<- engine.Event, gone <-chan struct{}) {
	send := func(e engine.Event) bool {
		select {
		case events <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
	seg := 0
	for i, run := range r.Runs {
		// A live session's segment begins: its rule on the chart.
		for ; seg < len(r.Segments) && r.Segments[seg].Point <= run.Point; seg++ {
			if !send(engine.Event{Kind: engine.EventSegment, Point: r.Segments[seg].Point, Message: r.Segments[seg].WhatChanged}) {
				return
			}
		}
		threads := 0
		if run.Point < len(r.Plan.Points) {
			threads = r.Plan.Points[run.Point].Threads
		}
		phase := fmt.Sprintf("run %d", run.Index)
		if run.Warmup {
			phase = "warm-up run"
		}
		if !send(engine.Event{Kind: engine.EventPhase, Target: run.Target, Block: run.Block, Index: max(run.Index, 1), Point: run.Point,
			Phase: phase, Threads: threads, Done: i, Total: len(r.Runs)}) {
			break
		}
		for _, iv := range run.Intervals {
			select {
			case <-time.After(time.Duration(iv.SpanS / speed * float64(time.Second))):
			case <-ctx.Done():
			}
			if !send(engine.Event{Kind: engine.EventInterval, Target: run.Target, Interval: iv}) {
				break
			}
		}
		run := run
		if !send(engine.Event{Kind: engine.EventRunDone, Target: run.Target, Block: run.Block, Index: run.Index, Point: run.Point,
			Threads: threads, Run: &run, Snapshot: replaySnapshot(r, i+1), Done: i + 1, Total: len(r.Runs)}) {
			break
		}
	}
	// The finished screen is the recorded result's, also after a quit.
	select {
	case events <- engine.Event{Kind: engine.EventFinished, Result: r}:
	case <-gone: // a forced quit
	}
}

// replaySnapshot is the result as it stood after its first n runs: the
// comparisons recomputed from them, as the live screen showed them.
func replaySnapshot(r *result.Result, n int) *result.Result {
	s := *r
	s.Runs = slices.Clone(r.Runs[:n])
	s.Segments = slices.Clone(r.Segments)
	s.Warnings = nil
	s.Complete = n == len(r.Runs) && r.Complete
	stats.Analyze(&s)
	return &s
}
