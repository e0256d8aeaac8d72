package ledger

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbduel/dbduel/internal/integration"
)

// asNobody runs a command as the unprivileged user nobody (the attacker
// of these tests), as a local user on a shared machine would.
func asNobody(t *testing.T, args ...string) error {
	t.Helper()
	integration.Require(t, "root and setpriv (util-linux)")
	if os.Geteuid() != 0 {
		t.Fatal("these tests run as root: dbduel's own threat is a local user against root")
	}
	out, err := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--"}, args...)...).CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)) + ": " + err.Error())
	}
	return nil
}

// attackDir is a fresh directory in /tmp for the attacker's plants.
func attackDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(os.TempDir(), "dbduel-attack-"+NewRunID())
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// A state directory another user made, or could change, is refused
// before dbduel reads or writes anything in it: nobody plants one (a
// directory of theirs, one open to all, a symbolic link to root's files,
// or a directory under one of theirs) with a pidfile naming a root process
// and a directory to remove; Ensure refuses each, naming why.
func TestPlantedStateDirectoryIsRefused(t *testing.T) {
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	plant := func(dir string) {
		t.Helper()
		p := Process{RunID: "x", Target: "t", PID: victim.Process.Pid, Binary: "/usr/bin/sleep", Dir: "/etc"}
		data, _ := json.Marshal(p)
		if err := asNobody(t, "sh", "-c", "cat > "+filepath.Join(dir, "proc-x-t.json")+" <<'EOF'\n"+string(data)+"\nEOF"); err != nil {
			t.Fatal(err)
		}
	}
	theirs := attackDir(t)
	if err := asNobody(t, "mkdir", "-m", "777", theirs); err != nil {
		t.Fatal(err)
	}
	plant(theirs)
	open := attackDir(t)
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	link := attackDir(t)
	if err := asNobody(t, "ln", "-s", "/root", link); err != nil {
		t.Fatal(err)
	}
	parent := attackDir(t)
	if err := asNobody(t, "mkdir", "-m", "777", parent); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		theirs: "belongs to uid 65534", open: "has mode 0777", link: "is a symbolic link",
		filepath.Join(parent, "state"): "(above the state directory) belongs to uid 65534",
	} {
		t.Setenv("DBDUEL_STATE_DIR", dir)
		if _, err := Ensure(); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want it refused: %s", dir, err, want)
		}
		if _, err := Processes(""); !errors.Is(err, ErrUnsafe) {
			t.Errorf("%s: the pidfiles were read: %v", dir, err)
		}
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the root process the planted pidfile named was killed: %v", err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatal("a directory the planted pidfile named was removed")
	}
}

// A pidfile names a live process by its pid, start time, account and
// executable: one whose process has another start time (the pid reused)
// is not taken for it, and Kill leaves that process alone.
func TestPidfileOfAnotherStartTimeKillsNothing(t *testing.T) {
	t.Setenv("DBDUEL_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	sleep, _ := exec.LookPath("sleep")
	p := Process{RunID: "run1", Target: "n", PID: live.Process.Pid, Binary: sleep, UID: os.Geteuid()}
	if err := Record(p); err != nil {
		t.Fatal(err)
	}
	procs, err := Processes("run1")
	if err != nil || len(procs) != 1 || !Alive(procs[0]) {
		t.Fatalf("the recorded process: %+v %v (alive %v)", procs, err, len(procs) == 1 && Alive(procs[0]))
	}
	// The same pid, started at another time: another process.
	reused := procs[0]
	reused.StartTime++
	if Alive(reused) {
		t.Fatal("a pid with another start time is taken for the recorded process")
	}
	if err := Kill(reused, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := live.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("Kill signalled a process of another start time: %v", err)
	}
	// The recorded one itself: ended, and Kill returns once it is gone.
	if err := Kill(procs[0], 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(live.Process.Pid) + "/exe"); err == nil && Alive(procs[0]) {
		t.Fatal("Kill returned before the process ended")
	}
}

// Run ids and target names become file names: anything else is refused
// before it touches a path (kept:x/../../etc/x read a root-only file).
func TestNamesAreCheckedBeforeTheyBecomePaths(t *testing.T) {
	t.Setenv("DBDUEL_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	for _, bad := range []string{"../../../../tmp/leak", "x/y", ".hidden", "", "UPPER", "a b", strings.Repeat("a", 64)} {
		if _, err := Kept(bad, "n"); err == nil || !strings.Contains(err.Error(), "run id") {
			t.Errorf("Kept(%q): %v", bad, err)
		}
		if _, err := Kept("run", bad); err == nil || !strings.Contains(err.Error(), "target name") {
			t.Errorf("Kept(run, %q): %v", bad, err)
		}
		if _, err := Keep(bad, "n", "mysql://x"); err == nil {
			t.Errorf("Keep(%q) accepted", bad)
		}
		if err := Record(Process{RunID: bad, Target: "n", PID: os.Getpid(), Binary: "/proc/self/exe"}); err == nil {
			t.Errorf("Record(%q) accepted", bad)
		}
	}
	if _, err := Kept("test-1a2b", "native_1"); err == nil || strings.Contains(err.Error(), "want lowercase") {
		t.Errorf("a well-formed kept name: %v", err)
	}
}

// Clean removes a directory only when dbduel made it: in its directories,
// with the marker, its own; another user's directory of the name, or one
// without the marker, is left alone.
func TestOnlyMarkedDirectoriesAreRemoved(t *testing.T) {
	t.Setenv("DBDUEL_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	ours, err := MkdirTemp("dbduel-container-run1-c-")
	if err != nil {
		t.Fatal(err)
	}
	if err := RemoveMarked(ours); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ours); !os.IsNotExist(err) {
		t.Fatalf("our marked directory is still there: %v", err)
	}
	// nobody's directory in /tmp, named as dbduel names its own, a marker
	// planted in it.
	theirs := filepath.Join(os.TempDir(), "dbduel-container-run1-c-"+NewRunID())
	t.Cleanup(func() { os.RemoveAll(theirs) })
	if err := asNobody(t, "sh", "-c", "mkdir "+theirs+" && touch "+filepath.Join(theirs, Marker)); err != nil {
		t.Fatal(err)
	}
	if err := RemoveMarked(theirs); err == nil {
		t.Fatal("another user's directory was removed")
	}
	unmarked, _ := os.MkdirTemp(Dir(), "dbduel-container-run1-d-")
	if err := RemoveMarked(unmarked); err == nil {
		t.Fatal("a directory without dbduel's marker was removed")
	}
	if err := RemoveMarked("/etc"); err == nil {
		t.Fatal("a directory outside dbduel's was removed")
	}
}
