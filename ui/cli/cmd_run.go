package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/explain"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets"
)

// runOptions are the flags of run, prepare and cleanup.
type runOptions struct {
	targets        []string
	threads        string
	warmupRuns     int
	cooldown       string
	restartBetween bool
	timeS          float64
	events         uint64
	reportInterval float64
	percentile     int
	// openOptionFlags are the protocols' own flags (--mysql-ignore-errors).
	openOptionFlags []openOptionFlag
	runs            int
	seed            int64
	warmupTime      float64
	rate            float64
	noTUI           bool
	format          string
	out             string
	reprepare       bool
	cleanup         bool
	keep            bool
	fileDir         string
	ladder          []explain.Rung // dbduel explain's rungs (nil for run)
	flags           *pflag.FlagSet // the command's flags (for the workload's, passed to a client agent)
	prestart        func(ctx context.Context, t targets.Target, started []targets.Target) error
	failIf          []string
	newWorkload     workload.Factory
	file            string   // -f scenario.yaml
	compose         string   // --compose FILE
	services        []string // --service a,b
	dryRun          bool
	runsFlag        string  // --runs N|auto
	auto            bool    // --runs auto
	ciTarget        float64 // --ci-target, half-width in %
	ciTargetFlag    string
	marginFlag      string  // --margin PCT%
	margin          float64 // --margin, in %
	maxRuns         int
	stallTimeout    float64 // --stall-timeout, seconds
	maxTime         float64
	calibrate       bool
	cpuProfile      string
	strictParity    bool
	allowMixedHosts bool
	live            *liveOptions // dbduel live's own flags (nil for the other verbs)
}

// openOptionFlag is a protocol's flag and where its value lands.
type openOptionFlag struct {
	name  string
	value *string
}

// protocolOptions are the protocols' flags as open options.
func (o *runOptions) protocolOptions() driver.OpenOptions {
	opts := driver.OpenOptions{}
	for _, f := range o.openOptionFlags {
		opts[f.name] = *f.value
	}
	return opts
}

func bindRunFlags(fs *pflag.FlagSet, o *runOptions) {
	fs.StringArrayVar(&o.targets, "target", nil, "`NAME=SPEC`, repeatable; the first is the baseline. SPEC is one of:\n"+
		"  mysql://user:pass@host:port/db   an existing server\n"+
		"  local:BIN[,args=--flag][,cnf=PATH][,cpuset=0-1]   a managed mariadbd/mysqld\n"+
		"  docker:IMAGE[,memory=2g][,cpus=1.5][,cpuset=0][,network=bridge|host][,datadir=volume|bind|overlay]\n"+
		"        [,pull=never|missing][,args=--flag][,env=K=V][,cnf=PATH]   a managed container\n"+
		"(docs/targets.md)")
	fs.StringVar(&o.threads, "threads", "1", "`N[,N...]` threads per run; a comma-separated list sweeps (e.g. 10,32,64,128)")
	fs.IntVar(&o.warmupRuns, "warmup-runs", 0, "`N` runs per target made first and discarded (cold caches)")
	fs.StringVar(&o.cooldown, "cooldown", "auto", "`auto|SECONDS` to pause between runs; auto waits until the host is idle, at most 10 s")
	fs.BoolVar(&o.restartBetween, "restart-between-runs", false, "restart managed servers before every run (a fresh server per run)")
	fs.Float64Var(&o.timeS, "time", 10, "`SECONDS` each run lasts (per run, not in total; 0: no limit, then --events ends it)")
	fs.Uint64Var(&o.events, "events", 0, "`N` events each run makes at most (0: no limit)")
	fs.Float64Var(&o.reportInterval, "report-interval", 1, "`SECONDS` between intermediate reports (0 disables)")
	fs.IntVar(&o.percentile, "percentile", 95, "report latency percentile `P` (1-100, 0 disables)")
	for _, p := range driver.All() {
		for _, opt := range p.Options {
			v := new(string)
			fs.StringVar(v, opt.Name, opt.Default, opt.Usage)
			o.openOptionFlags = append(o.openOptionFlags, openOptionFlag{opt.Name, v})
		}
	}
	o.runsFlag = "1"
	fs.Var((*runsValue)(&o.runsFlag), "runs", "`N|auto` measured runs per target, interleaved in blocks (2 or more give a confidence interval); auto adds blocks until every TPS CI is as narrow as --ci-target")
	fs.Float64Var(&o.stallTimeout, "stall-timeout", 10, "`SECONDS` without a completed event (threads waiting on the server) that end a run: a paused container, a hung server (0: wait for ever)")
	fs.StringVar(&o.marginFlag, "margin", "", "an equivalence `PCT%`: each verdict also says whether the 90% CI lies within ±PCT% (equivalent), beyond it (different by more), or neither (inconclusive)")
	fs.StringVar(&o.ciTargetFlag, "ci-target", "5%", "with --runs auto: the half-width `PCT%` every target's TPS CI against the baseline must reach")
	fs.IntVar(&o.maxRuns, "max-runs", 10, "with --runs auto: at most `N` blocks per point")
	fs.Float64Var(&o.maxTime, "max-time", 0, "with --runs auto: stop adding blocks after `SECONDS` in all (0: no limit)")
	fs.Int64Var(&o.seed, "seed", 0, "seed `N` of the plan's run order (0: from the clock; printed)")
	fs.Float64Var(&o.warmupTime, "warmup-time", 0, "`SECONDS` at the start of each run executed but not counted")
	fs.Float64Var(&o.rate, "rate", 0, "`N` events per second, Poisson arrivals (open loop; 0: as fast as possible)")
	fs.BoolVar(&o.noTUI, "no-tui", false, "headless output even on a terminal")
	fs.StringVar(&o.format, "format", "", "headless output format `text|sysbench|json` (implies --no-tui)")
	fs.StringVarP(&o.out, "out", "o", "", "write the result to `FILE.json` (rewritten after every run)")
	fs.BoolVar(&o.reprepare, "reprepare", false, "drop and re-create sbtestN tables whose count or size does not match")
	fs.BoolVar(&o.cleanup, "cleanup", false, "drop the run's sbtestN tables at the end")
	fs.BoolVar(&o.keep, "keep", false, "keep managed servers, containers and volumes after the run (and fileio's files)")
	fs.StringVar(&o.fileDir, "file-dir", "", "fileio on host targets: the directory of the test files (default: dbduel's state directory)")
	fs.StringArrayVar(&o.failIf, "fail-if", nil, "exit 3 when a target's whole 95% CI vs the baseline lies past `METRIC<PCT%`, e.g. 'tps<-5%' or 'p95>+10%', and 5 when the CI straddles it (inconclusive; repeatable; needs --runs 2 or more)")
	fs.BoolVar(&o.allowMixedHosts, "allow-mixed-hosts", false, "compare targets that run on different machines (refused by default: it measures the machines, not the container)")
	fs.BoolVar(&o.strictParity, "strict-parity", false, "refuse to run (exit 4) when targets differ in server version or any configuration variable")
	fs.StringVarP(&o.file, "file", "f", "", "read targets, workload, options and plan from a scenario `FILE.yaml` (flags given here override it; examples/)")
	fs.StringVar(&o.compose, "compose", "", "turn the services of a compose `FILE` into container targets (with --target: added after those)")
	fs.StringSliceVar(&o.services, "service", nil, "with --compose: the services to run, in this order (default: all, in the file's order)")
	fs.BoolVar(&o.calibrate, "calibrate", false, "add the baseline a second time (NAME-aa: the same server, or an identical managed one) to measure the noise floor A vs A', and read every verdict against it")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the resolved targets, workload and plan, and exit without running")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (for dbduel's own speed work)")
	_ = fs.MarkHidden("cpuprofile")
	o.newWorkload = workload.BindFlags(fs)
	o.flags = fs
	// sysbench spells options with underscores too (--table_size).
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
}

// runVerbs are the verbs that share run's flags and target set-up: what
// each says of itself and what it does once the targets are up. A verb of
// this family is one entry here.
var runVerbs = map[string]struct {
	short string
	do    func(ctx context.Context, st *State, rc *runConfig, o *runOptions, ts *startedTargets) error
	// bind adds the verb's own flags; check refuses what the verb cannot
	// do before any target starts (both may be nil).
	bind  func(*pflag.FlagSet, *runOptions)
	check func(st *State, workload string, o *runOptions) error
}{
	"run": {"Run a workload against each target (prepares missing tables first)",
		func(ctx context.Context, st *State, rc *runConfig, o *runOptions, ts *startedTargets) error {
			return measure(ctx, st, rc, o, ts)
		}, nil, nil},
	"prepare": {"Create and load the workload's tables on each target",
		func(ctx context.Context, st *State, rc *runConfig, o *runOptions, ts *startedTargets) error {
			return prepareAll(ctx, rc, ts.engine, o.reprepare, st.Stderr)
		}, nil, nil},
	"cleanup": {"Drop the workload's sbtestN tables on each target",
		func(ctx context.Context, st *State, rc *runConfig, _ *runOptions, ts *startedTargets) error {
			return cleanupAll(ctx, rc, ts.engine, st.Stderr)
		}, nil, nil},
	"check": {"Check the workload's consistency conditions on each target (tpcc: TPC-C's 3.3.2.1-3.3.2.4)",
		func(ctx context.Context, st *State, rc *runConfig, _ *runOptions, ts *startedTargets) error {
			return checkAll(ctx, rc, ts, st.Stdout)
		}, nil, nil},
	"live": {"Explore at the terminal: targets take turns in short slices, keys change the load (docs/live.md)",
		func(ctx context.Context, st *State, rc *runConfig, o *runOptions, ts *startedTargets) error {
			return measure(ctx, st, rc, o, ts)
		}, bindLiveFlags, checkLive},
}

// runFamily is the constructor of one verb of runVerbs.
func runFamily(verb string) func(*State) *cobra.Command {
	return func(st *State) *cobra.Command {
		o := &runOptions{}
		cmd := &cobra.Command{
			Use:   verb + " [WORKLOAD] --target NAME=SPEC ...",
			Short: runVerbs[verb].short,
			Args:  cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				name := ""
				if len(args) == 1 {
					name = args[0]
				}
				name, err := o.loadFiles(cmd.Context(), st, cmd.Flags(), name)
				if err != nil {
					return err
				}
				if check := runVerbs[verb].check; check != nil {
					if err := check(st, name, o); err != nil {
						return err
					}
				}
				if o.dryRun {
					return dryRun(st, verb, name, o)
				}
				return runVerb(cmd.Context(), st, verb, name, o)
			},
		}
		bindRunFlags(cmd.Flags(), o)
		if bind := runVerbs[verb].bind; bind != nil {
			bind(cmd.Flags(), o)
		}
		return cmd
	}
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
	if o.stallTimeout < 0 {
		return usageErr("--stall-timeout must not be negative")
	}
	if o.marginFlag != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(o.marginFlag), "%"), 64)
		if err != nil || v <= 0 || v >= 100 {
			return usageErr("invalid --margin %q: want a percentage such as 5%%", o.marginFlag)
		}
		o.margin = v
	}
	if v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(o.ciTargetFlag), "%"), 64); err != nil || v <= 0 {
		return usageErr("invalid --ci-target %q: want a half-width such as 5%%", o.ciTargetFlag)
	} else {
		o.ciTarget = v
	}
	if o.runsFlag == "auto" {
		if o.maxRuns < 2 || o.ciTarget <= 0 || o.maxTime < 0 {
			return usageErr("--runs auto needs --max-runs 2 or more, a positive --ci-target and a --max-time of 0 or more")
		}
		o.auto, o.runs = true, o.maxRuns
	} else if n, err := strconv.Atoi(o.runsFlag); err != nil || n < 1 {
		return usageErr("invalid --runs %q: want a number of runs (1 or more) or auto", o.runsFlag)
	} else {
		o.runs = n
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
	if _, err := o.cooldownDuration(); err != nil {
		return err
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

// cooldownDuration is --cooldown: a negative duration means "until the host
// is idle" (auto).
func (o *runOptions) cooldownDuration() (time.Duration, error) {
	if o.cooldown == "auto" || o.cooldown == "" {
		return -1, nil
	}
	v, err := strconv.ParseFloat(o.cooldown, 64)
	if err != nil || v < 0 {
		return 0, usageErr("invalid --cooldown %q: want auto or a number of seconds", o.cooldown)
	}
	return seconds(v), nil
}

// loadFiles applies -f and --compose to the flags the command line left
// unset, and returns the workload (the command line's, else the file's,
// else sysbench's default).
func (o *runOptions) loadFiles(ctx context.Context, st *State, fs *pflag.FlagSet, workload string) (string, error) {
	stderr := st.Stderr
	if o.file != "" {
		sc, err := loadScenario(o.file, fs, st.LookupEnv)
		if err != nil {
			return "", err
		}
		if err := sc.apply(fs); err != nil {
			return "", err
		}
		if workload == "" {
			workload = sc.workload
		}
		if !fs.Changed("target") {
			o.targets = sc.targets
		}
	}
	if o.compose != "" {
		ci, err := loadCompose(ctx, o.compose, o.services, fs, st.Environ())
		if err != nil {
			return "", err
		}
		for _, n := range ci.notes {
			fmt.Fprintf(stderr, "dbduel: %s: %s\n", o.compose, n)
		}
		// --target ones (e.g. a native server) first: the first is the baseline.
		o.targets = append(o.targets, ci.targets...)
		if ci.scenario != nil {
			if err := ci.scenario.apply(fs); err != nil {
				return "", err
			}
			if workload == "" {
				workload = ci.scenario.workload
			}
		}
	} else if len(o.services) > 0 {
		return "", usageErr("--service needs --compose FILE")
	}
	if workload == "" {
		workload = "oltp_read_write"
	}
	return workload, nil
}

// runsValue is --runs: a number of runs (1 or more) or auto, checked when set.
type runsValue string

func (r *runsValue) String() string { return string(*r) }
func (r *runsValue) Type() string   { return "N|auto" }
func (r *runsValue) Set(v string) error {
	if n, err := strconv.Atoi(v); (err != nil || n < 1) && v != "auto" {
		return fmt.Errorf("want a number of runs (1 or more) or auto")
	}
	*r = runsValue(v)
	return nil
}

// workloadArgs are the workload flags the user set, as --name=value, for a
// client agent that rebuilds the workload inside a container.
func (o *runOptions) workloadArgs() []string {
	if o.flags == nil {
		return nil
	}
	names := map[string]bool{}
	probe := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	workload.BindFlags(probe)
	probe.VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	var args []string
	o.flags.Visit(func(f *pflag.Flag) {
		if names[f.Name] {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return args
}
