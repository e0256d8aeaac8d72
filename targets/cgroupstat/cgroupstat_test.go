package cgroupstat

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A v1 node's tree as the kubelet's cgroupfs driver makes it: the pod
// found by its UID under its QoS class, its figures read per controller.
func TestFindAndReadAPodOnV1(t *testing.T) {
	root := t.TempDir()
	uid := "0b5c7a8e-1111-2222-3333-444455556666"
	rel := filepath.Join("kubepods", "burstable", "pod"+uid)
	// As on Debian: cpuacct and cpu are links to cpu,cpuacct.
	write(t, filepath.Join(root, "cpu,cpuacct", "kubepods", "besteffort", "podother", "cpuacct.usage"), "1")
	write(t, filepath.Join(root, "cpu,cpuacct", rel, "cpuacct.usage"), "123456789")
	for _, l := range []string{"cpu", "cpuacct"} {
		if err := os.Symlink("cpu,cpuacct", filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(root, "cpu,cpuacct", rel, "cpu.stat"), "nr_periods 40\nnr_throttled 7\nthrottled_time 5000000\n")
	write(t, filepath.Join(root, "memory", rel, "memory.usage_in_bytes"), "4096\n")
	got := FindPod(root, uid)
	if got != rel {
		t.Fatalf("FindPod: %q, want %q", got, rel)
	}
	u := Read(Under(root, got))
	if want := (Usage{OK: true, CPUNS: 123456789, MemBytes: 4096, ThrottledNS: 5000000, Periods: 40, ThrottledPeriods: 7}); u != want {
		t.Fatalf("Read: %+v, want %+v", u, want)
	}
	if FindPod(root, "absent") != "" {
		t.Fatal("found a pod that is not there")
	}
}

// A kubelet with --cgroup-root=/node2 (a second node on one machine): its
// pods are one level down, and a pod of the same name elsewhere (not
// under a kubepods tree) is not taken for it.
func TestFindAPodUnderACgroupRoot(t *testing.T) {
	root := t.TempDir()
	uid := "9a9a9a9a-1111"
	rel := filepath.Join("node2", "kubepods", "besteffort", "pod"+uid)
	write(t, filepath.Join(root, "cpuacct", "other", "deeper", "pod"+uid, "cpuacct.usage"), "1")
	write(t, filepath.Join(root, "cpuacct", "kubepods", "burstable", "podelse", "cpuacct.usage"), "1")
	if got := FindPod(root, uid); got != "" {
		t.Fatalf("FindPod before the pod exists: %q", got)
	}
	write(t, filepath.Join(root, "cpuacct", rel, "cpuacct.usage"), "77")
	if got := FindPod(root, uid); got != rel {
		t.Fatalf("FindPod: %q, want %q", got, rel)
	}
}

// v2 with the systemd driver: one unified directory, microseconds.
func TestFindAndReadAPodOnV2Systemd(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "cgroup.controllers"), "cpu memory")
	rel := filepath.Join("kubepods.slice", "kubepods-pod0b5c7a8e_1111.slice")
	write(t, filepath.Join(root, rel, "cpu.stat"), "usage_usec 2500\nnr_periods 3\nnr_throttled 1\nthrottled_usec 40\n")
	write(t, filepath.Join(root, rel, "memory.current"), "8192")
	if got := FindPod(root, "0b5c7a8e-1111"); got != rel {
		t.Fatalf("FindPod: %q, want %q", got, rel)
	}
	u := Read(Under(root, rel))
	if want := (Usage{OK: true, CPUNS: 2500000, MemBytes: 8192, ThrottledNS: 40000, Periods: 3, ThrottledPeriods: 1}); u != want {
		t.Fatalf("Read: %+v, want %+v", u, want)
	}
}

// A container inside its pod's cgroup, by its runtime id: the bare id
// (cgroupfs, through v1's cpuacct link) or the runtime's systemd scope;
// an id that would leave the pod's directory finds nothing.
func TestFindContainer(t *testing.T) {
	root := t.TempDir()
	pod := filepath.Join("kubepods", "pod1")
	write(t, filepath.Join(root, "cpu,cpuacct", pod, "abc123", "cpuacct.usage"), "5")
	if err := os.Symlink("cpu,cpuacct", filepath.Join(root, "cpuacct")); err != nil {
		t.Fatal(err)
	}
	if got := FindContainer(root, pod, "abc123"); got != filepath.Join(pod, "abc123") {
		t.Errorf("cgroupfs: %q", got)
	}
	for _, id := range []string{"", "missing", "../pod1", "abc123/.."} {
		if got := FindContainer(root, pod, id); got != "" {
			t.Errorf("%q found %q", id, got)
		}
	}
	v2 := t.TempDir()
	write(t, filepath.Join(v2, "cgroup.controllers"), "cpu memory")
	slice := "kubepods.slice/kubepods-pod1.slice"
	write(t, filepath.Join(v2, slice, "cri-containerd-def456.scope", "cpu.stat"), "usage_usec 1\n")
	if got := FindContainer(v2, slice, "def456"); got != filepath.Join(slice, "cri-containerd-def456.scope") {
		t.Errorf("systemd: %q", got)
	}
}
