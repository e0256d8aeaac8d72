package cli

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets"
)

// runOptions are dbduel run's flags: the shared ones, and the plan's
// (runs in interleaved blocks, how they are judged).
type runOptions struct {
	commonOptions
	warmupRuns     int
	cooldown       string
	restartBetween bool
	failIf         []string
	thresholds     []stats.Threshold // --fail-if, parsed by check
	runsFlag       string            // --runs N|auto
	runs           int
	auto           bool    // --runs auto
	ciTarget       float64 // --ci-target, half-width in %
	ciTargetFlag   string
	marginFlag     string  // --margin PCT%
	margin         float64 // --margin, in %
	alpha          float64 // --alpha, family-wise
	maxRuns        int
	maxTime        float64
	calibrate      bool
}

func newRunCmd(st *State) *cobra.Command {
	o := &runOptions{}
	return familyCommand(st, "run", "Run a workload against each target (prepares missing tables first)", o,
		func(fs *pflag.FlagSet) { bindRunFlags(fs, o) })
}

// bindRunFlags binds the shared flags and the plan's.
func bindRunFlags(fs *pflag.FlagSet, o *runOptions) {
	bindCommonFlags(fs, &o.commonOptions)
	fs.IntVar(&o.warmupRuns, "warmup-runs", 0, "`N` runs per target made first and discarded (cold caches)")
	fs.StringVar(&o.cooldown, "cooldown", "auto", "`auto|SECONDS` to pause between runs; auto waits until the host is idle, at most 10 s")
	fs.BoolVar(&o.restartBetween, "restart-between-runs", false, "restart managed servers before every run (a fresh server per run)")
	o.runsFlag = "1"
	fs.Var((*runsValue)(&o.runsFlag), "runs", "`N|auto` measured runs per target, interleaved in blocks (2 or more give a confidence interval); auto adds blocks until every TPS CI is as narrow as --ci-target")
	fs.StringVar(&o.marginFlag, "margin", "", "an equivalence `PCT%`: each verdict also says whether the 90% CI lies within ±PCT% (equivalent), beyond it (different by more), or neither (inconclusive)")
	fs.Float64Var(&o.alpha, "alpha", stats.DefaultAlpha, "the family-wise `LEVEL` of the verdict words and --fail-if over every primary comparison of the plan (Holm's step-down; at most 0.05, so that a word never stands beside a 95% CI spanning 0)")
	fs.StringVar(&o.ciTargetFlag, "ci-target", "5%", "with --runs auto: the half-width `PCT%` every target's TPS CI against the baseline must reach")
	fs.IntVar(&o.maxRuns, "max-runs", 10, "with --runs auto: at most `N` blocks per point")
	fs.Float64Var(&o.maxTime, "max-time", 0, "with --runs auto: stop adding blocks after `SECONDS` in all (0: no limit)")
	fs.StringArrayVar(&o.failIf, "fail-if", nil, "exit 3 when a target's whole 95% CI vs the baseline lies past `METRIC<PCT%`, e.g. 'tps<-5%' or 'p95>+10%', and 5 when the CI straddles it (inconclusive; repeatable; needs --runs 2 or more)")
	fs.BoolVar(&o.calibrate, "calibrate", false, "add the baseline a second time (NAME-aa: the same server, or an identical managed one) as a check of the design (A vs A'): a bias between identical targets marks the point's verdicts suspect")
}

// check resolves the plan's flags: the A/A copy (--calibrate), --runs,
// --margin, --ci-target and --fail-if.
func (o *runOptions) check(_ *State, rc *runConfig) error {
	if o.calibrate && !strings.Contains(strings.Join(o.targets, " "), stats.CalibrationSuffix+"=") {
		// The A/A copy comes right after the baseline, with the same SPEC.
		name, spec, _ := strings.Cut(o.targets[0], "=")
		o.targets = append([]string{o.targets[0], name + stats.CalibrationSuffix + "=" + spec}, o.targets[1:]...)
	}
	if err := o.validate(); err != nil {
		return err
	}
	var err error
	if o.thresholds, err = stats.ParseThresholds(o.failIf); err != nil {
		return usageErr("%v", err)
	}
	for _, th := range o.thresholds {
		if _, counted := rc.workload.(workload.ServerCounted); (th.Metric == "nopm" || th.Metric == "tpm") && !counted {
			return usageErr("--fail-if %s: workload %s has no %s (TPC-C's figure)", th.Text, rc.workload.Name(), strings.ToUpper(th.Metric))
		}
	}
	return nil
}

// validate checks the plan's flags.
func (o *runOptions) validate() error {
	if o.marginFlag != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(o.marginFlag), "%"), 64)
		if err != nil || v <= 0 || v >= 100 {
			return usageErr("invalid --margin %q: want a percentage such as 5%%", o.marginFlag)
		}
		o.margin = v
	}
	if !(o.alpha > 0 && o.alpha <= 0.05) {
		return usageErr("invalid --alpha %g: want a family-wise level above 0 and at most 0.05", o.alpha)
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

// do runs the plan and judges --fail-if.
func (o *runOptions) do(ctx context.Context, st *State, rc *runConfig, ts *startedTargets) error {
	if rc.onHost() && !o.keep {
		// fileio's files go on every exit path, an interrupted run's too
		// (a complete run's were removed by its own cleanup already).
		defer removeHostFiles(ctx, rc, ts, st.Stderr)
	}
	sess, err := o.session(rc, ts, st.Stderr)
	if err != nil {
		return err
	}
	if runs := o.runs + o.warmupRuns; runs > 1 || len(rc.points) > 1 {
		fmt.Fprintf(st.Stderr, "dbduel: plan: %d point(s) × %d block(s) of %d target(s); seed %d (repeat the order with --seed %d)\n",
			len(rc.points), runs, len(ts.all), rc.seed, rc.seed)
	}
	out := play(ctx, st, rc, &o.commonOptions, sess, ts, o.screen(rc, len(ts.all)))
	if err := finish(out, &o.commonOptions, st.Stderr); err != nil {
		return err
	}
	return checkThresholds(o.thresholds, out.res.Comparisons, stats.Alpha(out.res), st.Stderr)
}

// dryRun prints the plan: its points and blocks, and what it adds up to.
func (o *runOptions) printDryRun(st *State, rc *runConfig, ts []targets.Target) {
	stdout := st.Stdout
	p := o.plan(rc, targetNames(ts))
	fmt.Fprintf(stdout, "plan: %d run(s) and %d warm-up run(s) per target and point, %s, seed %d\n",
		o.runs, o.warmupRuns, runLength(o.timeS, o.events), rc.seed)
	for i, pt := range rc.points {
		fmt.Fprintf(stdout, "point %d: threads=%d table_size=%d\n", i+1, pt.Threads, pt.TableSize())
	}
	for i, b := range p.Blocks {
		kind := "run"
		if b.Warmup {
			kind = "warm-up"
		}
		fmt.Fprintf(stdout, "block %d (point %d, %s %d): %s\n", i+1, b.Point+1, kind, b.Index, strings.Join(b.Order, " "))
	}
	for _, line := range planTotals(rc, o.timeS+o.warmupTime, p.TotalRuns(), ts) {
		fmt.Fprintln(stdout, line)
	}
	if len(o.thresholds) > 0 {
		fmt.Fprintf(stdout, "fail-if: %s\n", strings.Join(o.failIf, " "))
	}
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

// precisionTarget is the half-width the primary verdicts are held to: the
// --runs auto target, else a --fail-if threshold on the primary metric,
// else --margin, else 5%.
func (o *runOptions) precisionTarget() float64 {
	if o.auto {
		return o.ciTarget
	}
	for _, th := range o.thresholds {
		if (th.Metric == "tps" || th.Metric == "nopm") && th.Pct != 0 {
			return math.Abs(th.Pct)
		}
	}
	if o.margin > 0 {
		return o.margin
	}
	return stats.DefaultPrecisionPct
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
