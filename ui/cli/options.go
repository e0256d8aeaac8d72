package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets/container"
)

// commonOptions are the flags every verb of the run family shares (run,
// explain, live, prepare, cleanup, check): the targets and the files they
// come from, the workload and the load each run makes, the output, and
// what becomes of the targets. Each verb's options embed them.
type commonOptions struct {
	targets        []string
	threads        string
	timeS          float64
	events         uint64
	reportInterval float64
	percentile     int
	// openOptionFlags are the protocols' own flags (--mysql-ignore-errors).
	openOptionFlags []openOptionFlag
	seed            int64
	warmupTime      float64
	rate            float64
	stallTimeout    float64 // seconds
	noTUI           bool
	format          string
	out             string
	reprepare       bool
	cleanup         bool
	keep            bool
	fileDir         string
	flags           *pflag.FlagSet // the command's flags (for the workload's, passed to a client agent)
	newWorkload     workload.Factory
	file            string   // -f scenario.yaml
	compose         string   // --compose FILE
	services        []string // --service a,b
	dryRun          bool
	cpuProfile      string
	memProfile      string
	strictParity    bool
	allowMixedHosts bool
	insecureEngine  bool
	pullStall       time.Duration
}

func (o *commonOptions) shared() *commonOptions { return o }

// openOptionFlag is a protocol's flag and where its value lands.
type openOptionFlag struct {
	name  string
	value *string
}

// protocolOptions are the protocols' flags as open options.
func (o *commonOptions) protocolOptions() driver.OpenOptions {
	opts := driver.OpenOptions{}
	for _, f := range o.openOptionFlags {
		opts[f.name] = *f.value
	}
	return opts
}

func bindCommonFlags(fs *pflag.FlagSet, o *commonOptions) {
	fs.StringArrayVar(&o.targets, "target", nil, "`NAME=SPEC`, repeatable; the first is the baseline. SPEC is one of:\n"+
		"  mysql://user:pass@host:port/db   an existing server\n"+
		"  local:BIN[,args=--flag][,cnf=PATH][,cpuset=0-1]   a managed mariadbd/mysqld\n"+
		"  docker:IMAGE[,memory=2g][,cpus=1.5][,cpuset=0][,network=bridge|host][,datadir=volume|bind|overlay]\n"+
		"        [,pull=missing|always|never][,args=--flag][,env=K=V][,cnf=PATH]   a managed container\n"+
		"(docs/targets.md)")
	fs.StringVar(&o.threads, "threads", "1", "`N[,N...]` threads per run; a comma-separated list sweeps (e.g. 10,32,64,128)")
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
	fs.Float64Var(&o.stallTimeout, "stall-timeout", 10, "`SECONDS` without a completed event (threads waiting on the server) that end a run: a paused container, a hung server (0: wait for ever)")
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
	fs.BoolVar(&o.allowMixedHosts, "allow-mixed-hosts", false, "compare targets that run on different machines (refused by default: it measures the machines, not the container)")
	fs.DurationVar(&o.pullStall, "pull-stall-timeout", container.DefaultPullStallTimeout, "give up pulling an image after this long without progress (the engine reports about every 512 KiB; before the first report, the registry's answer counts) — a pull has no other time limit")
	fs.BoolVar(&o.insecureEngine, "insecure-engine", false, "let engine=tcp:// reach another host over plain TCP (the container's root password and the agent's traffic cross the link in clear)")
	fs.BoolVar(&o.strictParity, "strict-parity", false, "refuse to run (exit 4) when targets differ in server version or any configuration variable")
	fs.StringVarP(&o.file, "file", "f", "", "read targets, workload, options and plan from a scenario `FILE.yaml` (flags given here override it; examples/)")
	fs.StringVar(&o.compose, "compose", "", "turn the services of a compose `FILE` into container targets (with --target: added after those)")
	fs.StringSliceVar(&o.services, "service", nil, "with --compose: the services to run, in this order (default: all, in the file's order)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the resolved targets, workload and plan, and exit without running")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (for dbduel's own speed work)")
	_ = fs.MarkHidden("cpuprofile")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a Go heap profile to this file at the start and after every run's snapshot (for dbduel's own memory work)")
	_ = fs.MarkHidden("memprofile")
	o.newWorkload = workload.BindFlags(fs)
	o.flags = fs
	// sysbench spells options with underscores too (--table_size).
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
}

// validate checks the shared flags.
func (o *commonOptions) validate() error {
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

// loadFiles applies -f and --compose to the flags the command line left
// unset, and returns the workload (the command line's, else the file's,
// else sysbench's default).
func (o *commonOptions) loadFiles(ctx context.Context, st *State, fs *pflag.FlagSet, workload string) (string, error) {
	stderr := st.Stderr
	if o.file != "" {
		sc, err := loadScenario(o.file, st.LookupEnv)
		if err != nil {
			return "", err
		}
		if err := sc.apply(fs, stderr); err != nil {
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
		ci, err := loadCompose(ctx, o.compose, o.services, st.Environ())
		if err != nil {
			return "", err
		}
		for _, n := range ci.notes {
			fmt.Fprintf(stderr, "dbduel: %s: %s\n", o.compose, n)
		}
		// --target ones (e.g. a native server) first: the first is the baseline.
		o.targets = append(o.targets, ci.targets...)
		if ci.scenario != nil {
			if err := ci.scenario.apply(fs, stderr); err != nil {
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

// workloadArgs are the workload flags the user set, as --name=value, for a
// client agent that rebuilds the workload inside a container.
func (o *commonOptions) workloadArgs() []string {
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
