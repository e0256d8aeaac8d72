package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/mattn/go-isatty"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/ui/text"
	"github.com/dbduel/dbduel/ui/theme"
	"github.com/dbduel/dbduel/ui/tui"
)

// runHeadless prints the event stream in the chosen format until the
// engine's last event, which carries the result.
func runHeadless(ctx context.Context, rc *runConfig, o *commonOptions, st *startedTargets, events <-chan engine.Event, stdout, stderr io.Writer) outcome {
	printer := pickPrinter(o, stdout, rc)
	progress := newProgressPrinter(stderr, rc.workload)
	var out outcome
	for e := range events {
		switch e.Kind {
		case engine.EventProgress:
			progress.print(e)
		case engine.EventNotice:
			if e.Target == "" {
				fmt.Fprintf(stderr, "dbduel: %s\n", e.Message)
			} else {
				fmt.Fprintf(stderr, "dbduel: %s: %s\n", e.Target, e.Message)
			}
		case engine.EventFinished:
			out.res, out.err = e.Result, e.Err
			out.diagnosis = diagnose(ctx, e.Err, st)
		default:
			printer.Event(e)
		}
	}
	if out.err != nil && out.res != nil {
		// The first line that says the plan stopped names why (the
		// diagnosed failure, or who stopped it).
		if why := explainFailure(ctx, out, st); why != nil {
			out.res.Error = why.Error()
		}
	}
	if out.err == nil || len(out.res.Runs) > 0 {
		printer.Result(out.res)
	}
	return out
}

// screen is what a verb's session adds to the TUI: how the screens
// follow its schedule, and how many runs it plans.
type screen struct {
	view      tui.Schedule
	runs      int // measured runs per target and point (0: open-ended)
	totalRuns int // runs in the whole plan, warm-ups included
}

// screen is the TUI's view of run's plan (explain's ladder: a waterfall).
func (o *runOptions) screen(rc *runConfig, names int) screen {
	var view tui.Schedule = tui.PlanView{}
	if o.flags.Name() == "explain" {
		view = tui.LadderView{}
	}
	return screen{view: view, runs: o.runs, totalRuns: len(rc.points) * (o.runs + o.warmupRuns) * names}
}

// tuiInfo is what the TUI's header shows of the session.
func tuiInfo(rc *runConfig, o *commonOptions, st *startedTargets, scr screen) tui.Info {
	shape := rc.workload.Shape()
	info := tui.Info{Workload: rc.workload.Name(), Tables: shape.Tables, TableSize: shape.TableSize,
		Threads: rc.points[0].Threads, Rate: rc.points[0].Rate, Runs: scr.runs, RunTime: rc.load.Time, Targets: slices.Clone(st.described),
		OutPath: o.out, TotalRuns: scr.totalRuns, Data: dataLabel(rc), Rows: nouns(rc.workload).row, Schedule: scr.view}
	switch _, tpcc := rc.workload.(workload.ServerCounted); {
	case tpcc:
		info.Figures = tui.NewOrders
		info.Data = fmt.Sprintf("%d warehouse(s)", shape.TableSize)
	case rc.onHost():
		info.Figures = tui.Events
	}
	return info
}

// runTUI shows the live panels until the user quits; the final result comes
// on the event stream, whether the plan ended or was stopped.
func runTUI(ctx context.Context, rc *runConfig, o *commonOptions, st *startedTargets, scr screen, events <-chan engine.Event,
	cancelRun func(), stdout, stderr io.Writer) outcome {
	info := tuiInfo(rc, o, st, scr)
	finished := make(chan outcome, 1)
	// The model reads the engine's stream through this tap, which keeps
	// the final result for the caller.
	tap := make(chan engine.Event)
	go func() {
		defer close(tap)
		for e := range events {
			if e.Kind == engine.EventFinished {
				// The summary screen needs only the result: stop the managed
				// servers and containers now, not when the user quits.
				diag := diagnose(ctx, e.Err, st)
				if why := explainFailure(ctx, outcome{err: e.Err, diagnosis: diag}, st); why != nil && diag != "" && e.Result != nil {
					e.Result.Error = why.Error() // what became of the target, for the summary's first line
				}
				stopTargets(ctx, st.all, o.keep, io.Discard)
				if o.out != "" && e.Result != nil {
					// The finished screen says the result is written: it is,
					// complete, now (not when the user quits).
					_ = result.WriteFile(o.out, e.Result)
				}
				finished <- outcome{res: e.Result, err: e.Err, diagnosis: diag}
			}
			select {
			case tap <- e:
			case <-ctx.Done():
			}
		}
	}()
	model := tui.New(info, tap, cancelRun, func(r *result.Result) (string, error) { return exportNow(o.out, r) }, theme.ColorEnabled())
	prog := tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(stdout), tea.WithFPS(10))
	if _, err := prog.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "dbduel: terminal UI: %v\n", err)
	}
	cancelRun() // a forced quit leaves the engine running: stop it
	go func() {
		for range tap {
		}
	}()
	out := <-finished
	out.userStopped = model.Interrupted()
	// The alternate screen is gone: leave the summary in the scrollback.
	fmt.Fprint(stdout, text.RunTable(out.res))
	return out
}

func pickPrinter(o *commonOptions, stdout io.Writer, rc *runConfig) text.Printer {
	switch o.format {
	case "sysbench":
		pt := rc.points[0]
		return &text.SysbenchPrinter{W: stdout, Banner: text.Banner{
			Version: Version, Threads: pt.Threads, ReportInterval: int(rc.load.ReportInterval.Seconds()),
			RandSeed: rc.workload.Shape().RandSeed, Percentile: int(rc.load.Percentile), Rate: pt.Rate,
			Workload: rc.workload.Name(),
		}}
	case "json":
		return &text.JSONPrinter{W: stdout}
	}
	return &text.PlainPrinter{W: stdout, System: text.IsSystemWorkload(rc.workload.Name())}
}

func isTerminal(w io.Writer) bool {
	f := fileOf(w)
	return f != nil && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// progressPrinter prints prepare progress with rows/s and an ETA.
type progressPrinter struct {
	w     io.Writer
	start map[string]time.Time
	rows  string // what the workload loads: rows, or documents
}

func newProgressPrinter(w io.Writer, wl workload.Workload) *progressPrinter {
	return &progressPrinter{w: w, start: map[string]time.Time{}, rows: nouns(wl).row}
}

func (pp *progressPrinter) print(e engine.Event) {
	p := e.Progress
	if p.TotalRows == 0 {
		return
	}
	t0, ok := pp.start[e.Target]
	if !ok {
		t0 = time.Now()
		pp.start[e.Target] = t0
	}
	line := fmt.Sprintf("dbduel: %s: prepare %d/%d %s (%.0f%%)", e.Target, p.Rows, p.TotalRows, pp.rows, 100*float64(p.Rows)/float64(p.TotalRows))
	if secs := time.Since(t0).Seconds(); secs > 0.05 && p.Rows > 0 {
		rate := float64(p.Rows) / secs
		eta := time.Duration(float64(p.TotalRows-p.Rows) / rate * float64(time.Second)).Round(time.Second)
		line += fmt.Sprintf(", %.0f %s/s, ETA %s", rate, pp.rows, eta)
	}
	fmt.Fprintln(pp.w, line)
}

// exportNow writes r to --out, or dbduel-<timestamp>.json here, and says where.
func exportNow(out string, r *result.Result) (string, error) {
	if r == nil {
		return "", errors.New("no run has finished yet")
	}
	if out == "" {
		out = "dbduel-" + time.Now().Format("20060102-150405") + ".json"
	}
	return out, result.WriteFile(out, r)
}

// dataLabel describes the data of a workload without tables for the TUI's
// header ("" for table workloads, which show tables×rows).
func dataLabel(rc *runConfig) string {
	if !rc.onHost() {
		return ""
	}
	o := rc.workload.Options()
	switch rc.workload.Name() {
	case "cpu":
		return fmt.Sprintf("primes below %v", o["cpu_max_prime"])
	case "memory":
		return fmt.Sprintf("%v %s %s, %v blocks", o["memory_access_mode"], o["memory_oper"], o["memory_scope"], workload.FormatSize(toInt64(o["memory_block_size"])))
	case "fileio":
		return fmt.Sprintf("%s, %v files, %v", o["file_test_mode"], o["file_num"], workload.FormatSize(toInt64(o["file_total_size"])))
	}
	return rc.workload.Name()
}

func toInt64(v any) int64 {
	n, _ := v.(int64)
	return n
}
