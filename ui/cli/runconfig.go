package cli

import (
	"context"
	"slices"
	"time"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/ledger"
)

// runConfig is what a family verb's flags resolve to, checked before
// anything starts: the workload, the points (the one place a run's
// threads come from), the load every run shares, and the run's identity.
type runConfig struct {
	workload    workload.Workload
	points      []engine.Point     // the sweep: threads × table size, sizes outer
	load        engine.Load        // what every run shares
	openOptions driver.OpenOptions // the protocols' own flags (--mysql-ignore-errors)
	seed        int64              // plan order
	runID       string
	// prestart, if set, is called before each target starts, with the
	// targets already started (explain sizes a rung from another's figures).
	prestart func(ctx context.Context, t targets.Target, started []targets.Target) error
}

// newRunConfig resolves the shared flags and lets the verb check and
// complete them (pure but for the clock that seeds an unseeded run):
// every input error is a usage error.
func newRunConfig(st *State, wlName string, v familyVerb) (*runConfig, error) {
	o := v.shared()
	if err := o.validate(); err != nil {
		return nil, err
	}
	wl, err := o.newWorkload(wlName)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	threads, err := plan.ParseList("threads", o.threads)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	rc := &runConfig{workload: wl, seed: o.seed, openOptions: o.protocolOptions()}
	if rc.points, err = sweep(wl, threads, o.rate); err != nil {
		return nil, usageErr("%v", err)
	}
	if err := driver.CheckOpenOptions(rc.openOptions); err != nil {
		return nil, usageErr("%v", err)
	}
	rc.load = engine.Load{Time: seconds(o.timeS), Events: o.events, ReportInterval: seconds(o.reportInterval),
		Percentile: float64(o.percentile), Warmup: seconds(o.warmupTime), StallTimeout: seconds(o.stallTimeout),
		Seed: uint64(time.Now().UnixNano())}
	if rs := wl.Shape().RandSeed; rs != 0 {
		rc.load.Seed = rs
	}
	if err := v.check(st, rc); err != nil {
		return nil, err
	}
	if err := rc.validate(); err != nil {
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
	rc.runID = ledger.NewRunID()
	if id := st.Getenv("DBDUEL_RUN_ID"); id != "" {
		rc.runID = id // lets tests and scripts find what this run created
	}
	return rc, nil
}

func (rc *runConfig) validate() error {
	if err := rc.load.Validate(); err != nil {
		return err
	}
	for _, pt := range rc.points {
		if err := pt.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// sweep is every combination of the workload's table sizes and threads,
// sizes outer (data is made once per size), each at --rate.
func sweep(wl workload.Workload, threads []int, rate float64) ([]engine.Point, error) {
	sized := []workload.Workload{wl}
	if sw, ok := wl.(workload.Sweepable); ok {
		sized = nil
		for i, n := range sw.TableSizes() {
			w := wl
			if i > 0 {
				var err error
				if w, err = sw.WithTableSize(n); err != nil {
					return nil, err
				}
			}
			sized = append(sized, w)
		}
	}
	var pts []engine.Point
	for _, w := range sized {
		for _, n := range threads {
			pts = append(pts, engine.Point{Workload: w, Threads: n, Rate: rate})
		}
	}
	return pts, nil
}

// threads is the first point's threads: what prepare and cleanup use.
func (rc *runConfig) threads() int { return rc.points[0].Threads }

// maxTableSize is the largest table size of the sweep.
func (rc *runConfig) maxTableSize() int {
	n := 0
	for _, pt := range rc.points {
		n = max(n, pt.TableSize())
	}
	return n
}

// onHost says the workload runs on the machine itself (cpu, memory,
// fileio): its files are removed at the end unless --keep.
func (rc *runConfig) onHost() bool {
	return slices.Equal(rc.workload.Protocols(), []string{system.Protocol})
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
