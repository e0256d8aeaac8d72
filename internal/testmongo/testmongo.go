// Package testmongo starts dbduel's MongoDB-protocol test server
// (scripts/mongo-test-server.sh: FerretDB over a throwaway PostgreSQL) for
// integration tests, one per test, stopped when the test ends. A missing
// PostgreSQL or Go toolchain fails the test: CI never skips.
package testmongo

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/internal/integration"
)

// Image is the MongoDB-compatible test image scripts/build-test-image.sh builds.
const Image = "dbduel-test/mongo-compat:1.24.2"

// Start starts a test server and returns its mongodb:// URI.
func Start(tb testing.TB) string {
	tb.Helper()
	integration.Require(tb, "PostgreSQL and scripts/mongo-test-server.sh")
	script := filepath.Join(RepoRoot(tb), "scripts", "mongo-test-server.sh")
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	// Not t.TempDir(): PostgreSQL runs as its own user and must reach the directory.
	dir := filepath.Join(os.TempDir(), "dbduel-mongo-test-"+hex.EncodeToString(b))
	env := append(os.Environ(), "DBDUEL_MONGO_TEST_DIR="+dir)
	stop := func() {
		cmd := exec.Command("bash", script, "stop")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Errorf("stop the test server: %v: %s", err, out)
		}
	}
	cmd := exec.Command("bash", script, "start")
	cmd.Env = env
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		stop()
		tb.Fatalf("start the MongoDB test server: %v", err)
	}
	tb.Cleanup(stop)
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "mongodb://") {
			return l
		}
	}
	tb.Fatalf("the test server printed no URI: %q", out)
	return ""
}

// RepoRoot is the directory of dbduel's go.mod, found upwards from the
// test's working directory.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(data), "module github.com/dbduel/dbduel\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("dbduel's go.mod not found above the working directory")
		}
		dir = parent
	}
}
