package container

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeRoot writes a machine's user files under a temporary root.
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Each missing prerequisite is named with the command that fixes it, and
// a user with everything is found with its ids and home.
func TestLookupRootless(t *testing.T) {
	passwd := "root:x:0:0:root:/root:/bin/bash\nbench:x:1001:1002::/home/bench:/bin/sh\n"
	cases := []struct {
		name, user string
		files      map[string]string
		want       string // "" : accepted
	}{
		{"no such user", "nobody2", map[string]string{"etc/passwd": passwd}, "no such user (useradd -m nobody2"},
		{"root", "root", map[string]string{"etc/passwd": passwd}, "root is not rootless"},
		{"no subuid", "bench", map[string]string{"etc/passwd": passwd, "etc/subgid": "bench:100000:65536\n"}, "no range in /etc/subuid"},
		{"no subgid", "bench", map[string]string{"etc/passwd": passwd, "etc/subuid": "bench:100000:65536\n"}, "no range in /etc/subgid"},
		{"empty range", "bench", map[string]string{"etc/passwd": passwd, "etc/subuid": "bench:100000:0\n", "etc/subgid": "bench:100000:65536\n"}, "no range in /etc/subuid"},
		{"no user namespaces", "bench", map[string]string{"etc/passwd": passwd, "etc/subuid": "1001:100000:65536\n", "etc/subgid": "bench:100000:65536\n",
			"proc/sys/user/max_user_namespaces": "0\n"}, "does not allow user namespaces"},
		{"by uid", "bench", map[string]string{"etc/passwd": passwd, "etc/subuid": "1001:100000:65536\n", "etc/subgid": "bench:100000:65536\n",
			"proc/sys/user/max_user_namespaces": "1000\n"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := lookupRootless(fakeRoot(t, c.files), c.user)
			if c.want == "" {
				if err != nil && !strings.Contains(err.Error(), "not installed") {
					t.Fatal(err)
				}
				if err == nil && (u.uid != 1001 || u.gid != 1002 || u.home != "/home/bench") {
					t.Fatalf("user %+v", u)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "rootless="+c.user+": ") {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// clean looks in the stores of users with subordinate ids and a store.
func TestRootlessUsers(t *testing.T) {
	root := fakeRoot(t, map[string]string{
		"etc/passwd": "a:x:1001:1001::/home/a:/bin/sh\nb:x:1002:1002::/home/b:/bin/sh\n",
		"etc/subuid": "a:100000:65536\nb:165536:65536\nghost:231072:65536\n",
		"home/a/.local/share/containers/storage/db.sql": "",
	})
	got := rootlessUsers(root)
	if len(got) != 1 || got[0].name != "a" || got[0].uid != 1001 {
		t.Fatalf("users %+v", got)
	}
}

// rootless= is refused where dbduel cannot honour it, with one line
// naming the way out.
func TestRootlessSpecRefused(t *testing.T) {
	for spec, want := range map[string]string{
		"img:1,rootless=bench":                        "podman:img:1,rootless=bench",
		"img:1,engine=podman,rootless=x:y":            `rootless="x:y": want a user name`,
		"img:1,engine=podman,rootless=u,cpus=1":       "need a cgroup delegated to the user",
		"img:1,engine=podman,rootless=u,datadir=bind": "use datadir=volume",
		"img:1,engine=podman,rootless=u,client=netns": "client=netns is not supported",
		"img:1,engine=podman,rootless=nosuchuser-xyz": "no such user",
	} {
		_, err := New("t", spec, "r")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}

// A killed run's service is found by its socket's path in its command
// line, and ended; other processes are left alone.
func TestEndServiceOf(t *testing.T) {
	dir := t.TempDir()
	mine := exec.Command("sleep", "30", filepath.Join(dir, "podman.sock"))
	other := exec.Command("sleep", "30", filepath.Join(dir, "other.sock"))
	for _, c := range []*exec.Cmd{mine, other} {
		if err := c.Start(); err != nil {
			t.Fatalf("sleep: %v", err)
		}
	}
	defer other.Process.Kill()
	done := make(chan error, 1)
	go func() { done <- mine.Wait() }()
	endServiceOf("/proc", dir)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		mine.Process.Kill()
		t.Fatal("the service was not ended")
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("another process was ended: %v", err)
	}
}
