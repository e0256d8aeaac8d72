package container

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEngineKey(t *testing.T) {
	for spec, want := range map[string]string{
		"img,engine=podman":                         "",
		"img,engine=docker":                         "",
		"img,engine=unix:///run/podman/podman.sock": "",
		"img,engine=tcp://127.0.0.1:2375":           "",
		"img,engine=ssh://me@db1":                   "no ssh transport",
		"img,engine=tcp://10.254.77.2:2375":         "",
		"img,publish=10.254.77.2":                   "",
		"img,publish=db1":                           "want an IP address",
		"img,engine=kubernetes":                     "want podman, docker",
	} {
		_, err := ParseSpec(spec)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}

// Podman targets fetch a missing image (from Docker's store) unless the
// SPEC says pull=never; docker: keeps never.
func TestPodmanSpec(t *testing.T) {
	for _, c := range []struct {
		build func() (*Server, error)
		spec  string
		pull  string
	}{
		{func() (*Server, error) { return NewPodman("p", "img:1", "r") }, "podman:img:1", "missing"},
		{func() (*Server, error) { return NewPodman("p", "img:1,pull=never", "r") }, "podman:img:1,pull=never", "never"},
		{func() (*Server, error) { return New("p", "img:1,engine=podman", "r") }, "docker:img:1,engine=podman", "missing"},
		{func() (*Server, error) { return New("p", "img:1", "r") }, "docker:img:1", "never"},
	} {
		s, err := c.build()
		if err != nil {
			t.Fatal(err)
		}
		if s.spec != c.spec || s.o.Pull != c.pull {
			t.Errorf("%s: spec %q pull %q, want pull %q", c.spec, s.spec, s.o.Pull, c.pull)
		}
	}
	if _, err := NewPodman("p", "img:1,engine=unix:///x.sock", "r"); err == nil {
		t.Error("podman: with engine= accepted")
	}
}

// A unix socket's path holds at most 107 bytes: under a long state
// directory the service's socket goes to the temporary directory.
func TestSocketDirFitsASocketPath(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 80))
	t.Setenv("DBDUEL_STATE_DIR", long)
	dir, err := socketDir(hostDirPrefix+"run-x-podman-", false)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if p := filepath.Join(dir, "podman.sock"); len(p) > 107 || filepath.Dir(dir) != os.TempDir() {
		t.Errorf("socket path %s (%d bytes)", p, len(p))
	}
	// And killed runs' directories there are found by clean.
	left, err := removeHostDirs("run-x", nil)
	if err != nil || len(left) != 1 {
		t.Errorf("clean found %v (%v)", left, err)
	}
}
