package container

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets/cgroupstat"
	"github.com/dbduel/dbduel/targets/hostinfo"
	"github.com/docker/docker/api/types/container"
)

type cgroupLimits struct {
	ok          bool
	memoryBytes int64
	cpus        float64
	cpuset      string
}

type cgroupUsage struct {
	ok          bool
	cpuNS       uint64
	memBytes    uint64
	throttledNS uint64 // time the cgroup's CPU quota held it back
	// periods and throttledPeriods are the quota's enforcement periods
	// and how many of them throttled the cgroup (cpu.stat).
	periods, throttledPeriods uint64
}

// cgroupDir finds a process's cgroup directory (v2 unified or v1 per controller).
func cgroupDir(pid int, controller string) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			return filepath.Join("/sys/fs/cgroup", parts[2])
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == controller {
				return filepath.Join("/sys/fs/cgroup", controller, parts[2])
			}
		}
	}
	return ""
}

func readTrim(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// readCgroupLimits reads the limits the kernel enforces on the container.
func readCgroupLimits(pid int) cgroupLimits {
	var l cgroupLimits
	if pid == 0 {
		return l
	}
	if dir := cgroupDir(pid, "memory"); dir != "" {
		for _, f := range []string{"memory.max", "memory.limit_in_bytes"} {
			if v := readTrim(filepath.Join(dir, f)); v != "" {
				l.ok = true
				if n, err := strconv.ParseInt(v, 10, 64); err == nil && n < 1<<60 {
					l.memoryBytes = n
				}
				break
			}
		}
	}
	if dir := cgroupDir(pid, "cpu"); dir != "" {
		if v := readTrim(filepath.Join(dir, "cpu.max")); v != "" {
			l.ok = true
			f := strings.Fields(v)
			if len(f) == 2 && f[0] != "max" {
				q, _ := strconv.ParseFloat(f[0], 64)
				p, _ := strconv.ParseFloat(f[1], 64)
				if p > 0 {
					l.cpus = q / p
				}
			}
		} else if q := readTrim(filepath.Join(dir, "cpu.cfs_quota_us")); q != "" {
			l.ok = true
			qf, _ := strconv.ParseFloat(q, 64)
			pf, _ := strconv.ParseFloat(readTrim(filepath.Join(dir, "cpu.cfs_period_us")), 64)
			if qf > 0 && pf > 0 {
				l.cpus = qf / pf
			}
		}
	}
	if dir := cgroupDir(pid, "cpuset"); dir != "" {
		for _, f := range []string{"cpuset.cpus.effective", "cpuset.effective_cpus"} {
			if v := readTrim(filepath.Join(dir, f)); v != "" {
				l.ok = true
				l.cpuset = v
				break
			}
		}
	}
	return l
}

// readCgroupUsage reads cumulative CPU time and current memory.
func readCgroupUsage(pid int) cgroupUsage {
	u := cgroupstat.Read(func(c string) string { return cgroupDir(pid, c) })
	return cgroupUsage{ok: u.OK, cpuNS: u.CPUNS, memBytes: u.MemBytes, throttledNS: u.ThrottledNS,
		periods: u.Periods, throttledPeriods: u.ThrottledPeriods}
}

// readLimits reads the container's memory, CPU and cpuset limits back into
// d: what the engine was asked for, overridden by what the kernel enforces.
func readLimits(d *result.Described, insp container.InspectResponse) {
	d.MemoryLimitBytes = insp.HostConfig.Memory
	if insp.HostConfig.NanoCPUs > 0 {
		d.CPUs = float64(insp.HostConfig.NanoCPUs) / 1e9
	}
	d.Cpuset = insp.HostConfig.CpusetCpus
	if cg := readCgroupLimits(insp.State.Pid); cg.ok {
		if cg.memoryBytes > 0 {
			d.MemoryLimitBytes = cg.memoryBytes
		}
		if cg.cpus > 0 {
			d.CPUs = cg.cpus
		}
		if cg.cpuset != "" {
			d.Cpuset = cg.cpuset
		}
	}
}

// hasOwnCgroup says whether the container's process has a CPU cgroup of
// its own: a rootless container on cgroup v1 stays in the cgroup of the
// service that started it, which is dbduel's, so its cgroup's figures
// would count dbduel too.
func hasOwnCgroup(pid int) bool {
	dir := cgroupDir(pid, "cpuacct")
	return dir != "" && dir != cgroupDir(os.Getpid(), "cpuacct")
}

// readPIDNamespaceUsage sums what the processes of the container's PID
// namespace use, where it has no cgroup of its own: their CPU time (and
// what the init reaped of its children: PostgreSQL's backends that
// exited) and their proportional set sizes (shared memory counted once).
func readPIDNamespaceUsage(procRoot string, pid int) cgroupUsage {
	ns, err := os.Readlink(filepath.Join(procRoot, strconv.Itoa(pid), "ns/pid"))
	if err != nil {
		return cgroupUsage{}
	}
	u := cgroupUsage{ok: true}
	dirs, _ := filepath.Glob(filepath.Join(procRoot, "[0-9]*"))
	for _, dir := range dirs {
		if l, err := os.Readlink(filepath.Join(dir, "ns/pid")); err != nil || l != ns {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		ticks := hostinfo.StatTicks(string(stat))
		if f := hostinfo.StatFields(string(stat)); filepath.Base(dir) == strconv.Itoa(pid) && len(f) > 14 {
			cu, _ := strconv.ParseUint(f[13], 10, 64)
			cs, _ := strconv.ParseUint(f[14], 10, 64)
			ticks += cu + cs
		}
		u.cpuNS += ticks * uint64(time.Second/100) // USER_HZ is 100 on Linux
		for _, l := range strings.Split(readTrim(filepath.Join(dir, "smaps_rollup")), "\n") {
			if v, ok := strings.CutPrefix(l, "Pss:"); ok {
				kib, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				u.memBytes += kib * 1024
			}
		}
	}
	return u
}

// readNetDev sums the bytes received and sent by the interfaces of pid's
// network namespace, loopback aside, from /proc/PID/net/dev: what the
// engine's stats API reports for a container's network.
func readNetDev(procRoot string, pid int) (rx, tx uint64, ok bool) {
	data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "net/dev"))
	if err != nil {
		return 0, 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		name, counters, found := strings.Cut(l, ":")
		fs := strings.Fields(counters)
		if !found || strings.TrimSpace(name) == "lo" || len(fs) < 9 {
			continue
		}
		r, err1 := strconv.ParseUint(fs[0], 10, 64)
		t, err2 := strconv.ParseUint(fs[8], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		rx, tx, ok = rx+r, tx+t, true
	}
	return rx, tx, ok
}
