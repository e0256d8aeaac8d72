package hostinfo

import "testing"

func TestCPUQuota(t *testing.T) {
	for in, want := range map[string]string{"max 100000": "unlimited", "100000 100000": "1.00 cpus", "150000 100000": "1.50 cpus", "": ""} {
		if got := cpuQuota(in); got != want {
			t.Errorf("cpuQuota(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMountOptionsOfTheLongestMount(t *testing.T) {
	mi := "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n" +
		"40 22 0:35 / /var/lib/dbduel rw,noatime - overlay overlay rw,lowerdir=/a\n"
	if got := MountOptions(mi, "/var/lib/dbduel/x"); got != "rw,noatime rw,lowerdir=/a" {
		t.Fatalf("got %q", got)
	}
	if got := MountOptions(mi, "/tmp"); got != "rw,relatime rw,errors=remount-ro" {
		t.Fatalf("got %q", got)
	}
}

// The probe's answer on a real directory: tmpfs refuses O_DIRECT on older
// kernels, disks honour it; either way the answer says which.
func TestReadNamesEveryFact(t *testing.T) {
	f := ReadFacts(t.TempDir())
	for _, k := range []string{"cpus_allowed", "cpu_quota", "memory_max", "fs_type", "mount_options", "o_direct"} {
		if f[k] == "" || f[k] == "unknown" && k != "cpu_governor" && k != "memory_max" && k != "cpu_quota" {
			t.Errorf("%s = %q", k, f[k])
		}
	}
}
