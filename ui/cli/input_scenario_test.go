package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine/workload"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScenarioResolvesWithOverridesAndEnv(t *testing.T) {
	t.Setenv("DBDUEL_TEST_IMG", "my/img:1")
	f := writeFile(t, "s.yaml", `workload: oltp_point_select
targets:
  - a=mysql://root@127.0.0.1:1/x
  - b=docker:${DBDUEL_TEST_IMG},memory=1g
  - c=docker:${DBDUEL_TEST_UNSET:-fallback/img:2}
options:
  tables: 3
  table_size: 500
plan:
  threads: [2, 4]
  runs: 2
  time: 7
`)
	out, stderr, code := runCLI(t, "run", "-f", f, "--time", "3", "--dry-run", "--seed", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"run oltp_point_select", "tables=3", "table_size=500", "target a (baseline): mysql://root@127.0.0.1:1/x",
		"target b: docker:my/img:1,memory=1g", "target c: docker:fallback/img:2", "point 1: threads=2", "point 2: threads=4",
		"2 run(s)", "3s each"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	// A workload and --target on the command line replace the file's.
	out, _, _ = runCLI(t, "run", "oltp_read_only", "-f", f, "--target", "z=mysql://root@127.0.0.1:2/x", "--dry-run")
	if !strings.Contains(out, "run oltp_read_only") || !strings.Contains(out, "target z (baseline)") || strings.Contains(out, "target a (baseline)") {
		t.Fatalf("command line did not override:\n%s", out)
	}
}

func TestScenarioErrorsPointAtTheFile(t *testing.T) {
	cases := map[string]string{
		"workload: oltp_read_only\noptions:\n  tables: 2\n  tabels: 3\n":         "s.yaml:4:3: unknown option \"tabels\"",
		"workload: oltp_read_only\nplan:\n  runs: many\n":                        "s.yaml:3:9: runs:",
		"workload: oltp_read_only\ntargetz:\n  - a=mysql://x@127.0.0.1:1/y\n":    "s.yaml:2:1: unknown key \"targetz\"",
		"targets:\n  - docker:${DBDUEL_NOT_SET_ANYWHERE}\n":                      "${DBDUEL_NOT_SET_ANYWHERE} is not set",
		"workload: oltp_read_only\nplan:\n  target: a=mysql://x@127.0.0.1:1/y\n": "s.yaml:3:3: unknown option \"target\"",
		"workload: oltp_read_only\ntargets: a=mysql://x@127.0.0.1:1/y\n":         "s.yaml:2:10: targets: want a list",
	}
	for text, want := range cases {
		f := writeFile(t, "s.yaml", text)
		_, stderr, code := runCLI(t, "run", "-f", f, "--dry-run")
		if code != 2 || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, %q; want %q", text, code, stderr, want)
		}
	}
}

func TestComposeImportsServicesWithLimitsAndCnf(t *testing.T) {
	t.Setenv("IMAGE", "dbduel-test/mariadb:9.9.9")
	out, stderr, code := runCLI(t, "run", "--compose", "../../examples/seed003-compose.yml", "--tables", "2", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cnf, _ := filepath.Abs("../../examples/tuned.cnf")
	for _, want := range []string{
		"target mem2g (baseline): docker:dbduel-test/mariadb:9.9.9,memory=2147483648,env=TZ=***",
		"target mem8g: docker:dbduel-test/mariadb:9.9.9,memory=8589934592",
		"target tuned: docker:dbduel-test/mariadb:9.9.9,memory=8589934592,env=TZ=***,cnf=" + cnf,
		"run oltp_read_write", "tables=2", "table_size=100000", "threads=10",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "service mem2g: published ports are rewritten to a free 127.0.0.1 port") {
		t.Errorf("what is not honoured must be named: %s", stderr)
	}
	// --service picks and orders; a native --target comes first.
	out, _, code = runCLI(t, "run", "--compose", "../../examples/seed003-compose.yml", "--service", "tuned,mem2g", "--target", "native=local:mariadbd", "--dry-run")
	if code != 0 || !strings.Contains(out, "target native (baseline)") || strings.Index(out, "target tuned") > strings.Index(out, "target mem2g") || strings.Contains(out, "mem8g") {
		t.Fatalf("--service order: exit %d\n%s", code, out)
	}
	if _, stderr, code := runCLI(t, "run", "--compose", "../../examples/seed003-compose.yml", "--service", "nope", "--dry-run"); code != 2 || !strings.Contains(stderr, "it has mem2g, mem8g, tuned") {
		t.Fatalf("unknown service: exit %d %s", code, stderr)
	}
}

// Every example parses and plans.
func TestEveryExamplePlans(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.y*ml")
	if len(files) < 6 {
		t.Fatalf("examples: %v", files)
	}
	for _, f := range files {
		flag := "-f"
		if strings.Contains(f, "compose") {
			flag = "--compose"
		}
		out, stderr, code := runCLI(t, "run", flag, f, "--dry-run")
		if code != 0 || !strings.Contains(out, "block 1") {
			t.Errorf("%s: exit %d: %s%s", f, code, stderr, out)
		}
	}
}

// A plan ended by --events says so: seed 004's MongoDB form runs 250k
// requests per point, with no time limit.
func TestDryRunSaysEventLimit(t *testing.T) {
	out, stderr, code := runCLI(t, "run", "-f", "../../examples/seed004-mongo-rw.yaml", "--dry-run")
	if code != 0 || !strings.Contains(out, "each until 250000 events") || !strings.Contains(out, "run mongo_read_write") {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	out, _, _ = runCLI(t, "run", "--target", "n=mysql://root@127.0.0.1:1/x", "--events", "100", "--dry-run")
	if !strings.Contains(out, "each 10s or 100 events, whichever comes first") {
		t.Fatalf("dry run: %s", out)
	}
}

// Messages and the TUI name MongoDB's data as documents in collections.
func TestDataNouns(t *testing.T) {
	mk := workload.BindFlags(pflag.NewFlagSet("t", pflag.ContinueOnError))
	for name, want := range map[string]dataNouns{"mongo_read_only": {"documents", "collection"}, "oltp_read_write": {"rows", "table"}, "tpcc": {"rows", "table"}} {
		wl, err := mk(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := nouns(wl); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}

// --dry-run adds the plan up: its run time, the data per target, and the
// disk where managed servers keep it.
func TestDryRunAddsThePlanUp(t *testing.T) {
	t.Setenv("IMAGE", "dbduel-test/mariadb:10.11.19")
	out, stderr, code := runCLI(t, "run", "-f", "../../examples/seed000.yaml", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"planned run time: 8 runs × 300s = 40m0s", "data: 20 × 10000000 rows per target, about 42.8 GiB on disk each", " needed there"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
}

// shm_size and ulimits become SPEC keys; every key not honoured is named
// as written (stop_grace_period was dropped without a word).
func TestComposeHonoursShmAndUlimitsAndNamesTheRest(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "compose.yml")
	os.WriteFile(file, []byte(`services:
  db:
    image: dbduel-test/mariadb:10.11.19
    shm_size: 256m
    ulimits:
      nofile:
        soft: 20000
        hard: 40000
      nproc: 4096
    stop_grace_period: 30s
    healthcheck:
      test: ["CMD", "true"]
`), 0o644)
	out, stderr, code := runCLI(t, "run", "--compose", file, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"shm=268435456", "ulimit=nofile=20000:40000", "ulimit=nproc=4096:4096"} {
		if !strings.Contains(out, want) {
			t.Errorf("SPEC lacks %s:\n%s", want, out)
		}
	}
	for _, want := range []string{"service db: stop_grace_period is not honoured", "service db: healthcheck is not honoured"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("notes lack %q:\n%s", want, stderr)
		}
	}
}
