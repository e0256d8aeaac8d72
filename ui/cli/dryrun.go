package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"maps"

	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/ledger"
)

// dryRun prints what a family verb would do, resolved from the files and
// flags, and starts nothing.
func dryRun(st *State, rc *runConfig, v familyVerb) error {
	stdout, o := st.Stdout, v.shared()
	// Nothing starts, so stderr carries only what parsing says (a plain
	// engine's warning).
	ts, err := buildTargets(o.targets, newTargetContext(st, rc, o), st.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s (dry run: nothing started)\n", o.flags.Name(), rc.workload.Name())
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
	v.printDryRun(st, rc, ts)
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
func planTotals(rc *runConfig, per float64, runs int, ts []targets.Target) []string {
	var out []string
	if rc.load.Time > 0 {
		total := time.Duration(float64(runs) * per * float64(time.Second))
		out = append(out, fmt.Sprintf("planned run time: %d runs × %gs = %s, plus preparing the data and the cool-downs between runs", runs, per, total))
	}
	shape := rc.workload.Shape()
	if shape.Tables == 0 || !slices.Contains(rc.workload.Protocols(), "mysql") || rc.onHost() {
		return out
	}
	rows := int64(shape.Tables) * int64(rc.maxTableSize())
	bytes := rows * innoDBRowBytes
	out = append(out, fmt.Sprintf("data: %d × %d rows per target, about %s on disk each (InnoDB, ~%d bytes a row)", shape.Tables, rc.maxTableSize(), humanBytes(bytes), innoDBRowBytes))
	need := map[string]int64{} // where managed datadirs go: bytes they will hold
	for _, t := range ts {
		switch t.Kind() {
		case "local":
			need[ledger.Dir()] += bytes
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
