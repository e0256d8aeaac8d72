// Package cgroupstat reads a cgroup's cumulative CPU time, CPU-quota
// throttling and memory, on cgroup v1 (a directory per controller) and v2
// (one unified directory): for a container whose process dbduel sees, and
// for a pod on a node, read there by dbduel's agent.
package cgroupstat

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Usage is one reading of a cgroup.
type Usage struct {
	OK    bool   `json:"ok"`
	CPUNS uint64 `json:"cpu_ns"`
	// MemBytes is the cgroup's memory use (memory.current or
	// memory.usage_in_bytes: page cache included, as docker stats' raw figure).
	MemBytes uint64 `json:"mem_bytes"`
	// ThrottledNS is the time the CPU quota held the cgroup back; Periods
	// and ThrottledPeriods its enforcement periods and how many throttled it.
	ThrottledNS      uint64 `json:"throttled_ns"`
	Periods          uint64 `json:"periods"`
	ThrottledPeriods uint64 `json:"throttled_periods"`
	// Path is the cgroup's path below the hierarchy's root (Find's answer).
	Path string `json:"path,omitempty"`
}

// Read reads the cgroup whose directory for a controller dir gives ("":
// none): on v2 every controller's is the same directory.
func Read(dir func(controller string) string) Usage {
	var u Usage
	if d := dir("cpuacct"); d != "" {
		// v2: usage_usec in cpu.stat; v1: cpuacct.usage in nanoseconds.
		for _, l := range strings.Split(readTrim(filepath.Join(d, "cpu.stat")), "\n") {
			if n, ok := strings.CutPrefix(l, "usage_usec "); ok {
				us, _ := strconv.ParseUint(n, 10, 64)
				u.CPUNS, u.OK = us*1000, true
			}
		}
		if v := readTrim(filepath.Join(d, "cpuacct.usage")); !u.OK && v != "" {
			u.CPUNS, _ = strconv.ParseUint(v, 10, 64)
			u.OK = true
		}
	}
	if d := dir("cpu"); d != "" {
		// v2: throttled_usec; v1 (the cpu controller): throttled_time in ns.
		for _, l := range strings.Split(readTrim(filepath.Join(d, "cpu.stat")), "\n") {
			if n, ok := strings.CutPrefix(l, "throttled_usec "); ok {
				us, _ := strconv.ParseUint(n, 10, 64)
				u.ThrottledNS = us * 1000
			} else if n, ok := strings.CutPrefix(l, "throttled_time "); ok {
				u.ThrottledNS, _ = strconv.ParseUint(n, 10, 64)
			} else if n, ok := strings.CutPrefix(l, "nr_periods "); ok {
				u.Periods, _ = strconv.ParseUint(n, 10, 64)
			} else if n, ok := strings.CutPrefix(l, "nr_throttled "); ok {
				u.ThrottledPeriods, _ = strconv.ParseUint(n, 10, 64)
			}
		}
	}
	if d := dir("memory"); d != "" {
		for _, f := range []string{"memory.current", "memory.usage_in_bytes"} {
			if v := readTrim(filepath.Join(d, f)); v != "" {
				u.MemBytes, _ = strconv.ParseUint(v, 10, 64)
				break
			}
		}
	}
	return u
}

// Unified says root is a cgroup v2 hierarchy.
func Unified(root string) bool {
	_, err := os.Stat(filepath.Join(root, "cgroup.controllers"))
	return err == nil
}

// Under is Read's dir for the cgroup at path rel below root (a mount of
// the node's /sys/fs/cgroup).
func Under(root, rel string) func(controller string) string {
	return func(controller string) string {
		if Unified(root) {
			return filepath.Join(root, rel)
		}
		return filepath.Join(root, controller, rel)
	}
}

// FindPod finds the cgroup of the pod with uid below root, as the kubelet
// names it with either cgroup driver: pod<UID> (cgroupfs) or
// kubepods-...-pod<UID, dashes as underscores>.slice (systemd), under
// kubepods and its QoS classes' cgroups, at the top of the hierarchy or one
// level down (a kubelet's --cgroup-root). It returns the path below the
// hierarchy ("" when absent).
func FindPod(root, uid string) string {
	base := root
	if !Unified(root) {
		base = filepath.Join(root, "cpuacct")
	}
	// v1's cpuacct is a link to cpu,cpuacct: WalkDir does not follow one.
	if b, err := filepath.EvalSymlinks(base); err == nil {
		base = b
	}
	names := []string{"pod" + uid, "pod" + strings.ReplaceAll(uid, "-", "_") + ".slice"}
	found := ""
	_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil // (SkipDir on a file would skip the rest of its directory)
		}
		rel, _ := filepath.Rel(base, p)
		if strings.Count(rel, string(filepath.Separator)) > 4 {
			return fs.SkipDir
		}
		for _, n := range names {
			if d.Name() == n || strings.HasSuffix(d.Name(), "-"+n) {
				found = rel
				return fs.SkipAll
			}
		}
		// Only the kubelet's own tree: kubepods at the top or under a
		// cgroup root of the top level.
		if p != base && !inKubeletTree(rel) {
			return fs.SkipDir
		}
		return nil
	})
	return found
}

// inKubeletTree says whether the walk goes on into rel: kubepods... at the
// top, a top-level cgroup (a cgroup root), or kubepods... just below one.
func inKubeletTree(rel string) bool {
	parts := strings.Split(rel, string(filepath.Separator))
	return strings.HasPrefix(parts[0], "kubepods") || len(parts) == 1 ||
		strings.HasPrefix(parts[1], "kubepods")
}

// FindContainer finds the cgroup of one container (its runtime's id, the
// part after "containerd://") inside its pod's cgroup podRel, as the
// runtimes name it: the bare id (cgroupfs) or a systemd scope. "" when
// absent.
func FindContainer(root, podRel, id string) string {
	if id == "" || strings.ContainsAny(id, "/.") {
		return ""
	}
	base := root
	if !Unified(root) {
		base = filepath.Join(root, "cpuacct")
	}
	for _, n := range []string{id, "cri-containerd-" + id + ".scope", "crio-" + id + ".scope", "docker-" + id + ".scope"} {
		rel := filepath.Join(podRel, n)
		if fi, err := os.Stat(filepath.Join(base, rel)); err == nil && fi.IsDir() {
			return rel
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
