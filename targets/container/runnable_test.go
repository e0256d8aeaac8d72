package container

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunnableRefusesInOneLine(t *testing.T) {
	vol := Options{Image: "mariadb:11.4", Datadir: "volume"}
	overlay := Options{Image: "mariadb:11.4", Datadir: "overlay"}
	for _, c := range []struct {
		o              Options
		os, arch, user string
		want           string // "" runs
	}{
		{vol, "linux", "amd64", "", ""},
		{vol, "linux", "amd64", "999", ""},                     // a volume is the image's own directory, owned by its user
		{overlay, "linux", "amd64", "root", ""},                // root makes any directory
		{overlay, "linux", "amd64", "0:0", ""},                 // so does uid 0
		{overlay, "linux", "amd64", "999:999", "user 999:999"}, // not root: no directory in /var/lib
		{overlay, "linux", "amd64", "mysql", "datadir=volume"},
		{vol, "linux", "arm64", "", "linux/arm64"},
		{vol, "linux", "386", "", ""},   // a 64-bit x86 runs 32-bit x86 as docker run does
		{vol, "linux", "s390x", "", ""}, // an emulator this kernel has (binfmt_misc)
		{overlay, "linux", "amd64", "0:999", ""},
		{vol, "windows", "amd64", "", "is for windows"},
	} {
		err := runnable(c.o, c.os, c.arch, c.user, "linux", "amd64", func(arch string) bool { return arch == "s390x" })
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: refused: %v", c, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%+v: want one line with %q, got %v", c, c.want, err)
		}
	}
}

// Registry credentials go only to an engine on a local socket that root or
// this user owns, in directories no other account may change: an engine on
// tcp:// or ssh://, or a socket another account made or could swap, could
// be anyone's.
func TestCredentialsGoOnlyToOwnSockets(t *testing.T) {
	for _, host := range []string{"tcp://127.0.0.1:2375", "ssh://bob@localhost", "npipe:////./pipe/docker", "unix://"} {
		if err := credentialsMayGo(host); err == nil {
			t.Errorf("%s: credentials would go", host)
		}
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	sock := func(d, name string) string {
		p := filepath.Join(d, name)
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return p
	}
	own := sock(dir, "own.sock")
	os.Chmod(own, 0o660)
	if err := credentialsMayGo("unix://" + own); err != nil {
		t.Fatalf("this user's own socket: %v", err)
	}
	open := sock(dir, "open.sock")
	os.Chmod(open, 0o666)
	if err := credentialsMayGo("unix://" + open); err == nil {
		t.Error("a socket any account may write: credentials would go")
	}
	link := filepath.Join(dir, "link.sock")
	os.Symlink(own, link)
	if err := credentialsMayGo("unix://" + link); err == nil {
		t.Error("a symlink to a socket: credentials would go")
	}
	shared := filepath.Join(dir, "shared")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o777) // others may swap the socket in it
	if err := credentialsMayGo("unix://" + sock(shared, "s.sock")); err == nil {
		t.Error("a socket in a directory others may write: credentials would go")
	}
	sticky := filepath.Join(dir, "sticky")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o777|os.ModeSticky) // as /tmp: only the owner may remove it
	if err := credentialsMayGo("unix://" + sock(sticky, "s.sock")); err != nil {
		t.Errorf("own socket in a sticky directory: %v", err)
	}
	if os.Geteuid() == 0 {
		other := sock(dir, "other.sock")
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := credentialsMayGo("unix://" + other); err == nil {
			t.Error("a socket another account owns: credentials would go")
		}
	}
}

// A credential helper runs only from a file and directories no other
// account may change: root would otherwise run another user's program
// with a registry password's worth of trust.
func TestCredentialHelperMustBeTrusted(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	good, shared := filepath.Join(dir, "good"), filepath.Join(dir, "shared")
	os.Mkdir(good, 0o755)
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o777)
	for _, d := range []string{good, shared} {
		if err := os.WriteFile(filepath.Join(d, "docker-credential-t"+filepath.Base(d)), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", good+":"+shared)
	if err := trustedProgram("docker-credential-tgood"); err != nil {
		t.Errorf("a helper in this user's own directory: %v", err)
	}
	if err := trustedProgram("docker-credential-tshared"); err == nil || !strings.Contains(err.Error(), "another account may change") {
		t.Errorf("a helper in a directory anyone may write: %v", err)
	}
	if err := trustedProgram("docker-credential-absent"); err == nil {
		t.Error("an absent helper: no error")
	}
}
