package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/ui/cli"
)

// The end-to-end tests run side by side (t.Parallel): each has its own run
// id, ports, servers and containers, and finds what it left by its run id.
// So none sets the process's environment: what a run reads of it is given
// to that run alone (dbduelWith, a child's cmd.Env). The state directory
// is one for the whole package (TestMain), shared by every run.

// TestMain gives the package's runs a state directory of their own.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dbduel-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("DBDUEL_STATE_DIR", dir)
	code := m.Run()
	removeRootlessTestUser()
	os.RemoveAll(dir)
	os.RemoveAll(dir + "-servers") // where servers of other accounts have theirs (ledger.ServersDir)
	os.Exit(code)
}

// dbduel runs the command line in-process, with this process's
// environment, and returns its output and exit code.
func dbduel(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return dbduelWith(t, nil, args...)
}

// dbduelWith is dbduel with env (KEY=VALUE) added to its environment:
// DBDUEL_RUN_ID, DBDUEL_AGENT_BINARY, a scenario's variables.
func dbduelWith(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = cli.Run(context.Background(), args, cli.NewState(&o, &e, append(os.Environ(), env...)))
	return o.String(), e.String(), code
}

// newRunID is a run id of a test's own.
func newRunID() string { return "test-" + ledger.NewRunID() }

// runEnv is the environment entry that gives a run its id.
func runEnv(runID string) string { return "DBDUEL_RUN_ID=" + runID }

// stateFiles lists what run runID has in the state directory and the
// servers' (pidfiles, the managed servers' and the containers' host
// directories, kept URLs).
func stateFiles(t *testing.T, runID string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(ledger.Dir(), "*"))
	if err != nil {
		t.Fatal(err)
	}
	servers, _ := filepath.Glob(filepath.Join(ledger.ServersDir(), "*"))
	if ledger.ServersDir() != ledger.Dir() {
		files = append(files, servers...)
	}
	var out []string
	for _, f := range files {
		if strings.Contains(filepath.Base(f), runID) {
			out = append(out, f)
		}
	}
	return out
}

var binaries struct {
	sync.Mutex
	built map[bool]string // by static
	dir   string
}

// buildBinary builds dbduel once for the tests that need a separate
// process (signals, a closed pipe, a terminal).
func buildBinary(t *testing.T) string { return binary(t, false) }

// staticBinary builds a static dbduel once: the agent copied into
// containers (DBDUEL_AGENT_BINARY).
func staticBinary(t *testing.T) string { return binary(t, true) }

func binary(t *testing.T, static bool) string {
	t.Helper()
	binaries.Lock()
	defer binaries.Unlock()
	if bin := binaries.built[static]; bin != "" {
		return bin
	}
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "dbduel-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		binaries.dir, binaries.built = dir, map[bool]string{}
	}
	bin := filepath.Join(binaries.dir, map[bool]string{false: "dbduel", true: "dbduel-static"}[static])
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if static {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	binaries.built[static] = bin
	return bin
}

// agentEnv is the environment entry that makes the static dbduel the
// agent copied into containers.
func agentEnv(t *testing.T) string { return "DBDUEL_AGENT_BINARY=" + staticBinary(t) }
