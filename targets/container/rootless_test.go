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
	if err := os.Mkdir(filepath.Join(dir, "sock"), 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock", "podman.sock")
	// A "podman" (a copy of sleep by that name) serving the socket is
	// ended; a process of another executable naming the socket, and a
	// podman of another user naming it, are not: a command line is
	// anyone's to write.
	bin := filepath.Join(t.TempDir(), "podman")
	data, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(bin), 0o755)
	mine := exec.Command(bin, "30", sock)
	other := exec.Command("sleep", "30", sock)
	theirs := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "30", sock)
	for _, c := range []*exec.Cmd{mine, other, theirs} {
		if err := c.Start(); err != nil {
			t.Fatalf("%v: %v", c.Args, err)
		}
	}
	defer other.Process.Kill()
	defer theirs.Process.Kill()
	time.Sleep(100 * time.Millisecond) // setpriv has exec'd the copy
	done := make(chan error, 1)
	go func() { done <- mine.Wait() }()
	endServiceOf("/proc", dir)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		mine.Process.Kill()
		t.Fatal("the service was not ended")
	}
	for _, c := range []*exec.Cmd{other, theirs} {
		if err := c.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("%v was ended: %v", c.Args, err)
		}
	}
}

// A rootless service's directory in /tmp is root's (0711): the user may
// reach the socket's directory in it, and nobody may plant anything in
// it (a link named pauses made root overwrite a root-only file); root's
// bookkeeping is never written through a link.
func TestRootlessServiceDirectoryIsRoots(t *testing.T) {
	t.Setenv("DBDUEL_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	dir, err := socketDir(hostDirPrefix+"test-1-c-podman-", true)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o711 || !ownedBy(fi, 0) {
		t.Fatalf("the service's directory: %v %v", fi.Mode(), err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "ln", "-s", secret, filepath.Join(dir, pauseFile)).CombinedOutput(); err == nil {
		t.Fatalf("nobody planted a link in root's directory: %s", out)
	}
	// Even a link there (root's own mistake) is not written through.
	if err := os.Symlink(secret, filepath.Join(dir, pauseFile)); err != nil {
		t.Fatal(err)
	}
	(&podmanService{dir: dir, uid: 65534}).notePauses()
	if got, _ := os.ReadFile(secret); string(got) != "root's" {
		t.Fatal("the pause file was written through a link")
	}
}

// A killed process that has not exited yet is still running; a zombie and
// a process gone are not.
func TestAnyRunning(t *testing.T) {
	root := t.TempDir()
	for pid, stat := range map[string]string{"10": "10 (podman pause) R 1 10", "11": "11 (podman) pause) Z 1 11"} {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !anyRunning(root, []int{11, 12, 10}) {
		t.Fatal("a running process read as gone")
	}
	if anyRunning(root, []int{11, 12}) {
		t.Fatal("a zombie or a missing process read as running")
	}
}
