package hostinfo

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcCPU is a process's cumulative user+system CPU time from /proc, or 0.
func ProcCPU(pid int) uint64 {
	if pid <= 0 {
		return 0
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	return StatTicks(string(data)) * uint64(time.Second/100) // USER_HZ is 100 on Linux
}

// StatFields are a /proc/PID/stat line's fields after the command name
// (which may hold spaces and parentheses): state first (nil when
// unreadable).
func StatFields(stat string) []string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(stat[i+1:])
}

// StatTicks is user+system time in clock ticks from a /proc/PID/stat line.
func StatTicks(stat string) uint64 {
	f := StatFields(stat)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return ut + st
}

// SeccompMode reads a process's syscall filter from /proc/PID/status:
// "disabled", "strict" or "filter" ("" when unreadable).
func SeccompMode(pid int) string {
	if pid <= 0 {
		return ""
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "Seccomp:"); ok {
			switch strings.TrimSpace(v) {
			case "0":
				return "disabled"
			case "1":
				return "strict"
			case "2":
				return "filter"
			}
		}
	}
	return ""
}
