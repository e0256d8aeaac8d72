package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/internal/testmongo"
)

// Seed 004's shape at a small scale: a MongoDB-protocol server natively and
// in a container, a thread sweep, and every run checked against the
// server's own operation count.
func TestMongoNativeVsContainerSweep(t *testing.T) {
	integration.Require(t, "PostgreSQL, Docker and the mongo-compat test image")
	t.Parallel()
	uri := testmongo.Start(t)
	runID := newRunID()
	env := []string{runEnv(runID)}
	for _, wl := range []string{"mongo_read_only", "mongo_read_write"} {
		t.Run(wl, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			_, stderr, code := dbduelWith(t, env, "run", wl, "--target", "native="+uri, "--target", "c=docker:"+testmongo.Image,
				"--threads", "1,2", "--time", "2", "--table-size", "300", "--cooldown", "0", "--no-tui", "-o", out)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r, err := result.ReadFile(out)
			if err != nil || !r.Complete {
				t.Fatalf("%v: complete %v", err, r != nil && r.Complete)
			}
			if len(r.Runs) != 4 {
				t.Fatalf("%d runs, want 2 targets x 2 thread counts", len(r.Runs))
			}
			for _, tg := range r.Targets {
				if !strings.Contains(tg.ServerVersion, "FerretDB v1.24.2") {
					t.Errorf("%s: version %q does not say FerretDB", tg.Name, tg.ServerVersion)
				}
				if strings.Contains(tg.SpecRedacted, "@") && !strings.Contains(tg.SpecRedacted, "***") {
					t.Errorf("%s: spec %q", tg.Name, tg.SpecRedacted)
				}
			}
			if p := r.Targets[1].Described.NetworkPath; p != "docker-proxy" {
				t.Errorf("container network path %q", p)
			}
			if dd := r.Targets[1].Described.Datadir; dd == nil || dd.Kind != "volume" || dd.Path != "/data/db" {
				t.Errorf("container datadir %+v, want the volume on /data/db", dd)
			}
			threads := map[int]bool{}
			for _, run := range r.Runs {
				th := r.Plan.Points[run.Point].Threads
				threads[th] = true
				if run.Summary.Events == 0 {
					t.Errorf("%s/%d threads: no transactions", run.Target, th)
				}
				h := run.Honesty
				if h == nil || h.Counter != "opcounters" || h.Unit != "operations" || h.ServerQueries == 0 {
					t.Fatalf("%s: honesty %+v", run.Target, h)
				}
				// The server counts each operation dbduel counted, once
				// the pool's own handshakes and heartbeats are left out.
				if h.ServerQueries != h.DbduelQueries {
					t.Errorf("%s/%d threads: server counted %d operations, dbduel %d", run.Target, th, h.ServerQueries, h.DbduelQueries)
				}
				if wl == "mongo_read_only" && run.Summary.Writes != 0 {
					t.Errorf("read-only wrote %d", run.Summary.Writes)
				}
				if wl == "mongo_read_write" && run.Summary.Writes == 0 {
					t.Errorf("read-write wrote nothing")
				}
			}
			if !threads[1] || !threads[2] {
				t.Errorf("thread counts run: %v", threads)
			}
		})
	}
	// cleanup drops the run's collections and says so in MongoDB's words.
	_, stderr, code := dbduelWith(t, env, "cleanup", "mongo_read_write", "--target", "native="+uri, "--tables", "1")
	if code != 0 || !strings.Contains(stderr, "dropped collection 'sbtest1'") {
		t.Errorf("cleanup: exit %d: %s", code, stderr)
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things left", n)
	}
}

// SIGINT while the container runs MongoDB's workload: exit 130, a partial
// result, no container or volume left.
func TestMongoSIGINTLeavesNothing(t *testing.T) {
	integration.Require(t, "Docker and the mongo-compat test image")
	t.Parallel()
	bin := buildBinary(t)
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(bin, "run", "mongo_read_write", "--target", "c=docker:"+testmongo.Image,
		"--runs", "2", "--time", "3", "--table-size", "300", "--no-tui", "-o", out)
	cmd.Env = append(os.Environ(), "DBDUEL_RUN_ID="+runID)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForFile(out, 90*time.Second)
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130 after SIGINT, got %v", err)
	}
	var r result.Result
	data, _ := os.ReadFile(out)
	if err := json.Unmarshal(data, &r); err != nil || r.Complete || len(r.Runs) == 0 {
		t.Fatalf("partial result: %v complete %v runs %d", err, r.Complete, len(r.Runs))
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left after SIGINT", n, runID)
	}
}

// local:mongod runs a private mongod; where none exists (Debian has no
// MongoDB package) it says so in one line and exits 1.
func TestLocalMongod(t *testing.T) {
	t.Parallel()
	_, stderr, code := dbduel(t, "run", "mongo_read_only", "--target", "m=local:mongod", "--time", "1", "--table-size", "100", "--no-tui")
	if _, err := exec.LookPath("mongod"); err == nil {
		if code != 0 {
			t.Fatalf("with a mongod on PATH: exit %d: %s", code, stderr)
		}
		return
	}
	if code != 1 || !strings.Contains(stderr, "no mongod binary") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
