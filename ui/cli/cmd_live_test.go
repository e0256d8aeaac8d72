package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/result"
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
	// The terminal check comes first; the others are checked by checkLive.
	o := &runOptions{threads: "2,4", runsFlag: "1", live: &liveOptions{slice: 3, settle: 1}}
	if err := checkLiveOptions("oltp_read_only", o); err == nil || !strings.Contains(err.Error(), "one --threads number") {
		t.Errorf("a --threads list: %v", err)
	}
	o = &runOptions{threads: "2", runsFlag: "3", live: &liveOptions{slice: 3, settle: 1}}
	if err := checkLiveOptions("oltp_read_only", o); err == nil || !strings.Contains(err.Error(), "--runs") {
		t.Errorf("--runs 3: %v", err)
	}
	o = &runOptions{threads: "2", runsFlag: "1", live: &liveOptions{slice: 1, settle: 1}}
	if err := checkLiveOptions("oltp_read_only", o); err == nil || !strings.Contains(err.Error(), "--settle") {
		t.Errorf("--settle as long as --slice: %v", err)
	}
	o = &runOptions{threads: "2", runsFlag: "1", live: &liveOptions{slice: 3, settle: 1}}
	for _, wl := range []string{"oltp_bulk_insert", "cpu", "tpcc"} {
		if err := checkLiveOptions(wl, o); err == nil || !strings.Contains(err.Error(), "runs the OLTP workloads") {
			t.Errorf("%s: %v", wl, err)
		}
	}
	if err := checkLiveOptions("oltp_update_index", o); err != nil || o.timeS != 3 || o.warmupTime != 1 {
		t.Errorf("oltp_update_index: %v (time %v, warm-up %v)", err, o.timeS, o.warmupTime)
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
