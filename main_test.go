package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/internal/integration"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/testdb"
)

// sysbenchArgs are real sysbench's connection options for srv.
func sysbenchArgs(srv *testdb.Server) []string {
	ep := srv.Endpoint()
	return []string{"--mysql-host=" + ep.Host, "--mysql-port=" + strconv.Itoa(ep.Port),
		"--mysql-user=" + ep.User, "--mysql-password=" + ep.Password, "--mysql-db=" + ep.DB}
}

func runSysbench(t *testing.T, srv *testdb.Server, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("sysbench")
	if err != nil {
		t.Fatalf("sysbench is required (apt-get install sysbench): %v", err)
	}
	cmd := exec.Command(bin, append(args[:1:1], append(sysbenchArgs(srv), args[1:]...)...)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench %v: %v\n%s", args, err, out)
	}
	return string(out)
}

var digits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
var spaces = regexp.MustCompile(` +`)

// maskFromFirstInterval keeps the lines from the first interval line on,
// digits masked and runs of spaces folded (number widths differ). Repeated
// interval lines count once: sysbench under load sometimes ends a 3 s run
// before printing its third one, and the layout, not the count, is compared.
// intervals is how many interval lines there were.
func maskFromFirstInterval(out string) (lines []string, intervals int) {
	started := false
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(l, "[ ") {
			started = true
			intervals++
		}
		if !started || strings.HasPrefix(l, "# dbduel") {
			continue
		}
		m := spaces.ReplaceAllString(digits.ReplaceAllString(l, "9"), " ")
		if strings.HasPrefix(l, "[ ") && len(lines) > 0 && lines[len(lines)-1] == m {
			continue
		}
		lines = append(lines, m)
	}
	return lines, intervals
}

func TestSysbenchLayoutMatchesRealSysbench(t *testing.T) {
	integration.Require(t, "mariadbd and sysbench")
	t.Parallel()
	srv := testdb.Start(t)
	url := srv.URL("")
	if _, stderr, code := dbduel(t, "prepare", "oltp_read_write", "--target", "native="+url, "--tables", "2", "--table-size", "2000"); code != 0 {
		t.Fatalf("prepare: exit %d: %s", code, stderr)
	}
	theirs := runSysbench(t, srv, "oltp_read_write", "--tables=2", "--table-size=2000", "--threads=2", "--time=3", "--report-interval=1", "run")
	ours, stderr, code := dbduel(t, "run", "oltp_read_write", "--target", "native="+url, "--tables", "2", "--table-size", "2000",
		"--threads", "2", "--time", "3", "--format", "sysbench")
	if code != 0 {
		t.Fatalf("dbduel run: exit %d: %s", code, stderr)
	}
	want, _ := maskFromFirstInterval(theirs)
	got, intervals := maskFromFirstInterval(ours)
	if intervals < 2 {
		t.Fatalf("dbduel printed %d interval lines for a 3 s run with --report-interval=1, want at least 2:\n%s", intervals, ours)
	}
	if len(want) < 18 {
		t.Fatalf("sysbench printed too little:\n%s", theirs)
	}
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Fatalf("layout differs from sysbench 1.0.20\n--- sysbench (masked)\n%s\n--- dbduel (masked)\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	if !strings.Contains(ours, "# dbduel target=native block=1 run=1") {
		t.Fatalf("missing run header in:\n%s", ours)
	}
}

// perEvent is the statement mix of one event of each script with sysbench's defaults.
var perEvent = map[string]struct{ reads, writes, other float64 }{
	"oltp_read_write":       {14, 4, 2},
	"oltp_read_only":        {14, 0, 2},
	"oltp_write_only":       {0, 4, 2},
	"oltp_point_select":     {1, 0, 0},
	"oltp_update_index":     {0, 1, 0},
	"oltp_update_non_index": {0, 1, 0},
	"oltp_insert":           {0, 1, 0},
	"select_random_points":  {1, 0, 0},
	"select_random_ranges":  {1, 0, 0},
}

func TestEveryWorkloadPreparesRunsAndCleansUp(t *testing.T) {
	integration.Require(t, "mariadbd")
	t.Parallel()
	srv := testdb.Start(t)
	url := srv.URL("")
	srv.Exec(t, "CREATE TABLE users_keep (id INT PRIMARY KEY, name TEXT)", "INSERT INTO users_keep VALUES (1, 'alice')")
	for _, name := range []string{"oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select",
		"oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete",
		"select_random_points", "select_random_ranges", "bulk_insert"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			common := []string{"--target", "native=" + url, "--table-size", "1000", "--threads", "2"}
			if name != "select_random_points" && name != "select_random_ranges" {
				common = append(common, "--tables", "2")
			}
			_, stderr, code := dbduel(t, append([]string{"run", name, "--time", "1", "--format", "json", "-o", out}, common...)...)
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, stderr)
			}
			r, err := result.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Complete || len(r.Runs) != 1 {
				t.Fatalf("complete=%v runs=%d", r.Complete, len(r.Runs))
			}
			s := r.Runs[0].Summary
			if s.Events == 0 || s.Queries == 0 {
				t.Fatalf("no work measured: %+v", s)
			}
			if mix, ok := perEvent[name]; ok {
				// A DML statement that matches no row counts as "other" in
				// sysbench, and an event restarted after an ignored deadlock
				// keeps the statements it ran: so reads and the per-event
				// total are exact up to the statements of restarted events.
				ev, restarted := float64(s.Events), float64(s.Errors)
				perEv := mix.reads + mix.writes + mix.other
				total := float64(s.Queries)
				if float64(s.Reads) < mix.reads*ev || float64(s.Reads) > mix.reads*(ev+restarted) ||
					total < perEv*ev || total > perEv*(ev+restarted) || float64(s.Writes) > mix.writes*(ev+restarted) {
					t.Fatalf("statement mix r/w/o %d/%d/%d for %d events (%d restarted), want %v per event", s.Reads, s.Writes, s.Other, s.Events, s.Errors, mix)
				}
			}
			if h := r.Runs[0].Honesty; h == nil || h.DiffPct > 1 || h.DiffPct < -1 {
				t.Fatalf("server's Questions disagree with dbduel's count: %+v", h)
			}
			if _, stderr, code := dbduel(t, append([]string{"cleanup", name}, common...)...); code != 0 {
				t.Fatalf("cleanup: exit %d: %s", code, stderr)
			}
			var n int
			if err := srv.DB(t).QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest' AND TABLE_NAME LIKE 'sbtest%'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("%d sbtest tables left after cleanup", n)
			}
		})
	}
	var name string
	if err := srv.DB(t).QueryRow("SELECT name FROM users_keep WHERE id=1").Scan(&name); err != nil || name != "alice" {
		t.Fatalf("a user table did not survive prepare and cleanup: %v %q", err, name)
	}
}

func TestForeignShapedTableIsRefusedAndKept(t *testing.T) {
	integration.Require(t, "mariadbd")
	t.Parallel()
	srv := testdb.Start(t)
	srv.Exec(t, "CREATE TABLE sbtest1 (id INT PRIMARY KEY, payload TEXT)", "INSERT INTO sbtest1 VALUES (7, 'precious')")
	args := []string{"--target", "native=" + srv.URL(""), "--time", "1", "--format", "text"}
	for _, verb := range []string{"run", "prepare"} {
		_, stderr, code := dbduel(t, append([]string{verb}, args...)...)
		if code != 1 || !strings.Contains(stderr, "sbtest1") {
			t.Fatalf("%s on a foreign sbtest1: exit %d, stderr %q; want exit 1 naming the table", verb, code, stderr)
		}
		if strings.Count(strings.TrimSpace(stderr), "\ndbduel: ") > 3 {
			t.Fatalf("error is not short: %q", stderr)
		}
	}
	for _, verb := range []string{"cleanup"} {
		if _, _, code := dbduel(t, append([]string{verb}, args...)...); code == 0 {
			t.Fatalf("%s reported success on a foreign table", verb)
		}
	}
	var payload string
	if err := srv.DB(t).QueryRow("SELECT payload FROM sbtest1 WHERE id=7").Scan(&payload); err != nil || payload != "precious" {
		t.Fatalf("foreign sbtest1 was touched: %v %q", err, payload)
	}
}

func TestReusesSysbenchPreparedTablesAndRefusesSizeMismatch(t *testing.T) {
	integration.Require(t, "mariadbd and sysbench")
	t.Parallel()
	srv := testdb.Start(t)
	runSysbench(t, srv, "oltp_read_only", "--tables=2", "--table-size=500", "--auto_inc=off", "--create_secondary=off", "prepare")
	args := []string{"--target", "native=" + srv.URL(""), "--tables", "2", "--time", "1", "--format", "json"}
	stdout, stderr, code := dbduel(t, append([]string{"run", "oltp_read_only", "--table-size", "500"}, args...)...)
	if code != 0 {
		t.Fatalf("run on sysbench's tables: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "reusing existing") {
		t.Fatalf("expected reuse notice, got %q", stderr)
	}
	last := lastLine(stdout)
	var env struct {
		Type   string         `json:"type"`
		Result *result.Result `json:"result"`
	}
	if err := json.Unmarshal([]byte(last), &env); err != nil || env.Type != "result" || env.Result == nil {
		t.Fatalf("last NDJSON line is not the result: %v %q", err, last)
	}
	_, stderr, code = dbduel(t, append([]string{"run", "oltp_read_only", "--table-size", "600"}, args...)...)
	if code != 1 || !strings.Contains(stderr, "--table-size is 600") {
		t.Fatalf("size mismatch: exit %d, %q", code, stderr)
	}
	// dbduel's tables run under real sysbench too.
	if _, stderr, code := dbduel(t, append([]string{"run", "oltp_read_only", "--table-size", "600", "--reprepare"}, args...)...); code != 0 {
		t.Fatalf("--reprepare: exit %d: %s", code, stderr)
	}
	out := runSysbench(t, srv, "oltp_read_only", "--tables=2", "--table-size=600", "--time=1", "run")
	if !strings.Contains(out, "transactions:") || strings.Contains(out, "FATAL") {
		t.Fatalf("sysbench on dbduel's tables:\n%s", out)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestBadInputExitsTwoWithOneLine(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{"run"},
		{"run", "--target", "Bad=mysql://x@127.0.0.1:1/db"},
		{"run", "--target", "a=ftp://nowhere"},
		{"run", "no_such_workload", "--target", "a=mysql://root@127.0.0.1:1/db"},
		{"run", "--target", "a=mysql://root@127.0.0.1:1/db", "--target", "a=mysql://root@127.0.0.1:2/db"},
		{"run", "--target", "a=mysql://root@127.0.0.1:1/db", "--format", "xml"},
		{"run", "--target", "a=mysql://root@127.0.0.1:1/db", "--rand-type", "weird"},
		{"run", "--target", "a=local:mariadbd,colour=blue"},
		{"run", "--no-such-flag"},
	}
	for _, args := range cases {
		_, stderr, code := dbduel(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 || !strings.HasPrefix(stderr, "dbduel: ") {
			t.Errorf("%v: want one line, got %q", args, stderr)
		}
	}
}

func TestPasswordNeverPrinted(t *testing.T) {
	t.Parallel()
	_, stderr, code := dbduel(t, "run", "--target", "a=mysql://root:s3cretpw@127.0.0.1:1/db", "--time", "1")
	if code != 1 {
		t.Fatalf("unreachable server: exit %d, want 1 (%q)", code, stderr)
	}
	if strings.Contains(stderr, "s3cretpw") {
		t.Fatalf("password printed: %q", stderr)
	}
}

func TestParityAndStrictParity(t *testing.T) {
	integration.Require(t, "mariadbd")
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := dbduel(t, "run", "oltp_point_select", "--target", "a=local:mariadbd", "--target", "b=local:mariadbd",
		"--time", "1", "--table-size", "200", "--format", "text", "--strict-parity", "-o", out)
	if code != 0 {
		t.Fatalf("two identical managed servers must pass --strict-parity: exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil || r.Parity == nil || len(r.Parity.VariablesDiff) != 0 || r.Parity.Versions["a"] == "" {
		t.Fatalf("parity of identical servers: %v %+v", err, r.Parity)
	}
	_, stderr, code = dbduel(t, "run", "oltp_point_select", "--target", "a=local:mariadbd", "--target", "b=local:mariadbd,args=--max-connections=77",
		"--time", "1", "--table-size", "200", "--format", "text", "--strict-parity")
	if code != 4 || !strings.Contains(stderr, "max_connections") {
		t.Fatalf("a config difference under --strict-parity: exit %d: %s", code, stderr)
	}
}

// Inputs that were silently ignored or failed with an empty reason now name
// the target and the cause.
func TestSpecInputsNameTargetAndCause(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"n=local:mariadbd,cnf=examples":   "--target n: local: cnf=examples is a directory",
		"n=local:mariadbd,cpuset=99":      "--target n: local: cpuset=99: CPU 99 does not exist; this machine's CPUs are",
		"c=docker:img,cnf=/no/such.cnf":   "--target c: docker: cnf=/no/such.cnf",
		"c=docker:img,cpuset=0,cpuset=99": "given twice",
	}
	for spec, want := range cases {
		_, stderr, code := dbduel(t, "run", "--target", spec)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, %q; want %q", spec, code, stderr, want)
		}
	}
}

// A DSN naming a database that does not exist: dbduel creates it and says
// so, once.
func TestCreatedDatabaseIsAnnounced(t *testing.T) {
	t.Parallel()
	srv := testdb.Start(t)
	args := []string{"prepare", "oltp_point_select", "--target", "n=" + srv.URL("typo_db"), "--table-size", "100"}
	_, stderr, code := dbduel(t, args...)
	if code != 0 || !strings.Contains(stderr, "n: created database typo_db (it did not exist") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, stderr, _ = dbduel(t, args...); strings.Contains(stderr, "created database") {
		t.Fatalf("announced again: %s", stderr)
	}
}

func TestHelpAndFlagSuggestions(t *testing.T) {
	t.Parallel()
	_, stderr, code := dbduel(t, "run", "--thread", "4")
	if code != 2 || !strings.Contains(stderr, "unknown flag: --thread; did you mean --threads?") {
		t.Fatalf("exit %d: %q", code, stderr)
	}
	if _, stderr, _ := dbduel(t, "run", "--zzz"); strings.Contains(stderr, "did you mean") {
		t.Fatalf("no flag is near --zzz: %q", stderr)
	}
	help, _, code := dbduel(t, "run", "--help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, want := range []string{"--threads N[,N...]", "--cooldown auto|SECONDS", "each run lasts (per run, not in total", "docker:IMAGE[,memory=2g]", "local:BIN[,args=--flag]"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	for _, line := range strings.Split(help, "\n") {
		if strings.Count(line, "default") > 1 {
			t.Errorf("a flag shows two defaults: %s", line)
		}
	}
	if _, stderr, code := dbduel(t, "run", "--target", "a=mysql://u@127.0.0.1:1/x", "--cooldown", "soon"); code != 2 || !strings.Contains(stderr, "--cooldown") {
		t.Fatalf("bad cooldown: exit %d %q", code, stderr)
	}
}

// --calibrate runs the baseline twice (the same existing server here) and
// writes the noise floor; the A/A copy is named NAME-aa.
func TestCalibrateWritesTheNoiseFloor(t *testing.T) {
	t.Parallel()
	srv := testdb.Start(t)
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := dbduel(t, "run", "oltp_point_select", "--target", "a="+srv.URL(""), "--calibrate", "--runs", "2",
		"--time", "1", "--table-size", "500", "--cooldown", "0", "--format", "text", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil || len(r.Targets) != 2 || r.Targets[1].Name != "a-aa" || r.NoiseFloor == nil || !r.NoiseFloor.HasCI || r.NoiseFloor.N != 2 {
		t.Fatalf("%v: targets %+v noise floor %+v", err, r.Targets, r.NoiseFloor)
	}
	if r.Environment["kernel"] == "" || r.Environment["docker_version"] == "" {
		t.Fatalf("environment: %v", r.Environment)
	}
}

// LOAD DATA sends the ids explicitly even with auto_inc: the table holds
// 1..N, as the auto-increment counter would have made them, and the
// counter goes on from N+1.
func TestBulkLoadedIDsMatchAutoIncrement(t *testing.T) {
	integration.Require(t, "mariadbd")
	t.Parallel()
	srv := testdb.Start(t)
	if _, stderr, code := dbduel(t, "prepare", "--target", "native="+srv.URL(""), "--tables", "1", "--table-size", "1000"); code != 0 {
		t.Fatalf("prepare: exit %d: %s", code, stderr)
	}
	db := srv.DB(t)
	var n, lo, hi int
	if err := db.QueryRow("SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest1").Scan(&n, &lo, &hi); err != nil || n != 1000 || lo != 1 || hi != 1000 {
		t.Fatalf("ids: %d rows %d..%d (%v)", n, lo, hi, err)
	}
	res, err := db.Exec("INSERT INTO sbtest1 (k, c, pad) VALUES (1, 'c', 'pad')")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 1001 {
		t.Fatalf("the next auto-increment id is %d, want 1001", id)
	}
}
