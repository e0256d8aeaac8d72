package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/targets/ledger"
)

// The project's own scripts run as root and start servers on loopback:
// these tests play the other local user (nobody) against them.

// asNobodyOut runs a command as nobody and returns its output and error.
func asNobodyOut(t *testing.T, args ...string) (string, error) {
	t.Helper()
	integration.Require(t, "root and setpriv (util-linux)")
	if os.Geteuid() != 0 {
		t.Fatal("these tests run as root: the scripts' threat is a local user against root")
	}
	out, err := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--"}, args...)...).CombinedOutput()
	return string(out), err
}

// The bench scripts' MariaDB (scripts/lib/tempserver.sh) runs as root: a
// local user gets no root account over TCP, and the bench user, whose
// password shows in ps, cannot write a file as the server.
func TestBenchServerGivesALocalUserNothing(t *testing.T) {
	integration.Require(t, "MariaDB (apt-get install mariadb-server)")
	t.Parallel()
	port, pw := startBenchServer(t, `. scripts/lib/tempserver.sh; start_temp_server sectest >&2`)
	if len(pw) < 16 || pw == "bench" {
		t.Fatalf("the bench password %q is guessable", pw)
	}
	out, err := asNobodyOut(t, "mariadb", "-h127.0.0.1", "-P"+port, "-uroot", "-e", "SELECT 1")
	if err == nil || !strings.Contains(out, "Access denied") {
		t.Fatalf("root over TCP with no password: %v %s", err, out)
	}
	planted := filepath.Join(os.TempDir(), "dbduel-outfile-"+ledger.NewRunID())
	defer os.Remove(planted)
	out, err = asNobodyOut(t, "mariadb", "-h127.0.0.1", "-P"+port, "-ubench", "-p"+pw, "-e", "SELECT 'x' INTO OUTFILE '"+planted+"'")
	if err == nil || !strings.Contains(out, "Access denied") {
		t.Fatalf("the bench user wrote a file: %v %s", err, out)
	}
	if _, err := os.Stat(planted); err == nil {
		t.Fatal("the server wrote the bench user's file as root")
	}
	// The bench databases are the bench user's: what the scripts need works.
	if out, err := asNobodyOut(t, "mariadb", "-h127.0.0.1", "-P"+port, "-ubench", "-p"+pw, "sbtest", "-e", "CREATE TABLE sbtest1 (id INT PRIMARY KEY)"); err != nil {
		t.Fatalf("the bench user in its database: %v %s", err, out)
	}
}

// The bench scripts' PostgreSQL (scripts/lib/temppg.sh): a local user gets
// no superuser over TCP, and the bench role, whose password shows in ps,
// cannot write a file as the server's OS user.
func TestBenchPostgresGivesALocalUserNothing(t *testing.T) {
	integration.Require(t, "PostgreSQL (apt-get install postgresql)")
	t.Parallel()
	port, pw := startBenchServer(t, `work=$(mktemp -d /tmp/dbduel-pgsec.XXXXXX); . scripts/lib/temppg.sh; start_temp_pg "$work" 20 >&2`)
	psqlAs := func(user, pw string, sql string) (string, error) {
		return asNobodyOut(t, "env", "PGPASSWORD="+pw, "PGCONNECT_TIMEOUT=5", "psql", "-h127.0.0.1", "-p"+port, "-U"+user, "-d", "sbtest", "-w", "-Atc", sql)
	}
	if out, err := psqlAs("postgres", "", "SELECT 1"); err == nil || !strings.Contains(out, "password") {
		t.Fatalf("the superuser over TCP with no password: %v %s", err, out)
	}
	planted := filepath.Join(os.TempDir(), "dbduel-pgcopy-"+ledger.NewRunID())
	defer os.Remove(planted)
	if out, err := psqlAs("bench", pw, "COPY (SELECT 1) TO '"+planted+"'"); err == nil || !strings.Contains(out, "pg_write_server_files") {
		t.Fatalf("the bench role wrote a file: %v %s", err, out)
	}
	if _, err := os.Stat(planted); err == nil {
		t.Fatal("the server wrote the bench role's file")
	}
	if out, err := psqlAs("bench", pw, "CREATE TABLE sbtest1 (id INT PRIMARY KEY)"); err != nil {
		t.Fatalf("the bench role in its database: %v %s", err, out)
	}
}

// startBenchServer runs a bench script's server start (SCRIPT prints
// nothing on stdout) and returns its port and bench password; the server
// is stopped by the script's EXIT trap when the test ends.
func startBenchServer(t *testing.T, script string) (port, pw string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script+`; echo "$port $bench_pw"; read -r _ || true`)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the script's read ends, its EXIT trap stops the server
		if err := cmd.Wait(); err != nil {
			t.Errorf("bench server: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 {
		t.Fatalf("the bench server said %q (%v)", line, err)
	}
	return f[0], f[1]
}

// scripts/mongo-test-server.sh makes its state directory: one planted by
// another user (or a link to one) is refused and left as it was, not
// taken over with root's chown.
func TestMongoTestServerRefusesAPlantedStateDirectory(t *testing.T) {
	integration.Require(t, "PostgreSQL and scripts/mongo-test-server.sh")
	t.Parallel()
	dir := filepath.Join(os.TempDir(), "dbduel-planted-"+ledger.NewRunID())
	t.Cleanup(func() { os.RemoveAll(dir); os.Remove(dir + "-link") })
	if out, err := asNobodyOut(t, "mkdir", "-m", "777", dir); err != nil {
		t.Fatalf("plant: %v %s", err, out)
	}
	if out, err := asNobodyOut(t, "ln", "-s", dir, dir+"-link"); err != nil {
		t.Fatalf("plant the link: %v %s", err, out)
	}
	for _, state := range []string{dir, dir + "-link"} {
		cmd := exec.Command("bash", "scripts/mongo-test-server.sh", "start")
		cmd.Env = append(os.Environ(), "DBDUEL_MONGO_TEST_DIR="+state)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "exists") {
			t.Errorf("state %s: started over a planted directory: %v %s", state, err, out)
		}
		var st syscall.Stat_t
		if err := syscall.Stat(dir, &st); err != nil || st.Uid != 65534 {
			t.Fatalf("the planted directory changed hands: uid %d (%v)", st.Uid, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("the script wrote into the planted directory: %v", entries)
		}
		// Nor does stop take it for its own (it would signal the pid a
		// plant names and remove the directory).
		stop := exec.Command("bash", "scripts/mongo-test-server.sh", "stop")
		stop.Env = cmd.Env
		if out, err := stop.CombinedOutput(); err == nil || !strings.Contains(string(out), "not touching it") {
			t.Errorf("state %s: stop took a planted directory: %v %s", state, err, out)
		}
		if _, err := os.Lstat(state); err != nil {
			t.Fatalf("stop removed the planted %s: %v", state, err)
		}
	}
}

// scripts/lib/safedir.sh (the tool caches root runs programs from)
// refuses a path another user could change on the way or at its end.
func TestSafeDirRefusesWhatAnotherUserCouldChange(t *testing.T) {
	integration.Require(t, "root and setpriv (util-linux)")
	t.Parallel()
	base := filepath.Join(os.TempDir(), "dbduel-safedir-"+ledger.NewRunID())
	t.Cleanup(func() { os.RemoveAll(base); os.Remove(base + "-link") })
	if err := os.Mkdir(base, 0o700); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(os.TempDir(), "dbduel-planted-"+ledger.NewRunID())
	t.Cleanup(func() { os.RemoveAll(planted) })
	if out, err := asNobodyOut(t, "mkdir", "-m", "755", planted); err != nil {
		t.Fatalf("plant: %v %s", err, out)
	}
	if err := os.Symlink(base, base+"-link"); err != nil {
		t.Fatal(err)
	}
	safe := func(path string) (string, error) {
		out, err := exec.Command("bash", "-c", `. scripts/lib/safedir.sh; safe_dir "$1"`, "safedir", path).CombinedOutput()
		return string(out), err
	}
	for _, c := range []struct{ path, why string }{
		{os.TempDir(), "changeable"},                      // a world-writable directory itself
		{filepath.Join(planted, "tools"), "changeable"},   // another user's directory on the way
		{filepath.Join(base+"-link", "tools"), "symlink"}, // a link on the way
		{"relative/tools", "not an absolute path"},        // checked as /relative, used as ./relative
	} {
		if out, err := safe(c.path); err == nil || !strings.Contains(out, c.why) {
			t.Errorf("safe_dir %s: %v %q, want refused (%s)", c.path, err, out, c.why)
		}
	}
	fresh := filepath.Join(base, "a", "tools")
	if out, err := safe(fresh); err != nil {
		t.Fatalf("safe_dir %s: %v %s", fresh, err, out)
	}
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the cache made as %v (%v), want 0700", st.Mode(), err)
	}
}
