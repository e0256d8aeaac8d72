package main

import (
	"path/filepath"
	"testing"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
)

// seed000.yaml end to end at a small scale, leaving nothing behind.
func TestSeed000RunsSmall(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	runID := newRunID()
	env := []string{"IMAGE=" + testImage(t), runEnv(runID)}
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := dbduelWith(t, env, "run", "-f", "examples/seed000.yaml", "--tables", "2", "--table-size", "2000", "--time", "2",
		"--runs", "2", "--threads", "2", "--cooldown", "0", "--format", "text", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil || !r.Complete || len(r.Runs) != 4 || r.Workload.Options["tables"] != float64(2) {
		t.Fatalf("%v: complete %v, %d runs, options %v", err, r.Complete, len(r.Runs), r.Workload.Options)
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things left", n)
	}
}
