package main

import (
	"context"
	"database/sql"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/internal/testdb"
)

func sumNextOID(t *testing.T, srv tpccServer) int64 {
	t.Helper()
	var n int64
	ownStatements(t, srv, func(c *sql.Conn) {
		if err := c.QueryRowContext(context.Background(), "SELECT SUM(d_next_o_id) FROM district").Scan(&n); err != nil {
			t.Fatal(err)
		}
	})
	return n
}

// ownStatements runs the test's own statements on one connection and, on
// PostgreSQL, publishes their transactions at once: an idle connection
// publishes its counts up to 10 s late, into the next run's TPM (the
// eleven statements of quietAutovacuum made a 3-s run's TPM 3.8% high in
// CI).
func ownStatements(t *testing.T, srv tpccServer, do func(*sql.Conn)) {
	t.Helper()
	ctx := context.Background()
	c, err := srv.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	do(c)
	if srv.name == "postgres" {
		if _, err := c.ExecContext(ctx, "SELECT pg_stat_force_next_flush() FROM pg_namespace LIMIT 1"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTPCCNOPMIsTheDistrictDelta runs TPC-C and checks its figures against
// the server read independently, then the consistency conditions.
// In both modes: one CALL a transaction (HammerDB's) and the statements.
func TestTPCCNOPMIsTheDistrictDelta(t *testing.T) {
	t.Parallel()
	for name, server := range map[string]func(*testing.T) tpccServer{"mariadb": tpccMariaDB, "postgres": tpccPostgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := server(t)
			// One load for both modes: a run's NOPM is the district
			// table's move during that run, whatever ran before it.
			if _, stderr, code := dbduel(t, append([]string{"prepare", "tpcc"}, tpccTarget(srv, "procedures")...)...); code != 0 {
				t.Fatalf("prepare: exit %d: %s", code, stderr)
			}
			if name == "postgres" {
				quietAutovacuum(t, srv)
			}
			for _, mode := range []string{"procedures", "statements"} {
				t.Run(mode, func(t *testing.T) { tpccNOPMIsTheDistrictDelta(t, srv, mode) })
			}
			tpccBrokenAndCleanedUp(t, srv)
		})
	}
}

// quietAutovacuum turns autovacuum off on the loaded tables and on the
// test server: PostgreSQL's transaction counters (TPM's, as HammerDB reads
// them) count every transaction in the database, and autovacuum workers
// analyzing the freshly loaded tables (or the catalogs the load's CREATEs
// changed) mid-run added 272 per minute to a 3-s run in CI, and 190 to
// another after the tables' own autovacuum was off. Its own statements are
// published at once (ownStatements).
func quietAutovacuum(t *testing.T, srv tpccServer) {
	t.Helper()
	ctx := context.Background()
	ownStatements(t, srv, func(c *sql.Conn) {
		rows, err := c.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
		if err != nil {
			t.Fatal(err)
		}
		var tables []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, n)
		}
		rows.Close()
		for _, n := range tables {
			if _, err := c.ExecContext(ctx, `ALTER TABLE "`+n+`" SET (autovacuum_enabled = off, toast.autovacuum_enabled = off)`); err != nil {
				t.Fatal(err)
			}
		}
		// The catalogs too (the load's CREATEs left them for autovacuum):
		// off on the whole test server, and a worker already at work
		// finishes first.
		for _, q := range []string{"ALTER SYSTEM SET autovacuum = off", "SELECT pg_reload_conf()"} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			var workers int
			if err := c.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'").Scan(&workers); err != nil {
				t.Fatal(err)
			}
			if workers == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d autovacuum workers still at work after a minute", workers)
			}
		}
	})
}

// tpccTarget is the flags of a TPC-C run on srv in mode.
func tpccTarget(srv tpccServer, mode string) []string {
	return []string{"--target", "native=" + srv.url, "--warehouses", "1", "--tpcc-mode", mode}
}

// tpccServer is a test server for the TPC-C end-to-end tests.
type tpccServer struct {
	name   string
	url    string
	db     *sql.DB
	tables string // counts the tables left in the database
}

func tpccMariaDB(t *testing.T) tpccServer {
	srv := testdb.Start(t)
	return tpccServer{name: "mariadb", url: srv.URL(""), db: srv.DB(t),
		tables: "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"}
}

func tpccPostgres(t *testing.T) tpccServer {
	srv := testdb.StartPostgres(t)
	return tpccServer{name: "postgres", url: pgURL(srv), db: pgDB(t, srv),
		tables: "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"}
}

func tpccNOPMIsTheDistrictDelta(t *testing.T, srv tpccServer, mode string) {
	target := tpccTarget(srv, mode)
	before := sumNextOID(t, srv)
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := dbduel(t, append([]string{"run", "tpcc", "--threads", "4", "--time", "3", "--no-tui", "-o", out}, target...)...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	after := sumNextOID(t, srv)
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Runs[0].Summary
	want := float64(after-before) / (s.DurationS / 60)
	if after <= before || math.Abs(s.NOPM-want) > 0.001*want {
		t.Fatalf("NOPM %.1f, the district table moved by %d in %.2f s: %.1f per minute", s.NOPM, after-before, s.DurationS, want)
	}
	// TPM is the commit and rollback counters: every transaction ends in
	// one of them (retried ones add a rollback each; without any, the
	// counts are equal).
	// (1e-9: the two per-minute rates divide in another order; equal
	// counts came out one ulp apart in CI.)
	clientTPM := float64(s.Events) / (s.DurationS / 60)
	if s.TPM < clientTPM*(1-1e-9) || s.TPM > clientTPM*1.02 || s.Errors == 0 && s.TPM > clientTPM*(1+1e-9) {
		t.Errorf("TPM %.0f, the client completed %.0f transactions per minute (%d retried)", s.TPM, clientTPM, s.Errors)
	}
	if s.ClientTPMC != s.NOPM {
		t.Errorf("client tpmC %.1f differs from NOPM %.1f with no other client", s.ClientTPMC, s.NOPM)
	}
	// The server's statement counter against dbduel's: equal, but for
	// the two statements each retried transaction counts on one side only.
	if h := r.Runs[0].Honesty; h == nil || math.Abs(float64(h.ServerQueries)-float64(h.DbduelQueries)) > 2*float64(s.Errors) {
		t.Errorf("honesty with %d retried: %+v", s.Errors, h)
	}
	// Every type that ran has its latencies; a type of the mix's 4% may
	// not have run in a short run under CI's load (0.96^50: 13% at 50
	// transactions), but at 8 expected runs (P(none) < 0.04%) it must.
	shares := map[string]float64{"new_order": 0.45, "payment": 0.43, "order_status": 0.04, "delivery": 0.04, "stock_level": 0.04}
	var total uint64
	for n := range shares {
		total += s.Types[n].Count
	}
	for n, share := range shares {
		ty, ok := s.Types[n]
		if !ok || ty.Count > 0 && ty.P95US <= 0 || ty.Count == 0 && share*float64(total) >= 8 {
			t.Fatalf("type %s: %+v of %d transactions", n, ty, total)
		}
	}
	if total != s.Events {
		t.Errorf("the types add up to %d transactions, the run made %d", total, s.Events)
	}
	// Each transaction's type is drawn (45% New-Order): a short run under
	// load makes few, and the share's tolerance is 4 binomial standard
	// errors (0.56 of a 3-s run's mix once failed a fixed ±0.07).
	tol := max(0.07, 4*math.Sqrt(0.45*0.55/float64(total)))
	if share := float64(s.Types["new_order"].Count) / float64(total); math.Abs(share-0.45) > tol {
		t.Errorf("New-Order is %.2f of %d transactions, want 0.45 ± %.2f", share, total, tol)
	}
	iv := r.Runs[0].Intervals[0]
	if iv.TPMC <= 0 || iv.TPM <= iv.TPMC || len(iv.Types) != 5 {
		t.Errorf("interval without TPC-C figures: %+v", iv)
	}
	if !strings.Contains(stdout, "NOPM") || !strings.Contains(stdout, "per transaction: new_order") {
		t.Errorf("the text output shows no NOPM:\n%s", stdout)
	}

	stdout, stderr, code = dbduel(t, append([]string{"check", "tpcc"}, target...)...)
	if code != 0 || strings.Count(stdout, " holds") != 4 {
		t.Fatalf("check after a run: exit %d\n%s%s", code, stdout, stderr)
	}
}

// tpccBrokenAndCleanedUp breaks a condition (check says which), then
// cleans up: no table is left.
func tpccBrokenAndCleanedUp(t *testing.T, srv tpccServer) {
	db, target := srv.db, tpccTarget(srv, "statements")
	if _, err := db.Exec("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1"); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := dbduel(t, append([]string{"check", "tpcc"}, target...)...)
	if code != 1 || !strings.Contains(stderr, "condition 1 (3.3.2.1)") || strings.Contains(stderr, "condition 2") {
		t.Fatalf("a broken W_YTD: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code := dbduel(t, "run", "oltp_read_only", "--target", "a="+srv.url, "--target", "b="+srv.url,
		"--runs", "2", "--fail-if", "nopm<-5%"); code != 2 || !strings.Contains(stderr, "has no NOPM") {
		t.Errorf("--fail-if nopm on an OLTP workload: exit %d: %s", code, stderr)
	}
	if _, stderr, code := dbduel(t, append([]string{"cleanup", "tpcc"}, target...)...); code != 0 {
		t.Fatalf("cleanup: %s", stderr)
	}
	var left int
	if err := db.QueryRow(srv.tables).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d tables left after cleanup (%v)", left, err)
	}
}

// TestTPCCNativeVsContainer runs TPC-C on a managed server and in the
// test image, MariaDB and PostgreSQL, and leaves nothing behind.
func TestTPCCNativeVsContainer(t *testing.T) {
	t.Parallel()
	t.Run("mariadb", func(t *testing.T) {
		integration.Require(t, "mariadbd, Docker and the test image")
		tpccNativeVsContainer(t, "local:mariadbd", "docker:"+testImage(t))
	})
	t.Run("postgres", func(t *testing.T) {
		tpccNativeVsContainer(t, "local:postgres", "docker:"+postgresImage(t))
	})
}

func tpccNativeVsContainer(t *testing.T, native, container string) {
	runID := newRunID()
	env := []string{runEnv(runID)}
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := dbduelWith(t, env, "run", "tpcc", "--target", "native="+native, "--target", "c="+container,
		"--warehouses", "1", "--threads", "2", "--time", "2", "--cooldown", "0", "--no-tui", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Runs) != 2 {
		t.Fatalf("%d runs", len(r.Runs))
	}
	for _, run := range r.Runs {
		if run.Summary.NOPM <= 0 || run.Summary.TPM <= run.Summary.NOPM || run.Honesty == nil || math.Abs(run.Honesty.DiffPct) > 0.01+float64(run.Summary.Errors) {
			t.Errorf("%s: NOPM %.0f TPM %.0f honesty %+v (%s)", run.Target, run.Summary.NOPM, run.Summary.TPM, run.Honesty, run.Summary.ServerCountsNote)
		}
	}
	found := false
	for _, c := range r.Comparisons {
		found = found || (c.Metric == "nopm" && c.Target == "c")
	}
	if !found {
		t.Error("no NOPM comparison of the container with native")
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left behind", n, runID)
	}
}
