package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// serverCgroup is a managed server's own cgroup, so that its CPU is read
// with the same accounting scope as a container's (the whole cgroup's
// time, every process of the server included), not as the sum of its
// processes' times. Only CPU accounting is used: no limit is set.
type serverCgroup struct {
	dir string // the cgroup's directory
	v2  bool   // the unified hierarchy (cpu.stat) rather than v1's cpuacct
}

// cgroupRoot is where the CPU accounting hierarchy is mounted.
var cgroupRoot = "/sys/fs/cgroup"

// newServerCgroup makes dbduel-RUN-NAME in the CPU accounting hierarchy
// (nil when the machine does not let dbduel make one: not root, no
// cgroupfs; the caller then sums the server's processes).
func newServerCgroup(runID, name string) *serverCgroup {
	leaf := "dbduel-" + runID + "-" + name
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		c := &serverCgroup{dir: filepath.Join(cgroupRoot, leaf), v2: true}
		if os.Mkdir(c.dir, 0o755) == nil {
			return c
		}
		return nil
	}
	c := &serverCgroup{dir: filepath.Join(cgroupRoot, "cpuacct", leaf)}
	if os.Mkdir(c.dir, 0o755) == nil {
		return c
	}
	return nil
}

// adopt moves the server process and its children into the cgroup; its
// later children (PostgreSQL's backends) are born in it.
func (c *serverCgroup) adopt(pid int) bool {
	moved := false
	for _, p := range familyOf(pid) {
		if os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(p.pid)), 0o644) == nil {
			moved = true
		}
	}
	return moved
}

// cpuNS is the cgroup's cumulative CPU time.
func (c *serverCgroup) cpuNS() (uint64, bool) {
	if c.v2 {
		for _, l := range strings.Split(readFile(filepath.Join(c.dir, "cpu.stat")), "\n") {
			if v, ok := strings.CutPrefix(l, "usage_usec "); ok {
				us, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				return us * 1000, err == nil
			}
		}
		return 0, false
	}
	ns, err := strconv.ParseUint(strings.TrimSpace(readFile(filepath.Join(c.dir, "cpuacct.usage"))), 10, 64)
	return ns, err == nil
}

// remove deletes the (empty) cgroup once the server has exited.
func (c *serverCgroup) remove() { _ = os.Remove(c.dir) }

// RemoveCgroups removes the empty cgroups dbduel's managed servers of a run
// left behind (runID "" : every run's), for dbduel clean.
func RemoveCgroups(runID string) []string {
	var removed []string
	for _, dir := range []string{cgroupRoot, filepath.Join(cgroupRoot, "cpuacct")} {
		matches, _ := filepath.Glob(filepath.Join(dir, "dbduel-"+runID+"*"))
		for _, m := range matches {
			if os.Remove(m) == nil {
				removed = append(removed, m)
			}
		}
	}
	return removed
}
