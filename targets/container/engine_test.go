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
		"img,engine=ssh://me@db1":                   "",
		"img,engine=ssh://me@db1,tls=/etc/x":        "no ca.pem there",
		"img,tls=" + tlsDirForTest(t):               "tls= is for tcp://",
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

// Every engine fetches a missing image unless the SPEC says pull=never
// (Podman copies it from Docker's store first).
func TestPodmanSpec(t *testing.T) {
	for _, c := range []struct {
		build func() (*Server, error)
		spec  string
		pull  string
	}{
		{func() (*Server, error) { return NewPodman("p", "img:1", "r") }, "podman:img:1", "missing"},
		{func() (*Server, error) { return NewPodman("p", "img:1,pull=never", "r") }, "podman:img:1,pull=never", "never"},
		{func() (*Server, error) { return New("p", "img:1,engine=podman", "r") }, "docker:img:1,engine=podman", "missing"},
		{func() (*Server, error) { return New("p", "img:1", "r") }, "docker:img:1", "missing"},
		{func() (*Server, error) { return New("p", "img:1,pull=always", "r") }, "docker:img:1,pull=always", "always"},
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

// tlsDirForTest is a directory holding files named as a TLS directory's.
func tlsDirForTest(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range tlsFiles {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A plain-TCP engine on another host is named, whether engine= or
// DOCKER_HOST gives it; loopback, TLS (tls= or the Docker CLI's variables)
// and SSH are not; `dbduel clean` is told how to reach it.
func TestPlainRemoteEngine(t *testing.T) {
	tlsDir := tlsDirForTest(t)
	t.Setenv("DOCKER_HOST", "")
	for spec, want := range map[string]string{
		"img,engine=tcp://10.254.77.2:2375":               "tcp://10.254.77.2:2375",
		"img,engine=tcp://127.0.0.1:2375":                 "",
		"img,engine=tcp://localhost:2375":                 "",
		"img,engine=tcp://10.254.77.2:2376,tls=" + tlsDir: "",
		"img,engine=ssh://me@10.254.77.2":                 "",
		"img,engine=unix:///run/podman/podman.sock":       "",
		"img": "",
	} {
		o, err := ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.PlainRemoteEngine(); got != want {
			t.Errorf("%s: %q, want %q", spec, got, want)
		}
	}
	t.Setenv("DOCKER_HOST", "tcp://10.254.77.2:2375")
	o, _ := ParseSpec("img")
	if got := o.PlainRemoteEngine(); got != "tcp://10.254.77.2:2375" {
		t.Errorf("DOCKER_HOST plain: %q", got)
	}
	if env := o.cleanEnv("tcp://10.254.77.2:2375"); env != "DOCKER_HOST=tcp://10.254.77.2:2375" {
		t.Errorf("clean env %q", env)
	}
	t.Setenv("DOCKER_TLS_VERIFY", "1")
	t.Setenv("DOCKER_CERT_PATH", tlsDir)
	if got := o.PlainRemoteEngine(); got != "" {
		t.Errorf("DOCKER_HOST with DOCKER_TLS_VERIFY: %q, want TLS", got)
	}
	if env := o.cleanEnv("tcp://10.254.77.2:2375"); env != "DOCKER_HOST=tcp://10.254.77.2:2375 DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="+tlsDir {
		t.Errorf("clean env with TLS %q", env)
	}
}
