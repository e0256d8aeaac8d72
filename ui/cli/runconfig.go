package cli

import (
	"context"
	"math"
	"slices"

	"strings"
	"time"

	"github.com/dbduel/dbduel/engine/driver/host"
	"github.com/dbduel/dbduel/targets"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets/state"
)

// runConfig is what the flags of run, prepare and cleanup resolve to,
// checked before anything starts.
type runConfig struct {
	verb        string
	workload    workload.Workload
	engine      engine.Config
	openOptions driver.OpenOptions // the protocols' own flags (--mysql-ignore-errors)
	threads     []int              // the --threads sweep
	sizes       []int              // the --table-size sweep
	thresholds  []stats.Threshold
	seed        int64 // plan order
	runID       string
	// prestart, if set, is called before each target starts, with the
	// targets already started (explain sizes a rung from another's figures).
	prestart func(ctx context.Context, t targets.Target, started []targets.Target) error
}

// newRunConfig resolves the flags (pure but for the clock that seeds an
// unseeded run): every input error is a usage error.
func newRunConfig(st *State, verb, wlName string, o *runOptions) (*runConfig, error) {
	if o.calibrate && len(o.targets) > 0 && !strings.Contains(strings.Join(o.targets, " "), stats.CalibrationSuffix+"=") {
		// The A/A copy comes right after the baseline, with the same SPEC.
		name, spec, _ := strings.Cut(o.targets[0], "=")
		o.targets = append([]string{o.targets[0], name + stats.CalibrationSuffix + "=" + spec}, o.targets[1:]...)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	wl, err := o.newWorkload(wlName)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	rc := &runConfig{verb: verb, workload: wl, seed: o.seed, prestart: o.prestart}
	if rc.threads, err = plan.ParseList("threads", o.threads); err != nil {
		return nil, usageErr("%v", err)
	}
	rc.sizes = []int{wl.Shape().TableSize}
	if sw, ok := wl.(workload.Sweepable); ok {
		rc.sizes = sw.TableSizes()
	}
	rc.openOptions = o.protocolOptions()
	if err := driver.CheckOpenOptions(rc.openOptions); err != nil {
		return nil, usageErr("%v", err)
	}
	if rc.thresholds, err = stats.ParseThresholds(o.failIf); err != nil {
		return nil, usageErr("%v", err)
	}
	for _, th := range rc.thresholds {
		if _, counted := wl.(workload.ServerCounted); (th.Metric == "nopm" || th.Metric == "tpm") && !counted {
			return nil, usageErr("--fail-if %s: workload %s has no %s (TPC-C's figure)", th.Text, wl.Name(), strings.ToUpper(th.Metric))
		}
	}
	rc.engine = engine.Config{
		Workload: wl, Threads: rc.threads[0],
		Time:           seconds(o.timeS),
		Events:         o.events,
		ReportInterval: seconds(o.reportInterval),
		Percentile:     float64(o.percentile),
		Rate:           o.rate,
		Warmup:         seconds(o.warmupTime),
		StallTimeout:   seconds(o.stallTimeout),
		Seed:           uint64(time.Now().UnixNano()),
	}
	if rs := wl.Shape().RandSeed; rs != 0 {
		rc.engine.Seed = rs
	}
	if err := rc.engine.Validate(); err != nil {
		return nil, usageErr("%v", err)
	}
	if o.out != "" {
		if err := checkWritable(o.out); err != nil {
			return nil, usageErr("--out %s: %v", o.out, err)
		}
	}
	if rc.seed == 0 {
		rc.seed = time.Now().UnixNano() % 1_000_000_000
	}
	rc.runID = state.NewRunID()
	if id := st.Getenv("DBDUEL_RUN_ID"); id != "" {
		rc.runID = id // lets tests and scripts find what this run created
	}
	return rc, nil
}

// onHost says the workload runs on the machine itself (cpu, memory,
// fileio): its files are removed at the end unless --keep.
func (rc *runConfig) onHost() bool {
	return slices.Equal(rc.workload.Protocols(), []string{host.Protocol})
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// session builds the engine's plan: every sweep point, interleaved blocks.
func (rc *runConfig) session(o *runOptions, names []string) engine.Session {
	points := plan.Sweep(rc.threads, rc.sizes)
	sess := engine.Session{Config: rc.engine, Plan: plan.New(names, points, o.runs, o.warmupRuns, rc.seed),
		Reprepare: o.reprepare, Cleanup: o.cleanup || (rc.onHost() && !o.keep)}
	sess.Cooldown, _ = o.cooldownDuration() // checked by validate
	if o.auto {
		sess.Adaptive = &engine.Adaptive{CITargetPct: o.ciTarget, MaxTime: seconds(o.maxTime)}
	}
	sess.MarginPct, sess.PrecisionPct = o.margin, rc.precisionTarget(o)
	if len(rc.sizes) > 1 {
		wl, first := rc.workload, rc.sizes[0]
		sw := wl.(workload.Sweepable)
		sess.WorkloadFor = func(n int) (workload.Workload, error) {
			if n == first {
				return wl, nil
			}
			return sw.WithTableSize(n)
		}
	}
	return sess
}

// precisionTarget is the half-width the primary verdicts are held to: the
// --runs auto target, else a --fail-if threshold on the primary metric,
// else --margin, else 5%.
func (rc *runConfig) precisionTarget(o *runOptions) float64 {
	if o.auto {
		return o.ciTarget
	}
	for _, th := range rc.thresholds {
		if (th.Metric == "tps" || th.Metric == "nopm") && th.Pct != 0 {
			return math.Abs(th.Pct)
		}
	}
	if o.margin > 0 {
		return o.margin
	}
	return stats.DefaultPrecisionPct
}
