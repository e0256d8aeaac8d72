// ReadFacts (facts.go) reads what explains a system micro-benchmark's figure,
// as the process that runs it sees the machine: the CPUs it may run on,
// its cgroup's CPU quota and memory limit, the CPU governor and clock, and
// the filesystem of its file directory with whether O_DIRECT is honoured
// there. The same code runs natively and in dbduel's agent in a container,
// so the two sides' facts compare one to one.

package hostinfo

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Read returns the facts for a benchmark whose files live in dir.
func ReadFacts(dir string) map[string]string {
	f := map[string]string{}
	f["cpus_allowed"] = statusField("/proc/self/status", "Cpus_allowed_list")
	cg := readTrim("/proc/self/cgroup")
	if v := cgroupValue(cg, "cpu", "cpu.max"); v != "" {
		f["cpu_quota"] = cpuQuota(v)
	} else if q := cgroupValue(cg, "cpu", "cpu.cfs_quota_us"); q != "" {
		f["cpu_quota"] = cpuQuota(strings.Replace(q, "-1", "max", 1) + " " + cgroupValue(cg, "cpu", "cpu.cfs_period_us"))
	}
	f["memory_max"] = cgroupValue(cg, "memory", "memory.max")
	if f["memory_max"] == "" {
		if v := cgroupValue(cg, "memory", "memory.limit_in_bytes"); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 1<<60 {
				v = "max" // v1's "no limit" is a huge page-rounded number
			}
			f["memory_max"] = v
		}
	}
	f["cpu_governor"] = readTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	f["cpu_mhz"] = cpuMHz()
	if dir != "" {
		os.MkdirAll(dir, 0o755)
		mi, _ := os.ReadFile("/proc/self/mountinfo")
		abs, _ := filepath.Abs(dir)
		f["fs_type"] = FSTypeAt(string(mi), abs)
		f["mount_options"] = MountOptions(string(mi), abs)
		f["o_direct"] = probeDirect(dir)
	}
	for k, v := range f {
		if v == "" {
			f[k] = "unknown"
		}
	}
	return f
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func statusField(path, name string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// cgroupValue reads file of controller for this process, cgroup v2 or
// v1, from the host's view (the cgroup's path under /sys/fs/cgroup) or a
// container's (its own cgroup mounted at /sys/fs/cgroup itself).
func cgroupValue(procCgroup, controller, file string) string {
	for _, l := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dirs []string
		if parts[0] == "0" && parts[1] == "" {
			dirs = []string{filepath.Join("/sys/fs/cgroup", parts[2]), "/sys/fs/cgroup"}
		} else if slices.Contains(strings.Split(parts[1], ","), controller) {
			dirs = []string{filepath.Join("/sys/fs/cgroup", controller, parts[2]), filepath.Join("/sys/fs/cgroup", controller)}
		}
		for _, d := range dirs {
			if v := readTrim(filepath.Join(d, file)); v != "" {
				return v
			}
		}
	}
	return ""
}

// cpuQuota reads cgroup v2's cpu.max ("max 100000", "100000 100000").
func cpuQuota(s string) string {
	f := strings.Fields(s)
	if len(f) != 2 {
		return s
	}
	if f[0] == "max" {
		return "unlimited"
	}
	q, err1 := strconv.ParseFloat(f[0], 64)
	p, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || p == 0 {
		return s
	}
	return fmt.Sprintf("%.2f cpus", q/p)
}

// cpuMHz is the mean of /proc/cpuinfo's current clocks over the CPUs.
func cpuMHz() string {
	fh, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer fh.Close()
	var sum float64
	n := 0
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				sum += x
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f", sum/float64(n))
}

// MountOptions are the options of the mount that holds path (per-mount
// and superblock options, as mountinfo lists them).
func MountOptions(mountinfo, path string) string {
	m := MountAt(mountinfo, path)
	if m.Point == "" {
		return ""
	}
	return m.Options + " " + m.SuperOptions
}

// probeDirect opens a scratch file in dir with O_DIRECT and writes one
// aligned block: "honoured", or why not.
func probeDirect(dir string) string {
	name := filepath.Join(dir, ".dbduel-odirect-probe")
	defer os.Remove(name)
	fd, err := syscall.Open(name, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_DIRECT, 0o600)
	if err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return "refused (EINVAL: the filesystem does not support O_DIRECT)"
		}
		return "not probed: " + err.Error()
	}
	defer syscall.Close(fd)
	buf := alignedBlock()
	if _, err := syscall.Pwrite(fd, buf, 0); err != nil {
		return "refused on write: " + err.Error()
	}
	return "honoured"
}
