package local

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	_ "github.com/dbduel/dbduel/engine/driver/mongo" // the protocols of the managed servers
	_ "github.com/dbduel/dbduel/engine/driver/mysql"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/targets/ledger"
)

// stateDir gives the package's tests a state directory of their own.
func stateDir(t *testing.T) {
	t.Helper()
	dir, err := os.MkdirTemp("", "dbduel-local-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir); os.RemoveAll(dir + "-servers") })
	t.Setenv("DBDUEL_STATE_DIR", filepath.Join(dir))
	os.Chmod(dir, 0o700)
}

var portRE = regexp.MustCompile(`--port=([0-9]+)`)

// A managed MariaDB is no one else's from its first moment: nobody, trying
// root without a password on its port from the moment its process shows
// it (its command line is world-readable) until it answers dbduel, never
// gets in; it runs as the mysql user, not root; it reads and writes files
// by SQL only in a directory of its own; its directories are closed to
// other users.
func TestManagedMariaDBIsNoOneElses(t *testing.T) {
	integration.Require(t, "mariadbd, root and setpriv")
	mysqlUser, err := user.Lookup("mysql")
	if err != nil {
		t.Fatalf("mariadb-server makes a mysql user: %v", err)
	}
	stateDir(t)
	runID := "test-" + ledger.NewRunID()
	s, err := New("sec", "mariadbd", runID)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var breaches, tries []string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the attacker
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, port := range portsOf(runID) {
				out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
					"mariadb", "-h127.0.0.1", "-P"+port, "-uroot", "--connect-timeout=1", "-N", "-e", "SELECT CURRENT_USER()").CombinedOutput()
				mu.Lock()
				tries = append(tries, port)
				if err == nil {
					breaches = append(breaches, strings.TrimSpace(string(out)))
				}
				mu.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err = s.Start(ctx)
	close(stop)
	<-done
	t.Cleanup(func() { s.Stop(context.Background()) })
	if err != nil {
		t.Fatal(err)
	}
	if len(breaches) > 0 || len(tries) == 0 {
		t.Fatalf("nobody logged in as root without a password %d time(s) of %d tries: %v", len(breaches), len(tries), breaches)
	}
	t.Logf("nobody tried root without a password %d times while the server started: refused every time", len(tries))
	if uid := statusUID(t, s.PID()); strconv.Itoa(uid) != mysqlUser.Uid {
		t.Errorf("the server runs as uid %d, want the mysql user (%s)", uid, mysqlUser.Uid)
	}
	db, closeDB, err := driver.OpenSQL(ctx, s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	var priv string
	if err := db.QueryRow("SELECT @@secure_file_priv").Scan(&priv); err != nil || !strings.HasPrefix(priv, s.dir) {
		t.Errorf("secure_file_priv %q (%v), want a directory in %s", priv, err, s.dir)
	}
	if _, err := db.Exec("SELECT 1 INTO DUMPFILE '/tmp/dbduel-dumpfile-test'"); err == nil {
		os.Remove("/tmp/dbduel-dumpfile-test")
		t.Error("the server wrote a file outside its own directory")
	}
	for dir, mode := range map[string]os.FileMode{s.dir: 0o711, filepath.Join(s.dir, "run"): 0o700, ledger.ServersDir(): 0o711} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v (%v), want %v", dir, fi.Mode().Perm(), err, mode)
		}
	}
	if err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "ls", filepath.Join(s.dir, "run")).Run(); err == nil {
		t.Error("nobody can list the server's directory")
	}
}

// portsOf are the ports of run runID's mariadbd processes, read from
// their command lines as any user may read them.
func portsOf(runID string) []string {
	var out []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		data, err := os.ReadFile(c)
		if err != nil || !bytes.Contains(data, []byte(runID)) || !bytes.Contains(data, []byte("mariadbd")) {
			continue
		}
		if m := portRE.FindSubmatch(data); m != nil {
			out = append(out, string(m[1]))
		}
	}
	return out
}

func statusUID(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatal("no Uid in status")
	return -1
}

// local:mongod runs with authentication from its first start, and its
// first start listens on a socket in a directory of dbduel's alone, never
// on a port: a stub mongod records the command lines dbduel gives it (no
// mongod is installable on Debian).
func TestMongodStartsWithAuthOnASocketOnly(t *testing.T) {
	stateDir(t)
	bin := t.TempDir()
	record := filepath.Join(bin, "args")
	stub := filepath.Join(bin, "mongod")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\necho \"$@\" >> "+record+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := New("m", stub, "test-"+ledger.NewRunID())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = s.Start(ctx)
	s.Stop(context.Background())
	if err == nil || !strings.Contains(err.Error(), "first start") {
		t.Fatalf("a mongod that exits at once: %v", err)
	}
	data, _ := os.ReadFile(record)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	first := lines[0]
	if !strings.Contains(first, "--auth") || strings.Contains(first, "--port") || strings.Contains(first, "127.0.0.1") ||
		!strings.Contains(first, "--bind_ip "+filepath.Join(s.dir, "mongod.sock")) {
		t.Fatalf("the first start: %s", first)
	}
	if len(lines) != 1 {
		t.Fatalf("after a failed first start dbduel started mongod again: %v", lines)
	}
}

// A socket path the kernel would cut is refused by name, before a server
// starts and fails on it; a server directory's name leaves room under
// the default state directories.
func TestSocketPathLength(t *testing.T) {
	if err := checkSocketPath("/" + strings.Repeat("d", 106)); err != nil {
		t.Errorf("107 bytes: %v", err)
	}
	if err := checkSocketPath("/" + strings.Repeat("d", 107)); err == nil || !strings.Contains(err.Error(), "DBDUEL_STATE_DIR") {
		t.Errorf("108 bytes: %v", err)
	}
	longest := "/tmp/dbduel-test-state-4294967295-servers/" + ledger.ServerDirPrefix("test-"+strings.Repeat("f", 40), strings.Repeat("n", 40)) + "123456789/run/mysqld.sock"
	if err := checkSocketPath(longest); err != nil {
		t.Errorf("the tests' state directory: %v", err)
	}
}
