package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"maps"
)

// dryRun prints what a run would do, resolved from the files and flags,
// and starts nothing.
func dryRun(st *State, verb, wlName string, o *runOptions) error {
	stdout := st.Stdout
	rc, err := newRunConfig(st, verb, wlName, o)
	if err != nil {
		return err
	}
	ts, err := buildTargets(o.targets, newTargetContext(st, rc, o), io.Discard)
	if err != nil {
		return err
	}
	sess := rc.session(o, targetNames(ts))
	fmt.Fprintf(stdout, "%s %s (dry run: nothing started)\n", verb, rc.workload.Name())
	opts := rc.workload.Options()
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		kv = append(kv, fmt.Sprintf("%s=%v", k, opts[k]))
	}
	fmt.Fprintf(stdout, "options: %s\n", strings.Join(kv, " "))
	for i, t := range ts {
		role := ""
		if i == 0 {
			role = " (baseline)"
		}
		fmt.Fprintf(stdout, "target %s%s: %s\n", t.Name(), role, t.SpecRedacted())
	}
	fmt.Fprintf(stdout, "plan: %d run(s) and %d warm-up run(s) per target and point, %s, seed %d\n",
		o.runs, o.warmupRuns, runLength(o.timeS, o.events), rc.seed)
	for i, pt := range sess.Plan.Points {
		fmt.Fprintf(stdout, "point %d: threads=%d table_size=%d\n", i+1, pt.Threads, pt.TableSize)
	}
	for i, b := range sess.Plan.Blocks {
		kind := "run"
		if b.Warmup {
			kind = "warm-up"
		}
		fmt.Fprintf(stdout, "block %d (point %d, %s %d): %s\n", i+1, b.Point+1, kind, b.Index, strings.Join(b.Order, " "))
	}
	if len(rc.thresholds) > 0 {
		fmt.Fprintf(stdout, "fail-if: %s\n", strings.Join(o.failIf, " "))
	}
	if o.out != "" {
		fmt.Fprintf(stdout, "result: %s\n", o.out)
	}
	return nil
}

// runLength is how long each run lasts, as sysbench reads --time and
// --events: whichever limit comes first; 0 is no limit.
func runLength(timeS float64, events uint64) string {
	switch {
	case events > 0 && timeS > 0:
		return fmt.Sprintf("each %gs or %d events, whichever comes first", timeS, events)
	case events > 0:
		return fmt.Sprintf("each until %d events", events)
	}
	return fmt.Sprintf("%gs each", timeS)
}
