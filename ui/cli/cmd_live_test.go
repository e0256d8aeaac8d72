package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
)

// dbduel live is refused, before any target starts, where it cannot run:
// without a terminal, on a workload that is not OLTP, with run's plan flags.
func TestLiveRefusesWhatItCannotDo(t *testing.T) {
	target := "--target=a=mysql://root@127.0.0.1:1/x"
	cases := map[string][]string{
		"needs a terminal":         {"live", "oltp_read_only", target},
		"live needs a terminal":    {"live", "cpu", target, "--no-tui"},
		"dbduel live needs a term": {"live", "oltp_point_select", target, "--format", "json"},
	}
	for want, args := range cases {
		_, stderr, code := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", args, code, stderr, exitUsage, want)
		}
	}
	// The terminal check comes first; --dry-run needs none, and meets the
	// others before any target starts.
	dry := []string{"live", target, "--dry-run"}
	refused := map[string][]string{
		"one --threads number": append(slices.Clone(dry), "oltp_read_only", "--threads", "2,4"),
		"unknown flag: --runs": append(slices.Clone(dry), "oltp_read_only", "--runs", "3"),
		"--settle shorter":     append(slices.Clone(dry), "oltp_read_only", "--slice", "1", "--settle", "1"),
		"not bulk_insert;":     append(slices.Clone(dry), "bulk_insert"),
		"not cpu; use dbduel":  append(slices.Clone(dry), "cpu"),
		"not tpcc; use dbduel": append(slices.Clone(dry), "tpcc"),
	}
	for want, args := range refused {
		if _, stderr, code := runCLI(t, args...); code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", args, code, stderr, exitUsage, want)
		}
	}
	// A slice is a run of --slice seconds, the first --settle not counted.
	stdout, stderr, code := runCLI(t, append(dry, "oltp_update_index", "--slice", "3s", "--settle", "500ms")...)
	if code != 0 || !strings.Contains(stdout, "one 3s slice per target (the first 0.5s not counted)") {
		t.Errorf("oltp_update_index: exit %d, %s%s", code, stdout, stderr)
	}
}

// --export-scenario writes the explored segments as a plan that dbduel run
// -f reads back: the threads of the segments that share segment 1's
// workload and rate as a sweep, a run per slice, a block per round.
func TestExportedScenarioRoundTrips(t *testing.T) {
	r := &result.Result{StartedAt: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC), Segments: []result.Segment{
		{WhatChanged: "start", Workload: "oltp_read_only", Threads: 4, Rounds: 3},
		{WhatChanged: "threads 4→8", Workload: "oltp_read_only", Threads: 8, Rounds: 5},
		{WhatChanged: "workload oltp_read_only→oltp_point_select", Workload: "oltp_point_select", Threads: 8, Rounds: 2},
		{WhatChanged: "threads 8→16", Workload: "oltp_read_only", Threads: 16, Rounds: 4},
	}}
	path := filepath.Join(t.TempDir(), "explored.yaml")
	specs := []string{"native=mysql://root:p,w@127.0.0.1:1/x", "docker=docker:dbduel-test/mariadb:10.11.19,memory=2g"}
	if err := writeScenario(path, r, specs, &liveOptions{slice: 3, settle: 1}, []string{"--tables=2", "--table-size=5000"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the scenario's mode: %v %v", fi, err)
	}
	out, stderr, code := runCLI(t, "run", "-f", path, "--dry-run", "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"run oltp_read_only", "tables=2", "table_size=5000", "target native (baseline): mysql://root:",
		"target docker: docker:dbduel-test/mariadb:10.11.19,memory=2g", "point 1: threads=4", "point 2: threads=8", "point 3: threads=16",
		"5 run(s)", "3s each"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "segment 3: workload oltp_read_only→oltp_point_select") || !strings.Contains(string(data), "not in this plan") {
		t.Errorf("the segment left out is not named:\n%s", data)
	}
}

// --watch on the scenario the session's targets came from: an edit that
// changes a container's limits becomes one iteration restarting that
// target with its new SPEC; one that changes what cannot change in place
// is refused with the reason and restarts nothing.
func TestWatchedScenarioRespecsItsTargets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	write := func(bMemory, bNetwork string) {
		t.Helper()
		text := "workload: oltp_read_only\ntargets:\n  - a=mysql://root@127.0.0.1:1/x\n  - b=docker:img:1,memory=" + bMemory + bNetwork + "\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1g", "")
	a := &targets.Fake{TargetName: "a"}
	b := &targets.Fake{TargetName: "b", RespecErr: func(spec string) error {
		if strings.Contains(spec, "network=") {
			return errors.New("only memory=, cpus= and cpuset= change in place")
		}
		return nil
	}}
	st := &startedTargets{all: []targets.Target{a, b}}
	l := &liveOptions{iter: newLiveIterations(), specs: []string{"a=mysql://root@127.0.0.1:1/x", "b=docker:img:1,memory=1g"}}
	reload := func() (map[string]string, error) {
		sc, err := loadScenario(path, func(string) (string, bool) { return "", false })
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, s := range sc.targets {
			n, spec, _ := strings.Cut(s, "=")
			m[n] = spec
		}
		return m, nil
	}
	w, err := newConfigWatch([]string{path}, st.all, l.iter, path, reload)
	if err != nil {
		t.Fatal(err)
	}
	ctl := engine.NewLiveControl(engine.Point{Threads: 1})
	settle := func() (map[string]string, error) {
		t.Helper()
		for range 3 { // a change acts once it has settled for one more look
			if _, _, specs, err := w.poll(); specs != nil || err != nil {
				return specs, err
			}
		}
		t.Fatal("the edit was never seen")
		return nil, nil
	}
	write("2g", "")
	specs, err := settle()
	if err != nil || specs["b"] != "docker:img:1,memory=2g" {
		t.Fatalf("specs %v, %v", specs, err)
	}
	if err := l.respecAll(ctl, st, specs, "s.yaml changed"); err != nil {
		t.Fatal(err)
	}
	if got := l.iter.takeSpec("b"); got != "docker:img:1,memory=2g" || l.specs[1] != "b=docker:img:1,memory=2g" || l.iter.takeSpec("a") != "" {
		t.Errorf("b restarts with %q; specs now %v", got, l.specs)
	}
	write("2g", ",network=host")
	specs, _ = settle()
	if err := l.respecAll(ctl, st, specs, "s.yaml changed"); err == nil || !strings.Contains(err.Error(), "b: only memory=") {
		t.Errorf("a network change: %v", err)
	}
	if got := l.iter.takeSpec("b"); got != "" || l.specs[1] != "b=docker:img:1,memory=2g" {
		t.Errorf("a refused SPEC was kept: %q, %v", got, l.specs)
	}
	if _, err := newConfigWatch([]string{path}, st.all, l.iter, "", nil); err == nil || !strings.Contains(err.Error(), "not the scenario") {
		t.Errorf("watching a scenario the session did not start from: %v", err)
	}
}

// runFlags are run's flags, for reading a scenario against.
func runFlags(t *testing.T) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	bindRunFlags(fs, &runOptions{})
	return fs
}

// Each iteration of a live session becomes a target of the exported plan,
// with the SPEC and the cnf= contents it ran with (the watched file itself
// holds only the last edit): iteration 1 as started, then NAME-itK.
func TestExportedIterationsAreTargets(t *testing.T) {
	dir := t.TempDir()
	cnf := filepath.Join(dir, "tuned.cnf")
	it := newLiveIterations()
	it.initial[cnf] = []byte("[mysqld]\ninnodb_buffer_pool_size = 128M\n")
	it.record(2, "docker", "", map[string][]byte{cnf: []byte("[mysqld]\ninnodb_buffer_pool_size = 256M\n")})
	it.record(3, "docker", "docker:img:1,cnf="+cnf+",memory=1g", nil)
	path := filepath.Join(dir, "explored.yaml")
	targets, files := exportTargets(path, []string{"native=local:mariadbd", "docker=docker:img:1,cnf=" + cnf}, it)
	base := filepath.Join(dir, "explored")
	want := []string{"native=local:mariadbd", "docker=docker:img:1,cnf=" + base + ".docker.it1.cnf",
		"docker-it2=docker:img:1,cnf=" + base + ".docker.it2.cnf", "docker-it3=docker:img:1,cnf=" + base + ".docker.it3.cnf,memory=1g"}
	if strings.Join(targets, "\n") != strings.Join(want, "\n") {
		t.Errorf("targets\n%s\nwant\n%s", strings.Join(targets, "\n"), strings.Join(want, "\n"))
	}
	for k, pool := range map[int]string{1: "128M", 2: "256M", 3: "256M"} {
		f := fmt.Sprintf("%s.docker.it%d.cnf", base, k)
		if !strings.Contains(string(files[f]), pool) {
			t.Errorf("%s holds %q, want the %s pool", f, files[f], pool)
		}
	}
	r := &result.Result{Segments: []result.Segment{{WhatChanged: "start", Workload: "oltp_read_only", Threads: 2, Rounds: 3}}}
	if err := writeScenario(path, r, []string{"native=mysql://root@127.0.0.1:1/x", "docker=docker:img:1,cnf=" + cnf}, &liveOptions{slice: 3, settle: 1, iter: it}, nil); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "run", "-f", path, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"target docker-it2: docker:img:1,cnf=" + base + ".docker.it2.cnf", "target docker-it3: docker:img:1,cnf=" + base + ".docker.it3.cnf,memory=1g"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
}

// --slice and --settle take seconds as sysbench's flags do, or durations
// as the users write them.
func TestSliceTakesSecondsOrADuration(t *testing.T) {
	for in, want := range map[string]float64{"3": 3, "2.5": 2.5, "3s": 3, "500ms": 0.5, "1m": 60} {
		var v secondsValue
		if err := v.Set(in); err != nil || float64(v) != want {
			t.Errorf("%q: %v %v, want %v", in, float64(v), err, want)
		}
	}
	var v secondsValue
	if err := v.Set("soon"); err == nil {
		t.Error("soon accepted")
	}
	// --dry-run needs no terminal, and says what live will do.
	out, stderr, code := runCLI(t, "live", "oltp_point_select", "--target=a=mysql://root@127.0.0.1:1/x", "--slice", "2s", "--settle", "500ms", "--threads", "4", "--dry-run", "--seed", "9")
	if code != 0 || !strings.Contains(out, "live: rounds of one 2s slice per target (the first 0.5s not counted), in an order shuffled per round (seed 9), 4 thread(s) to start with, until q") {
		t.Errorf("exit %d: %s%s", code, out, stderr)
	}
}

// A live SPEC edit's change line (the segment's what_changed, in the
// result and the reports) names an env= key that changed, never a value.
func TestSpecChangeHidesEnvValues(t *testing.T) {
	got := specChange(`docker:img,env=MYSQL_PWD=old-secret,env="TOKEN=a,b-secret",memory=1g`, `docker:img,env=MYSQL_PWD=new-secret,env="TOKEN=c,d-secret",memory=2g`)
	for _, s := range []string{"old-secret", "new-secret", "b-secret", "d-secret"} {
		if strings.Contains(got, s) {
			t.Errorf("the change line shows %q: %s", s, got)
		}
	}
	if !strings.Contains(got, "env MYSQL_PWD changed") || !strings.Contains(got, "env TOKEN changed") || !strings.Contains(got, "memory=1g→2g") {
		t.Errorf("the change line: %s", got)
	}
}
