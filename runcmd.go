package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/state"
	"github.com/dbduel/dbduel/ui/text"
	"github.com/dbduel/dbduel/ui/theme"
	"github.com/dbduel/dbduel/ui/tui"
)

// runOptions are the flags of run, prepare and cleanup.
type runOptions struct {
	targets        []string
	threads        string
	warmupRuns     int
	cooldown       float64
	restartBetween bool
	timeS          float64
	events         uint64
	reportInterval float64
	percentile     int
	ignoreErrors   string
	runs           int
	seed           int64
	warmupTime     float64
	rate           float64
	noTUI          bool
	format         string
	out            string
	reprepare      bool
	cleanup        bool
	keep           bool
	failIf         []string
	newWorkload    workload.Factory
	cpuProfile     string
	strictParity   bool
}

func bindRunFlags(fs *pflag.FlagSet, o *runOptions) {
	fs.StringArrayVar(&o.targets, "target", nil, "NAME=SPEC, repeatable; the first is the baseline (SPEC: mysql://user:pass@host:port/db, local:BIN[,k=v], docker:IMAGE[,k=v])")
	fs.StringVar(&o.threads, "threads", "1", "number of threads to use; a comma-separated list sweeps (e.g. 10,32,64,128)")
	fs.IntVar(&o.warmupRuns, "warmup-runs", 0, "runs per target made first and discarded (cold caches)")
	fs.Float64Var(&o.cooldown, "cooldown", -1, "seconds to pause between runs (default: until the host is idle, at most 10 s)")
	fs.BoolVar(&o.restartBetween, "restart-between-runs", false, "restart managed servers before every run (a fresh server per run)")
	fs.Float64Var(&o.timeS, "time", 10, "limit for total execution time in seconds (0: no limit)")
	fs.Uint64Var(&o.events, "events", 0, "limit for total number of events (0: no limit)")
	fs.Float64Var(&o.reportInterval, "report-interval", 1, "periodically report intermediate statistics with a specified interval in seconds (0 disables)")
	fs.IntVar(&o.percentile, "percentile", 95, "percentile to calculate in latency statistics (1-100, 0 disables)")
	fs.StringVar(&o.ignoreErrors, "mysql-ignore-errors", engine.DefaultIgnoreErrors, "list of errors to ignore, or \"all\"")
	fs.IntVar(&o.runs, "runs", 1, "measured runs per target, interleaved in blocks")
	fs.Int64Var(&o.seed, "seed", 0, "seed of the plan's run order (0: from the clock; printed)")
	fs.Float64Var(&o.warmupTime, "warmup-time", 0, "seconds of each run executed but not counted")
	fs.Float64Var(&o.rate, "rate", 0, "average transactions rate (0: unlimited)")
	fs.BoolVar(&o.noTUI, "no-tui", false, "headless output even on a terminal")
	fs.StringVar(&o.format, "format", "", "headless output format: text|sysbench|json (implies --no-tui)")
	fs.StringVarP(&o.out, "out", "o", "", "write the result JSON to this file (rewritten after every run)")
	fs.BoolVar(&o.reprepare, "reprepare", false, "drop and re-create sbtestN tables whose count or size does not match")
	fs.BoolVar(&o.cleanup, "cleanup", false, "drop the run's sbtestN tables at the end")
	fs.BoolVar(&o.keep, "keep", false, "keep managed servers, containers and volumes after the run")
	fs.StringArrayVar(&o.failIf, "fail-if", nil, "exit 3 when a target's whole 95% CI lies past this change vs the baseline, e.g. 'tps<-5%' or 'p95>+10%' (repeatable)")
	fs.BoolVar(&o.strictParity, "strict-parity", false, "refuse to run (exit 4) when targets differ in server version or any configuration variable")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (for dbduel's own speed work)")
	_ = fs.MarkHidden("cpuprofile")
	o.newWorkload = workload.BindFlags(fs)
	// sysbench spells options with underscores too (--table_size).
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
}

func newRunCmd(stdout, stderr io.Writer, verb string) *cobra.Command {
	o := &runOptions{}
	short := map[string]string{
		"run":     "Run a workload against each target (prepares missing tables first)",
		"prepare": "Create and load the workload's tables on each target",
		"cleanup": "Drop the workload's sbtestN tables on each target",
	}[verb]
	cmd := &cobra.Command{
		Use:   verb + " [WORKLOAD] --target NAME=SPEC ...",
		Short: short,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "oltp_read_write"
			if len(args) == 1 {
				name = args[0]
			}
			return runVerb(cmd.Context(), verb, name, o, stdout, stderr)
		},
	}
	bindRunFlags(cmd.Flags(), o)
	return cmd
}

func (o *runOptions) validate() error {
	if len(o.targets) == 0 {
		return usageErr("at least one --target NAME=SPEC is required")
	}
	switch o.format {
	case "", "text", "sysbench", "json":
	default:
		return usageErr("invalid --format %q: want text, sysbench or json", o.format)
	}
	if o.runs < 1 {
		return usageErr("--runs must be at least 1")
	}
	if o.timeS < 0 || o.reportInterval < 0 || o.warmupTime < 0 || o.rate < 0 {
		return usageErr("--time, --report-interval, --warmup-time and --rate must not be negative")
	}
	if o.timeS == 0 && o.events == 0 {
		return usageErr("--time 0 needs an --events limit")
	}
	if o.percentile < 0 || o.percentile > 100 {
		return usageErr("--percentile must be within 0..100")
	}
	return nil
}

func runVerb(ctx context.Context, verb, wlName string, o *runOptions, stdout, stderr io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return usageErr("--cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	wl, err := o.newWorkload(wlName)
	if err != nil {
		return usageErr("%v", err)
	}
	threadList, err := plan.ParseList("threads", o.threads)
	if err != nil {
		return usageErr("%v", err)
	}
	sizes := []int{intOpt(wl, "table_size")}
	if sw, ok := wl.(workload.Sweepable); ok {
		sizes = sw.TableSizes()
	}
	if o.warmupRuns < 0 {
		return usageErr("--warmup-runs must not be negative")
	}
	ignore, err := engine.ParseErrorSet(o.ignoreErrors)
	if err != nil {
		return usageErr("%v", err)
	}
	cfg := engine.Config{
		Workload: wl, Threads: threadList[0],
		Time:           time.Duration(o.timeS * float64(time.Second)),
		Events:         o.events,
		ReportInterval: time.Duration(o.reportInterval * float64(time.Second)),
		Percentile:     float64(o.percentile),
		IgnoreErrors:   ignore,
		Rate:           o.rate,
		Warmup:         time.Duration(o.warmupTime * float64(time.Second)),
		Seed:           uint64(time.Now().UnixNano()),
	}
	if rs, ok := wl.Options()["rand_seed"].(uint64); ok && rs != 0 {
		cfg.Seed = rs
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}
	if o.out != "" {
		if err := checkWritable(o.out); err != nil {
			return usageErr("--out %s: %v", o.out, err)
		}
	}
	runID := state.NewRunID()
	if id := os.Getenv("DBDUEL_RUN_ID"); id != "" {
		runID = id // lets tests and scripts find what this run created
	}
	var thresholds []stats.Threshold
	for _, f := range o.failIf {
		th, err := stats.ParseThreshold(f)
		if err != nil {
			return usageErr("%v", err)
		}
		thresholds = append(thresholds, th)
	}
	ts, err := buildTargets(o.targets, runID)
	if err != nil {
		return err
	}
	// Managed targets are removed on every exit path unless --keep.
	defer func() {
		if o.keep {
			return
		}
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
		defer cancel()
		for _, t := range ts {
			if err := t.Stop(stopCtx); err != nil {
				fmt.Fprintf(stderr, "dbduel: stopping %s: %v\n", t.Name(), err)
			}
		}
	}()
	var described []result.Target
	var engineTargets []engine.Target
	for _, t := range ts {
		fmt.Fprintf(stderr, "dbduel: starting %s (%s)\n", t.Name(), t.SpecRedacted())
		if err := t.Start(ctx); err != nil {
			return fmt.Errorf("target %s: %w", t.Name(), err)
		}
		d, err := t.Describe(ctx)
		if err != nil {
			return fmt.Errorf("target %s: describe: %w", t.Name(), err)
		}
		described = append(described, d)
		engineTargets = append(engineTargets, engine.Target{Name: t.Name(), DSN: t.Endpoint().DSN(), Telemetry: telemetry(ctx, t)})
	}
	warnings := versionWarnings(described)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "dbduel: warning: %s\n", w)
	}
	parity, err := readParity(ctx, ts, described)
	if err != nil {
		return err
	}
	if parity != nil && len(parity.VariablesDiff) > 0 {
		var names []string
		for _, d := range parity.VariablesDiff {
			names = append(names, d.Name)
		}
		if len(names) > 8 {
			names = append(names[:8], fmt.Sprintf("and %d more", len(parity.VariablesDiff)-8))
		}
		fmt.Fprintf(stderr, "dbduel: parity: %d server variable(s) differ between targets: %s\n", len(parity.VariablesDiff), strings.Join(names, ", "))
	}
	if o.strictParity && (len(warnings) > 0 || (parity != nil && len(parity.VariablesDiff) > 0)) {
		return &exitError{code: exitParity, err: errors.New("--strict-parity: the targets differ in version or configuration (see above); nothing was run")}
	}

	switch verb {
	case "prepare":
		return prepareAll(ctx, cfg, engineTargets, o.reprepare, stderr)
	case "cleanup":
		return cleanupAll(ctx, cfg, engineTargets, stderr)
	}

	seed := o.seed
	if seed == 0 {
		seed = time.Now().UnixNano() % 1_000_000_000
	}
	points := plan.Sweep(threadList, sizes)
	sess := engine.Session{Config: cfg, Plan: plan.New(names(ts), points, o.runs, o.warmupRuns, seed),
		Reprepare: o.reprepare, Cleanup: o.cleanup, Cooldown: time.Duration(o.cooldown * float64(time.Second))}
	if len(sizes) > 1 {
		sw := wl.(workload.Sweepable)
		sess.WorkloadFor = func(n int) (workload.Workload, error) {
			if n == sizes[0] {
				return wl, nil
			}
			return sw.WithTableSize(n)
		}
	}
	if o.restartBetween {
		byName := map[string]targets.Target{}
		for _, t := range ts {
			byName[t.Name()] = t
		}
		sess.BeforeRun = func(ctx context.Context, name string) error {
			if t := byName[name]; t.Kind() != "native" {
				return t.Restart(ctx)
			}
			return nil // an existing server is not dbduel's to restart
		}
	}
	if sess.Plan.TotalRuns() > len(ts) {
		fmt.Fprintf(stderr, "dbduel: plan: %d point(s) × %d block(s) of %d target(s); seed %d (repeat the order with --seed %d)\n",
			len(points), o.runs+o.warmupRuns, len(ts), seed, seed)
	}
	decorate := func(r *result.Result) {
		r.DbduelVersion = version
		r.Targets = described
		r.Warnings = append(r.Warnings[:0], warnings...)
		r.Parity = parity
		stats.Analyze(r)
	}
	events := make(chan engine.Event, 64)
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	var latest *result.Result
	var latestMu sync.Mutex
	type outcome struct {
		res *result.Result
		err error
	}
	finished := make(chan outcome, 1)
	go func() {
		res, err := engine.Run(runCtx, sess, engineTargets, events, func(r *result.Result) {
			decorate(r)
			latestMu.Lock()
			latest = r
			latestMu.Unlock()
			if o.out == "" {
				return
			}
			if err := result.WriteFile(o.out, r); err != nil {
				fmt.Fprintf(stderr, "dbduel: %v\n", err)
			}
		})
		finished <- outcome{res, err}
	}()
	var res *result.Result
	var runErr error
	userStopped := false
	if o.format == "" && !o.noTUI && isTerminal(stdout) {
		info := tui.Info{Workload: wl.Name(), Tables: intOpt(wl, "tables"), TableSize: intOpt(wl, "table_size"),
			Threads: cfg.Threads, Rate: o.rate, Runs: o.runs, RunTime: cfg.Time, Targets: described, OutPath: o.out,
			TotalRuns: sess.Plan.TotalRuns()}
		model := tui.New(info, events, cancelRun, func(r *result.Result) (string, error) {
			return exportNow(o.out, r)
		}, theme.ColorEnabled())
		model.SetLatest(func() *result.Result { latestMu.Lock(); defer latestMu.Unlock(); return latest })
		prog := tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(stdout), tea.WithFPS(10))
		go func() {
			out := <-finished
			decorate(out.res)
			finished <- out
			prog.Send(tui.DoneMsg{Result: out.res, Err: out.err})
		}()
		if _, err := prog.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "dbduel: terminal UI: %v\n", err)
		}
		userStopped = model.Interrupted()
		cancelRun() // a forced quit leaves the engine running: stop it
		go func() {
			for range events {
			}
		}()
		out := <-finished
		res, runErr = out.res, out.err
		// The alternate screen is gone: leave the summary in the scrollback.
		fmt.Fprint(stdout, text.RunTable(res))
	} else {
		printer := pickPrinter(o, stdout, cfg)
		where := "start-up"
		progress := newProgressPrinter(stderr)
		for e := range events {
			if e.Kind == engine.EventPhase {
				where = e.Target + " " + e.Phase
			}
			switch e.Kind {
			case engine.EventProgress:
				progress.print(e)
			case engine.EventNotice:
				fmt.Fprintf(stderr, "dbduel: %s: %s\n", e.Target, e.Message)
			default:
				printer.Event(e)
			}
		}
		out := <-finished
		res, runErr = out.res, out.err
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "dbduel: interrupted during %s\n", where)
		}
		decorate(res)
		if runErr == nil || len(res.Runs) > 0 {
			printer.Result(res)
		}
	}
	decorate(res)
	res.FinishedAt = time.Now().UTC()
	if runErr != nil {
		res.Error = runErr.Error()
	}
	if o.out != "" {
		if err := result.WriteFile(o.out, res); err != nil {
			return err
		}
		if !res.Complete {
			fmt.Fprintf(stderr, "dbduel: partial result (complete: false) written to %s\n", o.out)
		}
	}
	var refused *engine.ErrTablesRefused
	if errors.As(runErr, &refused) {
		return &exitError{code: exitFailed, err: runErr}
	}
	if userStopped && !res.Complete {
		return &exitError{code: exitInterrupted, err: errors.New("stopped before the plan finished")}
	}
	if runErr != nil {
		return runErr
	}
	return checkThresholds(thresholds, res.Comparisons, stderr)
}

// checkThresholds turns --fail-if conditions into exit code 3.
func checkThresholds(ths []stats.Threshold, cs []result.Comparison, stderr io.Writer) error {
	var crossed []string
	for _, th := range ths {
		c, unjudged := th.Crossed(cs)
		for _, u := range unjudged {
			fmt.Fprintf(stderr, "dbduel: --fail-if %s: %s has no confidence interval (use --runs 2 or more); not judged\n", th.Text, u.Target)
		}
		for _, x := range c {
			crossed = append(crossed, fmt.Sprintf("%s %s %+.1f%% [%+.1f%%, %+.1f%%] crosses %s", x.Target, x.Metric, x.DeltaPct, x.CILowPct, x.CIHighPct, th.Text))
		}
	}
	if len(crossed) > 0 {
		return &exitError{code: exitThreshold, err: fmt.Errorf("--fail-if: %s", strings.Join(crossed, "; "))}
	}
	return nil
}

// checkWritable fails early when --out cannot be written, without leaving a file.
func checkWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("is a directory")
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".dbduel-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

func pickPrinter(o *runOptions, stdout io.Writer, cfg engine.Config) text.Printer {
	switch o.format {
	case "sysbench":
		var rs uint64
		if v, ok := cfg.Workload.Options()["rand_seed"].(uint64); ok {
			rs = v
		}
		return &text.SysbenchPrinter{W: stdout, Threads: cfg.Threads, Banner: text.Banner{
			Version: version, Threads: cfg.Threads, ReportInterval: int(cfg.ReportInterval.Seconds()),
			RandSeed: rs, Percentile: int(cfg.Percentile), Rate: cfg.Rate,
		}}
	case "json":
		return &text.JSONPrinter{W: stdout}
	}
	return &text.PlainPrinter{W: stdout}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// progressPrinter prints prepare progress with rows/s and an ETA.
type progressPrinter struct {
	w     io.Writer
	start map[string]time.Time
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	return &progressPrinter{w: w, start: map[string]time.Time{}}
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
	line := fmt.Sprintf("dbduel: %s: prepare %d/%d rows (%.0f%%)", e.Target, p.Rows, p.TotalRows, 100*float64(p.Rows)/float64(p.TotalRows))
	if secs := time.Since(t0).Seconds(); secs > 0.05 && p.Rows > 0 {
		rate := float64(p.Rows) / secs
		eta := time.Duration(float64(p.TotalRows-p.Rows) / rate * float64(time.Second)).Round(time.Second)
		line += fmt.Sprintf(", %.0f rows/s, ETA %s", rate, eta)
	}
	fmt.Fprintln(pp.w, line)
}

// versionWarnings says when targets run different server versions: a
// comparison across versions measures the versions, not the environment.
func versionWarnings(ts []result.Target) []string {
	if len(ts) < 2 {
		return nil
	}
	base := ts[0]
	var out []string
	for _, t := range ts[1:] {
		if t.ServerVersion != base.ServerVersion {
			out = append(out, fmt.Sprintf("server versions differ: %s runs %s, %s runs %s; the comparison includes the version difference",
				base.Name, base.ServerVersion, t.Name, t.ServerVersion))
		}
	}
	return out
}

func prepareAll(ctx context.Context, cfg engine.Config, ts []engine.Target, reprepare bool, stderr io.Writer) error {
	for _, t := range ts {
		db, err := engine.Open(t.DSN, cfg.Threads+2)
		if err != nil {
			return err
		}
		err = func() error {
			defer engine.Close(db)
			st, err := cfg.Workload.Check(ctx, db, cfg.Threads)
			if err != nil {
				return err
			}
			switch {
			case st.Reusable:
				fmt.Fprintf(stderr, "dbduel: %s: tables already prepared; nothing to do\n", t.Name)
				return nil
			case !st.Missing && !reprepare:
				return &exitError{code: exitFailed, err: &engine.ErrTablesRefused{Reason: st.Reason}}
			case !st.Missing:
				if _, err := cfg.Workload.Cleanup(ctx, db, cfg.Threads); err != nil {
					return err
				}
			}
			start := time.Now()
			progress := newProgressPrinter(stderr)
			err = engine.Prepare(ctx, cfg.Workload, cfg.Threads, t.Name, db, func(e engine.Event) {
				if e.Kind == engine.EventProgress {
					progress.print(e)
				}
			})
			if err == nil {
				fmt.Fprintf(stderr, "dbduel: %s: prepared in %.1fs\n", t.Name, time.Since(start).Seconds())
			}
			return err
		}()
		if err != nil {
			return fmt.Errorf("target %s: %w", t.Name, err)
		}
	}
	return nil
}

func cleanupAll(ctx context.Context, cfg engine.Config, ts []engine.Target, stderr io.Writer) error {
	for _, t := range ts {
		db, err := engine.Open(t.DSN, 2)
		if err != nil {
			return err
		}
		dropped, err := cfg.Workload.Cleanup(ctx, db, cfg.Threads)
		engine.Close(db)
		for _, d := range dropped {
			fmt.Fprintf(stderr, "dbduel: %s: dropped table '%s'\n", t.Name, d)
		}
		if err != nil {
			return fmt.Errorf("target %s: %w", t.Name, err)
		}
	}
	return nil
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

// telemetry turns a target's cumulative samples into per-interval figures:
// server CPU in cores, memory, and the docker-proxy's CPU when there is one.
// Targets that cannot be sampled (an existing server) give nil.
func telemetry(ctx context.Context, t targets.Target) func() map[string]any {
	prev, err := t.Sample(ctx)
	if err != nil {
		return nil
	}
	return func() map[string]any {
		cur, err := t.Sample(ctx)
		if err != nil {
			return nil
		}
		dt := cur.At.Sub(prev.At).Seconds()
		m := map[string]any{"server_mem_bytes": cur.MemBytes}
		if dt > 0 && cur.CPUNS >= prev.CPUNS {
			m["server_cpu_cores"] = math.Round(float64(cur.CPUNS-prev.CPUNS)/1e9/dt*1000) / 1000
		}
		if cur.ProxyCPUNS > 0 && dt > 0 && cur.ProxyCPUNS >= prev.ProxyCPUNS {
			m["proxy_cpu_cores"] = math.Round(float64(cur.ProxyCPUNS-prev.ProxyCPUNS)/1e9/dt*1000) / 1000
		}
		prev = cur
		return m
	}
}

// readParity reads every target's global variables and lists the
// differences (nil with a single target).
func readParity(ctx context.Context, ts []targets.Target, described []result.Target) (*result.Parity, error) {
	if len(ts) < 2 {
		return nil, nil
	}
	versions := map[string]string{}
	vars := map[string]map[string]string{}
	for i, t := range ts {
		versions[t.Name()] = described[i].ServerVersion
		v, err := targets.ReadVariables(ctx, t.Endpoint())
		if err != nil {
			return nil, fmt.Errorf("target %s: read variables: %w", t.Name(), err)
		}
		vars[t.Name()] = v
	}
	return targets.Parity(names(ts), versions, vars), nil
}

func names(ts []targets.Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name()
	}
	return out
}

func intOpt(w workload.Workload, key string) int {
	v, _ := w.Options()[key].(int)
	return v
}
