package main

import (
	"database/sql"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pgdrv "github.com/dbduel/dbduel/engine/driver/postgres"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/internal/testdb"
	"github.com/dbduel/dbduel/targets/local"
)

func pgURL(s *local.Server) string { return s.Endpoint().URL() }

func pgDB(t *testing.T, s *local.Server) *sql.DB {
	db, err := pgdrv.SQLOpen(s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// postgresImage is the test image matching the host's PostgreSQL.
func postgresImage(t *testing.T) string {
	t.Helper()
	integration.Require(t, "Docker and the PostgreSQL test image")
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "postgresql-15").Output()
	if err != nil {
		t.Fatalf("postgresql-15 is not installed: %v", err)
	}
	v := regexp.MustCompile(`^(?:\d+:)?([0-9.]+)`).FindStringSubmatch(string(out))
	return "dbduel-test/postgres:" + v[1]
}

func TestPostgresEveryWorkload(t *testing.T) {
	t.Parallel()
	srv := testdb.StartPostgres(t)
	db := pgDB(t, srv)
	if _, err := db.Exec("CREATE TABLE users_keep (id INT PRIMARY KEY, name TEXT); INSERT INTO users_keep VALUES (1, 'alice')"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select",
		"oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete",
		"select_random_points", "select_random_ranges", "bulk_insert"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			common := []string{"--target", "pg=" + pgURL(srv), "--table-size", "1000", "--threads", "2"}
			if !strings.HasPrefix(name, "select_random") {
				common = append(common, "--tables", "2")
			}
			_, stderr, code := dbduel(t, append([]string{"run", name, "--time", "1", "--format", "json", "-o", out}, common...)...)
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, stderr)
			}
			r, err := result.ReadFile(out)
			if err != nil || !r.Complete || len(r.Runs) != 1 || r.Runs[0].Summary.Events == 0 {
				t.Fatalf("%v: %+v", err, r)
			}
			if mix, ok := perEvent[name]; ok && r.Runs[0].Summary.Errors == 0 {
				s := r.Runs[0].Summary
				if float64(s.Reads) != mix.reads*float64(s.Events) {
					t.Fatalf("reads %d for %d events, want %v per event", s.Reads, s.Events, mix.reads)
				}
				// An update by primary key always changes its row: a write
				// each, by the rows the server says it changed (a driver
				// that lost that count would file them under "other").
				if strings.HasPrefix(name, "oltp_update") && (float64(s.Writes) != mix.writes*float64(s.Events) || s.Other != 0) {
					t.Fatalf("writes %d, other %d for %d events, want %v writes per event", s.Writes, s.Other, s.Events, mix.writes)
				}
			}
			// Exact, ignored errors included: the failed statement counts on
			// neither side and the ROLLBACK sent for it on both.
			h := r.Runs[0].Honesty
			if h == nil || h.Counter != "pg_stat_statements calls" {
				t.Fatalf("no server count: %+v", h)
			}
			if h.ServerQueries != h.DbduelQueries {
				t.Fatalf("the server's count disagrees with dbduel's (%d errors): %+v", r.Runs[0].Summary.Errors, h)
			}
			if _, stderr, code := dbduel(t, append([]string{"cleanup", name}, common...)...); code != 0 {
				t.Fatalf("cleanup: exit %d: %s", code, stderr)
			}
			var n int
			if err := db.QueryRow("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'sbtest%'").Scan(&n); err != nil || n != 0 {
				t.Fatalf("%d sbtest tables left after cleanup (%v)", n, err)
			}
		})
	}
	var name string
	if err := db.QueryRow("SELECT name FROM users_keep WHERE id = 1").Scan(&name); err != nil || name != "alice" {
		t.Fatalf("a table of another shape was touched: %q %v", name, err)
	}
}

// Tables dbduel prepares run under sysbench --db-driver=pgsql, and the reverse.
func TestPostgresSysbenchInterop(t *testing.T) {
	integration.Require(t, "PostgreSQL and sysbench")
	t.Parallel()
	srv := testdb.StartPostgres(t)
	ep := srv.Endpoint()
	sb := func(args ...string) string {
		full := append([]string{"oltp_read_only", "--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=" + strconv.Itoa(ep.Port),
			"--pgsql-user=" + ep.User, "--pgsql-password=" + ep.Password, "--pgsql-db=" + ep.DB, "--tables=2", "--table-size=2000"}, args...)
		out, err := exec.Command("sysbench", full...).CombinedOutput()
		if err != nil {
			t.Fatalf("sysbench %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	common := []string{"--target", "pg=" + pgURL(srv), "--tables", "2", "--table-size", "2000"}
	if _, stderr, code := dbduel(t, append([]string{"prepare", "oltp_read_only"}, common...)...); code != 0 {
		t.Fatalf("dbduel prepare: exit %d: %s", code, stderr)
	}
	if out := sb("--time=1", "run"); !strings.Contains(out, "transactions:") {
		t.Fatalf("sysbench on dbduel's tables:\n%s", out)
	}
	if _, _, code := dbduel(t, append([]string{"cleanup", "oltp_read_only"}, common...)...); code != 0 {
		t.Fatal("cleanup")
	}
	sb("prepare")
	_, stderr, code := dbduel(t, append([]string{"run", "oltp_read_only", "--time", "1", "--format", "text"}, common...)...)
	if code != 0 || !strings.Contains(stderr, "reusing existing sbtestN tables") {
		t.Fatalf("dbduel on sysbench's tables: exit %d: %s", code, stderr)
	}
}

// The command at a small scale: a managed local PostgreSQL against
// the same PostgreSQL in a container, both read back, both counted by the
// server, a configuration difference found, nothing left behind.
func TestPostgresNativeVsContainer(t *testing.T) {
	t.Parallel()
	image := postgresImage(t)
	runID := newRunID()
	env := []string{runEnv(runID)}
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := dbduelWith(t, env, "run", "oltp_read_only", "--target", "native=local:postgres",
		"--target", "c=docker:"+image+",args=-cshared_buffers=64MB", "--tables", "2", "--table-size", "2000",
		"--threads", "4", "--time", "2", "--cooldown", "0", "--format", "text", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil || !r.Complete || len(r.Runs) != 2 {
		t.Fatalf("%v: %+v", err, r)
	}
	for _, tg := range r.Targets {
		if !strings.HasPrefix(tg.ServerVersion, "PostgreSQL 15.") {
			t.Errorf("%s: version %q", tg.Name, tg.ServerVersion)
		}
	}
	if r.Targets[1].Described.NetworkPath != "docker-proxy" || r.Targets[1].Described.Datadir.Kind != "volume" {
		t.Errorf("container read back: %+v", r.Targets[1].Described)
	}
	for _, run := range r.Runs {
		if h := run.Honesty; h == nil || h.DiffPct > 1 || h.DiffPct < -1 {
			t.Errorf("%s: honesty %+v", run.Target, h)
		}
		// The server's CPU: the postmaster's backends for the local one
		// (they are its children, not its process group), the cgroup's
		// for the container. Judged per query, not in cores: on a busy
		// machine the run may do few queries, but each costs the server
		// well over 5 µs of CPU; the postmaster alone would show ~0.
		busy := false
		for _, iv := range run.Intervals {
			c, ok := iv.Telemetry.Get("server_cpu_cores")
			if ok && iv.Figures.QPS > 0 && c/iv.Figures.QPS > 5e-6 {
				busy = true
			}
		}
		if !busy {
			t.Errorf("%s: no interval shows the server's CPU: %+v", run.Target, run.Intervals)
		}
	}
	found := false
	for _, d := range r.Parity.VariablesDiff {
		found = found || d.Name == "shared_buffers"
	}
	if !found {
		t.Errorf("shared_buffers differs and parity did not say so: %+v", r.Parity.VariablesDiff)
	}
	if !strings.Contains(stderr, `running initdb and postgres as the "postgres" user`) {
		t.Errorf("running as another user must be said: %s", stderr)
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things left", n)
	}
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Fatalf("state files left: %v", files)
	}
}
