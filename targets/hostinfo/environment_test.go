package hostinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine/result"
)

func fixture(t *testing.T, files map[string]string) string {
	root := t.TempDir()
	for p, text := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A recorded machine: every key read from its file.
func TestReadRecordedMachine(t *testing.T) {
	root := fixture(t, map[string]string{
		"proc/sys/kernel/osrelease":                                   "6.1.0-27-amd64\n",
		"proc/cpuinfo":                                                "processor\t: 0\nmodel name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2450.000\nflags\t\t: fpu hypervisor sse\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n",
		"sys/class/dmi/id/sys_vendor":                                 "Google\n",
		"sys/class/dmi/id/product_name":                               "Google Compute Engine\n",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor":        "performance\n",
		"sys/devices/system/cpu/smt/active":                           "1\n",
		"sys/kernel/mm/transparent_hugepage/enabled":                  "always [madvise] never\n",
		"sys/devices/system/cpu/vulnerabilities/spectre_v2":           "Mitigation: Retpolines\n",
		"sys/devices/system/cpu/vulnerabilities/meltdown":             "Not affected\n",
		"sys/devices/system/cpu/vulnerabilities/spec_rstack_overflow": "Vulnerable: Safe RET, no microcode\n",
		"sys/fs/cgroup/cgroup.controllers":                            "cpu memory\n",
		"proc/meminfo":                                                "MemTotal:       24607656 kB\nSwapTotal:             0 kB\n",
		"proc/self/mountinfo":                                         "29 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n",
	})
	targets := []result.Target{{Name: "native", Kind: "local", Described: result.Described{Datadir: &result.Datadir{Kind: "dir", FSType: "ext4", Path: "/tmp/x/data"}}}}
	env := ReadEnvironment(root, DockerInfo{Version: "20.10.24", StorageDriver: "overlay2"}, "0.2.0", targets)
	want := map[string]string{
		"kernel": "6.1.0-27-amd64", "cpu_model": "AMD EPYC 7B13", "cpu_count": "2", "cpu_mhz": "2450.000",
		"virtualization": "vm: Google Google Compute Engine", "governor": "performance", "smt": "1",
		"transparent_hugepages": "madvise", "mitigations": "1 mitigated, 1 vulnerable, 1 not affected (spec_rstack_overflow)",
		"cgroup_version": "2", "memory_total": "24607656 kB", "swap_total": "0 kB",
		"docker_version": "20.10.24", "docker_storage_driver": "overlay2", "dbduel_version": "0.2.0",
		"datadir_native": "dir ext4 (rw,relatime)",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
}

// A VM without cpufreq and with the engine down: every key is there, and
// says why it is unknown.
func TestEveryKeyPresentWhenUnreadable(t *testing.T) {
	root := fixture(t, map[string]string{"proc/cpuinfo": "processor\t: 0\n"})
	env := ReadEnvironment(root, DockerInfo{Unreachable: "Cannot connect to the DockerInfo daemon"}, "0.2.0", nil)
	for _, k := range EnvironmentKeys {
		v, ok := env[k]
		if !ok || v == "" {
			t.Errorf("key %s missing", k)
		}
	}
	for _, k := range []string{"governor", "kernel", "docker_version", "mitigations", "cgroup_version", "memory_total"} {
		if !strings.HasPrefix(env[k], "unknown: ") {
			t.Errorf("%s = %q, want unknown: <reason>", k, env[k])
		}
	}
}

func TestDifferencesNameTheKey(t *testing.T) {
	d := EnvironmentDifferences(map[string]string{"kernel": "6.1.0-27", "smt": "1"}, map[string]string{"kernel": "6.1.0-28", "smt": "1", "governor": "powersave"})
	if len(d) != 2 || d[0] != "governor: (absent) vs powersave" || d[1] != "kernel: 6.1.0-27 vs 6.1.0-28" {
		t.Fatalf("%q", d)
	}
}
