// Package schedhint asks the kernel to schedule the load generator's threads
// with a short time slice (sched_setattr's sched_runtime for SCHED_OTHER,
// Linux 6.12 and later; older kernels accept and ignore it). It changes no
// work and no share of the CPU (weights are untouched), only how soon a
// woken thread runs, and it is off unless DBDUEL_SCHED_SLICE asks for it
// (a Go duration; the kernel takes 0.1 ms to 100 ms): its effect depends on
// the host, and sysbench gets no such help. Why, and what it was measured
// to do: docs/performance.md.
package schedhint

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// MinSlice is the shortest custom slice the kernel allows.
const MinSlice = 100 * time.Microsecond

// FromEnv is the slice DBDUEL_SCHED_SLICE asks for: 0 (no hint) when unset,
// empty, "0" or "off".
func FromEnv() (time.Duration, error) {
	v := os.Getenv("DBDUEL_SCHED_SLICE")
	if v == "" || v == "0" || v == "off" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("DBDUEL_SCHED_SLICE=%q: want a duration such as 100us, or 0 to turn the hint off", v)
	}
	return d, nil
}

// Apply requests slice d for every thread of the process; threads created
// later inherit it from the thread that creates them. Threads whose policy
// is not SCHED_OTHER (set by someone on purpose) are left alone, and each
// thread keeps its nice value. It reports whether the kernel kept the slice
// (false on kernels without custom slices).
func Apply(d time.Duration) (bool, error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false, err
	}
	kept := true
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		ok, err := applyTo(tid, d)
		if err == unix.ESRCH {
			continue // the thread exited meanwhile
		}
		if err != nil {
			return false, fmt.Errorf("sched_setattr on thread %d: %w", tid, err)
		}
		kept = kept && ok
	}
	return kept, nil
}

// applyTo sets the slice of one thread and reads it back.
func applyTo(tid int, d time.Duration) (bool, error) {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return false, err
	}
	if attr.Policy != unix.SCHED_NORMAL {
		return true, nil
	}
	attr.Size = unix.SizeofSchedAttr
	attr.Runtime = uint64(d.Nanoseconds())
	if err := unix.SchedSetAttr(tid, attr, 0); err != nil {
		return false, err
	}
	return Slice(tid) == d, nil
}

// Slice is thread tid's slice as the kernel reports it: the custom one if
// set, else (Linux 6.12+) the base slice; 0 on older kernels.
func Slice(tid int) time.Duration {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil || attr.Policy != unix.SCHED_NORMAL {
		return 0
	}
	return time.Duration(attr.Runtime)
}
