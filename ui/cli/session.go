package cli

import (
	"fmt"
	"io"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/targets/hostinfo"
)

// The engine's Session is built here, once, from the resolved flags
// (runConfig) and the started targets: newSession makes what every verb
// shares, and each verb adds its schedule (run's plan, live's rounds).
// Nothing changes the session once the engine has it.

// newSession is the session of sched: the shared load and table handling,
// the annotation of every snapshot and --out rewritten after each.
func newSession(rc *runConfig, o *commonOptions, sched engine.Schedule, ts *startedTargets, stderr io.Writer) engine.Session {
	s := engine.Session{Load: rc.load, Schedule: sched, Reprepare: o.reprepare, Cleanup: o.cleanup || (rc.onHost() && !o.keep),
		Annotate: ts.annotate, PrecisionPct: stats.DefaultPrecisionPct}
	s.NoiseSampler = func() func(result.Telemetry) result.Noise { return hostinfo.NewNoiseSampler("/").Sample }
	if o.out != "" || o.memProfile != "" {
		s.OnSnapshot = func(r *result.Result) {
			if o.out != "" {
				if err := result.WriteFile(o.out, r); err != nil {
					fmt.Fprintf(stderr, "dbduel: %v\n", err)
				}
			}
			if o.memProfile != "" {
				if err := writeHeapProfile(o.memProfile); err != nil {
					fmt.Fprintf(stderr, "dbduel: --memprofile: %v\n", err)
				}
			}
		}
	}
	return s
}

// plan is run's plan over the targets named: every point's blocks.
func (o *runOptions) plan(rc *runConfig, names []string) plan.Plan {
	return plan.New(names, len(rc.points), o.runs, o.warmupRuns, rc.seed)
}

// session is dbduel run's session: the plan's blocks on the sweep's
// points, with cool-downs, restarts and --runs auto as the flags ask.
func (o *runOptions) session(rc *runConfig, ts *startedTargets, stderr io.Writer) (engine.Session, error) {
	var adaptive *engine.Adaptive
	if o.auto {
		adaptive = &engine.Adaptive{CITargetPct: o.ciTarget, MaxTime: seconds(o.maxTime)}
	}
	sched, err := engine.NewPlan(o.plan(rc, targetNames(ts.all)), rc.points, adaptive)
	if err != nil {
		return engine.Session{}, err
	}
	s := newSession(rc, &o.commonOptions, sched, ts, stderr)
	s.Cooldown, _ = o.cooldownDuration() // checked by validate
	if o.restartBetween {
		s.BeforeRun = restarter(ts)
	}
	s.MarginPct, s.PrecisionPct, s.Alpha = o.margin, o.precisionTarget(), o.alpha
	return s, nil
}
