// ReadEnvironment (environment.go) fingerprints the machine a result was measured on:
// kernel, CPU and its frequency policy, SMT, huge pages, mitigations,
// cgroups, memory and swap, the DockerInfo engine, and where each target keeps
// its data. Every key is always present; what cannot be read says
// "unknown: <why>" (a VM without cpufreq, an engine that is not running).

package hostinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/dbduel/dbduel/engine/result"
)

// EnvironmentKeys are the fingerprint's keys besides the per-target datadir_<name>.
var EnvironmentKeys = []string{"kernel", "cpu_model", "cpu_count", "cpu_mhz", "virtualization", "governor", "smt",
	"transparent_hugepages", "mitigations", "cgroup_version", "memory_total", "swap_total",
	"docker_version", "docker_storage_driver", "dbduel_version", "go_version"}

// DockerInfo is what the engine says of itself (empty with a reason when unreachable).
type DockerInfo struct {
	Version, StorageDriver, Unreachable string
}

// ReadEnvironment fingerprints the machine whose filesystem root is root ("/" in
// use; a fixture directory in tests).
func ReadEnvironment(root string, docker DockerInfo, version string, targets []result.Target) map[string]string {
	r := reader{root: root}
	env := map[string]string{}
	env["kernel"] = r.first("proc/sys/kernel/osrelease")
	cpuinfo := r.file("proc/cpuinfo")
	env["cpu_model"] = field(cpuinfo, "model name")
	env["cpu_mhz"] = field(cpuinfo, "cpu MHz")
	if n := strings.Count(cpuinfo.text, "\nprocessor") + boolInt(strings.HasPrefix(cpuinfo.text, "processor")); cpuinfo.err == "" && n > 0 {
		env["cpu_count"] = fmt.Sprint(n)
	} else {
		env["cpu_count"] = unknown(cpuinfo.err, "no processor lines in /proc/cpuinfo")
	}
	env["virtualization"] = virtualization(r, cpuinfo)
	env["governor"] = r.first("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	env["smt"] = r.first("sys/devices/system/cpu/smt/active")
	env["transparent_hugepages"] = bracketed(r.first("sys/kernel/mm/transparent_hugepage/enabled"))
	env["mitigations"] = mitigations(r)
	if _, err := os.Stat(filepath.Join(root, "sys/fs/cgroup/cgroup.controllers")); err == nil {
		env["cgroup_version"] = "2"
	} else if _, err := os.Stat(filepath.Join(root, "sys/fs/cgroup")); err == nil {
		env["cgroup_version"] = "1"
	} else {
		env["cgroup_version"] = "unknown: no /sys/fs/cgroup"
	}
	meminfo := r.file("proc/meminfo")
	env["memory_total"] = field(meminfo, "MemTotal")
	env["swap_total"] = field(meminfo, "SwapTotal")
	if docker.Unreachable != "" {
		env["docker_version"] = "unknown: " + docker.Unreachable
		env["docker_storage_driver"] = "unknown: " + docker.Unreachable
	} else {
		env["docker_version"], env["docker_storage_driver"] = docker.Version, docker.StorageDriver
	}
	env["dbduel_version"] = version
	env["go_version"] = runtime.Version()
	for _, t := range targets {
		d := t.Described.Datadir
		if d == nil {
			env["datadir_"+t.Name] = "unknown: the server did not say where it keeps its data"
			continue
		}
		v := d.Kind
		if d.FSType != "" {
			v += " " + d.FSType
		}
		if opts := MountAt(r.file("proc/self/mountinfo").text, d.Path).Options; opts != "" && t.Kind != "container" {
			v += " (" + opts + ")"
		}
		env["datadir_"+t.Name] = v // the path is in targets[].described; a managed one changes every run
	}
	return env
}

type reader struct{ root string }

type content struct{ text, err string }

func (r reader) file(p string) content {
	data, err := os.ReadFile(filepath.Join(r.root, p))
	if err != nil {
		return content{err: "cannot read /" + p}
	}
	return content{text: string(data)}
}

func (r reader) first(p string) string {
	c := r.file(p)
	if c.err != "" {
		return "unknown: " + c.err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(c.text), "\n")
	return line
}

func unknown(err, otherwise string) string {
	if err != "" {
		return "unknown: " + err
	}
	return "unknown: " + otherwise
}

// field is "key : value" from /proc/cpuinfo or "Key: value" from /proc/meminfo.
func field(c content, key string) string {
	if c.err != "" {
		return "unknown: " + c.err
	}
	for _, l := range strings.Split(c.text, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown: no " + key
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bracketed is the selected value of a sysfs choice: "always [madvise] never" → madvise.
func bracketed(s string) string {
	if strings.HasPrefix(s, "unknown") {
		return s
	}
	if i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']'); i >= 0 && j > i {
		return s[i+1 : j]
	}
	return s
}

func virtualization(r reader, cpuinfo content) string {
	vendor := strings.TrimSpace(r.file("sys/class/dmi/id/sys_vendor").text)
	product := strings.TrimSpace(r.file("sys/class/dmi/id/product_name").text)
	hv := strings.Contains(cpuinfo.text, " hypervisor")
	switch {
	case hv && (vendor != "" || product != ""):
		return strings.TrimSpace("vm: " + vendor + " " + product)
	case hv:
		return "vm"
	case cpuinfo.err != "":
		return "unknown: " + cpuinfo.err
	}
	return "none"
}

// mitigations summarises /sys/devices/system/cpu/vulnerabilities.
func mitigations(r reader) string {
	dir := filepath.Join(r.root, "sys/devices/system/cpu/vulnerabilities")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "unknown: cannot read /sys/devices/system/cpu/vulnerabilities"
	}
	counts := map[string]int{}
	var vulnerable []string
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		s := strings.TrimSpace(string(data))
		switch {
		case strings.HasPrefix(s, "Not affected"):
			counts["not affected"]++
		case strings.HasPrefix(s, "Vulnerable"):
			counts["vulnerable"]++
			vulnerable = append(vulnerable, e.Name())
		default:
			counts["mitigated"]++
		}
	}
	var parts []string
	for _, k := range []string{"mitigated", "vulnerable", "not affected"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	sort.Strings(vulnerable)
	s := strings.Join(parts, ", ")
	if len(vulnerable) > 0 {
		s += " (" + strings.Join(vulnerable, " ") + ")"
	}
	return s
}

// EnvironmentDifferences lists the keys whose values differ between two fingerprints
// ("kernel: 6.1.0-27 vs 6.1.0-28"), in key order.
func EnvironmentDifferences(base, cur map[string]string) []string {
	keys := map[string]bool{}
	for k := range base {
		keys[k] = true
	}
	for k := range cur {
		keys[k] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		b, c := base[k], cur[k]
		if b == "" {
			b = "(absent)"
		}
		if c == "" {
			c = "(absent)"
		}
		if b != c {
			out = append(out, fmt.Sprintf("%s: %s vs %s", k, b, c))
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
