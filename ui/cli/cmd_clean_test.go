package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/targets/ledger"
)

// clean lists what it removed: a dead server's pidfile and its directory
// (datadir, config, log), by name.
func TestCleanListsTheDirectoriesItRemoves(t *testing.T) {
	integration.Require(t, "the Docker engine (clean also asks it for labelled containers)")
	t.Setenv("DBDUEL_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	dir, err := ledger.MkdirTemp("dbduel-local-cleantest-n-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	// The pidfile of a process that has ended since.
	gone := exec.Command("sleep", "30")
	if err := gone.Start(); err != nil {
		t.Fatal(err)
	}
	sleep, _ := exec.LookPath("sleep")
	err = ledger.Record(ledger.Process{RunID: "cleantest", Target: "n", PID: gone.Process.Pid, Binary: sleep, UID: os.Geteuid(), Dir: dir})
	gone.Process.Kill()
	gone.Wait()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := clean(context.Background(), "cleantest", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "removed directory "+dir) || !strings.Contains(out.String(), "removed stale pidfile of run cleantest, target n") {
		t.Fatalf("clean said:\n%s", out.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory still there: %v", err)
	}
}

// dbduel clean refuses a state directory another user made (with a
// pidfile naming a process of root's and a directory to remove in it):
// exit 1, one line naming the directory and what to do, and nothing
// signalled or removed.
func TestCleanRefusesAPlantedStateDirectory(t *testing.T) {
	integration.Require(t, "root and setpriv (util-linux)")
	planted := filepath.Join(os.TempDir(), "dbduel-attack-"+ledger.NewRunID())
	t.Cleanup(func() { os.RemoveAll(planted) })
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	keep := t.TempDir()
	pidfile := fmt.Sprintf(`{"run_id":"x","target":"t","pid":%d,"binary":"/usr/bin/sleep","dir":%q}`, victim.Process.Pid, keep)
	script := "mkdir -m 777 " + planted + " && echo '" + pidfile + "' > " + planted + "/proc-x-t.json"
	if out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("nobody's plant: %v %s", err, out)
	}
	t.Setenv("DBDUEL_STATE_DIR", planted)
	stdout, stderr, code := runCLI(t, "clean")
	if code != 1 || !strings.Contains(stderr, planted) || !strings.Contains(stderr, "uid 65534") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("clean in a planted state directory: exit %d\n%s%s", code, stdout, stderr)
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatal("the process the planted pidfile named was signalled")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatal("the directory the planted pidfile named was removed")
	}
}
