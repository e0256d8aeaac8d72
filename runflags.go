package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	mysqldrv "github.com/dbduel/dbduel/engine/driver/mysql"
	"github.com/dbduel/dbduel/engine/workload"
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
	fs.StringVar(&o.ignoreErrors, "mysql-ignore-errors", mysqldrv.DefaultIgnoreErrors, "list of errors to ignore, or \"all\"")
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
	if o.warmupRuns < 0 {
		return usageErr("--warmup-runs must not be negative")
	}
	// A threshold that cannot be judged must not pass silently.
	if len(o.failIf) > 0 && o.runs < 2 {
		return usageErr("--fail-if needs --runs 2 or more (one run has no confidence interval to judge)")
	}
	if len(o.failIf) > 0 && len(o.targets) < 2 {
		return usageErr("--fail-if needs a second --target to compare with the baseline")
	}
	return nil
}
