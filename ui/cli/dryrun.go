package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"maps"

	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/state"
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
	if o.live != nil {
		fmt.Fprintf(stdout, "live: rounds of one %gs slice per target (the first %gs not counted), in an order shuffled per round (seed %d), %d thread(s) to start with, until q\n",
			o.live.slice, o.live.settle, rc.seed, rc.threads[0])
		return nil
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
	for _, line := range planTotals(rc, o, sess.Plan.TotalRuns(), ts) {
		fmt.Fprintln(stdout, line)
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

// innoDBRowBytes is what one sysbench row takes on disk in InnoDB, indexes
// included (20 tables × 10M rows take about 46 GB on this machine's
// MariaDB 10.11): a planning figure.
const innoDBRowBytes = 230

// planTotals add the plan up: its run time, the data each target holds,
// and the disk free where managed servers keep it, with a warning when
// the data will not fit.
func planTotals(rc *runConfig, o *runOptions, runs int, ts []targets.Target) []string {
	var out []string
	if o.timeS > 0 {
		per := o.timeS + o.warmupTime
		total := time.Duration(float64(runs) * per * float64(time.Second))
		out = append(out, fmt.Sprintf("planned run time: %d runs × %gs = %s, plus preparing the data and the cool-downs between runs", runs, per, total))
	}
	shape := rc.workload.Shape()
	if shape.Tables == 0 || !slices.Contains(rc.workload.Protocols(), "mysql") || rc.onHost() {
		return out
	}
	rows := int64(shape.Tables) * int64(slices.Max(rc.sizes))
	bytes := rows * innoDBRowBytes
	out = append(out, fmt.Sprintf("data: %d × %d rows per target, about %s on disk each (InnoDB, ~%d bytes a row)", shape.Tables, slices.Max(rc.sizes), humanBytes(bytes), innoDBRowBytes))
	need := map[string]int64{} // where managed datadirs go: bytes they will hold
	for _, t := range ts {
		switch t.Kind() {
		case "local":
			need[state.Dir()] += bytes
		case "container":
			need["/var/lib/docker"] += bytes
		}
	}
	// Directories on one filesystem share its free space.
	type fsNeed struct {
		dirs  []string
		bytes int64
		free  int64
	}
	byDev := map[uint64]*fsNeed{}
	var devs []uint64
	for _, dir := range slices.Sorted(maps.Keys(need)) {
		dev, free, ok := filesystemOf(dir)
		if !ok {
			continue
		}
		if byDev[dev] == nil {
			byDev[dev] = &fsNeed{free: free}
			devs = append(devs, dev)
		}
		byDev[dev].dirs = append(byDev[dev].dirs, dir)
		byDev[dev].bytes += need[dir]
	}
	for _, d := range devs {
		n := byDev[d]
		line := fmt.Sprintf("disk: %s free on the filesystem of %s, %s needed there", humanBytes(n.free), strings.Join(n.dirs, " and "), humanBytes(n.bytes))
		if n.bytes > n.free {
			line = "warning: the data will not fit: " + line
		}
		out = append(out, line)
	}
	return out
}

// filesystemOf is the device of the filesystem holding dir (or its nearest
// existing parent) and the space free on it to an unprivileged user.
func filesystemOf(dir string) (dev uint64, free int64, ok bool) {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		var fs syscall.Statfs_t
		if syscall.Stat(d, &st) == nil && syscall.Statfs(d, &fs) == nil {
			return st.Dev, int64(fs.Bavail) * fs.Bsize, true
		}
		if d == filepath.Dir(d) {
			return 0, 0, false
		}
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
